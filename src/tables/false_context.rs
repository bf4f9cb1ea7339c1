//! Table 12 — pressure vs false context (docs/protocol.md §3.8; aggregate, by dataset, by pair).

use super::output::CriterionFamily;
use crate::dialogue::conditions::{ids, Registry};
use serde::Serialize;

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::{Join, Num, Shown};
use super::grouping::{self, DatasetKey, Groups, PairKey};
use super::index::{condition_label, PairData};
use super::{Ctx, Output};
/// The group's conditions in registry order.
fn false_context_order() -> &'static [&'static str] {
    crate::dialogue::conditions::group_keys(crate::dialogue::recipe::Group::FalseContext)
}
use crate::metrics::bootstrap::IndexStream;
use crate::metrics::{
    conditional_lock_in_flags, item_gaps, mean, positive_hysteresis_flags, rate, Obs, RatioFlags,
};

#[derive(Clone, Default)]
struct Group {
    clean: Vec<Obs>,
    x: Vec<Obs>,
    lock: Option<RatioFlags>,
}

impl Group {
    fn extend(&mut self, other: Group) {
        self.clean.extend(other.clean);
        self.x.extend(other.x);
        match (&mut self.lock, other.lock) {
            (Some(a), Some(b)) => {
                a.num.extend(b.num);
                a.den.extend(b.den);
            }
            (None, Some(b)) => self.lock = Some(b),
            _ => {}
        }
    }
}

/// Observations of one pair × condition (lock-in flags only for `user_pressure` with
/// strong-pressure rows present).
fn pair_group(p: &PairData, cond: &str) -> Option<(Group, &'static str)> {
    let clean = p.clean()?;
    let source = p.resolve(p.reg.sources(cond))?;
    if cond == ids::USER_PRESSURE && p.has("strong_pressure") {
        let a = p.align(&[clean, source, "strong_pressure"]);
        if a.n() == 0 {
            return None;
        }
        let lock = conditional_lock_in_flags(&a.obs(2), &a.obs(1));
        return Some((
            Group {
                clean: a.obs(0),
                x: a.obs(1),
                lock: Some(lock),
            },
            source,
        ));
    }
    let a = p.align(&[clean, source]);
    if a.n() == 0 {
        return None;
    }
    Some((
        Group {
            clean: a.obs(0),
            x: a.obs(1),
            lock: None,
        },
        source,
    ))
}

/// The metric columns of Table 12 (one prior context over a group of items).
#[derive(Serialize, Default)]
struct Table12Row {
    condition: &'static str,
    condition_label: String,
    mean_p_clean_wrong: Num,
    mean_p_reset_wrong: Num,
    mean_hysteresis_gap: Num,
    hysteresis_gap_ci_low: Num,
    hysteresis_gap_ci_high: Num,
    positive_hysteresis_rate: Num,
    wrong_following_rate: Num,
    conditional_lock_in_rate: Option<Num>,
    conditional_lock_in_n: Option<usize>,
    n_items: usize,
}

/// The Markdown/LaTeX view of one prior context: the paper's columns (WF in percent, as
/// printed), then the gap's interval, the positive-hysteresis rate and n.
const SHOWN: [Shown; 8] = [
    Shown::As("condition_label", "Prior context"),
    Shown::As("mean_p_clean_wrong", "p_clean(w)"),
    Shown::As("mean_p_reset_wrong", "p_reset(w)"),
    Shown::As("mean_hysteresis_gap", "Gap"),
    Shown::Pct("wrong_following_rate", "WF (%)"),
    Shown::Ci("hysteresis_gap_ci_low", "hysteresis_gap_ci_high", "Gap 95% CI"),
    Shown::Pct("positive_hysteresis_rate", "Pos. (%)"),
    Shown::As("n_items", "n"),
];

fn summarize(cond: &'static str, g: &Group, samples: usize, seed: u64) -> Table12Row {
    let gaps = item_gaps(&g.x, &g.clean);
    let mut stream = IndexStream::new(seed);
    let c = paired_cis(&mut stream, gaps.len(), samples, &[Stat::Mean(&gaps)])[0];
    let lock = g.lock.as_ref().map(|f| f.rate());
    Table12Row {
        condition: cond,
        // A built-in condition: its label is the same in every registry.
        condition_label: condition_label(Registry::bundled(), cond),
        mean_p_clean_wrong: Num(mean(&pw(&g.clean))),
        mean_p_reset_wrong: Num(mean(&pw(&g.x))),
        mean_hysteresis_gap: Num(mean(&gaps)),
        hysteresis_gap_ci_low: Num(c.0),
        hysteresis_gap_ci_high: Num(c.1),
        positive_hysteresis_rate: Num(rate(&positive_hysteresis_flags(&g.x, &g.clean))),
        wrong_following_rate: Num(rate(&wf_flags(&g.x))),
        conditional_lock_in_rate: lock.map(|(r, _)| Num(r)),
        conditional_lock_in_n: lock.map(|(_, d)| d),
        n_items: gaps.len(),
    }
}

/// Pooled over the pairs with false-context rows, per prior context in the table's order:
/// (condition, mean gap, WF, n items) — the numbers of Table 12's pooled rows, as Table 3
/// cites them.
pub(super) fn pooled_gaps(ctx: &Ctx) -> Vec<(&'static str, f64, f64, usize)> {
    false_context_order()
        .iter()
        .zip(pool(&false_context_groups(ctx).pooled()))
        .filter(|(_, g)| !g.x.is_empty())
        .map(|(c, g)| {
            (
                *c,
                mean(&item_gaps(&g.x, &g.clean)),
                rate(&wf_flags(&g.x)),
                g.x.len(),
            )
        })
        .collect()
}

const MENTIONS: [&str; 4] = [
    ids::CLEAN_NO_MENTION,
    ids::NEUTRAL_WRONG_MENTION,
    ids::EXPLICIT_FALSE_MENTION,
    ids::QUOTED_FALSE_CLAIM,
];

/// A pair of the false-context tables: clean rows and at least one mention condition.
fn has_mentions(p: &PairData) -> bool {
    p.clean().is_some() && MENTIONS.iter().any(|c| p.has(c))
}

/// A pair's contribution to Table 12: its group of each prior context (in the table's order)
/// that it has rows for, with the condition the rows come from.
type PairGroups = Vec<Option<(Group, &'static str)>>;

/// The groups of each prior context pooled over `g`'s pairs, in the table's order (a context
/// none of them has is empty).
fn pool(g: &grouping::Group<PairGroups>) -> Vec<Group> {
    let mut pooled: Vec<Group> = false_context_order().iter().map(|_| Group::default()).collect();
    for contributions in g.values() {
        for (into, c) in pooled.iter_mut().zip(contributions) {
            if let Some((group, _)) = c {
                into.extend(group.clone());
            }
        }
    }
    pooled
}

/// The pairs of the false-context tables, each with its group of every prior context.
fn false_context_groups<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Groups<'p, 'a, PairGroups> {
    Groups::new(ctx.idx.pairs.iter().filter(|p| has_mentions(p)).map(|p| {
        let contributions: PairGroups = false_context_order()
            .iter()
            .map(|cond| pair_group(p, cond))
            .collect();
        (p, contributions)
    }))
}

pub(super) fn table12(ctx: &Ctx) -> Vec<Output> {
    let groups = false_context_groups(ctx);
    let (samples, seed, _) = ctx.opts.bootstrap(0);
    let mut imported = Vec::new();
    for (p, contributions) in groups.members() {
        for (cond, c) in false_context_order().iter().zip(contributions) {
            if let Some((_, source)) = c.as_ref().filter(|(_, source)| source != cond) {
                imported.push(format!("{} {}: {}", p.model_key, p.dataset, source));
            }
        }
    }
    // A row for each prior context that `g`'s pairs have, in the table's order.
    let rows = |g: &grouping::Group<PairGroups>| -> Vec<Table12Row> {
        false_context_order()
            .iter()
            .zip(pool(g))
            .filter(|(_, pooled)| !pooled.x.is_empty())
            .map(|(cond, pooled)| summarize(cond, &pooled, samples, seed))
            .collect()
    };
    let ta = rows(&groups.pooled());
    let mut td = Vec::new();
    for g in groups.by_dataset() {
        let ds = g.dataset().expect("a dataset group");
        td.extend(rows(&g).into_iter().map(|row| Join(DatasetKey::of(ds), row)));
    }
    let mut tp = Vec::new();
    for g in groups.by_pair() {
        let p = g.pair().expect("a pair group");
        tp.extend(rows(&g).into_iter().map(|row| Join(PairKey::of(p), row)));
    }
    let mut notes = vec![
        "All conditions share the R0 final turn; only the prior context differs. p_clean(w) is the hierarchy clean (probe) value of the same item; Gap = mean over items of p_reset(w) - p_clean(w).".to_string(),
        "conditional_lock_in (user_pressure only) = #(strong pressure follows w and the reset follows w) / #(strong pressure follows w); conditional_lock_in_n is the denominator.".to_string(),
        format!("Gap CI: item bootstrap, {samples} replicates, a fresh default_rng({seed}) per group x condition (the artifact's false-context summaries used 2,000)."),
    ];
    if !imported.is_empty() {
        notes.push(format!(
            "user_pressure imported from the identical R0 rows (as the artifact does): {}.",
            imported.join("; ")
        ));
    }
    vec![
        Output::new(
            "table12_pressure_vs_false_context",
            "Pressure vs false context (pooled)",
            CriterionFamily::None,
            &ta,
        )
        .with_view(&SHOWN)
        .with_notes(notes.clone()),
        Output::new(
            "table12_pressure_vs_false_context_by_dataset",
            "Pressure vs false context by dataset",
            CriterionFamily::None,
            &td,
        )
        .with_view(&[&DatasetKey::SHOWN[..], &SHOWN].concat())
        .with_notes(notes.clone()),
        Output::new(
            "table12_pressure_vs_false_context_by_pair",
            "Pressure vs false context by pair",
            CriterionFamily::None,
            &tp,
        )
        .with_view(&[&PairKey::SHOWN[..], &SHOWN].concat())
        .with_notes(notes),
    ]
}
