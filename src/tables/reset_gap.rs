//! Table 9 — the ordinary-reset (R0) gap per pair with a paired item bootstrap CI.

use super::output::CriterionFamily;
use super::boot::{paired_cis, Stat};
use serde::Serialize;

use super::common::*;
use super::format::{Ci, Num, Pct};
use super::index::{dataset_display, dataset_short};
use super::{Ctx, Output};
use crate::metrics::bootstrap::SEED_OFFSET_PRESSURE_RAMP;
use crate::metrics::{item_gaps, mean, positive_hysteresis_rate};

/// `table09_ordinary_reset_gap.csv`.
#[derive(Serialize, Default)]
struct Table09Row {
    model: String,
    model_key: String,
    dataset: String,
    dataset_key: String,
    condition: &'static str,
    n_items: usize,
    clean_p_wrong: Num,
    ordinary_reset_p_wrong: Num,
    hysteresis_gap: Num,
    ci_low: Num,
    ci_high: Num,
    positive_hysteresis_rate: Num,
    bootstrap_samples: usize,
    seed: u64,
}

/// Markdown/LaTeX view: the paper's columns (`Gap, 95% CI`), then n, the two means and the
/// positive-hysteresis rate.
#[derive(Serialize, Default)]
struct Table09View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "95% CI")]
    gap_ci: Ci,
    n: usize,
    #[serde(rename = "Clean p(w)")]
    clean_pw: Num,
    #[serde(rename = "R0 p(w)")]
    r0_pw: Num,
    #[serde(rename = "Pos. (%)")]
    positive: Pct,
}

pub(super) fn table09(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_PRESSURE_RAMP);
    let mut t = Vec::new();
    let mut d = Vec::new();
    for (p, r0, a) in ctx.idx.clean_r0_pairs() {
        let n = a.n();
        let (c, r) = (a.obs(0), a.obs(1));
        let gaps = item_gaps(&r, &c);
        let cis = paired_cis(&mut stream, n, samples, &[Stat::Mean(&gaps)]);
        let pos = positive_hysteresis_rate(&r, &c);
        let (clean_pw, r0_pw, gap) = (mean(&pw(&c)), mean(&pw(&r)), mean(&gaps));
        t.push(Table09Row {
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: dataset_display(&p.dataset),
            dataset_key: p.dataset.clone(),
            condition: r0,
            n_items: n,
            clean_p_wrong: Num(clean_pw),
            ordinary_reset_p_wrong: Num(r0_pw),
            hysteresis_gap: Num(gap),
            ci_low: Num(cis[0].0),
            ci_high: Num(cis[0].1),
            positive_hysteresis_rate: Num(pos),
            bootstrap_samples: samples,
            seed,
        });
        d.push(Table09View {
            model: p.model.clone(),
            dataset: dataset_short(&p.dataset),
            gap: Num(gap),
            gap_ci: Ci::from(cis[0]),
            n,
            clean_pw: Num(clean_pw),
            r0_pw: Num(r0_pw),
            positive: Pct(pos),
        });
    }
    vec![Output::new("table09_ordinary_reset_gap", "Ordinary-reset (R0) hysteresis gap with paired item bootstrap 95% CI, every pair", CriterionFamily::None, &t)
        .with_display(&d)
        .with_notes(vec![
            "Gap = mean over items of p_R0(w) - p_clean(w) (clean = clean probe).".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) (the pressure-ramp stream, base seed + 1), pairs in the fixed order; with the same items as Table 2 the interval equals Table 2's hysteresis_gap interval. The artifact's mapping for this table is not recoverable (docs/protocol.md §9.3)."),
        ])]
}
