//! R7 trusted evidence: Table 6 (pooled, plus per pair) and Table 19 (dataset-level change
//! R0 → R7).

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{condition_label, dataset_display, PairData, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::metrics::bootstrap::IndexStream;
use crate::metrics::criteria::Criterion;
use crate::metrics::{
    aggregate, contamination_advocated, item_gaps, mean, positive_hysteresis_rate, Obs,
};

const R7: &str = "evidence_grounded_recovery";

/// Table 6 rows: (condition name in the table, candidate condition keys, label).
fn table6_conditions() -> Vec<(&'static str, Vec<&'static str>, String)> {
    vec![
        ("clean", CLEAN_REF.to_vec(), "Clean".to_string()),
        (R7, vec![R7], condition_label(R7)),
        (
            "factual_state_reconstruction",
            vec!["factual_state_reconstruction"],
            condition_label("factual_state_reconstruction"),
        ),
        (
            "fresh_context_deletion",
            vec!["fresh_context_deletion"],
            condition_label("fresh_context_deletion"),
        ),
        (
            "ordinary_strong_reset",
            R0_REF.to_vec(),
            condition_label("ordinary_strong_reset"),
        ),
    ]
}

fn r7_pairs<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Vec<&'p PairData<'a>> {
    ctx.idx
        .pairs
        .iter()
        .filter(|p| p.has(R7) && p.resolve(&CLEAN_REF).is_some())
        .collect()
}

/// (clean, X) observations of one condition over a set of pairs, concatenated in pair order.
fn pooled(pairs: &[&PairData], cands: &[&str]) -> (Vec<Obs>, Vec<Obs>, Vec<String>) {
    let (mut c, mut x, mut suites) = (Vec::new(), Vec::new(), Vec::new());
    for p in pairs {
        let (Some(clean), Some(cond)) = (p.resolve(&CLEAN_REF), p.resolve(cands)) else {
            continue;
        };
        let a = p.align(&[clean, cond]);
        if let Some(r) = a.rows[1].first() {
            if !suites.contains(&r.suite) {
                suites.push(r.suite.clone());
            }
        }
        c.extend(a.obs(0));
        x.extend(a.obs(1));
    }
    (c, x, suites)
}

const T6_METRICS: [&str; 19] = [
    "condition",
    "condition_label",
    "accuracy",
    "mean_p_wrong",
    "mean_p_correct",
    "mean_hysteresis_gap",
    "wrong_following_rate",
    "positive_hysteresis_rate",
    "history_contamination_rate_clean_correct",
    "clean_accuracy",
    "clean_p_correct",
    "clean_entropy",
    "clean_max_probability",
    "entropy",
    "max_probability",
    "n_items",
    "hysteresis_gap_ci_low",
    "hysteresis_gap_ci_high",
    "clean_context_like_pass",
];

struct T6Row {
    cells: Vec<Cell>,
    display: Vec<Cell>,
}

fn t6_row(name: &str, label: &str, c: &[Obs], x: &[Obs], samples: usize, seed: u64) -> T6Row {
    let (ca, xa) = (aggregate(c), aggregate(x));
    let g = item_gaps(x, c);
    let mut stream = IndexStream::new(seed);
    let ci_ = paired_cis(&mut stream, g.len(), samples, &[Stat::Mean(&g)])[0];
    let contam = contamination_advocated(c, x).0;
    let pos = positive_hysteresis_rate(x, c);
    let pass = Criterion::MAIN.passes(&ca, &xa);
    T6Row {
        cells: vec![
            txt(name),
            txt(label),
            num(xa.accuracy),
            num(xa.p_wrong),
            num(xa.p_correct),
            num(mean(&g)),
            num(xa.wrong_follow),
            num(pos),
            num(contam),
            num(ca.accuracy),
            num(ca.p_correct),
            num(ca.entropy),
            num(ca.max_prob),
            num(xa.entropy),
            num(xa.max_prob),
            int(xa.n),
            num(ci_.0),
            num(ci_.1),
            boolc(pass),
        ],
        display: vec![
            txt(label),
            pct(xa.accuracy),
            pct(xa.p_wrong),
            pct(mean(&g)),
            ci_pct(ci_.0, ci_.1),
            pct(xa.wrong_follow),
            pct(contam),
            boolc(pass),
            int(xa.n),
        ],
    }
}

const T6_DISPLAY: [&str; 9] = [
    "Condition",
    "Acc. (%)",
    "Mean p(w) (%)",
    "Gap (pp)",
    "Gap 95% CI (pp)",
    "Wrong-follow (%)",
    "Contam. (%)",
    "Clean-like (main)",
    "n",
];

pub(super) fn table06(ctx: &Ctx) -> Vec<Output> {
    let pairs = r7_pairs(ctx);
    if pairs.is_empty() {
        return Vec::new();
    }
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed;
    let mut t = Table::new(&T6_METRICS);
    let mut d = Table::new(&T6_DISPLAY);
    for (name, cands, label) in table6_conditions() {
        let (c, x, _) = pooled(&pairs, &cands);
        if x.is_empty() {
            continue;
        }
        let r = t6_row(name, &label, &c, &x, samples, seed);
        t.push(r.cells);
        d.push(r.display);
    }
    let mut cols = vec!["suite", "model_key", "model_short_name", "dataset"];
    cols.extend(T6_METRICS);
    let mut bp = Table::new(&cols);
    let mut dcols = vec!["Model", "Dataset"];
    dcols.extend(T6_DISPLAY);
    let mut dbp = Table::new(&dcols);
    for p in &pairs {
        for (name, cands, label) in table6_conditions() {
            let (c, x, suites) = pooled(&[*p], &cands);
            if x.is_empty() {
                continue;
            }
            let r = t6_row(name, &label, &c, &x, samples, seed);
            let mut row = vec![
                txt(suites.join("+")),
                txt(p.model_key.clone()),
                txt(p.model.clone()),
                txt(p.dataset.clone()),
            ];
            row.extend(r.cells);
            bp.push(row);
            let mut drow = pair_cells(p);
            drow.extend(r.display);
            dbp.push(drow);
        }
    }
    let notes = vec![
        "Pooled over the pairs that have R7 rows (item-weighted means over all pooled items). Gap = mean over items of p_X(w) - p_clean(w); Contam. = #(clean correct and X follows the advocated wrong answer) / #(clean correct).".to_string(),
        "clean_context_like_pass applies the MAIN criterion to the pooled (or per-pair) aggregates.".to_string(),
        format!("Gap CI: item bootstrap over the pooled rows of each condition, {samples} replicates, fresh default_rng({seed}) per condition (the artifact's R7 summaries used 2,000 replicates)."),
        "R7's evidence block placement and wording are hyst-tui's (runner unreleased, protocol §1.4). fresh_context_deletion is hierarchy R3a (the clean prompt).".to_string(),
    ];
    vec![
        Output::from_table(
            "table06_r7_evidence",
            "R0 vs R7 trusted-evidence recovery (pooled)",
            "main (clean_context_like_pass)",
            t,
        )
        .with_display_table(d)
        .with_notes(notes.clone()),
        Output::from_table(
            "table06_r7_evidence_by_pair",
            "R0 vs R7 trusted-evidence recovery by pair",
            "main (clean_context_like_pass)",
            bp,
        )
        .with_display_table(dbp)
        .with_notes(notes),
    ]
}

const T19_METRICS: [&str; 6] = [
    "accuracy",
    "mean_p_wrong",
    "mean_p_correct",
    "mean_hysteresis_gap",
    "wrong_following_rate",
    "history_contamination_rate_clean_correct",
];

fn t19_values(c: &[Obs], x: &[Obs]) -> [f64; 6] {
    let xa = aggregate(x);
    [
        xa.accuracy,
        xa.p_wrong,
        xa.p_correct,
        mean(&item_gaps(x, c)),
        xa.wrong_follow,
        contamination_advocated(c, x).0,
    ]
}

pub(super) fn table19(ctx: &Ctx) -> Vec<Output> {
    let pairs: Vec<&PairData> = r7_pairs(ctx)
        .into_iter()
        .filter(|p| p.resolve(&R0_REF).is_some())
        .collect();
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut cols: Vec<String> = vec!["dataset".into()];
    for m in T19_METRICS {
        cols.extend([format!("r0_{m}"), format!("r7_{m}"), format!("delta_{m}")]);
    }
    cols.push("n_items".into());
    let mut t = Table::with_columns(cols);
    let mut d = Table::new(&["Dataset", "n", "Metric", "R0", "R7", "Change"]);
    let mut groups: Vec<(String, Vec<&PairData>)> = ctx
        .idx
        .datasets()
        .into_iter()
        .map(|ds| {
            (
                ds.clone(),
                pairs
                    .iter()
                    .copied()
                    .filter(|p| p.dataset == ds)
                    .collect::<Vec<_>>(),
            )
        })
        .filter(|(_, g)| !g.is_empty())
        .collect();
    groups.push(("all".to_string(), pairs.clone()));
    for (ds, g) in groups {
        let (mut c, mut r0, mut r7) = (Vec::new(), Vec::new(), Vec::new());
        for p in &g {
            let (clean, r0c) = (
                p.resolve(&CLEAN_REF).expect("r7 pair has clean"),
                p.resolve(&R0_REF).expect("filtered"),
            );
            let a = p.align(&[clean, r0c, R7]);
            c.extend(a.obs(0));
            r0.extend(a.obs(1));
            r7.extend(a.obs(2));
        }
        if c.is_empty() {
            continue;
        }
        let (v0, v7) = (t19_values(&c, &r0), t19_values(&c, &r7));
        let mut row = vec![txt(ds.clone())];
        for k in 0..6 {
            row.extend([num(v0[k]), num(v7[k]), num(v7[k] - v0[k])]);
        }
        row.push(int(c.len()));
        t.push(row);
        let dsn = if ds == "all" {
            "All datasets".to_string()
        } else {
            dataset_display(&ds)
        };
        for k in 0..6 {
            d.push(vec![
                txt(dsn.clone()),
                int(c.len()),
                txt(T19_METRICS[k]),
                num(v0[k]),
                num(v7[k]),
                num(v7[k] - v0[k]),
            ]);
        }
    }
    vec![Output::from_table("table19_r0_to_r7_by_dataset", "Dataset-level change R0 -> R7", "none", t)
        .with_display_table(d)
        .with_notes(vec![
            "Items present in clean, R0 and R7, pooled per dataset (and over all datasets in the last row); delta = R7 - R0.".into(),
            "mean_hysteresis_gap = mean over items of p_X(w) - p_clean(w); history_contamination_rate_clean_correct = #(clean correct and X follows w) / #(clean correct).".into(),
        ])]
}
