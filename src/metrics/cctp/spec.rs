//! Interpolation paths, tube thresholds and the eight CCTP variants of docs/protocol.md §7.4;
//! the result of the α = 1 implementation guarantee ([`GuaranteeCheck`]).

/// Interpolation path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Path {
    /// `softmax(center((1−α)·z_H + α·z_0))` on centred log-scores (main).
    LogitLinear,
    /// `normalize((1−α)·p_H + α·p_0)`.
    ProbLinear,
    /// `softmax((1−α)·ln max(p_H,1e-12) + α·ln max(p_0,1e-12))`.
    GeometricProb,
}

/// Thresholds of the full five-check tube.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Tube {
    /// `top_clean_probability_slack`.
    pub(crate) p_slack: f64,
    pub(crate) entropy_slack: f64,
    pub(crate) max_slack: f64,
    /// `kl_threshold`.
    pub(crate) kl: f64,
}

impl Tube {
    pub(crate) const STRICT: Tube = Tube {
        p_slack: 0.03,
        entropy_slack: 0.10,
        max_slack: 0.10,
        kl: 0.05,
    };
    pub(crate) const MAIN: Tube = Tube {
        p_slack: 0.05,
        entropy_slack: 0.15,
        max_slack: 0.15,
        kl: 0.10,
    };
    pub(crate) const LOOSE: Tube = Tube {
        p_slack: 0.10,
        entropy_slack: 0.20,
        max_slack: 0.20,
        kl: 0.20,
    };
}

/// Which test a projected distribution must pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum TubeSpec {
    /// All five checks.
    Full(Tube),
    /// Only `KL(P‖Q) <= tau + 1e-10`.
    KlOnly(f64),
}

/// A named CCTP condition (path + tube).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Variant {
    pub(crate) name: &'static str,
    pub(crate) path: Path,
    pub(crate) spec: TubeSpec,
}

/// The eight CCTP conditions of docs/protocol.md §7.4; the first is the primary.
pub(crate) const VARIANTS: [Variant; 8] = [
    Variant {
        name: "cctp_logit_linear_min_alpha",
        path: Path::LogitLinear,
        spec: TubeSpec::Full(Tube::MAIN),
    },
    Variant {
        name: "cctp_tube_main",
        path: Path::LogitLinear,
        spec: TubeSpec::Full(Tube::MAIN),
    },
    Variant {
        name: "cctp_tube_strict",
        path: Path::LogitLinear,
        spec: TubeSpec::Full(Tube::STRICT),
    },
    Variant {
        name: "cctp_tube_loose",
        path: Path::LogitLinear,
        spec: TubeSpec::Full(Tube::LOOSE),
    },
    Variant {
        name: "cctp_prob_linear_min_alpha",
        path: Path::ProbLinear,
        spec: TubeSpec::Full(Tube::MAIN),
    },
    Variant {
        name: "cctp_geometric_prob_min_alpha",
        path: Path::GeometricProb,
        spec: TubeSpec::Full(Tube::MAIN),
    },
    Variant {
        name: "cctp_kl_projection_tau_005",
        path: Path::LogitLinear,
        spec: TubeSpec::KlOnly(0.05),
    },
    Variant {
        name: "cctp_kl_projection_tau_010",
        path: Path::LogitLinear,
        spec: TubeSpec::KlOnly(0.10),
    },
];

/// Tolerance of the α = 1 implementation guarantee (|KL|, |Σq − 1|).
pub(crate) const GUARANTEE_TOL: f64 = 1e-8;

/// The α = 1 implementation guarantee.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct GuaranteeCheck {
    pub(crate) tube_pass: bool,
    pub(crate) same_top1: bool,
    /// `|KL(P‖Q_1)|`.
    pub(crate) kl_abs: f64,
    /// `|Σ Q_1 − 1|`.
    pub(crate) sum_error: f64,
    pub(crate) finite: bool,
}

impl GuaranteeCheck {
    pub(crate) fn passes(&self) -> bool {
        self.tube_pass
            && self.same_top1
            && self.kl_abs <= GUARANTEE_TOL
            && self.sum_error <= GUARANTEE_TOL
            && self.finite
    }
}
