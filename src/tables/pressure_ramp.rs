//! Table 2 — the pressure ramp (clean, strong pressure, strong reset) with paired CIs.

use super::output::CriterionFamily;
use crate::dialogue::CurvePoint;
use serde::Serialize;

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::{Ci, Num};

use super::{Ctx, Output};
use crate::metrics::bootstrap::SEED_OFFSET_PRESSURE_RAMP;
use crate::metrics::{conditional_lock_in_flags, item_gaps, mean, positive_hysteresis_flags, rate};

/// Markdown/LaTeX view: the paper's columns as printed (`Clean, Press., Reset, Gap, Pos.,
/// Reset WF`, fractions), one row per pair, then the extra columns.
#[derive(Serialize, Default)]
struct RampView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Clean")]
    clean_pw: Num,
    #[serde(rename = "Press.")]
    press_pw: Num,
    #[serde(rename = "Reset")]
    reset_pw: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "Pos.")]
    positive: Num,
    /// The paper's "Reset WF": the conditional lock-in.
    #[serde(rename = "Reset WF")]
    lock_in: Num,
    n: usize,
    #[serde(rename = "Gap 95% CI")]
    gap_ci: Ci,
    #[serde(rename = "Reset WF 95% CI")]
    lock_in_ci: Ci,
    #[serde(rename = "Wrong after press. (den.)")]
    lock_in_den: usize,
    #[serde(rename = "All-items reset WF")]
    reset_wf: Num,
}

pub(super) fn table02(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_PRESSURE_RAMP);
    let mut long = Vec::new();
    let mut wide = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(c0), Some(probe)) = (
            p.resolve(p.reg.sources(CurvePoint::CleanContext.key())),
            p.clean(),
        ) else {
            continue;
        };
        if !p.has(CurvePoint::StrongPressure.key()) || !p.has(CurvePoint::StrongReset.key()) {
            continue;
        }
        let al = p.align(&[c0, probe, CurvePoint::StrongPressure.key(), CurvePoint::StrongReset.key()]);
        let n = al.n();
        if n == 0 {
            continue;
        }
        let (clean, probe_o, press, reset) = (al.obs(0), al.obs(1), al.obs(2), al.obs(3));
        let clean_pw = pw(&clean);
        let press_pw = pw(&press);
        let reset_pw = pw(&reset);
        let gaps = item_gaps(&reset, &probe_o);
        let pos = as_f64(&positive_hysteresis_flags(&reset, &probe_o));
        let lock = conditional_lock_in_flags(&press, &reset);
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[
                Stat::Mean(&clean_pw),
                Stat::Mean(&press_pw),
                Stat::Mean(&reset_pw),
                Stat::Mean(&gaps),
                Stat::Mean(&pos),
                Stat::Ratio(&lock),
            ],
        );
        let (lock_rate, den) = lock.rate();
        let est = [
            mean(&clean_pw),
            mean(&press_pw),
            mean(&reset_pw),
            mean(&gaps),
            mean(&pos),
            lock_rate,
        ];
        let names = [
            "clean_pw_mean",
            "press_pw_mean",
            "reset_pw_mean",
            "hysteresis_gap",
            "positive_hysteresis_rate",
            "lock_in",
        ];
        for k in 0..6 {
            let mut r = LongRow::new(
                "pressure_ramp",
                p,
                "pressure_ramp",
                names[k],
                est[k],
                cis[k],
                n,
            );
            if k == 5 {
                r = r.notes(format!("pressure_wrong_denominator={den}"));
            }
            long.push(r);
        }
        let reset_wf = rate(&wf_flags(&reset));
        let (model, dataset) = model_dataset(p);
        wide.push(RampView {
            model,
            dataset,
            clean_pw: Num(est[0]),
            press_pw: Num(est[1]),
            reset_pw: Num(est[2]),
            gap: Num(est[3]),
            positive: Num(est[4]),
            lock_in: Num(lock_rate),
            n,
            gap_ci: Ci::from(cis[3]),
            lock_in_ci: Ci::from(cis[5]),
            lock_in_den: den,
            reset_wf: Num(reset_wf),
        });
    }
    sort_by_model_dataset(&mut wide, |r| (&r.model, &r.dataset));
    vec![Output::new("table02_pressure_ramp", "Pressure ramp", CriterionFamily::None, &long_table(long, samples, seed))
        .with_display(&wide)
        .with_notes(vec![
            "Gap = mean over items of p_strong_reset(w) - p_clean_probe(w); Pos. = share of items with gap > 0 (strict, no tolerance).".into(),
            "Reset WF (the paper's column, CSV metric lock_in) is the conditional lock-in: #(strong pressure follows w and reset follows w) / #(strong pressure follows w); the denominator is 'Wrong after press. (den.)' (CSV notes pressure_wrong_denominator). The paper's 0.746 for Qwen-1.5B TQA is this number.".into(),
            format!("Paired item bootstrap: {samples} replicates, numpy default_rng({seed}) = base seed + 1, one index matrix per pair shared by all six metrics, pairs in the fixed order; percentile 2.5/97.5."),
            "All-items reset WF = share of ALL items whose reset prediction is the advocated wrong option (the plain wrong-following rate; Markdown/LaTeX only, not part of the long CSV).".into(),
        ])]
}
