//! Table 11 — wrong-answer plausibility tertiles (pooled and by pair).

use serde::Serialize;

use super::common::*;
use super::format::{Join, Num, Pct};
use super::{Ctx, Output};
use crate::metrics::{
    plausibility_summary, plausibility_tertiles, Obs, StratumSummary, PLAUSIBILITY_STRATA,
};

/// One stratum: `table11_plausibility_tertiles.csv` (pooled over the pairs), and the columns
/// after the pair columns of `table11_plausibility_by_pair.csv`.
#[derive(Serialize, Default)]
struct StratumRow {
    plausibility_stratum: &'static str,
    mean_p_clean_wrong: Num,
    mean_p_reset_wrong: Num,
    mean_hysteresis_gap: Num,
    positive_hysteresis_rate: Num,
    ordinary_reset_wrong_follow_rate: Num,
    n_items: usize,
}

/// The pair columns of `table11_plausibility_by_pair.csv`.
#[derive(Serialize, Default)]
struct PairKey {
    model: String,
    model_key: String,
    dataset: String,
}

/// Markdown/LaTeX view of one stratum.
#[derive(Serialize, Default)]
struct StratumView {
    #[serde(rename = "Stratum")]
    stratum: &'static str,
    #[serde(rename = "p_clean(w)")]
    clean_pw: Num,
    #[serde(rename = "p_reset(w)")]
    reset_pw: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "Pos. (%)")]
    positive: Pct,
    #[serde(rename = "WF (%)")]
    wrong_follow: Pct,
    n: usize,
}

fn stratum_row(stratum: &'static str, s: &StratumSummary) -> StratumRow {
    StratumRow {
        plausibility_stratum: stratum,
        mean_p_clean_wrong: Num(s.mean_p_clean_wrong),
        mean_p_reset_wrong: Num(s.mean_p_reset_wrong),
        mean_hysteresis_gap: Num(s.mean_hysteresis_gap),
        positive_hysteresis_rate: Num(s.positive_hysteresis_rate),
        ordinary_reset_wrong_follow_rate: Num(s.ordinary_reset_wrong_follow_rate),
        n_items: s.n_items,
    }
}

fn stratum_view(stratum: &'static str, s: &StratumSummary) -> StratumView {
    StratumView {
        stratum,
        clean_pw: Num(s.mean_p_clean_wrong),
        reset_pw: Num(s.mean_p_reset_wrong),
        gap: Num(s.mean_hysteresis_gap),
        positive: Pct(s.positive_hysteresis_rate),
        wrong_follow: Pct(s.ordinary_reset_wrong_follow_rate),
        n: s.n_items,
    }
}

pub(super) fn table11(ctx: &Ctx) -> Vec<Output> {
    let mut pooled: (Vec<usize>, Vec<Obs>, Vec<Obs>) = (Vec::new(), Vec::new(), Vec::new());
    let mut bp = Vec::new();
    let mut dbp = Vec::new();
    for (p, _, a) in ctx.idx.clean_r0_pairs() {
        let (c, r) = (a.obs(0), a.obs(1));
        let strata = plausibility_tertiles(&pw(&c));
        let sums = plausibility_summary(&strata, &c, &r);
        for (s, stratum) in sums.iter().zip(PLAUSIBILITY_STRATA) {
            let key = PairKey {
                model: p.model.clone(),
                model_key: p.model_key.clone(),
                dataset: p.dataset.clone(),
            };
            bp.push(Join(key, stratum_row(stratum, s)));
            dbp.push(Join(ModelDataset::of(p), stratum_view(stratum, s)));
        }
        pooled.0.extend(strata);
        pooled.1.extend(c);
        pooled.2.extend(r);
    }
    if bp.is_empty() {
        return Vec::new();
    }
    let sums = plausibility_summary(&pooled.0, &pooled.1, &pooled.2);
    let strata = sums.iter().zip(PLAUSIBILITY_STRATA);
    let agg: Vec<StratumRow> = strata.clone().map(|(s, k)| stratum_row(k, s)).collect();
    let dagg: Vec<StratumView> = strata.map(|(s, k)| stratum_view(k, s)).collect();
    let notes = vec![
        "Tertiles by rank of p_clean(w) within each pair (ties by item order; pandas qcut on ranks: 167/166/167 for 500 items); the aggregate pools the pairs' items per stratum.".to_string(),
        "p_reset(w), Gap and WF refer to R0 (ordinary strong reset).".to_string(),
    ];
    vec![
        Output::new(
            "table11_plausibility_tertiles",
            "Wrong-answer plausibility tertiles (pooled)",
            NO_CRITERION,
            &agg,
        )
        .with_display(&dagg)
        .with_notes(notes.clone()),
        Output::new(
            "table11_plausibility_by_pair",
            "Wrong-answer plausibility tertiles by pair",
            NO_CRITERION,
            &bp,
        )
        .with_display(&dbp)
        .with_notes(notes),
    ]
}
