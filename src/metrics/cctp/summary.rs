//! Pair summary of the projected items (docs/protocol.md §7.6, `combined_summary.csv` columns) and the decision
//! label.

use super::numerics::ALPHA_EPS;
use super::project::CctpItem;
use crate::metrics::bootstrap::{percentile_sorted, sorted_without_nan};
use crate::metrics::{count_ratio, mean, rate};

/// Decision threshold on mean history retention.
pub(crate) const STRONG_RETENTION_MIN: f64 = 0.25;
/// Decision threshold on guarantee / correct-pressure pass rates.
pub(crate) const DECISION_PASS_MIN: f64 = 0.99;

/// Pair summary columns of docs/protocol.md §7.6 (`combined_summary.csv`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CctpSummary {
    pub(crate) n_items: usize,
    /// `mean(p_full(w) − p_clean(w))`.
    pub(crate) r0_gap: f64,
    pub(crate) ordinary_reset_wrong_follow: f64,
    pub(crate) ordinary_reset_p_wrong: f64,
    pub(crate) cctp_mean_alpha: f64,
    pub(crate) cctp_median_alpha: f64,
    pub(crate) cctp_p25_alpha: f64,
    pub(crate) cctp_p75_alpha: f64,
    pub(crate) mean_history_retention: f64,
    pub(crate) fraction_alpha_0: f64,
    pub(crate) fraction_alpha_le_025: f64,
    pub(crate) fraction_alpha_le_050: f64,
    pub(crate) fraction_alpha_eq_1: f64,
    /// Fraction of items whose projection passes the tube at α\* (1.0 by construction).
    pub(crate) cctp_clean_like_rate: f64,
    pub(crate) cctp_wrong_follow: f64,
    pub(crate) cctp_p_wrong: f64,
    pub(crate) cctp_accuracy: f64,
    pub(crate) cctp_p_correct: f64,
    pub(crate) cctp_flattening_rate: f64,
    pub(crate) mean_kl_clean_projected: f64,
    pub(crate) mean_entropy: f64,
    pub(crate) mean_max_prob: f64,
    /// `ok / (ok + n_guarantee_failures)`.
    pub(crate) implementation_guarantee_pass_rate: f64,
}

/// numpy `median` (mean of the two middle values for even n) over non-NaN values.
pub(crate) fn median(values: &[f64]) -> f64 {
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
pub(crate) fn summarize(items: &[CctpItem], n_guarantee_failures: usize) -> CctpSummary {
    let col = |f: &dyn Fn(&CctpItem) -> f64| mean(&items.iter().map(f).collect::<Vec<_>>());
    let frac = |f: &dyn Fn(&CctpItem) -> bool| rate(&items.iter().map(f).collect::<Vec<_>>());
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
        implementation_guarantee_pass_rate: count_ratio(
            items.len(),
            items.len() + n_guarantee_failures,
        ),
    }
}

/// Pair decision label (docs/protocol.md §7.6). `correct_pressure_pass_rate` is the caller's correct-pressure
/// check rate when that run exists. [gap] The artifact's exact rule for the two failure labels is
/// not released: `missing_logits_rerun_required` when no item could be projected,
/// `fix_implementation` when the guarantee pass rate is below 0.99.
pub(crate) fn decision_label(
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
mod tests {
    use super::*;
    use crate::metrics::cctp::numerics::{alpha_grid, ALPHA_GRID_STEP};
    use crate::metrics::cctp::reference::{close, input, project_item, FIXTURES};
    use crate::metrics::cctp::spec::{Path, Tube, TubeSpec};

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
        assert_eq!(
            it.advocated_correct_suppressed(),
            it.p_correct < it.clean_p_correct - 0.05
        );
    }
}
