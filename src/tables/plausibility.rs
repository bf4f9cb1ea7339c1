//! Table 11 — wrong-answer plausibility tertiles (pooled and by pair).

use super::output::CriterionFamily;
use serde::Serialize;

use super::common::*;
use super::format::{Join, Num, Shown};
use super::grouping::{self, Group, Groups};
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

/// The pair columns of `table11_plausibility_by_pair.csv` (the artifact's order: display name
/// first).
#[derive(Serialize, Default)]
struct PairKey {
    model: String,
    model_key: String,
    dataset: String,
}

/// The Markdown/LaTeX view of one stratum: the paper's columns (WF in percent, as printed),
/// then the positive-hysteresis rate and n.
const SHOWN: [Shown; 7] = [
    Shown::Text("plausibility_stratum", "Stratum", stratum_label),
    Shown::As("mean_p_clean_wrong", "p_clean(w)"),
    Shown::As("mean_p_reset_wrong", "p_reset(w)"),
    Shown::As("mean_hysteresis_gap", "Gap"),
    Shown::Pct("ordinary_reset_wrong_follow_rate", "WF (%)"),
    Shown::Pct("positive_hysteresis_rate", "Pos. (%)"),
    Shown::As("n_items", "n"),
];

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

/// A pair's items of Table 11: its plausibility stratum (tertile within the pair), clean and
/// R0 observation of each.
struct PairItems {
    strata: Vec<usize>,
    clean: Vec<Obs>,
    r0: Vec<Obs>,
}

/// The pairs with clean and R0 rows, each with its stratified items.
fn tertile_groups<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Groups<'p, 'a, PairItems> {
    Groups::new(ctx.idx.clean_r0_pairs().map(|(p, _, a)| {
        let (clean, r0) = (a.obs(0), a.obs(1));
        let strata = plausibility_tertiles(&pw(&clean));
        (p, PairItems { strata, clean, r0 })
    }))
}

/// The tertile summaries (Low, Mid, High) of a group: its pairs' items pooled per stratum.
fn summary(g: &Group<PairItems>) -> [StratumSummary; 3] {
    let mut pooled = PairItems {
        strata: Vec::new(),
        clean: Vec::new(),
        r0: Vec::new(),
    };
    for items in g.values() {
        pooled.strata.extend(&items.strata);
        pooled.clean.extend(items.clean.iter().cloned());
        pooled.r0.extend(items.r0.iter().cloned());
    }
    plausibility_summary(&pooled.strata, &pooled.clean, &pooled.r0)
}

/// The pooled tertile summaries of Table 11 (Low, Mid, High), as Table 3 cites them.
pub(super) fn pooled_tertiles(ctx: &Ctx) -> Option<[StratumSummary; 3]> {
    let groups = tertile_groups(ctx);
    (!groups.is_empty()).then(|| summary(&groups.pooled()))
}

/// `low` → `Low` (the paper's stratum labels).
pub(super) fn stratum_label(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

pub(super) fn table11(ctx: &Ctx) -> Vec<Output> {
    let groups = tertile_groups(ctx);
    if groups.is_empty() {
        return Vec::new();
    }
    let mut bp = Vec::new();
    for g in groups.by_pair() {
        let p = g.pair().expect("a pair group");
        for (s, stratum) in summary(&g).iter().zip(PLAUSIBILITY_STRATA) {
            let key = PairKey {
                model: p.model.clone(),
                model_key: p.model_key.clone(),
                dataset: p.dataset.clone(),
            };
            bp.push(Join(key, stratum_row(stratum, s)));
        }
    }
    let sums = summary(&groups.pooled());
    let agg: Vec<StratumRow> = sums
        .iter()
        .zip(PLAUSIBILITY_STRATA)
        .map(|(s, k)| stratum_row(k, s))
        .collect();
    let notes = vec![
        "Tertiles by rank of p_clean(w) within each pair (ties by item order; pandas qcut on ranks: 167/166/167 for 500 items); the aggregate pools the pairs' items per stratum.".to_string(),
        "p_reset(w), Gap and WF refer to R0 (ordinary strong reset).".to_string(),
    ];
    vec![
        Output::new(
            "table11_plausibility_tertiles",
            "Wrong-answer plausibility tertiles (pooled)",
            CriterionFamily::None,
            &agg,
        )
        .with_view(&SHOWN)
        .with_notes(notes.clone()),
        Output::new(
            "table11_plausibility_by_pair",
            "Wrong-answer plausibility tertiles by pair",
            CriterionFamily::None,
            &bp,
        )
        .with_view(&[&grouping::PairKey::SHOWN[..], &SHOWN].concat())
        .with_notes(notes),
    ]
}
