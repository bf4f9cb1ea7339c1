//! CCTP — clean-counterfactual tube projection (protocol.md §6). Post-hoc, no inference.
//!
//! For one item, the option distribution of the full-history context (ordinary reset R0, or the
//! correct-pressure R0) is moved toward the clean distribution along a path indexed by α (the
//! weight on the **clean** anchor: α = 0 → full history, α = 1 → clean). α\* is the smallest grid
//! α whose projected distribution passes the tube test against clean.
//!
//! Decisions where §6 leaves room (documented for the README):
//! - The clean reference distribution `P` of the tube test, and both exact endpoints, are the
//!   renormalised option **probabilities** (negatives clipped to 0). When the caller does not
//!   supply probabilities they are the softmax of the log-scores (the scorer's own definition,
//!   §2), so P is identical for all three paths and the α = 1 guarantee holds exactly.
//! - Softmax is `exp(z − max z) / Σ exp(…)`, sums in numpy's pairwise order.
//! - The CCTP entropy clamps every probability to `1e-12` and renormalises before `−Σ q ln q`; KL
//!   uses the §4 formula (clamp, no renormalisation), common labels only.
//! - Binding-constraint names are `top1_clean_match`, `p_top_clean`, `kl`, `entropy`, `max_prob`
//!   (priority order); `none` when α\* = 0.
//! - KL-only variants evaluate only the KL check; the other four checks are reported as passing.
//! - Non-finite log-scores, a label/score length mismatch, an out-of-range wrong/correct index or
//!   zero probability mass are input errors; a failed α = 1 guarantee is
//!   [`CctpError::GuaranteeFailed`]. Nothing here panics on data.

use super::bootstrap::{percentile_sorted, sorted_without_nan};
use super::{argmax_first, kl_divergence, mean, pairwise_sum, FLATTENING_SLACK, PROB_EPS};

/// α at or below this returns the full-history distribution exactly.
pub const ALPHA_EPS: f64 = 1e-12;
/// Slack added to the KL threshold: `KL <= kl + 1e-10`.
pub const KL_CHECK_EPS: f64 = 1e-10;
/// Tolerance of the α = 1 implementation guarantee (|KL|, |Σq − 1|).
pub const GUARANTEE_TOL: f64 = 1e-8;
/// `configs/cctp_tube_main.yaml::alpha_grid_step`.
pub const ALPHA_GRID_STEP: f64 = 0.01;
/// `advocated_correct_suppressed = p_proj(c) < p_clean(c) − 0.05`.
pub const CORRECT_SUPPRESSION_SLACK: f64 = 0.05;
/// Decision threshold on mean history retention.
pub const STRONG_RETENTION_MIN: f64 = 0.25;
/// Decision threshold on guarantee / correct-pressure pass rates.
pub const DECISION_PASS_MIN: f64 = 0.99;

/// Interpolation path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// `softmax(center((1−α)·z_H + α·z_0))` on centred log-scores (main).
    LogitLinear,
    /// `normalize((1−α)·p_H + α·p_0)`.
    ProbLinear,
    /// `softmax((1−α)·ln max(p_H,1e-12) + α·ln max(p_0,1e-12))`.
    GeometricProb,
}

impl Path {
    pub fn name(self) -> &'static str {
        match self {
            Path::LogitLinear => "logit_linear",
            Path::ProbLinear => "prob_linear",
            Path::GeometricProb => "geometric_prob",
        }
    }
}

/// Thresholds of the full five-check tube.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tube {
    /// `top_clean_probability_slack`.
    pub p_slack: f64,
    pub entropy_slack: f64,
    pub max_slack: f64,
    /// `kl_threshold`.
    pub kl: f64,
}

impl Tube {
    pub const STRICT: Tube = Tube {
        p_slack: 0.03,
        entropy_slack: 0.10,
        max_slack: 0.10,
        kl: 0.05,
    };
    pub const MAIN: Tube = Tube {
        p_slack: 0.05,
        entropy_slack: 0.15,
        max_slack: 0.15,
        kl: 0.10,
    };
    pub const LOOSE: Tube = Tube {
        p_slack: 0.10,
        entropy_slack: 0.20,
        max_slack: 0.20,
        kl: 0.20,
    };
}

/// Which test a projected distribution must pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TubeSpec {
    /// All five checks.
    Full(Tube),
    /// Only `KL(P‖Q) <= tau + 1e-10`.
    KlOnly(f64),
}

/// A named CCTP condition (path + tube).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Variant {
    pub name: &'static str,
    pub path: Path,
    pub spec: TubeSpec,
}

/// The eight CCTP conditions of §6; the first is the primary.
pub const VARIANTS: [Variant; 8] = [
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

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Why an item could not be projected.
#[derive(Clone, Debug, PartialEq)]
pub enum CctpError {
    EmptyLabels,
    LengthMismatch {
        labels: usize,
        clean: usize,
        history: usize,
    },
    IndexOutOfRange {
        index: usize,
        len: usize,
    },
    NonFinite(&'static str),
    ZeroMass(&'static str),
    /// The α = 1 implementation guarantee failed (the artifact aborts here).
    GuaranteeFailed(GuaranteeCheck),
    /// No grid α passed (only possible with a custom grid that lacks 1.0).
    NoPassingAlpha,
}

impl std::fmt::Display for CctpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CctpError::EmptyLabels => write!(f, "CCTP: no common labels"),
            CctpError::LengthMismatch {
                labels,
                clean,
                history,
            } => {
                write!(
                    f,
                    "CCTP: length mismatch (labels {labels}, clean {clean}, history {history})"
                )
            }
            CctpError::IndexOutOfRange { index, len } => write!(
                f,
                "CCTP: option index {index} out of range for {len} labels"
            ),
            CctpError::NonFinite(what) => write!(f, "CCTP: non-finite values in {what}"),
            CctpError::ZeroMass(what) => write!(f, "CCTP: zero probability mass in {what}"),
            CctpError::GuaranteeFailed(g) => {
                write!(f, "CCTP: alpha=1 implementation guarantee failed: {g:?}")
            }
            CctpError::NoPassingAlpha => write!(f, "CCTP: no grid alpha passes the tube"),
        }
    }
}

impl std::error::Error for CctpError {}

// ---------------------------------------------------------------------------------------------
// Numerics
// ---------------------------------------------------------------------------------------------

/// `z − mean(z)`.
pub fn center(z: &[f64]) -> Vec<f64> {
    let m = mean(z);
    z.iter().map(|v| v - m).collect()
}

/// `exp(z − max z) / Σ exp(z − max z)`.
pub fn softmax(z: &[f64]) -> Vec<f64> {
    let mx = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - mx).exp()).collect();
    let s = pairwise_sum(&e);
    e.iter().map(|v| v / s).collect()
}

/// Negatives clipped to 0, divided by the sum. `None` when the sum is not positive and finite.
pub fn normalize_probs(p: &[f64]) -> Option<Vec<f64>> {
    let c: Vec<f64> = p.iter().map(|&v| if v > 0.0 { v } else { 0.0 }).collect();
    let s = pairwise_sum(&c);
    if !(s > 0.0 && s.is_finite()) {
        return None;
    }
    Some(c.iter().map(|v| v / s).collect())
}

/// CCTP entropy: clamp each probability to 1e-12, renormalise, `−Σ q ln q` (nats).
pub fn cctp_entropy(p: &[f64]) -> f64 {
    let c: Vec<f64> = p.iter().map(|v| v.max(PROB_EPS)).collect();
    let s = pairwise_sum(&c);
    let mut h = 0.0;
    for v in c {
        let q = v / s;
        h -= q * q.ln();
    }
    h
}

/// α grid: `np.arange(0, 1 + step/2, step)` rounded to 10 decimals (numpy `round`: `rint(x·1e10)
/// / 1e10`), values above 1 dropped, sorted, de-duplicated, 1.0 appended if missing.
/// `alpha_grid(0.01)` has 101 values `i / 100`.
pub fn alpha_grid(step: f64) -> Vec<f64> {
    if !(step > 0.0 && step.is_finite()) {
        return vec![0.0, 1.0];
    }
    let len = ((1.0 + step / 2.0) / step).ceil() as usize;
    let mut g: Vec<f64> = (0..len)
        .map(|i| (i as f64 * step * 1e10).round_ties_even() / 1e10)
        .filter(|&a| a <= 1.0)
        .collect();
    g.sort_by(|a, b| a.total_cmp(b));
    g.dedup();
    if g.last() != Some(&1.0) {
        g.push(1.0);
    }
    g
}

/// Bucket of an α\* value.
pub fn alpha_bucket(alpha: f64) -> &'static str {
    if alpha <= ALPHA_EPS {
        "alpha_000"
    } else if alpha >= 1.0 - ALPHA_EPS {
        "alpha_100"
    } else if alpha <= 0.10 {
        "alpha_001_010"
    } else if alpha <= 0.25 {
        "alpha_011_025"
    } else if alpha <= 0.50 {
        "alpha_026_050"
    } else if alpha <= 0.75 {
        "alpha_051_075"
    } else {
        "alpha_076_099"
    }
}

/// Bucket names in order.
pub const ALPHA_BUCKETS: [&str; 7] = [
    "alpha_000",
    "alpha_001_010",
    "alpha_011_025",
    "alpha_026_050",
    "alpha_051_075",
    "alpha_076_099",
    "alpha_100",
];

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/// One item's CCTP inputs, aligned on `labels` (sorted, common to both contexts).
#[derive(Clone, Debug, PartialEq)]
pub struct CctpInput {
    pub labels: Vec<String>,
    /// Unnormalised log-probabilities per label, clean context (`letter_logps`).
    pub clean_log_scores: Vec<f64>,
    /// Same for the full-history context (R0 or correct-pressure R0).
    pub history_log_scores: Vec<f64>,
    /// Optional stored option probabilities (`*_option_probs_json`); softmax of the log-scores
    /// when absent.
    pub clean_probs: Option<Vec<f64>>,
    pub history_probs: Option<Vec<f64>>,
    /// Index into `labels` of the advocated wrong option.
    pub wrong: usize,
    /// Index into `labels` of the correct option.
    pub correct: usize,
}

impl CctpInput {
    pub fn new(
        labels: Vec<String>,
        clean_log_scores: Vec<f64>,
        history_log_scores: Vec<f64>,
        wrong: usize,
        correct: usize,
    ) -> Self {
        CctpInput {
            labels,
            clean_log_scores,
            history_log_scores,
            clean_probs: None,
            history_probs: None,
            wrong,
            correct,
        }
    }
}

/// Intersects two labelled score maps and sorts the labels: returns `(labels, clean, history)`.
pub fn align_labels(
    clean: &[(String, f64)],
    history: &[(String, f64)],
) -> (Vec<String>, Vec<f64>, Vec<f64>) {
    let mut labels: Vec<String> = clean
        .iter()
        .filter(|(k, _)| history.iter().any(|(h, _)| h == k))
        .map(|(k, _)| k.clone())
        .collect();
    labels.sort();
    labels.dedup();
    let get = |m: &[(String, f64)], k: &str| {
        m.iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| *v)
            .unwrap_or(f64::NAN)
    };
    let c = labels.iter().map(|k| get(clean, k)).collect();
    let h = labels.iter().map(|k| get(history, k)).collect();
    (labels, c, h)
}

/// Validated, preprocessed item.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// Centred clean log-scores.
    pub z_clean: Vec<f64>,
    /// Centred history log-scores.
    pub z_history: Vec<f64>,
    /// Clean reference distribution P.
    pub p_clean: Vec<f64>,
    /// Full-history distribution.
    pub p_history: Vec<f64>,
    pub wrong: usize,
    pub correct: usize,
}

impl Prepared {
    pub fn new(input: &CctpInput) -> Result<Prepared, CctpError> {
        let n = input.labels.len();
        if n == 0 {
            return Err(CctpError::EmptyLabels);
        }
        let lens_ok = input.clean_log_scores.len() == n
            && input.history_log_scores.len() == n
            && input.clean_probs.as_ref().is_none_or(|p| p.len() == n)
            && input.history_probs.as_ref().is_none_or(|p| p.len() == n);
        if !lens_ok {
            return Err(CctpError::LengthMismatch {
                labels: n,
                clean: input.clean_log_scores.len(),
                history: input.history_log_scores.len(),
            });
        }
        for &i in &[input.wrong, input.correct] {
            if i >= n {
                return Err(CctpError::IndexOutOfRange { index: i, len: n });
            }
        }
        if input.clean_log_scores.iter().any(|v| !v.is_finite()) {
            return Err(CctpError::NonFinite("clean log-scores"));
        }
        if input.history_log_scores.iter().any(|v| !v.is_finite()) {
            return Err(CctpError::NonFinite("history log-scores"));
        }
        let z_clean = center(&input.clean_log_scores);
        let z_history = center(&input.history_log_scores);
        let probs = |given: &Option<Vec<f64>>,
                     z: &[f64],
                     what: &'static str|
         -> Result<Vec<f64>, CctpError> {
            match given {
                Some(p) => {
                    if p.iter().any(|v| !v.is_finite()) {
                        return Err(CctpError::NonFinite(what));
                    }
                    normalize_probs(p).ok_or(CctpError::ZeroMass(what))
                }
                None => Ok(softmax(z)),
            }
        };
        let p_clean = probs(&input.clean_probs, &z_clean, "clean probabilities")?;
        let p_history = probs(&input.history_probs, &z_history, "history probabilities")?;
        Ok(Prepared {
            z_clean,
            z_history,
            p_clean,
            p_history,
            wrong: input.wrong,
            correct: input.correct,
        })
    }

    /// Projected distribution at α on `path`; exact endpoints.
    pub fn project(&self, path: Path, alpha: f64) -> Vec<f64> {
        if alpha <= ALPHA_EPS {
            return self.p_history.clone();
        }
        if alpha >= 1.0 - ALPHA_EPS {
            return self.p_clean.clone();
        }
        let b = 1.0 - alpha;
        match path {
            Path::LogitLinear => {
                let z: Vec<f64> = self
                    .z_history
                    .iter()
                    .zip(&self.z_clean)
                    .map(|(h, c)| b * h + alpha * c)
                    .collect();
                softmax(&center(&z))
            }
            Path::ProbLinear => {
                let p: Vec<f64> = self
                    .p_history
                    .iter()
                    .zip(&self.p_clean)
                    .map(|(h, c)| b * h + alpha * c)
                    .collect();
                // both endpoints have positive mass, so the mixture does too
                normalize_probs(&p).unwrap_or(p)
            }
            Path::GeometricProb => {
                let z: Vec<f64> = self
                    .p_history
                    .iter()
                    .zip(&self.p_clean)
                    .map(|(h, c)| b * h.max(PROB_EPS).ln() + alpha * c.max(PROB_EPS).ln())
                    .collect();
                softmax(&z)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tube evaluation
// ---------------------------------------------------------------------------------------------

/// Check names in binding-priority order.
pub const BINDING_PRIORITY: [&str; 5] = [
    "top1_clean_match",
    "p_top_clean",
    "kl",
    "entropy",
    "max_prob",
];

/// Result of the tube test of Q against clean P.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TubeEval {
    pub top1_clean_match: bool,
    pub p_top_clean: bool,
    pub kl: bool,
    pub entropy: bool,
    pub max_prob: bool,
    /// `KL(P‖Q)`.
    pub kl_value: f64,
}

impl TubeEval {
    pub fn passes(&self) -> bool {
        self.top1_clean_match && self.p_top_clean && self.kl && self.entropy && self.max_prob
    }
    /// Failing checks in [`BINDING_PRIORITY`] order.
    pub fn failing(&self) -> Vec<&'static str> {
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

/// `tube_eval(P, Q)` (§6). Comparisons are plain f64, inclusive; KL gets `+ 1e-10`.
pub fn tube_eval(p_clean: &[f64], q: &[f64], spec: &TubeSpec) -> TubeEval {
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

/// The α = 1 implementation guarantee.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GuaranteeCheck {
    pub tube_pass: bool,
    pub same_top1: bool,
    /// `|KL(P‖Q_1)|`.
    pub kl_abs: f64,
    /// `|Σ Q_1 − 1|`.
    pub sum_error: f64,
    pub finite: bool,
}

impl GuaranteeCheck {
    pub fn passes(&self) -> bool {
        self.tube_pass
            && self.same_top1
            && self.kl_abs <= GUARANTEE_TOL
            && self.sum_error <= GUARANTEE_TOL
            && self.finite
    }
}

/// Evaluates the guarantee at α = 1 for `path` / `spec`.
pub fn guarantee_check(prep: &Prepared, path: Path, spec: &TubeSpec) -> GuaranteeCheck {
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

// ---------------------------------------------------------------------------------------------
// Per-item projection
// ---------------------------------------------------------------------------------------------

/// Per-item CCTP result at α\*.
#[derive(Clone, Debug, PartialEq)]
pub struct CctpItem {
    pub alpha_star: f64,
    /// Position of α\* in the grid.
    pub alpha_index: usize,
    /// `1 − α*`.
    pub history_retention: f64,
    pub alpha_bucket: &'static str,
    /// First failing check at the last failing grid α before α\*, in priority order; `none`
    /// when α\* is the first grid value.
    pub binding_constraint_primary: &'static str,
    /// All checks failing there (`binding_constraints_json`).
    pub binding_constraints: Vec<&'static str>,
    /// Tube result at α\* (passes by construction).
    pub tube_pass: bool,
    /// Projected distribution at α\*, label order.
    pub projected: Vec<f64>,
    /// argmax of `projected`, ties to the first label.
    pub prediction: usize,
    pub p_wrong: f64,
    pub p_correct: f64,
    /// `prediction == correct`.
    pub correct: bool,
    /// `prediction == wrong`.
    pub wrong_follow: bool,
    /// CCTP entropy of `projected`.
    pub entropy: f64,
    pub max_prob: f64,
    /// `H(proj) > H(clean) + 0.15 || max(proj) < max(clean) − 0.15`.
    pub flattening: bool,
    pub kl_clean_projected: f64,
    pub kl_projected_full: f64,
    pub kl_clean_full: f64,
    // references
    pub clean_prediction: usize,
    pub clean_p_wrong: f64,
    pub clean_p_correct: f64,
    pub clean_entropy: f64,
    pub clean_max_prob: f64,
    pub full_prediction: usize,
    pub full_p_wrong: f64,
    pub full_p_correct: f64,
    /// Full-history prediction == wrong.
    pub full_wrong_follow: bool,
    /// Full-history prediction == correct.
    pub full_correct: bool,
    pub guarantee: GuaranteeCheck,
}

impl CctpItem {
    /// Probability of the advocated option: `p_correct` in the correct-pressure run, else `p_wrong`.
    pub fn p_advocated(&self, advocated_is_correct: bool) -> f64 {
        if advocated_is_correct {
            self.p_correct
        } else {
            self.p_wrong
        }
    }
    /// Correct-pressure diagnostic `p_proj(c) < p_clean(c) − 0.05`.
    pub fn advocated_correct_suppressed(&self) -> bool {
        self.p_correct < self.clean_p_correct - CORRECT_SUPPRESSION_SLACK
    }
}

/// Projects one item: guarantee check at α = 1 first (error if it fails), then the upward scan.
pub fn project_item(
    input: &CctpInput,
    path: Path,
    spec: &TubeSpec,
    grid: &[f64],
) -> Result<CctpItem, CctpError> {
    let prep = Prepared::new(input)?;
    project_prepared(&prep, path, spec, grid)
}

/// [`project_item`] on an already prepared item (reuse across variants).
pub fn project_prepared(
    prep: &Prepared,
    path: Path,
    spec: &TubeSpec,
    grid: &[f64],
) -> Result<CctpItem, CctpError> {
    let guarantee = guarantee_check(prep, path, spec);
    if !guarantee.passes() {
        return Err(CctpError::GuaranteeFailed(guarantee));
    }
    let mut last_fail: Option<TubeEval> = None;
    let mut found: Option<(usize, Vec<f64>, TubeEval)> = None;
    for (i, &a) in grid.iter().enumerate() {
        let q = prep.project(path, a);
        let ev = tube_eval(&prep.p_clean, &q, spec);
        if ev.passes() {
            found = Some((i, q, ev));
            break;
        }
        last_fail = Some(ev);
    }
    let (idx, q, ev) = found.ok_or(CctpError::NoPassingAlpha)?;
    let alpha = grid[idx];
    let (primary, all) = match (idx, last_fail) {
        (0, _) | (_, None) => ("none", Vec::new()),
        (_, Some(f)) => {
            let all = f.failing();
            (all.first().copied().unwrap_or("none"), all)
        }
    };
    let pc = &prep.p_clean;
    let ph = &prep.p_history;
    let prediction = argmax_first(&q);
    let entropy = cctp_entropy(&q);
    let max_prob = q.iter().copied().fold(f64::NAN, f64::max);
    let clean_entropy = cctp_entropy(pc);
    let clean_prediction = argmax_first(pc);
    let clean_max_prob = pc[clean_prediction];
    let full_prediction = argmax_first(ph);
    Ok(CctpItem {
        alpha_star: alpha,
        alpha_index: idx,
        history_retention: 1.0 - alpha,
        alpha_bucket: alpha_bucket(alpha),
        binding_constraint_primary: primary,
        binding_constraints: all,
        tube_pass: ev.passes(),
        prediction,
        p_wrong: q[prep.wrong],
        p_correct: q[prep.correct],
        correct: prediction == prep.correct,
        wrong_follow: prediction == prep.wrong,
        entropy,
        max_prob,
        flattening: entropy > clean_entropy + FLATTENING_SLACK
            || max_prob < clean_max_prob - FLATTENING_SLACK,
        kl_clean_projected: ev.kl_value,
        kl_projected_full: kl_divergence(&q, ph),
        kl_clean_full: kl_divergence(pc, ph),
        clean_prediction,
        clean_p_wrong: pc[prep.wrong],
        clean_p_correct: pc[prep.correct],
        clean_entropy,
        clean_max_prob,
        full_prediction,
        full_p_wrong: ph[prep.wrong],
        full_p_correct: ph[prep.correct],
        full_wrong_follow: full_prediction == prep.wrong,
        full_correct: full_prediction == prep.correct,
        projected: q,
        guarantee,
    })
}

// ---------------------------------------------------------------------------------------------
// Pair summary
// ---------------------------------------------------------------------------------------------

/// Pair summary columns of §6 (`combined_summary.csv`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CctpSummary {
    pub n_items: usize,
    /// `mean(p_full(w) − p_clean(w))`.
    pub r0_gap: f64,
    pub ordinary_reset_wrong_follow: f64,
    pub ordinary_reset_p_wrong: f64,
    pub cctp_mean_alpha: f64,
    pub cctp_median_alpha: f64,
    pub cctp_p25_alpha: f64,
    pub cctp_p75_alpha: f64,
    pub mean_history_retention: f64,
    pub fraction_alpha_0: f64,
    pub fraction_alpha_le_025: f64,
    pub fraction_alpha_le_050: f64,
    pub fraction_alpha_eq_1: f64,
    /// Fraction of items whose projection passes the tube at α\* (1.0 by construction).
    pub cctp_clean_like_rate: f64,
    pub cctp_wrong_follow: f64,
    pub cctp_p_wrong: f64,
    pub cctp_accuracy: f64,
    pub cctp_p_correct: f64,
    pub cctp_flattening_rate: f64,
    pub mean_kl_clean_projected: f64,
    pub mean_entropy: f64,
    pub mean_max_prob: f64,
    /// `ok / (ok + n_guarantee_failures)`.
    pub implementation_guarantee_pass_rate: f64,
}

/// numpy `median` (mean of the two middle values for even n) over non-NaN values.
pub fn median(values: &[f64]) -> f64 {
    let s = sorted_without_nan(values);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        mean(&[s[n / 2 - 1], s[n / 2]])
    }
}

/// Summarises the successfully projected items of one pair; `n_guarantee_failures` counts the
/// items that returned [`CctpError::GuaranteeFailed`].
pub fn summarize(items: &[CctpItem], n_guarantee_failures: usize) -> CctpSummary {
    let col = |f: &dyn Fn(&CctpItem) -> f64| mean(&items.iter().map(f).collect::<Vec<_>>());
    let frac =
        |f: &dyn Fn(&CctpItem) -> bool| super::rate(&items.iter().map(f).collect::<Vec<_>>());
    let alphas: Vec<f64> = items.iter().map(|i| i.alpha_star).collect();
    let sorted = sorted_without_nan(&alphas);
    CctpSummary {
        n_items: items.len(),
        r0_gap: col(&|i| i.full_p_wrong - i.clean_p_wrong),
        ordinary_reset_wrong_follow: frac(&|i| i.full_wrong_follow),
        ordinary_reset_p_wrong: col(&|i| i.full_p_wrong),
        cctp_mean_alpha: mean(&alphas),
        cctp_median_alpha: median(&alphas),
        cctp_p25_alpha: percentile_sorted(&sorted, 25.0),
        cctp_p75_alpha: percentile_sorted(&sorted, 75.0),
        mean_history_retention: col(&|i| i.history_retention),
        fraction_alpha_0: frac(&|i| i.alpha_star <= ALPHA_EPS),
        fraction_alpha_le_025: frac(&|i| i.alpha_star <= 0.25),
        fraction_alpha_le_050: frac(&|i| i.alpha_star <= 0.50),
        fraction_alpha_eq_1: frac(&|i| i.alpha_star >= 1.0 - ALPHA_EPS),
        cctp_clean_like_rate: frac(&|i| i.tube_pass),
        cctp_wrong_follow: frac(&|i| i.wrong_follow),
        cctp_p_wrong: col(&|i| i.p_wrong),
        cctp_accuracy: frac(&|i| i.correct),
        cctp_p_correct: col(&|i| i.p_correct),
        cctp_flattening_rate: frac(&|i| i.flattening),
        mean_kl_clean_projected: col(&|i| i.kl_clean_projected),
        mean_entropy: col(&|i| i.entropy),
        mean_max_prob: col(&|i| i.max_prob),
        implementation_guarantee_pass_rate: super::count_ratio(
            items.len(),
            items.len() + n_guarantee_failures,
        ),
    }
}

/// Pair decision label (§6). `correct_pressure_pass_rate` is the caller's correct-pressure
/// check rate when that run exists. [gap] The artifact's exact rule for the two failure labels is
/// not released: `missing_logits_rerun_required` when no item could be projected,
/// `fix_implementation` when the guarantee pass rate is below 0.99.
pub fn decision_label(
    summary: &CctpSummary,
    correct_pressure_pass_rate: Option<f64>,
) -> &'static str {
    if summary.n_items == 0 {
        return "missing_logits_rerun_required";
    }
    let g = summary.implementation_guarantee_pass_rate;
    if g.is_nan() || g < DECISION_PASS_MIN {
        return "fix_implementation";
    }
    let cp_ok = correct_pressure_pass_rate.is_none_or(|r| r >= DECISION_PASS_MIN);
    if summary.mean_history_retention >= STRONG_RETENTION_MIN && cp_ok {
        "strong_positive_scale_result"
    } else {
        "report_as_clean_anchor_operator"
    }
}

#[cfg(test)]
#[allow(clippy::type_complexity, clippy::approx_constant)]
mod tests {
    use super::*;

    fn labels(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| ((b'A' + i as u8) as char).to_string())
            .collect()
    }
    fn input(clean: &[f64], hist: &[f64], wrong: usize, correct: usize) -> CctpInput {
        CctpInput::new(
            labels(clean.len()),
            clean.to_vec(),
            hist.to_vec(),
            wrong,
            correct,
        )
    }
    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn grid_has_101_exact_values() {
        let g = alpha_grid(ALPHA_GRID_STEP);
        assert_eq!(g.len(), 101);
        for (i, &a) in g.iter().enumerate() {
            assert_eq!(a, i as f64 / 100.0, "grid[{i}]");
        }
        assert_eq!(g[0], 0.0);
        assert_eq!(*g.last().unwrap(), 1.0);
        assert_eq!(g[10], 0.1);
        assert_eq!(g[25], 0.25);
        // a step that does not hit 1.0 gets it forced
        let g3 = alpha_grid(0.03);
        assert_eq!(*g3.last().unwrap(), 1.0);
        assert_eq!(g3[g3.len() - 2], 0.99);
        assert_eq!(g3.len(), 35);
        assert_eq!(alpha_grid(0.25), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn buckets() {
        let g = alpha_grid(0.01);
        let b = |i: usize| alpha_bucket(g[i]);
        assert_eq!(b(0), "alpha_000");
        assert_eq!(b(1), "alpha_001_010");
        assert_eq!(b(10), "alpha_001_010");
        assert_eq!(b(11), "alpha_011_025");
        assert_eq!(b(25), "alpha_011_025");
        assert_eq!(b(26), "alpha_026_050");
        assert_eq!(b(50), "alpha_026_050");
        assert_eq!(b(51), "alpha_051_075");
        assert_eq!(b(75), "alpha_051_075");
        assert_eq!(b(76), "alpha_076_099");
        assert_eq!(b(99), "alpha_076_099");
        assert_eq!(b(100), "alpha_100");
        assert_eq!(ALPHA_BUCKETS.len(), 7);
    }

    #[test]
    fn numerics() {
        let z = center(&[1.0, 2.0, 6.0]);
        assert_eq!(z, vec![-2.0, -1.0, 3.0]);
        let p = softmax(&[0.0, 0.0]);
        assert_eq!(p, vec![0.5, 0.5]);
        // huge scores do not overflow
        let p = softmax(&[-1000.0, 0.0]);
        assert_eq!(p[1], 1.0);
        assert_eq!(
            normalize_probs(&[-0.2, 0.5, 1.5]),
            Some(vec![0.0, 0.25, 0.75])
        );
        assert_eq!(normalize_probs(&[0.0, -1.0]), None);
        // CCTP entropy clamps and renormalises
        assert!(close(
            cctp_entropy(&[0.5, 0.5]),
            std::f64::consts::LN_2,
            1e-15
        ));
        let h = cctp_entropy(&[1.0, 0.0]);
        let q0: f64 = 1.0 / (1.0 + 1e-12);
        let q1: f64 = 1e-12 / (1.0 + 1e-12);
        assert!(close(h, -(q0 * q0.ln() + q1 * q1.ln()), 1e-20));
    }

    #[test]
    fn endpoints_exact_on_every_path() {
        let inp = input(&[-0.3, -2.5, -4.0, -1.2], &[-3.1, -0.2, -2.9, -1.9], 1, 0);
        let prep = Prepared::new(&inp).unwrap();
        for path in [Path::LogitLinear, Path::ProbLinear, Path::GeometricProb] {
            assert_eq!(prep.project(path, 0.0), prep.p_history);
            assert_eq!(prep.project(path, 1e-12), prep.p_history);
            assert_eq!(prep.project(path, 1.0), prep.p_clean);
            assert_eq!(prep.project(path, 1.0 - 1e-12), prep.p_clean);
            assert_ne!(prep.project(path, 0.5), prep.p_clean);
            let g = guarantee_check(&prep, path, &TubeSpec::Full(Tube::MAIN));
            assert!(g.passes());
            assert_eq!(g.kl_abs, 0.0);
        }
        // logit-linear equals normalised geometric interpolation
        let a = prep.project(Path::LogitLinear, 0.37);
        let b = prep.project(Path::GeometricProb, 0.37);
        for (x, y) in a.iter().zip(&b) {
            assert!(close(*x, *y, 1e-15));
        }
    }

    #[test]
    fn stored_probs_are_used_and_renormalised() {
        let mut inp = input(&[0.0, -1.0], &[-1.0, 0.0], 1, 0);
        inp.clean_probs = Some(vec![0.6, 0.2]);
        inp.history_probs = Some(vec![-0.1, 0.5]);
        let prep = Prepared::new(&inp).unwrap();
        assert!(close(prep.p_clean[0], 0.75, 1e-15));
        assert_eq!(prep.p_history, vec![0.0, 1.0]);
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

    #[test]
    fn identical_distributions_alpha_zero() {
        let inp = input(&[-0.5, -1.2, -2.3], &[-0.5, -1.2, -2.3], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        for v in VARIANTS {
            let r = project_item(&inp, v.path, &v.spec, &grid).unwrap();
            assert_eq!(r.alpha_star, 0.0, "{}", v.name);
            assert_eq!(r.history_retention, 1.0);
            assert_eq!(r.binding_constraint_primary, "none");
            assert!(r.binding_constraints.is_empty());
            assert_eq!(r.alpha_bucket, "alpha_000");
            assert_eq!(r.kl_clean_projected, 0.0);
            assert!(r.tube_pass);
        }
        // shifting log-scores by a constant changes nothing (centring)
        let shifted = input(&[-10.5, -11.2, -12.3], &[3.5, 2.8, 1.7], 1, 0);
        let r = project_item(
            &shifted,
            Path::LogitLinear,
            &TubeSpec::Full(Tube::MAIN),
            &grid,
        )
        .unwrap();
        assert_eq!(r.alpha_index, 0);
    }

    #[test]
    fn only_alpha_one_passes() {
        let inp = input(&[0.0, -1.0], &[-1000.0, 0.0], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        let r = project_item(&inp, Path::LogitLinear, &TubeSpec::Full(Tube::MAIN), &grid).unwrap();
        assert_eq!(r.alpha_index, 100);
        assert_eq!(r.alpha_star, 1.0);
        assert_eq!(r.history_retention, 0.0);
        assert_eq!(r.alpha_bucket, "alpha_100");
        assert_eq!(r.binding_constraint_primary, "top1_clean_match");
        assert_eq!(
            r.binding_constraints,
            vec!["top1_clean_match", "p_top_clean", "kl"]
        );
        assert_eq!(r.prediction, 0);
        assert!(r.correct && !r.wrong_follow);
        assert!(r.full_wrong_follow);
        assert_eq!(r.projected, Prepared::new(&inp).unwrap().p_clean);
    }

    #[test]
    fn errors_never_panic() {
        let grid = alpha_grid(ALPHA_GRID_STEP);
        let spec = TubeSpec::Full(Tube::MAIN);
        let e = |inp: &CctpInput| project_item(inp, Path::LogitLinear, &spec, &grid).unwrap_err();
        assert_eq!(
            e(&CctpInput::new(vec![], vec![], vec![], 0, 0)),
            CctpError::EmptyLabels
        );
        assert!(matches!(
            e(&CctpInput::new(labels(2), vec![0.0], vec![0.0, 1.0], 0, 1)),
            CctpError::LengthMismatch { .. }
        ));
        assert!(matches!(
            e(&input(&[0.0, 1.0], &[0.0, 1.0], 2, 0)),
            CctpError::IndexOutOfRange { index: 2, len: 2 }
        ));
        assert!(matches!(
            e(&input(&[0.0, f64::NAN], &[0.0, 1.0], 1, 0)),
            CctpError::NonFinite(_)
        ));
        assert!(matches!(
            e(&input(&[0.0, 1.0], &[f64::NEG_INFINITY, 1.0], 1, 0)),
            CctpError::NonFinite(_)
        ));
        let mut z = input(&[0.0, 1.0], &[0.0, 1.0], 1, 0);
        z.clean_probs = Some(vec![0.0, 0.0]);
        assert!(matches!(e(&z), CctpError::ZeroMass(_)));
        // a custom grid without 1.0 where nothing passes
        let r = project_item(
            &input(&[0.0, -1.0], &[-1000.0, 0.0], 1, 0),
            Path::LogitLinear,
            &spec,
            &[0.0, 0.5],
        );
        assert_eq!(r.unwrap_err(), CctpError::NoPassingAlpha);
        assert!(!CctpError::EmptyLabels.to_string().is_empty());
    }

    #[test]
    fn guarantee_failure_is_an_error() {
        // a KL-only spec with a negative tau cannot pass even at alpha = 1 (KL = 0 > tau + 1e-10)
        let inp = input(&[0.0, -1.0], &[-1.0, 0.0], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        match project_item(&inp, Path::LogitLinear, &TubeSpec::KlOnly(-1.0), &grid) {
            Err(CctpError::GuaranteeFailed(g)) => {
                assert!(!g.tube_pass && g.same_top1 && g.finite);
                assert!(!g.passes());
            }
            other => panic!("expected GuaranteeFailed, got {other:?}"),
        }
    }

    #[test]
    fn align_labels_intersects_and_sorts() {
        let c = vec![
            ("C".to_string(), -3.0),
            ("A".to_string(), -1.0),
            ("B".to_string(), -2.0),
        ];
        let h = vec![
            ("B".to_string(), -0.5),
            ("A".to_string(), -0.7),
            ("D".to_string(), -9.0),
        ];
        let (l, cv, hv) = align_labels(&c, &h);
        assert_eq!(l, vec!["A", "B"]);
        assert_eq!(cv, vec![-1.0, -2.0]);
        assert_eq!(hv, vec![-0.7, -0.5]);
    }

    #[test]
    fn matches_python_reference() {
        // Expected values from an independent numpy implementation of §6 (see the report).
        let grid = alpha_grid(ALPHA_GRID_STEP);
        for &(name, path, spec, idx, primary, fails, pw, pc, pred, h, maxp, flat, kcp, kpf, kcf) in
            EXPECTED
        {
            let &(_, clean, hist, w, c) = FIXTURES.iter().find(|f| f.0 == name).unwrap();
            let r = project_item(&input(clean, hist, w, c), path, &spec, &grid).unwrap();
            let tag = format!("{name}/{}/{spec:?}", path.name());
            assert_eq!(r.alpha_index, idx, "{tag}");
            assert_eq!(r.alpha_star, grid[idx], "{tag}");
            assert_eq!(r.binding_constraint_primary, primary, "{tag}");
            assert_eq!(r.binding_constraints, fails.to_vec(), "{tag}");
            assert_eq!(r.prediction, pred, "{tag}");
            assert_eq!(r.flattening, flat, "{tag}");
            for (got, want, what) in [
                (r.p_wrong, pw, "p_wrong"),
                (r.p_correct, pc, "p_correct"),
                (r.entropy, h, "entropy"),
                (r.max_prob, maxp, "max_prob"),
                (r.kl_clean_projected, kcp, "kl_clean_projected"),
                (r.kl_projected_full, kpf, "kl_projected_full"),
                (r.kl_clean_full, kcf, "kl_clean_full"),
            ] {
                assert!(close(got, want, 1e-12), "{tag} {what}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn summary_and_decision() {
        let grid = alpha_grid(ALPHA_GRID_STEP);
        let spec = TubeSpec::Full(Tube::MAIN);
        let items: Vec<CctpItem> = [
            input(&[-0.5, -1.2, -2.3], &[-0.5, -1.2, -2.3], 1, 0),
            input(&[0.0, -1.0], &[-1000.0, 0.0], 1, 0),
            FIXTURES
                .iter()
                .find(|f| f.0 == "swap3")
                .map(|f| input(f.1, f.2, f.3, f.4))
                .unwrap(),
        ]
        .iter()
        .map(|i| project_item(i, Path::LogitLinear, &spec, &grid).unwrap())
        .collect();
        let s = summarize(&items, 0);
        assert_eq!(s.n_items, 3);
        // alphas 0, 1, 0.9
        assert!(close(s.cctp_mean_alpha, 1.9 / 3.0, 1e-15));
        assert_eq!(s.cctp_median_alpha, 0.9);
        assert!(close(s.cctp_p25_alpha, 0.45, 1e-15));
        assert!(close(s.cctp_p75_alpha, 0.95, 1e-15));
        assert!(close(s.mean_history_retention, 1.1 / 3.0, 1e-15));
        assert!(close(s.fraction_alpha_0, 1.0 / 3.0, 1e-15));
        assert!(close(s.fraction_alpha_le_050, 1.0 / 3.0, 1e-15));
        assert!(close(s.fraction_alpha_eq_1, 1.0 / 3.0, 1e-15));
        assert_eq!(s.cctp_clean_like_rate, 1.0);
        assert_eq!(s.cctp_accuracy, 1.0);
        assert_eq!(s.implementation_guarantee_pass_rate, 1.0);
        // R0 wrong-follow: item 2 and 3 follow w in the full-history distribution
        assert!(close(s.ordinary_reset_wrong_follow, 2.0 / 3.0, 1e-15));
        assert!(s.r0_gap > 0.0);
        assert_eq!(decision_label(&s, None), "strong_positive_scale_result");
        assert_eq!(
            decision_label(&s, Some(0.5)),
            "report_as_clean_anchor_operator"
        );
        let s2 = summarize(&items, 1);
        assert_eq!(s2.implementation_guarantee_pass_rate, 0.75);
        assert_eq!(decision_label(&s2, None), "fix_implementation");
        let e = summarize(&[], 0);
        assert!(e.cctp_mean_alpha.is_nan());
        assert_eq!(decision_label(&e, None), "missing_logits_rerun_required");
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
        assert!(median(&[]).is_nan());
        // correct-pressure helpers
        let it = &items[2];
        assert_eq!(it.p_advocated(true), it.p_correct);
        assert_eq!(it.p_advocated(false), it.p_wrong);
        assert_eq!(
            it.advocated_correct_suppressed(),
            it.p_correct < it.clean_p_correct - 0.05
        );
    }

    const FIXTURES: &[(&str, &[f64], &[f64], usize, usize)] = &[
        (
            "identical",
            &[
                -0.5108256237659907,
                -1.2039728043259361,
                -2.3025850929940455,
            ],
            &[
                -0.5108256237659907,
                -1.2039728043259361,
                -2.3025850929940455,
            ],
            1,
            0,
        ),
        ("only_one", &[0.0, -1.0], &[-1000.0, 0.0], 1, 0),
        (
            "swap3",
            &[
                -0.35667494393873245,
                -1.6094379124341003,
                -2.3025850929940455,
            ],
            &[
                -1.6094379124341003,
                -0.35667494393873245,
                -2.3025850929940455,
            ],
            1,
            0,
        ),
        (
            "peaked",
            &[
                -0.10536051565782628,
                -3.912023005428146,
                -3.912023005428146,
                -3.912023005428146,
                -3.912023005428146,
                -3.912023005428146,
            ],
            &[
                -0.5978370007556204,
                -2.4079456086518722,
                -2.4079456086518722,
                -2.4079456086518722,
                -2.4079456086518722,
                -2.4079456086518722,
            ],
            1,
            0,
        ),
        (
            "unnorm",
            &[-0.3, -2.5, -4.0, -1.2],
            &[-3.1, -0.2, -2.9, -1.9],
            1,
            0,
        ),
        (
            "flat_hist",
            &[-0.6931471805599453, -0.7985076962177716, -2.995732273553991],
            &[
                -1.0788096613719298,
                -1.1086626245216111,
                -1.1086626245216111,
            ],
            1,
            0,
        ),
    ];
    // (fixture, path, spec, alpha index, primary, failing, p_wrong, p_correct, pred, entropy, max_prob, flattening, kl_clean_proj, kl_proj_full, kl_clean_full)
    #[rustfmt::skip]
    const EXPECTED: &[(&str, Path, TubeSpec, usize, &str, &[&str], f64, f64, usize, f64, f64, bool, f64, f64, f64)] = &[
        ("identical", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::LogitLinear, TubeSpec::KlOnly(0.05), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::LogitLinear, TubeSpec::KlOnly(0.10), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::ProbLinear, TubeSpec::KlOnly(0.05), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::ProbLinear, TubeSpec::KlOnly(0.10), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::GeometricProb, TubeSpec::KlOnly(0.05), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("identical", Path::GeometricProb, TubeSpec::KlOnly(0.10), 0, "none", &[], 0.29999999999999993, 0.6, 0, 0.8979457248567798, 0.6, false, 0.0, 0.0, 0.0),
        ("only_one", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 100, "top1_clean_match", &["top1_clean_match", "p_top_clean", "kl"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 100, "top1_clean_match", &["top1_clean_match", "p_top_clean", "kl"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 100, "top1_clean_match", &["top1_clean_match", "p_top_clean", "kl"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::LogitLinear, TubeSpec::KlOnly(0.05), 100, "kl", &["kl"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::LogitLinear, TubeSpec::KlOnly(0.10), 100, "kl", &["kl"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 94, "p_top_clean", &["p_top_clean"], 0.3128049360877954, 0.6871950639122045, 0, 0.6213265872926532, 0.6871950639122045, false, 0.004601208012243244, 18.366574734427335, 19.61769191421816),
        ("only_one", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 96, "p_top_clean", &["p_top_clean"], 0.29818376451519535, 0.7018162354848047, 0, 0.609317546446655, 0.7018162354848047, false, 0.0020841135317945687, 18.782581675735464, 19.61769191421816),
        ("only_one", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 87, "p_top_clean", &["p_top_clean"], 0.36397903659189573, 0.6360209634081042, 0, 0.6556732854101905, 0.6360209634081042, false, 0.020426333397094903, 16.918235384692355, 19.61769191421816),
        ("only_one", Path::ProbLinear, TubeSpec::KlOnly(0.05), 80, "kl", &["kl"], 0.41515313709599605, 0.5848468629040039, 0, 0.6786792912283972, 0.5848468629040039, false, 0.046369049705662205, 15.481236727256704, 19.61769191421816),
        ("only_one", Path::ProbLinear, TubeSpec::KlOnly(0.10), 71, "kl", &["kl"], 0.48094840917269654, 0.5190515908273035, 0, 0.6924210785754579, 0.5190515908273035, true, 0.094053862486842, 13.649504387830067, 19.61769191421816),
        ("only_one", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 100, "p_top_clean", &["p_top_clean"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 100, "p_top_clean", &["p_top_clean"], 0.2689414213699951, 0.7310585786300049, 0, 0.5822031088882179, 0.7310585786300049, false, 0.0, 19.61769191421816, 19.61769191421816),
        ("only_one", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 99, "p_top_clean", &["p_top_clean"], 0.32878404496081626, 0.6712159550391837, 0, 0.6333141688174022, 0.6712159550391837, false, 0.008401990534976748, 17.91306805821843, 19.61769191421816),
        ("only_one", Path::GeometricProb, TubeSpec::KlOnly(0.05), 98, "kl", &["kl"], 0.3947522375110686, 0.6052477624889313, 0, 0.6708264245648657, 0.6052477624889313, false, 0.03485434220652013, 16.052787281135302, 19.61769191421816),
        ("only_one", Path::GeometricProb, TubeSpec::KlOnly(0.10), 97, "kl", &["kl"], 0.46479102888373686, 0.5352089711162631, 0, 0.6906657841430263, 0.5352089711162631, true, 0.08083429518923455, 14.097704598204832, 19.61769191421816),
        ("swap3", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 90, "p_top_clean", &["p_top_clean"], 0.2400716307675425, 0.6540263983806168, 0, 0.8580185560408734, 0.6540263983806168, false, 0.005294471479705737, 0.5240721600930512, 0.6263814842476837),
        ("swap3", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 94, "p_top_clean", &["p_top_clean"], 0.2234499991772488, 0.6729150420260616, 0, 0.8363490089769041, 0.6729150420260616, false, 0.0018783620151966232, 0.5649932986749903, 0.6263814842476837),
        ("swap3", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 80, "p_top_clean", &["p_top_clean"], 0.28492482247850914, 0.6041866333345066, 0, 0.9060338242232686, 0.6041866333345066, false, 0.021920892401425723, 0.42332290356424385, 0.6263814842476837),
        ("swap3", Path::LogitLinear, TubeSpec::KlOnly(0.05), 71, "kl", &["kl"], 0.3289354520213322, 0.5566974885266969, 0, 0.9398044443598271, 0.5566974885266969, false, 0.04740772079083719, 0.336828519564729, 0.6263814842476837),
        ("swap3", Path::LogitLinear, TubeSpec::KlOnly(0.10), 59, "kl", &["kl"], 0.3918334515396156, 0.4909460359387806, 0, 0.9676707454161382, 0.4909460359387806, true, 0.09792971118581727, 0.232143796869549, 0.6263814842476837),
        ("swap3", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 90, "p_top_clean", &["p_top_clean"], 0.24999999999999997, 0.65, 0, 0.8568409950394725, 0.65, false, 0.0072468702447631775, 0.5087208933267807, 0.6263814842476837),
        ("swap3", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 94, "p_top_clean", &["p_top_clean"], 0.23000000000000007, 0.6699999999999999, 0, 0.8366039520330352, 0.6699999999999999, false, 0.0027094473858431016, 0.5540131957031251, 0.6263814842476837),
        ("swap3", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 80, "p_top_clean", &["p_top_clean"], 0.3, 0.6000000000000001, 0, 0.8979457248567797, 0.6000000000000001, false, 0.026812454257447618, 0.40497801508470505, 0.6263814842476837),
        ("swap3", Path::ProbLinear, TubeSpec::KlOnly(0.05), 73, "kl", &["kl"], 0.335, 0.5650000000000001, 0, 0.9191979941241915, 0.5650000000000001, false, 0.04681558967246839, 0.33987904191995544, 0.6263814842476837),
        ("swap3", Path::ProbLinear, TubeSpec::KlOnly(0.10), 60, "kl", &["kl"], 0.4, 0.49999999999999994, 0, 0.9433483923290392, 0.49999999999999994, true, 0.09690112952285981, 0.23429905076290852, 0.6263814842476837),
        ("swap3", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 90, "p_top_clean", &["p_top_clean"], 0.2400716307675425, 0.6540263983806168, 0, 0.8580185560408734, 0.6540263983806168, false, 0.005294471479705737, 0.5240721600930512, 0.6263814842476837),
        ("swap3", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 94, "p_top_clean", &["p_top_clean"], 0.22344999917724875, 0.6729150420260617, 0, 0.836349008976904, 0.6729150420260617, false, 0.0018783620151965504, 0.5649932986749905, 0.6263814842476837),
        ("swap3", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 80, "p_top_clean", &["p_top_clean"], 0.2849248224785091, 0.6041866333345067, 0, 0.9060338242232686, 0.6041866333345067, false, 0.021920892401425612, 0.4233229035642442, 0.6263814842476837),
        ("swap3", Path::GeometricProb, TubeSpec::KlOnly(0.05), 71, "kl", &["kl"], 0.3289354520213321, 0.5566974885266969, 0, 0.9398044443598271, 0.5566974885266969, false, 0.04740772079083723, 0.336828519564729, 0.6263814842476837),
        ("swap3", Path::GeometricProb, TubeSpec::KlOnly(0.10), 59, "kl", &["kl"], 0.3918334515396156, 0.4909460359387806, 0, 0.9676707454161382, 0.4909460359387806, true, 0.09792971118581727, 0.23214379686954903, 0.6263814842476837),
        ("peaked", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 81, "entropy", &["entropy"], 0.02793770599841836, 0.8603114700079079, 0, 0.6292176896544539, 0.8603114700079079, false, 0.007165741462677524, 0.22147072166422524, 0.2928210969103879),
        ("peaked", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 87, "entropy", &["entropy"], 0.025180754327395735, 0.8740962283630215, 0, 0.5811593967759514, 0.8740962283630215, false, 0.0032490921632390615, 0.2445771047863681, 0.2928210969103879),
        ("peaked", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 75, "entropy", &["entropy"], 0.03094307917299333, 0.8452846041350331, 0, 0.6798067866844987, 0.8452846041350331, true, 0.01280753600065726, 0.1980818839003738, 0.2928210969103879),
        ("peaked", Path::LogitLinear, TubeSpec::KlOnly(0.05), 54, "kl", &["kl"], 0.043550578294728956, 0.7822471085263556, 0, 0.8745088816565949, 0.7822471085263556, true, 0.048382598570874555, 0.1174845023497686, 0.2928210969103879),
        ("peaked", Path::LogitLinear, TubeSpec::KlOnly(0.10), 37, "kl", &["kl"], 0.056204487663305824, 0.7189775616834705, 0, 1.046204546871701, 0.7189775616834705, true, 0.09878171920467055, 0.06031358849266219, 0.2928210969103879),
        ("peaked", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 89, "entropy", &["entropy"], 0.027699999999999992, 0.8614999999999998, 0, 0.6251383290384475, 0.8614999999999998, false, 0.006777722656764234, 0.22339871391080351, 0.2928210969103879),
        ("peaked", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 93, "entropy", &["entropy"], 0.024899999999999995, 0.8755, 0, 0.5761710821140085, 0.8755, false, 0.0029260974468971832, 0.24702444032469523, 0.2928210969103879),
        ("peaked", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 84, "entropy", &["entropy"], 0.031199999999999995, 0.844, 0, 0.6840493507519411, 0.844, true, 0.013349459729374175, 0.1961645928354946, 0.2928210969103879),
        ("peaked", Path::ProbLinear, TubeSpec::KlOnly(0.05), 66, "kl", &["kl"], 0.04379999999999999, 0.7810000000000001, 0, 0.8781062809505965, 0.7810000000000001, true, 0.049247497753321635, 0.11614450493430312, 0.2928210969103879),
        ("peaked", Path::ProbLinear, TubeSpec::KlOnly(0.10), 48, "kl", &["kl"], 0.056399999999999985, 0.7180000000000001, 0, 1.04869382570738, 0.7180000000000001, true, 0.09965898635347603, 0.05959380247498321, 0.2928210969103879),
        ("peaked", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 81, "entropy", &["entropy"], 0.02793770599841837, 0.8603114700079079, 0, 0.6292176896544541, 0.8603114700079079, false, 0.007165741462677477, 0.22147072166422524, 0.2928210969103879),
        ("peaked", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 87, "entropy", &["entropy"], 0.025180754327395728, 0.8740962283630215, 0, 0.5811593967759513, 0.8740962283630215, false, 0.0032490921632390615, 0.24457710478636827, 0.2928210969103879),
        ("peaked", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 75, "entropy", &["entropy"], 0.03094307917299336, 0.8452846041350331, 0, 0.6798067866844991, 0.8452846041350331, true, 0.012807536000657123, 0.1980818839003738, 0.2928210969103879),
        ("peaked", Path::GeometricProb, TubeSpec::KlOnly(0.05), 54, "kl", &["kl"], 0.043550578294728935, 0.7822471085263556, 0, 0.8745088816565945, 0.7822471085263556, true, 0.048382598570874624, 0.1174845023497686, 0.2928210969103879),
        ("peaked", Path::GeometricProb, TubeSpec::KlOnly(0.10), 37, "kl", &["kl"], 0.05620448766330585, 0.7189775616834705, 0, 1.046204546871701, 0.7189775616834705, true, 0.09878171920467052, 0.060313588492662336, 0.2928210969103879),
        ("unnorm", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 93, "p_top_clean", &["p_top_clean"], 0.09528452916264049, 0.6017652741410797, 0, 0.963889768584268, 0.6017652741410797, false, 0.00596078405118583, 1.581928555283087, 1.7503604451523467),
        ("unnorm", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 96, "p_top_clean", &["p_top_clean"], 0.08455511238972228, 0.6222883306255115, 0, 0.9313959740274171, 0.6222883306255115, false, 0.0019036819823674694, 1.6557247145449754, 1.7503604451523467),
        ("unnorm", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 86, "p_top_clean", &["p_top_clean"], 0.12470528665628083, 0.5511203722820439, 0, 1.0374988193341115, 0.5511203722820439, false, 0.025090714210932223, 1.4015048445451266, 1.7503604451523467),
        ("unnorm", Path::LogitLinear, TubeSpec::KlOnly(0.05), 81, "kl", &["kl"], 0.14975950678778163, 0.5128742658767339, 0, 1.086489606305843, 0.5128742658767339, true, 0.047881611434810546, 1.2671073325754159, 1.7503604451523467),
        ("unnorm", Path::LogitLinear, TubeSpec::KlOnly(0.10), 74, "kl", &["kl"], 0.19077298152582023, 0.4571831802906346, 0, 1.1466916493102697, 0.4571831802906346, true, 0.09404390581544483, 1.0749083092693077, 1.7503604451523467),
        ("unnorm", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 92, "p_top_clean", &["p_top_clean"], 0.12741091357142226, 0.5999637787964863, 0, 0.9919360723997104, 0.5999637787964863, false, 0.016726417016307442, 1.4964276872162972, 1.7503604451523467),
        ("unnorm", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 96, "p_top_clean", &["p_top_clean"], 0.09963160327852164, 0.6242158464785056, 0, 0.9443790056814881, 0.6242158464785056, false, 0.004864595875826695, 1.618893281597054, 1.7503604451523467),
        ("unnorm", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 84, "p_top_clean", &["p_top_clean"], 0.18296953415722358, 0.5514596434324478, 0, 1.0662523917273787, 0.5514596434324478, true, 0.053626573391105097, 1.2722943125635595, 1.7503604451523467),
        ("unnorm", Path::ProbLinear, TubeSpec::KlOnly(0.05), 85, "kl", &["kl"], 0.17602470658399838, 0.5575226603529525, 0, 1.0582792999603514, 0.5575226603529525, true, 0.04824693982724017, 1.29899453624622, 1.7503604451523467),
        ("unnorm", Path::ProbLinear, TubeSpec::KlOnly(0.10), 77, "kl", &["kl"], 0.23158332716979965, 0.509018524988914, 0, 1.112933804362378, 0.509018524988914, true, 0.09642039431334071, 1.0945229765191242, 1.7503604451523467),
        ("unnorm", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 93, "p_top_clean", &["p_top_clean"], 0.09528452916264044, 0.6017652741410797, 0, 0.963889768584268, 0.6017652741410797, false, 0.005960784051185927, 1.581928555283087, 1.7503604451523467),
        ("unnorm", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 96, "p_top_clean", &["p_top_clean"], 0.08455511238972226, 0.6222883306255115, 0, 0.9313959740274171, 0.6222883306255115, false, 0.0019036819823675596, 1.6557247145449752, 1.7503604451523467),
        ("unnorm", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 86, "p_top_clean", &["p_top_clean"], 0.12470528665628082, 0.551120372282044, 0, 1.0374988193341115, 0.551120372282044, false, 0.025090714210932084, 1.4015048445451272, 1.7503604451523467),
        ("unnorm", Path::GeometricProb, TubeSpec::KlOnly(0.05), 81, "kl", &["kl"], 0.14975950678778163, 0.5128742658767339, 0, 1.086489606305843, 0.5128742658767339, true, 0.04788161143481056, 1.2671073325754159, 1.7503604451523467),
        ("unnorm", Path::GeometricProb, TubeSpec::KlOnly(0.10), 74, "kl", &["kl"], 0.1907729815258202, 0.45718318029063454, 0, 1.1466916493102695, 0.45718318029063454, true, 0.09404390581544488, 1.074908309269308, 1.7503604451523467),
        ("flat_hist", Path::LogitLinear, TubeSpec::Full(Tube::MAIN), 54, "p_top_clean", &["p_top_clean"], 0.4204386291910472, 0.4512067061699681, 0, 0.9868823355145637, 0.4512067061699681, false, 0.034779633027834156, 0.10831043183486631, 0.23804747569110102),
        ("flat_hist", Path::LogitLinear, TubeSpec::Full(Tube::STRICT), 69, "p_top_clean", &["p_top_clean"], 0.4338442196210013, 0.47089667820355063, 0, 0.9408991646532393, 0.47089667820355063, false, 0.01420874375417408, 0.1537057986866539, 0.23804747569110102),
        ("flat_hist", Path::LogitLinear, TubeSpec::Full(Tube::LOOSE), 30, "entropy", &["entropy"], 0.3889249829481983, 0.40989117926071233, 0, 1.0554611915475478, 0.40989117926071233, true, 0.09538588680568319, 0.04096496670421401, 0.23804747569110102),
        ("flat_hist", Path::LogitLinear, TubeSpec::KlOnly(0.05), 47, "kl", &["kl"], 0.41261454070870845, 0.4404757331393098, 0, 1.0081731071858, 0.4404757331393098, true, 0.048516791203938266, 0.08734001150607464, 0.23804747569110102),
        ("flat_hist", Path::LogitLinear, TubeSpec::KlOnly(0.10), 29, "kl", &["kl"], 0.3873137576689841, 0.4078849956496587, 0, 1.0579104164878683, 0.4078849956496587, true, 0.0988161835236779, 0.03857563228930562, 0.23804747569110102),
        ("flat_hist", Path::ProbLinear, TubeSpec::Full(Tube::MAIN), 69, "p_top_clean", &["p_top_clean"], 0.4128, 0.4504, 0, 0.9966172384618773, 0.4504, false, 0.04073912667899596, 0.09859961145711739, 0.23804747569110102),
        ("flat_hist", Path::ProbLinear, TubeSpec::Full(Tube::STRICT), 82, "p_top_clean", &["p_top_clean"], 0.4284, 0.4712, 0, 0.9484976531711715, 0.4712, false, 0.016941382836780518, 0.14609825511430974, 0.23804747569110102),
        ("flat_hist", Path::ProbLinear, TubeSpec::Full(Tube::LOOSE), 46, "entropy", &["entropy"], 0.38519999999999993, 0.41359999999999997, 0, 1.055242487631307, 0.41359999999999997, true, 0.09520877225229211, 0.0410729513315959, 0.23804747569110102),
        ("flat_hist", Path::ProbLinear, TubeSpec::KlOnly(0.05), 65, "kl", &["kl"], 0.40800000000000003, 0.44400000000000006, 0, 1.009024749588242, 0.44400000000000006, true, 0.04922348834027658, 0.08638315929491051, 0.23804747569110102),
        ("flat_hist", Path::ProbLinear, TubeSpec::KlOnly(0.10), 45, "kl", &["kl"], 0.384, 0.41200000000000003, 0, 1.057150440112225, 0.41200000000000003, true, 0.09785978869501646, 0.03921276359171756, 0.23804747569110102),
        ("flat_hist", Path::GeometricProb, TubeSpec::Full(Tube::MAIN), 54, "p_top_clean", &["p_top_clean"], 0.4204386291910472, 0.4512067061699681, 0, 0.9868823355145636, 0.4512067061699681, false, 0.03477963302783418, 0.10831043183486629, 0.23804747569110102),
        ("flat_hist", Path::GeometricProb, TubeSpec::Full(Tube::STRICT), 69, "p_top_clean", &["p_top_clean"], 0.4338442196210013, 0.47089667820355063, 0, 0.9408991646532393, 0.47089667820355063, false, 0.01420874375417408, 0.1537057986866539, 0.23804747569110102),
        ("flat_hist", Path::GeometricProb, TubeSpec::Full(Tube::LOOSE), 30, "entropy", &["entropy"], 0.38892498294819833, 0.40989117926071233, 0, 1.0554611915475476, 0.40989117926071233, true, 0.09538588680568313, 0.04096496670421407, 0.23804747569110102),
        ("flat_hist", Path::GeometricProb, TubeSpec::KlOnly(0.05), 47, "kl", &["kl"], 0.41261454070870845, 0.4404757331393098, 0, 1.0081731071858, 0.4404757331393098, true, 0.048516791203938266, 0.08734001150607464, 0.23804747569110102),
        ("flat_hist", Path::GeometricProb, TubeSpec::KlOnly(0.10), 29, "kl", &["kl"], 0.3873137576689841, 0.40788499564965863, 0, 1.0579104164878683, 0.40788499564965863, true, 0.09881618352367795, 0.038575632289305536, 0.23804747569110102),
    ];
}
