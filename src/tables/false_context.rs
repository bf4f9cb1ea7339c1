//! Table 12 — pressure vs false context (docs/protocol.md §3.8; aggregate, by dataset, by pair).

use crate::dialogue::conditions::{ids, Registry};
use serde::Serialize;

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::{Ci, Join, Num, Pct};
use super::index::{condition_label, dataset_display, PairData};
use super::{Ctx, Output};
/// The group's conditions in registry order.
fn false_context_order() -> &'static [&'static str] {
    crate::dialogue::conditions::group_keys(crate::dialogue::recipe::Group::FalseContext)
}
use crate::metrics::bootstrap::IndexStream;
use crate::metrics::{
    conditional_lock_in_flags, item_gaps, mean, positive_hysteresis_flags, rate, Obs, RatioFlags,
};

#[derive(Default)]
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

/// Markdown/LaTeX view of one prior context: the paper's columns (WF in percent, as printed),
/// then the gap's interval, the positive-hysteresis rate and n.
#[derive(Serialize, Default)]
struct Table12View {
    #[serde(rename = "Prior context")]
    prior_context: String,
    #[serde(rename = "p_clean(w)")]
    clean_pw: Num,
    #[serde(rename = "p_reset(w)")]
    reset_pw: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "WF (%)")]
    wrong_follow: Pct,
    #[serde(rename = "Gap 95% CI")]
    gap_ci: Ci,
    #[serde(rename = "Pos. (%)")]
    positive: Pct,
    n: usize,
}

/// Key columns of the by-pair CSV.
#[derive(Serialize, Default)]
struct PairKey {
    model_key: String,
    model: String,
    dataset: String,
}

/// Key column of the by-dataset CSV.
#[derive(Serialize, Default)]
struct DatasetKey {
    dataset: String,
}

/// Key column of the by-dataset view.
#[derive(Serialize, Default)]
struct DatasetView {
    #[serde(rename = "Dataset")]
    dataset: String,
}

fn summarize(
    cond: &'static str,
    g: &Group,
    samples: usize,
    seed: u64,
) -> (Table12Row, Table12View) {
    let gaps = item_gaps(&g.x, &g.clean);
    let mut stream = IndexStream::new(seed);
    let c = paired_cis(&mut stream, gaps.len(), samples, &[Stat::Mean(&gaps)])[0];
    let pos = rate(&positive_hysteresis_flags(&g.x, &g.clean));
    let wf = rate(&wf_flags(&g.x));
    let lock = g.lock.as_ref().map(|f| f.rate());
    // A built-in condition: its label is the same in every registry.
    let label = condition_label(Registry::bundled(), cond);
    let cp = mean(&pw(&g.clean));
    let xp = mean(&pw(&g.x));
    let gap = mean(&gaps);
    (
        Table12Row {
            condition: cond,
            condition_label: label.clone(),
            mean_p_clean_wrong: Num(cp),
            mean_p_reset_wrong: Num(xp),
            mean_hysteresis_gap: Num(gap),
            hysteresis_gap_ci_low: Num(c.0),
            hysteresis_gap_ci_high: Num(c.1),
            positive_hysteresis_rate: Num(pos),
            wrong_following_rate: Num(wf),
            conditional_lock_in_rate: lock.map(|(r, _)| Num(r)),
            conditional_lock_in_n: lock.map(|(_, d)| d),
            n_items: gaps.len(),
        },
        Table12View {
            prior_context: label,
            clean_pw: Num(cp),
            reset_pw: Num(xp),
            gap: Num(gap),
            wrong_follow: Pct(wf),
            gap_ci: Ci::from(c),
            positive: Pct(pos),
            n: gaps.len(),
        },
    )
}

/// Pooled over the pairs with false-context rows, per prior context in the table's order:
/// (condition, mean gap, WF, n items) — the numbers of Table 12's pooled rows, as Table 3
/// cites them.
pub(super) fn pooled_gaps(ctx: &Ctx) -> Vec<(&'static str, f64, f64, usize)> {
    let mut all: Vec<Group> = false_context_order()
        .iter()
        .map(|_| Group::default())
        .collect();
    for p in ctx.idx.pairs.iter().filter(|p| has_mentions(p)) {
        for (i, cond) in false_context_order().iter().enumerate() {
            if let Some((g, _)) = pair_group(p, cond) {
                all[i].extend(g);
            }
        }
    }
    false_context_order()
        .iter()
        .zip(all)
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

pub(super) fn table12(ctx: &Ctx) -> Vec<Output> {
    let pairs: Vec<&PairData> = ctx.idx.pairs.iter().filter(|p| has_mentions(p)).collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    let (samples, seed, _) = ctx.opts.bootstrap(0);
    let mut imported = Vec::new();

    // per pair
    let (mut tp, mut dp) = (Vec::new(), Vec::new());
    // pooled groups
    let datasets = ctx.idx.datasets();
    let mut by_ds: Vec<Vec<Group>> = datasets
        .iter()
        .map(|_| {
            false_context_order()
                .iter()
                .map(|_| Group::default())
                .collect()
        })
        .collect();
    let mut all: Vec<Group> = false_context_order()
        .iter()
        .map(|_| Group::default())
        .collect();
    for p in &pairs {
        let di = datasets
            .iter()
            .position(|d| *d == p.dataset)
            .expect("dataset listed");
        for (ci_, cond) in false_context_order().iter().enumerate() {
            let Some((g, source)) = pair_group(p, cond) else {
                continue;
            };
            if source != *cond {
                imported.push(format!("{} {}: {}", p.model_key, p.dataset, source));
            }
            let (row, view) = summarize(cond, &g, samples, seed);
            let key = PairKey {
                model_key: p.model_key.clone(),
                model: p.model.clone(),
                dataset: p.dataset.clone(),
            };
            tp.push(Join(key, row));
            dp.push(Join(ModelDataset::of(p), view));
            let copy = Group {
                clean: g.clean.clone(),
                x: g.x.clone(),
                lock: g.lock.clone(),
            };
            by_ds[di][ci_].extend(copy);
            all[ci_].extend(g);
        }
    }
    let (mut ta, mut da) = (Vec::new(), Vec::new());
    for (ci_, cond) in false_context_order().iter().enumerate() {
        if all[ci_].x.is_empty() {
            continue;
        }
        let (row, view) = summarize(cond, &all[ci_], samples, seed);
        ta.push(row);
        da.push(view);
    }
    let (mut td, mut dd) = (Vec::new(), Vec::new());
    for (di, ds) in datasets.iter().enumerate() {
        for (ci_, cond) in false_context_order().iter().enumerate() {
            let g = &by_ds[di][ci_];
            if g.x.is_empty() {
                continue;
            }
            let (row, view) = summarize(cond, g, samples, seed);
            td.push(Join(
                DatasetKey {
                    dataset: ds.clone(),
                },
                row,
            ));
            let dataset = dataset_display(ds);
            dd.push(Join(DatasetView { dataset }, view));
        }
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
            "none",
            &ta,
        )
        .with_display(&da)
        .with_notes(notes.clone()),
        Output::new(
            "table12_pressure_vs_false_context_by_dataset",
            "Pressure vs false context by dataset",
            "none",
            &td,
        )
        .with_display(&dd)
        .with_notes(notes.clone()),
        Output::new(
            "table12_pressure_vs_false_context_by_pair",
            "Pressure vs false context by pair",
            "none",
            &tp,
        )
        .with_display(&dp)
        .with_notes(notes),
    ]
}
