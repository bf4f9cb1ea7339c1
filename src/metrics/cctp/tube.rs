//! The tube test of a projected distribution against clean, and the α = 1 implementation
//! guarantee.

use super::input::Prepared;
use super::numerics::cctp_entropy;
use super::spec::{GuaranteeCheck, Path, TubeSpec};
use crate::metrics::{argmax_first, kl_divergence, pairwise_sum};

/// Slack added to the KL threshold: `KL <= kl + 1e-10`.
pub(crate) const KL_CHECK_EPS: f64 = 1e-10;

/// Check names in binding-priority order.
pub(crate) const BINDING_PRIORITY: [&str; 5] = [
    "top1_clean_match",
    "p_top_clean",
    "kl",
    "entropy",
    "max_prob",
];

/// Result of the tube test of Q against clean P.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TubeEval {
    pub(crate) top1_clean_match: bool,
    pub(crate) p_top_clean: bool,
    pub(crate) kl: bool,
    pub(crate) entropy: bool,
    pub(crate) max_prob: bool,
    /// `KL(P‖Q)`.
    pub(crate) kl_value: f64,
}

impl TubeEval {
    pub(crate) fn passes(&self) -> bool {
        self.top1_clean_match && self.p_top_clean && self.kl && self.entropy && self.max_prob
    }
    /// Failing checks in [`BINDING_PRIORITY`] order.
    pub(crate) fn failing(&self) -> Vec<&'static str> {
        let oks = [
            self.top1_clean_match,
            self.p_top_clean,
            self.kl,
            self.entropy,
            self.max_prob,
        ];
        BINDING_PRIORITY
            .iter()
            .zip(oks)
            .filter(|(_, ok)| !ok)
            .map(|(n, _)| *n)
            .collect()
    }
}

/// `tube_eval(P, Q)` (docs/protocol.md §7.4). Comparisons are plain f64, inclusive; KL gets `+ 1e-10`.
pub(crate) fn tube_eval(p_clean: &[f64], q: &[f64], spec: &TubeSpec) -> TubeEval {
    let kl_value = kl_divergence(p_clean, q);
    match spec {
        TubeSpec::KlOnly(tau) => TubeEval {
            top1_clean_match: true,
            p_top_clean: true,
            kl: kl_value <= tau + KL_CHECK_EPS,
            entropy: true,
            max_prob: true,
            kl_value,
        },
        TubeSpec::Full(t) => {
            let top_p = argmax_first(p_clean);
            let top_q = argmax_first(q);
            let max_p = p_clean[top_p];
            let max_q = q.iter().copied().fold(f64::NAN, f64::max);
            TubeEval {
                top1_clean_match: top_q == top_p,
                p_top_clean: q[top_p] >= max_p - t.p_slack,
                kl: kl_value <= t.kl + KL_CHECK_EPS,
                entropy: cctp_entropy(q) <= cctp_entropy(p_clean) + t.entropy_slack,
                max_prob: max_q >= max_p - t.max_slack,
                kl_value,
            }
        }
    }
}

/// Evaluates the guarantee at α = 1 for `path` / `spec`.
pub(crate) fn guarantee_check(prep: &Prepared, path: Path, spec: &TubeSpec) -> GuaranteeCheck {
    let q = prep.project(path, 1.0);
    let ev = tube_eval(&prep.p_clean, &q, spec);
    let finite = q.iter().all(|v| v.is_finite());
    GuaranteeCheck {
        tube_pass: ev.passes(),
        same_top1: argmax_first(&q) == argmax_first(&prep.p_clean),
        kl_abs: if ev.kl_value.is_nan() {
            f64::INFINITY
        } else {
            ev.kl_value.abs()
        },
        sum_error: if finite {
            (pairwise_sum(&q) - 1.0).abs()
        } else {
            f64::INFINITY
        },
        finite,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cctp::reference::input;
    use crate::metrics::cctp::spec::Tube;

    #[test]
    fn the_guarantee_holds_exactly_on_every_path() {
        let inp = input(&[-0.3, -2.5, -4.0, -1.2], &[-3.1, -0.2, -2.9, -1.9], 1, 0);
        let prep = Prepared::new(&inp).unwrap();
        for path in [Path::LogitLinear, Path::ProbLinear, Path::GeometricProb] {
            let g = guarantee_check(&prep, path, &TubeSpec::Full(Tube::MAIN));
            assert!(g.passes());
            assert_eq!(g.kl_abs, 0.0);
        }
    }

    #[test]
    fn tube_eval_boundaries() {
        let p = [0.6, 0.3, 0.1];
        let spec = TubeSpec::Full(Tube::MAIN);
        // identical passes
        assert!(tube_eval(&p, &p, &spec).passes());
        // top-1 tie in Q goes to the first label -> matches P's A
        let q = [0.45, 0.45, 0.1];
        let e = tube_eval(&p, &q, &spec);
        assert!(e.top1_clean_match);
        // p_top_clean exactly at the slack (Q[A] == P[A] − 0.05 as computed in f64) passes
        let b = 0.6 - 0.05;
        let q = [b, 0.9 - b, 0.1];
        assert!(tube_eval(&p, &q, &spec).p_top_clean);
        let q = [b - 1e-9, 0.9 - b + 1e-9, 0.1];
        assert!(!tube_eval(&p, &q, &spec).p_top_clean);
        // KL-only ignores everything but KL
        let q = [0.3, 0.6, 0.1];
        let k = tube_eval(&p, &q, &TubeSpec::KlOnly(10.0));
        assert!(k.passes());
        let k = tube_eval(&p, &q, &TubeSpec::KlOnly(0.01));
        assert_eq!(k.failing(), vec!["kl"]);
        // KL check: KL exactly tau + 1e-10 passes, a hair more fails
        let kl = kl_divergence(&p, &q);
        assert!(tube_eval(&p, &q, &TubeSpec::KlOnly(kl - 1e-10)).kl);
        assert!(!tube_eval(&p, &q, &TubeSpec::KlOnly(kl - 2e-10)).kl);
        let f = tube_eval(&p, &q, &spec);
        assert_eq!(f.failing(), vec!["top1_clean_match", "p_top_clean", "kl"]);
    }
}
