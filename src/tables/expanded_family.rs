//! Table 8 — the expanded family ramp (Gap = Reset - Fresh).

use super::common::*;
use super::format::*;
use super::index::dataset_display;
use super::{Ctx, Output};
use crate::metrics::{hysteresis_gap, mean, positive_hysteresis_rate, rate, unconditional_lock_in};

pub(super) fn table08(ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "model",
        "model_key",
        "dataset",
        "dataset_key",
        "strong_pressure_p_wrong",
        "full_history_reset_p_wrong",
        "fresh_context_p_wrong",
        "full_history_reset_hysteresis_gap",
        "full_history_reset_positive_hysteresis_rate",
        "full_history_reset_wrong_answer_following",
        "full_history_reset_conditional_lock_in",
        "remove_all_pressure_hysteresis_gap",
        "reset_only_hysteresis_gap",
        "source_artifact",
    ]);
    let mut d = Table::new(&[
        "Model", "Dataset", "n", "Press.", "Reset", "Fresh", "Gap", "Pos. (%)", "WF (%)",
    ]);
    for p in &ctx.idx.pairs {
        if !p.has("strong_pressure") {
            continue;
        }
        let (Some(reset), Some(fresh)) = (
            p.resolve(&[
                "full_history_reset",
                "ordinary_strong_reset",
                "strong_reset",
            ]),
            p.resolve(&["fresh_context", "clean_context_probe", "clean_context"]),
        ) else {
            continue;
        };
        let a = p.align(&["strong_pressure", reset, fresh]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (press, r, f) = (a.obs(0), a.obs(1), a.obs(2));
        let gap = hysteresis_gap(&r, &f);
        let pos = positive_hysteresis_rate(&r, &f);
        let wf = rate(&wf_flags(&r));
        let side_gap = |c: &str| -> f64 {
            if !p.has(c) {
                return f64::NAN;
            }
            let a = p.align(&[fresh, c]);
            if a.n() == 0 {
                f64::NAN
            } else {
                hysteresis_gap(&a.obs(1), &a.obs(0))
            }
        };
        t.push(vec![
            txt(p.model.clone()),
            txt(p.model_key.clone()),
            txt(dataset_display(&p.dataset)),
            txt(p.dataset.clone()),
            num(mean(&pw(&press))),
            num(mean(&pw(&r))),
            num(mean(&pw(&f))),
            num(gap),
            num(pos),
            num(wf),
            num(unconditional_lock_in(&press, &r)),
            num(side_gap("remove_all_pressure")),
            num(side_gap("reset_only")),
            txt(format!("hyst-tui item rows (reset={reset}; fresh={fresh})")),
        ]);
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(mean(&pw(&press))),
            num(mean(&pw(&r))),
            num(mean(&pw(&f))),
            num(gap),
            pct(pos),
            pct(wf),
        ]);
        d.push(cells);
    }
    if t.is_empty() {
        return Vec::new();
    }
    vec![Output::from_table("table08_expanded_family_ramp", "Expanded family ramp (Gap = Reset - Fresh)", NO_CRITERION, t)
        .with_display_table(d)
        .with_notes(vec![
            "Reset = full_history_reset (else R0); Fresh = fresh_context (else the clean probe); Gap = mean over items of p_reset(w) - p_fresh(w); Pos. = share of items with gap > 0.".into(),
            "As in the artifact's auxiliary table, full_history_reset_conditional_lock_in holds the UNCONDITIONAL lock-in rate (share of all items following w at strong pressure and at reset).".into(),
            "Computed for every pair of the run (the paper shows Llama and Gemma only).".into(),
        ])]
}
