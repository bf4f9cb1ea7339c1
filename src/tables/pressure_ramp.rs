//! Table 2 — the pressure ramp (clean, strong pressure, strong reset) with paired CIs.

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{dataset_display, CLEAN_REF};
use super::{Ctx, Output};
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_PRESSURE_RAMP};
use crate::metrics::{conditional_lock_in_flags, item_gaps, mean, positive_hysteresis_flags, rate};

pub(super) fn table02(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_PRESSURE_RAMP;
    let mut stream = IndexStream::new(seed);
    let mut long = Vec::new();
    let mut wide: Vec<((String, String), Vec<Cell>)> = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(c0), Some(probe)) = (
            p.resolve(&["clean_context", "clean_context_probe"]),
            p.resolve(&CLEAN_REF),
        ) else {
            continue;
        };
        if !p.has("strong_pressure") || !p.has("strong_reset") {
            continue;
        }
        let al = p.align(&[c0, probe, "strong_pressure", "strong_reset"]);
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
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(est[0]),
            num(est[1]),
            num(est[2]),
            num(est[3]),
            ci(cis[3].0, cis[3].1),
            pct(est[4]),
            pct(reset_wf),
            pct(lock_rate),
            int(den),
        ]);
        wide.push(((p.model.clone(), dataset_display(&p.dataset)), cells));
    }
    if long.is_empty() {
        return Vec::new();
    }
    wide.sort_by(|a, b| a.0.cmp(&b.0));
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Clean p(w)",
        "Press. p(w)",
        "Reset p(w)",
        "Gap",
        "Gap 95% CI",
        "Pos. (%)",
        "Reset WF (%)",
        "Lock-in (%)",
        "Lock-in den.",
    ]);
    for (_, c) in wide {
        d.push(c);
    }
    vec![Output::new("table02_pressure_ramp", "Pressure ramp", NO_CRITERION, &long_table(long, samples, seed))
        .with_display_table(d)
        .with_notes(vec![
            "Gap = mean over items of p_strong_reset(w) - p_clean_probe(w); Pos. = share of items with gap > 0 (strict, no tolerance).".into(),
            "lock_in is conditional: #(strong pressure follows w and reset follows w) / #(strong pressure follows w); the denominator is in notes (pressure_wrong_denominator).".into(),
            format!("Paired item bootstrap: {samples} replicates, numpy default_rng({seed}) = base seed + 1, one index matrix per pair shared by all six metrics, pairs in the fixed order; percentile 2.5/97.5."),
            "Reset WF is shown for the paper layout only (not part of the long CSV).".into(),
        ])]
}
