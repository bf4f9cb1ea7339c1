//! Table 8 — the expanded family ramp (Gap = Reset - Fresh).

use super::output::CriterionFamily;
use crate::dialogue::CurvePoint;
use crate::dialogue::conditions::ids;
use serde::Serialize;

use super::common::*;
use super::format::{Num, Pct};
use super::index::{dataset_display, dataset_short};
use super::{Ctx, Output};
use crate::metrics::{hysteresis_gap, mean, positive_hysteresis_rate, rate, unconditional_lock_in};

/// `table08_expanded_family_ramp.csv`.
#[derive(Serialize, Default)]
struct Table08Row {
    model: String,
    model_key: String,
    dataset: String,
    dataset_key: String,
    strong_pressure_p_wrong: Num,
    full_history_reset_p_wrong: Num,
    fresh_context_p_wrong: Num,
    full_history_reset_hysteresis_gap: Num,
    full_history_reset_positive_hysteresis_rate: Num,
    full_history_reset_wrong_answer_following: Num,
    full_history_reset_conditional_lock_in: Num,
    remove_all_pressure_hysteresis_gap: Num,
    reset_only_hysteresis_gap: Num,
    source_artifact: String,
}

/// Markdown/LaTeX view: the paper's columns (fractions, as printed), then n and WF.
#[derive(Serialize, Default)]
struct Table08View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Press.")]
    press: Num,
    #[serde(rename = "Reset")]
    reset: Num,
    #[serde(rename = "Fresh")]
    fresh: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "Pos.")]
    positive: Num,
    n: usize,
    #[serde(rename = "WF (%)")]
    wrong_follow: Pct,
}

pub(super) fn table08(ctx: &Ctx) -> Vec<Output> {
    let mut t = Vec::new();
    let mut d = Vec::new();
    for p in &ctx.idx.pairs {
        if !p.has(CurvePoint::StrongPressure.key()) {
            continue;
        }
        let (Some(reset), Some(fresh)) = (
            p.resolve(p.reg.sources(ids::FULL_HISTORY_RESET)),
            p.resolve(p.reg.sources(ids::FRESH_CONTEXT)),
        ) else {
            continue;
        };
        let a = p.align(&[CurvePoint::StrongPressure.key(), reset, fresh]);
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
        let (press_pw, reset_pw, fresh_pw) = (mean(&pw(&press)), mean(&pw(&r)), mean(&pw(&f)));
        t.push(Table08Row {
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: dataset_display(&p.dataset),
            dataset_key: p.dataset.clone(),
            strong_pressure_p_wrong: Num(press_pw),
            full_history_reset_p_wrong: Num(reset_pw),
            fresh_context_p_wrong: Num(fresh_pw),
            full_history_reset_hysteresis_gap: Num(gap),
            full_history_reset_positive_hysteresis_rate: Num(pos),
            full_history_reset_wrong_answer_following: Num(wf),
            full_history_reset_conditional_lock_in: Num(unconditional_lock_in(&press, &r)),
            remove_all_pressure_hysteresis_gap: Num(side_gap(ids::REMOVE_ALL_PRESSURE)),
            reset_only_hysteresis_gap: Num(side_gap(ids::RESET_ONLY)),
            source_artifact: format!("hyst-tui item rows (reset={reset}; fresh={fresh})"),
        });
        d.push(Table08View {
            model: p.model.clone(),
            dataset: dataset_short(&p.dataset),
            press: Num(press_pw),
            reset: Num(reset_pw),
            fresh: Num(fresh_pw),
            gap: Num(gap),
            positive: Num(pos),
            n,
            wrong_follow: Pct(wf),
        });
    }
    vec![Output::new("table08_expanded_family_ramp", "Expanded family ramp (Gap = Reset - Fresh)", CriterionFamily::None, &t)
        .with_display(&d)
        .with_notes(vec![
            "Reset = full_history_reset (else R0); Fresh = fresh_context (else the clean probe); Gap = mean over items of p_reset(w) - p_fresh(w); Pos. = share of items with gap > 0.".into(),
            "As in the artifact's auxiliary table, full_history_reset_conditional_lock_in holds the UNCONDITIONAL lock-in rate (share of all items following w at strong pressure and at reset).".into(),
            "Computed for every pair of the run (the paper shows Llama and Gemma only).".into(),
        ])]
}
