//! Table 9 — the ordinary-reset (R0) gap per pair with a paired item bootstrap CI.

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{dataset_display, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_PRESSURE_RAMP};
use crate::metrics::{item_gaps, mean, positive_hysteresis_rate};

pub(super) fn table09(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_PRESSURE_RAMP;
    let mut stream = IndexStream::new(seed);
    let mut t = Table::new(&[
        "model",
        "model_key",
        "dataset",
        "dataset_key",
        "condition",
        "n_items",
        "clean_p_wrong",
        "ordinary_reset_p_wrong",
        "hysteresis_gap",
        "ci_low",
        "ci_high",
        "positive_hysteresis_rate",
        "bootstrap_samples",
        "seed",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Clean p(w)",
        "R0 p(w)",
        "Gap",
        "95% CI",
        "Pos. (%)",
    ]);
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let a = p.align(&[clean, r0]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (c, r) = (a.obs(0), a.obs(1));
        let gaps = item_gaps(&r, &c);
        let cis = paired_cis(&mut stream, n, samples, &[Stat::Mean(&gaps)]);
        let pos = positive_hysteresis_rate(&r, &c);
        t.push(vec![
            txt(p.model.clone()),
            txt(p.model_key.clone()),
            txt(dataset_display(&p.dataset)),
            txt(p.dataset.clone()),
            txt(r0),
            int(n),
            num(mean(&pw(&c))),
            num(mean(&pw(&r))),
            num(mean(&gaps)),
            num(cis[0].0),
            num(cis[0].1),
            num(pos),
            int(samples),
            uint(seed),
        ]);
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(mean(&pw(&c))),
            num(mean(&pw(&r))),
            num(mean(&gaps)),
            ci(cis[0].0, cis[0].1),
            pct(pos),
        ]);
        d.push(cells);
    }
    if t.is_empty() {
        return Vec::new();
    }
    vec![Output::from_table("table09_ordinary_reset_gap", "Ordinary-reset (R0) hysteresis gap with paired item bootstrap 95% CI, every pair", NO_CRITERION, t)
        .with_display_table(d)
        .with_notes(vec![
            "Gap = mean over items of p_R0(w) - p_clean(w) (clean = clean probe).".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) (the pressure-ramp stream, base seed + 1), pairs in the fixed order; with the same items as Table 2 the interval equals Table 2's hysteresis_gap interval. The artifact's mapping for this table is not recoverable (protocol §12.15)."),
        ])]
}
