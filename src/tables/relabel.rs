//! Relabel / shuffle diagnostics (docs/protocol.md §3.9, §5.11): Table 13 (restoration), Table 14 (outcome), Table 15
//! (semantic vs letter following), pooled per dataset, and the per-pair paired CIs.

use super::output::CriterionFamily;
use crate::dialogue::conditions::ids;
use serde::Serialize;

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::Num;
use super::grouping::{Group, Groups};
use super::index::{condition_label, dataset_short, letter_index, PairData};
use super::{Ctx, Output};
/// The group's conditions in registry order.
fn relabel_order() -> &'static [&'static str] {
    crate::dialogue::conditions::group_keys(crate::dialogue::recipe::Group::Relabel)
}
use crate::metrics::bootstrap::SEED_OFFSET_RELABEL;
use crate::metrics::{
    aggregate, chance_old_letter_rate, mean, p_correct_gain, restoration_ratio,
    semantic_letter_rates, wrong_reduction, Obs, RelabelObs, SemanticLetter,
};
use crate::store::ItemRow;

const BASE: &str = ids::RELABEL_BASELINE;
const SHUFFLE: &str = ids::RELABEL_SHUFFLE;

fn relabel_obs(rows: &[&ItemRow]) -> (Vec<RelabelObs>, Vec<usize>) {
    let mut obs = Vec::new();
    let mut n_opts = Vec::new();
    for r in rows {
        if let (Some(pred), Some(new_wrong), Some(old_wrong)) = (
            letter_index(&r.pred_letter),
            letter_index(&r.shown_wrong_letter),
            letter_index(&r.wrong_advocated_letter),
        ) {
            obs.push(RelabelObs {
                pred,
                new_wrong,
                old_wrong,
            });
            n_opts.push(r.n_options);
        }
    }
    (obs, n_opts)
}

/// One dataset × relabel condition, pooled over the dataset's pairs with relabel rows (Tables
/// 13 and 14).
struct Pooled {
    /// Short dataset name (`TQA`, `MMLU`).
    dataset: String,
    label: String,
    /// Restoration ratio (NaN when not informative).
    restoration: f64,
    wrong_reduction: f64,
    p_correct_gain: f64,
    accuracy: f64,
    wrong_follow: f64,
    p_wrong: f64,
    n: usize,
}

fn pooled(ctx: &Ctx) -> Vec<Pooled> {
    let others: Vec<&str> = relabel_order()
        .iter()
        .copied()
        .filter(|c| *c != BASE)
        .collect();
    let groups = Groups::of_pairs(
        ctx.idx
            .pairs
            .iter()
            .filter(|p| p.has(BASE) && others.iter().any(|c| p.has(c))),
    );
    let mut out = Vec::new();
    for g in groups.by_dataset() {
        let ds = g.dataset().expect("a dataset group");
        let pairs: Vec<&PairData> = g.pairs().collect();
        for cond in relabel_order() {
            let (mut b, mut x) = (Vec::<Obs>::new(), Vec::<Obs>::new());
            let (mut rc, mut rb, mut rx) =
                (Vec::<f64>::new(), Vec::<f64>::new(), Vec::<f64>::new());
            for p in &pairs {
                if !p.has(cond) {
                    continue;
                }
                let a = p.align(&[BASE, cond]);
                b.extend(a.obs(0));
                x.extend(a.obs(1));
                if let Some(clean) = p.clean() {
                    let a = p.align(&[clean, BASE, cond]);
                    rc.extend(pw(&a.obs(0)));
                    rb.extend(pw(&a.obs(1)));
                    rx.extend(pw(&a.obs(2)));
                }
            }
            if x.is_empty() {
                continue;
            }
            let rest = restoration_ratio(mean(&rc), mean(&rb), mean(&rx));
            let xa = aggregate(&x);
            out.push(Pooled {
                dataset: dataset_short(ds),
                label: condition_label(ctx.reg(), cond),
                restoration: if rest.informative {
                    rest.ratio
                } else {
                    f64::NAN
                },
                wrong_reduction: wrong_reduction(&b, &x),
                p_correct_gain: p_correct_gain(&b, &x),
                accuracy: xa.accuracy,
                wrong_follow: xa.wrong_follow,
                p_wrong: xa.p_wrong,
                n: x.len(),
            });
        }
    }
    out
}

/// `table13_relabel_restoration.csv`.
#[derive(Serialize, Default)]
struct Table13Row {
    dataset: String,
    condition: String,
    restoration_ratio: Num,
    wrong_reduction: Num,
    p_correct_gain: Num,
}

/// Markdown/LaTeX view of Table 13.
#[derive(Serialize, Default)]
struct Table13View {
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Condition")]
    condition: String,
    #[serde(rename = "Rest.")]
    restoration: Num,
    #[serde(rename = "Wrong red.")]
    wrong_reduction: Num,
    #[serde(rename = "p_c gain")]
    p_correct_gain: Num,
    n: usize,
}

/// `table14_relabel_outcome.csv`.
#[derive(Serialize, Default)]
struct Table14Row {
    dataset: String,
    condition: String,
    accuracy: Num,
    wrong_follow: Num,
    p_wrong: Num,
}

/// Markdown/LaTeX view of Table 14.
#[derive(Serialize, Default)]
struct Table14View {
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Condition")]
    condition: String,
    #[serde(rename = "Acc.")]
    accuracy: Num,
    #[serde(rename = "Wrong follow")]
    wrong_follow: Num,
    #[serde(rename = "p_w")]
    p_wrong: Num,
    n: usize,
}

/// `table15_semantic_vs_letter.csv`.
#[derive(Serialize, Default)]
struct Table15Row {
    dataset: String,
    semantic_following: Num,
    old_letter_following: Num,
    chance_old_letter: Num,
    new_wrong_following: Num,
}

/// Markdown/LaTeX view of Table 15.
#[derive(Serialize, Default)]
struct Table15View {
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Sem.")]
    semantic: Num,
    #[serde(rename = "Old")]
    old_letter: Num,
    #[serde(rename = "Chance")]
    chance: Num,
    #[serde(rename = "New")]
    new_wrong: Num,
    n: usize,
}

fn common_notes() -> Vec<String> {
    vec![
        "Pooled over the pairs of each dataset that have relabel rows; every condition is paired with the baseline strong reset (history kept) on the same items.".to_string(),
        "For the shuffle condition, p_w / wrong follow refer to the advocated wrong TEXT under its new letter (semantic following).".to_string(),
        "The relabel prompts and the permutation rule are hyst-tui's (runner unreleased, docs/protocol.md §3.9).".to_string(),
    ]
}

pub(super) fn table13(ctx: &Ctx) -> Vec<Output> {
    let rows = pooled(ctx);
    let t: Vec<Table13Row> = rows
        .iter()
        .map(|r| Table13Row {
            dataset: r.dataset.clone(),
            condition: r.label.clone(),
            restoration_ratio: Num(r.restoration),
            wrong_reduction: Num(r.wrong_reduction),
            p_correct_gain: Num(r.p_correct_gain),
        })
        .collect();
    let d: Vec<Table13View> = rows
        .iter()
        .map(|r| Table13View {
            dataset: r.dataset.clone(),
            condition: r.label.clone(),
            restoration: Num(r.restoration),
            wrong_reduction: Num(r.wrong_reduction),
            p_correct_gain: Num(r.p_correct_gain),
            n: r.n,
        })
        .collect();
    let mut notes = common_notes();
    notes.push("Rest. = (mean p_base(w) - mean p_X(w)) / (mean p_base(w) - mean p_clean(w)), NA when |base - clean| < 0.05 or clean rows are absent; Wrong red. = mean(p_base(w) - p_X(w)); p_c gain = mean(p_X(c) - p_base(c)).".into());
    vec![Output::new(
        "table13_relabel_restoration",
        "Relabel restoration metrics",
        CriterionFamily::None,
        &t,
    )
    .with_display(&d)
    .with_notes(notes)]
}

pub(super) fn table14(ctx: &Ctx) -> Vec<Output> {
    let rows = pooled(ctx);
    let t: Vec<Table14Row> = rows
        .iter()
        .map(|r| Table14Row {
            dataset: r.dataset.clone(),
            condition: r.label.clone(),
            accuracy: Num(r.accuracy),
            wrong_follow: Num(r.wrong_follow),
            p_wrong: Num(r.p_wrong),
        })
        .collect();
    let d: Vec<Table14View> = rows
        .iter()
        .map(|r| Table14View {
            dataset: r.dataset.clone(),
            condition: r.label.clone(),
            accuracy: Num(r.accuracy),
            wrong_follow: Num(r.wrong_follow),
            p_wrong: Num(r.p_wrong),
            n: r.n,
        })
        .collect();
    vec![Output::new(
        "table14_relabel_outcome",
        "Relabel outcome metrics",
        CriterionFamily::None,
        &t,
    )
    .with_display(&d)
    .with_notes(common_notes())]
}

/// Semantic vs old-letter following under relabel-shuffle over every pair with shuffle rows
/// (Table 15's rows pooled over the datasets), as Table 3 cites them: the rates and n.
pub(super) fn pooled_semantic(ctx: &Ctx) -> Option<(SemanticLetter, usize)> {
    let (obs, _) = relabel_obs(&shuffle_rows(&shuffled(ctx).pooled()));
    (!obs.is_empty()).then(|| (semantic_letter_rates(&obs), obs.len()))
}

/// The pairs with relabel-shuffle rows.
fn shuffled<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Groups<'p, 'a, ()> {
    Groups::of_pairs(ctx.idx.pairs.iter().filter(|p| p.conds.contains_key(SHUFFLE)))
}

/// The relabel-shuffle rows of a group's pairs, in pair and item order.
fn shuffle_rows<'a>(g: &Group<'_, '_, 'a, ()>) -> Vec<&'a ItemRow> {
    g.pairs()
        .flat_map(|p| p.conds[SHUFFLE].values().copied())
        .collect()
}

/// Table 15: semantic vs letter following (pooled per dataset) and the per-pair paired CIs.
pub(super) fn table15(ctx: &Ctx) -> Vec<Output> {
    let mut out = Vec::new();

    let (mut t15, mut d15) = (Vec::new(), Vec::new());
    for g in shuffled(ctx).by_dataset() {
        let ds = g.dataset().expect("a dataset group");
        let rows = shuffle_rows(&g);
        let (obs, n_opts) = relabel_obs(&rows);
        if obs.is_empty() {
            continue;
        }
        let s = semantic_letter_rates(&obs);
        let chance = chance_old_letter_rate(&n_opts);
        t15.push(Table15Row {
            dataset: dataset_short(ds),
            semantic_following: Num(s.semantic_following_rate),
            old_letter_following: Num(s.old_letter_following_rate),
            chance_old_letter: Num(chance),
            new_wrong_following: Num(s.new_wrong_following_rate),
        });
        d15.push(Table15View {
            dataset: dataset_short(ds),
            semantic: Num(s.semantic_following_rate),
            old_letter: Num(s.old_letter_following_rate),
            chance: Num(chance),
            new_wrong: Num(s.new_wrong_following_rate),
            n: obs.len(),
        });
    }
    out.push(
        Output::new("table15_semantic_vs_letter", "Semantic vs letter following under option relabel-shuffle", CriterionFamily::None, &t15)
            .with_display(&d15)
            .with_notes(vec![
                "Sem. = prediction is the new letter of the advocated wrong text (= New); Old = prediction is the letter the wrong option had before the shuffle; Chance = item mean of 1/n_options [inferred].".into(),
                "Pooled over the pairs of each dataset with relabel-shuffle rows.".into(),
            ]),
    );

    // Per-pair paired CIs (relabel_effect_with_ci + semantic_letter_with_ci)
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_RELABEL);
    let mut long = Vec::new();
    for p in &ctx.idx.pairs {
        if !p.has(BASE) || !p.has(SHUFFLE) {
            continue;
        }
        let a = p.align(&[BASE, SHUFFLE]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (b, s) = (a.obs(0), a.obs(1));
        let (bpw, spw) = (pw(&b), pw(&s));
        let red: Vec<f64> = bpw.iter().zip(&spw).map(|(x, y)| x - y).collect();
        let sem = as_f64(&a.rows[1].iter().map(|r| r.wrong_follow).collect::<Vec<_>>());
        let old = as_f64(
            &a.rows[1]
                .iter()
                .map(|r| r.old_letter_follow)
                .collect::<Vec<_>>(),
        );
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[
                Stat::Mean(&bpw),
                Stat::Mean(&spw),
                Stat::Mean(&red),
                Stat::Mean(&sem),
                Stat::Mean(&old),
            ],
        );
        let label = condition_label(ctx.reg(), SHUFFLE);
        long.push(LongRow::new(
            "relabel_effect",
            p,
            &label,
            "baseline_pw",
            mean(&bpw),
            cis[0],
            n,
        ));
        long.push(LongRow::new(
            "relabel_effect",
            p,
            &label,
            "shuffle_pw",
            mean(&spw),
            cis[1],
            n,
        ));
        long.push(LongRow::new(
            "relabel_effect",
            p,
            &label,
            "wrong_reduction",
            mean(&red),
            cis[2],
            n,
        ));
        long.push(LongRow::new(
            "semantic_letter",
            p,
            &label,
            "semantic_following_rate",
            mean(&sem),
            cis[3],
            n,
        ));
        long.push(LongRow::new(
            "semantic_letter",
            p,
            &label,
            "old_letter_following_rate",
            mean(&old),
            cis[4],
            n,
        ));
        long.push(LongRow::new(
            "semantic_letter",
            p,
            &label,
            "new_wrong_following_rate",
            mean(&sem),
            cis[3],
            n,
        ));
        let n_opts: Vec<usize> = a.rows[1].iter().map(|r| r.n_options).collect();
        long.push(
            LongRow::new(
                "semantic_letter",
                p,
                &label,
                "chance_old_letter_rate",
                chance_old_letter_rate(&n_opts),
                (f64::NAN, f64::NAN),
                n,
            )
            .deterministic(),
        );
    }
    out.push(
        Output::new("table15_relabel_with_ci", "Relabel effect and semantic-letter following per pair with paired CIs", CriterionFamily::None, &long_table(long, samples, seed))
            .with_notes(vec![
                format!("One index matrix per pair over the items with baseline and shuffle rows, default_rng({seed}) = base seed + 5, pairs in the fixed order."),
                "new_wrong_following_rate equals semantic_following_rate by definition; chance_old_letter_rate is deterministic (no interval).".into(),
            ]),
    );
    out
}
