//! Relabel / shuffle diagnostics (§1.9): Table 13 (restoration), Table 14 (outcome), Table 15
//! (semantic vs letter following), pooled per dataset, and the per-pair paired CIs.

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{condition_label, dataset_short, letter_index, PairData, CLEAN_REF};
use super::{Ctx, Output};
use crate::dialogue::conditions::RELABEL_ORDER;
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_RELABEL};
use crate::metrics::{
    aggregate, chance_old_letter_rate, mean, p_correct_gain, restoration_ratio,
    semantic_letter_rates, wrong_reduction, Obs, RelabelObs,
};
use crate::store::ItemRow;

const BASE: &str = "baseline_strong_reset";
const SHUFFLE: &str = "option_relabel_shuffle_reset";
const NONE: &str = "none";

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

/// Tables 13 and 14, pooled per dataset × relabel condition: (t13, d13, t14, d14).
fn pooled_tables(ctx: &Ctx) -> [Table; 4] {
    let datasets = ctx.idx.datasets();
    let pairs_of =
        |ds: &str| -> Vec<&PairData> { ctx.idx.pairs.iter().filter(|p| p.dataset == ds).collect() };
    let others: Vec<&str> = RELABEL_ORDER
        .iter()
        .copied()
        .filter(|c| *c != BASE)
        .collect();

    // Tables 13 and 14
    let mut t13 = Table::new(&[
        "dataset",
        "condition",
        "restoration_ratio",
        "wrong_reduction",
        "p_correct_gain",
    ]);
    let mut d13 = Table::new(&[
        "Dataset",
        "Condition",
        "Rest.",
        "Wrong red.",
        "p_c gain",
        "n",
    ]);
    let mut t14 = Table::new(&[
        "dataset",
        "condition",
        "accuracy",
        "wrong_follow",
        "p_wrong",
    ]);
    let mut d14 = Table::new(&[
        "Dataset",
        "Condition",
        "Acc. (%)",
        "Wrong follow (%)",
        "p_w",
        "n",
    ]);
    for ds in &datasets {
        let pairs: Vec<&PairData> = pairs_of(ds)
            .into_iter()
            .filter(|p| p.has(BASE) && others.iter().any(|c| p.has(c)))
            .collect();
        if pairs.is_empty() {
            continue;
        }
        for cond in RELABEL_ORDER {
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
                if let Some(clean) = p.resolve(&CLEAN_REF) {
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
            let rest_v = if rest.informative {
                rest.ratio
            } else {
                f64::NAN
            };
            let label = condition_label(cond);
            let xa = aggregate(&x);
            t13.push(vec![
                txt(dataset_short(ds)),
                txt(label.clone()),
                num(rest_v),
                num(wrong_reduction(&b, &x)),
                num(p_correct_gain(&b, &x)),
            ]);
            d13.push(vec![
                txt(dataset_short(ds)),
                txt(label.clone()),
                num(rest_v),
                num(wrong_reduction(&b, &x)),
                num(p_correct_gain(&b, &x)),
                int(x.len()),
            ]);
            t14.push(vec![
                txt(dataset_short(ds)),
                txt(label.clone()),
                num(xa.accuracy),
                num(xa.wrong_follow),
                num(xa.p_wrong),
            ]);
            d14.push(vec![
                txt(dataset_short(ds)),
                txt(label),
                pct(xa.accuracy),
                pct(xa.wrong_follow),
                num(xa.p_wrong),
                int(x.len()),
            ]);
        }
    }
    [t13, d13, t14, d14]
}

fn common_notes() -> Vec<String> {
    vec![
        "Pooled over the pairs of each dataset that have relabel rows; every condition is paired with the baseline strong reset (history kept) on the same items.".to_string(),
        "For the shuffle condition, p_w / wrong follow refer to the advocated wrong TEXT under its new letter (semantic following).".to_string(),
        "The relabel prompts and the permutation rule are hyst-tui's (runner unreleased, protocol §1.9).".to_string(),
    ]
}

pub(super) fn table13(ctx: &Ctx) -> Vec<Output> {
    let [t13, d13, _, _] = pooled_tables(ctx);
    if t13.is_empty() {
        return Vec::new();
    }
    let mut n13 = common_notes();
    n13.push("Rest. = (mean p_base(w) - mean p_X(w)) / (mean p_base(w) - mean p_clean(w)), NA when |base - clean| < 0.05 or clean rows are absent; Wrong red. = mean(p_base(w) - p_X(w)); p_c gain = mean(p_X(c) - p_base(c)).".into());
    vec![Output::from_table(
        "table13_relabel_restoration",
        "Relabel restoration metrics",
        NONE,
        t13,
    )
    .with_display_table(d13)
    .with_notes(n13)]
}

pub(super) fn table14(ctx: &Ctx) -> Vec<Output> {
    let [_, _, t14, d14] = pooled_tables(ctx);
    if t14.is_empty() {
        return Vec::new();
    }
    vec![Output::from_table(
        "table14_relabel_outcome",
        "Relabel outcome metrics",
        NONE,
        t14,
    )
    .with_display_table(d14)
    .with_notes(common_notes())]
}

/// Table 15: semantic vs letter following (pooled per dataset) and the per-pair paired CIs.
pub(super) fn table15(ctx: &Ctx) -> Vec<Output> {
    let mut out = Vec::new();
    let datasets = ctx.idx.datasets();
    let pairs_of =
        |ds: &str| -> Vec<&PairData> { ctx.idx.pairs.iter().filter(|p| p.dataset == ds).collect() };

    // Table 15
    let mut t15 = Table::new(&[
        "dataset",
        "semantic_following",
        "old_letter_following",
        "chance_old_letter",
        "new_wrong_following",
    ]);
    let mut d15 = Table::new(&[
        "Dataset",
        "Sem. (%)",
        "Old (%)",
        "Chance (%)",
        "New (%)",
        "n",
    ]);
    for ds in &datasets {
        let mut rows: Vec<&ItemRow> = Vec::new();
        for p in pairs_of(ds) {
            if let Some(m) = p.conds.get(SHUFFLE) {
                rows.extend(m.values().copied());
            }
        }
        let (obs, n_opts) = relabel_obs(&rows);
        if obs.is_empty() {
            continue;
        }
        let s = semantic_letter_rates(&obs);
        let chance = chance_old_letter_rate(&n_opts);
        t15.push(vec![
            txt(dataset_short(ds)),
            num(s.semantic_following_rate),
            num(s.old_letter_following_rate),
            num(chance),
            num(s.new_wrong_following_rate),
        ]);
        d15.push(vec![
            txt(dataset_short(ds)),
            pct(s.semantic_following_rate),
            pct(s.old_letter_following_rate),
            pct(chance),
            pct(s.new_wrong_following_rate),
            int(obs.len()),
        ]);
    }
    if !t15.is_empty() {
        out.push(
            Output::from_table("table15_semantic_vs_letter", "Semantic vs letter following under option relabel-shuffle", NONE, t15)
                .with_display_table(d15)
                .with_notes(vec![
                    "Sem. = prediction is the new letter of the advocated wrong text (= New); Old = prediction is the letter the wrong option had before the shuffle; Chance = item mean of 1/n_options [inferred].".into(),
                    "Pooled over the pairs of each dataset with relabel-shuffle rows.".into(),
                ]),
        );
    }

    // Per-pair paired CIs (relabel_effect_with_ci + semantic_letter_with_ci)
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_RELABEL;
    let mut stream = IndexStream::new(seed);
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
        let label = condition_label(SHUFFLE);
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
    if !long.is_empty() {
        out.push(
            Output::new("table15_relabel_with_ci", "Relabel effect and semantic-letter following per pair with paired CIs", NONE, &long_table(long, samples, seed))
                .with_notes(vec![
                    format!("One index matrix per pair over the items with baseline and shuffle rows, default_rng({seed}) = base seed + 5, pairs in the fixed order."),
                    "new_wrong_following_rate equals semantic_following_rate by definition; chance_old_letter_rate is deterministic (no interval).".into(),
                ]),
        );
    }
    out
}
