//! Table 12 — pressure vs false context (§1.6; aggregate, by dataset, by pair).

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{condition_label, dataset_display, PairData, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::dialogue::conditions::FALSE_CONTEXT_ORDER;
use crate::metrics::bootstrap::IndexStream;
use crate::metrics::{
    conditional_lock_in_flags, item_gaps, mean, positive_hysteresis_flags, rate, Obs, RatioFlags,
};

fn candidates(cond: &str) -> Vec<&'static str> {
    match cond {
        "user_pressure" => vec!["user_pressure", R0_REF[0], R0_REF[1]],
        "clean_no_mention" => vec!["clean_no_mention"],
        "neutral_wrong_mention" => vec!["neutral_wrong_mention"],
        "explicit_false_wrong_mention" => vec!["explicit_false_wrong_mention"],
        "quoted_false_claim" => vec!["quoted_false_claim"],
        _ => vec![],
    }
}

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
    let clean = p.resolve(&CLEAN_REF)?;
    let source = p.resolve(&candidates(cond))?;
    if cond == "user_pressure" && p.has("strong_pressure") {
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

const COLUMNS: [&str; 12] = [
    "condition",
    "condition_label",
    "mean_p_clean_wrong",
    "mean_p_reset_wrong",
    "mean_hysteresis_gap",
    "hysteresis_gap_ci_low",
    "hysteresis_gap_ci_high",
    "positive_hysteresis_rate",
    "wrong_following_rate",
    "conditional_lock_in_rate",
    "conditional_lock_in_n",
    "n_items",
];
const DISPLAY: [&str; 8] = [
    "Prior context",
    "p_clean(w)",
    "p_reset(w)",
    "Gap",
    "Gap 95% CI",
    "Pos. (%)",
    "WF (%)",
    "n",
];

fn summarize(cond: &str, g: &Group, samples: usize, seed: u64) -> (Vec<Cell>, Vec<Cell>) {
    let gaps = item_gaps(&g.x, &g.clean);
    let mut stream = IndexStream::new(seed);
    let c = paired_cis(&mut stream, gaps.len(), samples, &[Stat::Mean(&gaps)])[0];
    let pos = rate(&positive_hysteresis_flags(&g.x, &g.clean));
    let wf = rate(&wf_flags(&g.x));
    let (lock, lock_n) = match &g.lock {
        Some(f) => {
            let (r, d) = f.rate();
            (num(r), int(d))
        }
        None => (Cell::Na, Cell::Na),
    };
    let label = condition_label(cond);
    let cp = mean(&pw(&g.clean));
    let xp = mean(&pw(&g.x));
    let gap = mean(&gaps);
    (
        vec![
            txt(cond),
            txt(label.clone()),
            num(cp),
            num(xp),
            num(gap),
            num(c.0),
            num(c.1),
            num(pos),
            num(wf),
            lock,
            lock_n,
            int(gaps.len()),
        ],
        vec![
            txt(label),
            num(cp),
            num(xp),
            num(gap),
            ci(c.0, c.1),
            pct(pos),
            pct(wf),
            int(gaps.len()),
        ],
    )
}

pub(super) fn table12(ctx: &Ctx) -> Vec<Output> {
    let mentions = [
        "clean_no_mention",
        "neutral_wrong_mention",
        "explicit_false_wrong_mention",
        "quoted_false_claim",
    ];
    let pairs: Vec<&PairData> = ctx
        .idx
        .pairs
        .iter()
        .filter(|p| p.resolve(&CLEAN_REF).is_some() && mentions.iter().any(|c| p.has(c)))
        .collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed;
    let mut imported = Vec::new();

    // per pair
    let mut pcols = vec!["model_key", "model", "dataset"];
    pcols.extend(COLUMNS);
    let mut tp = Table::new(&pcols);
    let mut dpcols = vec!["Model", "Dataset"];
    dpcols.extend(DISPLAY);
    let mut dp = Table::new(&dpcols);
    // pooled groups
    let datasets = ctx.idx.datasets();
    let mut by_ds: Vec<Vec<Group>> = datasets
        .iter()
        .map(|_| {
            FALSE_CONTEXT_ORDER
                .iter()
                .map(|_| Group::default())
                .collect()
        })
        .collect();
    let mut all: Vec<Group> = FALSE_CONTEXT_ORDER
        .iter()
        .map(|_| Group::default())
        .collect();
    for p in &pairs {
        let di = datasets
            .iter()
            .position(|d| *d == p.dataset)
            .expect("dataset listed");
        for (ci_, cond) in FALSE_CONTEXT_ORDER.iter().enumerate() {
            let Some((g, source)) = pair_group(p, cond) else {
                continue;
            };
            if source != *cond {
                imported.push(format!("{} {}: {}", p.model_key, p.dataset, source));
            }
            let (row, drow) = summarize(cond, &g, samples, seed);
            let mut r = vec![
                txt(p.model_key.clone()),
                txt(p.model.clone()),
                txt(p.dataset.clone()),
            ];
            r.extend(row);
            tp.push(r);
            let mut dr = pair_cells(p);
            dr.extend(drow);
            dp.push(dr);
            let copy = Group {
                clean: g.clean.clone(),
                x: g.x.clone(),
                lock: g.lock.clone(),
            };
            by_ds[di][ci_].extend(copy);
            all[ci_].extend(g);
        }
    }
    let mut ta = Table::new(&COLUMNS);
    let mut da = Table::new(&DISPLAY);
    for (ci_, cond) in FALSE_CONTEXT_ORDER.iter().enumerate() {
        if all[ci_].x.is_empty() {
            continue;
        }
        let (row, drow) = summarize(cond, &all[ci_], samples, seed);
        ta.push(row);
        da.push(drow);
    }
    let mut dcols = vec!["dataset"];
    dcols.extend(COLUMNS);
    let mut td = Table::new(&dcols);
    let mut ddcols = vec!["Dataset"];
    ddcols.extend(DISPLAY);
    let mut dd = Table::new(&ddcols);
    for (di, ds) in datasets.iter().enumerate() {
        for (ci_, cond) in FALSE_CONTEXT_ORDER.iter().enumerate() {
            let g = &by_ds[di][ci_];
            if g.x.is_empty() {
                continue;
            }
            let (row, drow) = summarize(cond, g, samples, seed);
            let mut r = vec![txt(ds.clone())];
            r.extend(row);
            td.push(r);
            let mut dr = vec![txt(dataset_display(ds))];
            dr.extend(drow);
            dd.push(dr);
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
        Output::from_table(
            "table12_pressure_vs_false_context",
            "Pressure vs false context (pooled)",
            "none",
            ta,
        )
        .with_display_table(da)
        .with_notes(notes.clone()),
        Output::from_table(
            "table12_pressure_vs_false_context_by_dataset",
            "Pressure vs false context by dataset",
            "none",
            td,
        )
        .with_display_table(dd)
        .with_notes(notes.clone()),
        Output::from_table(
            "table12_pressure_vs_false_context_by_pair",
            "Pressure vs false context by pair",
            "none",
            tp,
        )
        .with_display_table(dp)
        .with_notes(notes),
    ]
}
