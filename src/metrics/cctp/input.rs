//! One item's inputs: label alignment, validation and the prepared endpoints (the clean
//! reference P and the full-history distribution), and the errors of an unusable item.

use super::numerics::{center, normalize_probs, softmax, ALPHA_EPS};
use super::spec::{GuaranteeCheck, Path};
use crate::metrics::PROB_EPS;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Why an item could not be projected.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CctpError {
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
// Inputs
// ---------------------------------------------------------------------------------------------

/// One item's CCTP inputs, aligned on `labels` (sorted, common to both contexts).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CctpInput {
    pub(crate) labels: Vec<String>,
    /// Unnormalised log-probabilities per label, clean context (`letter_logps`).
    pub(crate) clean_log_scores: Vec<f64>,
    /// Same for the full-history context (R0 or correct-pressure R0).
    pub(crate) history_log_scores: Vec<f64>,
    /// Optional stored option probabilities (`*_option_probs_json`); softmax of the log-scores
    /// when absent.
    pub(crate) clean_probs: Option<Vec<f64>>,
    pub(crate) history_probs: Option<Vec<f64>>,
    /// Index into `labels` of the advocated wrong option.
    pub(crate) wrong: usize,
    /// Index into `labels` of the correct option.
    pub(crate) correct: usize,
}

impl CctpInput {
    pub(crate) fn new(
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
pub(crate) fn align_labels(
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
pub(crate) struct Prepared {
    /// Centred clean log-scores.
    pub(crate) z_clean: Vec<f64>,
    /// Centred history log-scores.
    pub(crate) z_history: Vec<f64>,
    /// Clean reference distribution P.
    pub(crate) p_clean: Vec<f64>,
    /// Full-history distribution.
    pub(crate) p_history: Vec<f64>,
    pub(crate) wrong: usize,
    pub(crate) correct: usize,
}

impl Prepared {
    pub(crate) fn new(input: &CctpInput) -> Result<Prepared, CctpError> {
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
    pub(crate) fn project(&self, path: Path, alpha: f64) -> Vec<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cctp::reference::{close, input};

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
}
