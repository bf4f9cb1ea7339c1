//! R7 trusted evidence: Table 6 (pooled, plus per pair) and Table 19 (dataset-level change
//! R0 → R7).

use super::output::CriterionFamily;
use crate::dialogue::conditions::ids;
use serde::Serialize;

use super::boot::{paired_cis, Stat};
use super::format::{Join, Num, PyBool, Shown};
use super::grouping::{Group, Groups};
use super::index::{condition_label, dataset_display, PairData};
use crate::dialogue::conditions::Registry;
use super::{Ctx, Output};
use crate::metrics::bootstrap::IndexStream;
use crate::metrics::criteria::Criterion;
use crate::metrics::{
    aggregate, contamination_advocated, item_gaps, mean, positive_hysteresis_rate, Obs,
};

const R7: &str = ids::TRUSTED_EVIDENCE;

/// Table 6 rows: (condition name in the table, candidate condition keys, label).
fn table6_conditions(reg: &Registry) -> Vec<(&'static str, Vec<&'static str>, String)> {
    vec![
        ("clean", reg.clean_ref().to_vec(), "Clean".to_string()),
        (R7, vec![R7], condition_label(reg, R7)),
        (
            ids::FACTUAL_RECONSTRUCTION,
            vec![ids::FACTUAL_RECONSTRUCTION],
            condition_label(reg, ids::FACTUAL_RECONSTRUCTION),
        ),
        (
            ids::FRESH_CONTEXT_DELETION,
            vec![ids::FRESH_CONTEXT_DELETION],
            condition_label(reg, ids::FRESH_CONTEXT_DELETION),
        ),
        (
            ids::ORDINARY_RESET,
            reg.r0_ref().to_vec(),
            condition_label(reg, ids::ORDINARY_RESET),
        ),
    ]
}

fn r7_pairs<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Vec<&'p PairData<'a>> {
    ctx.idx
        .pairs
        .iter()
        .filter(|p| p.has(R7) && p.clean().is_some())
        .collect()
}

/// (clean, X) observations of one condition over a set of pairs, concatenated in pair order.
fn pooled(pairs: &[&PairData], cands: &[&str]) -> (Vec<Obs>, Vec<Obs>, Vec<String>) {
    let (mut c, mut x, mut suites) = (Vec::new(), Vec::new(), Vec::new());
    for p in pairs {
        let (Some(clean), Some(cond)) = (p.clean(), p.resolve(cands)) else {
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

/// `table06_r7_evidence.csv` (and the metric columns of the by-pair file): one condition.
#[derive(Serialize, Default)]
struct Table06Row {
    condition: &'static str,
    condition_label: String,
    accuracy: Num,
    mean_p_wrong: Num,
    mean_p_correct: Num,
    mean_hysteresis_gap: Num,
    wrong_following_rate: Num,
    positive_hysteresis_rate: Num,
    history_contamination_rate_clean_correct: Num,
    clean_accuracy: Num,
    clean_p_correct: Num,
    clean_entropy: Num,
    clean_max_probability: Num,
    entropy: Num,
    max_probability: Num,
    n_items: usize,
    hysteresis_gap_ci_low: Num,
    hysteresis_gap_ci_high: Num,
    clean_context_like_pass: PyBool,
}

/// The Markdown/LaTeX view of one condition: the paper's columns (Acc., p(w_i) and Gap as
/// fractions, WF and Contam. in percent, as printed), then the gap's interval, the main
/// criterion and n.
const SHOWN: [Shown; 9] = [
    Shown::As("condition_label", "Condition"),
    Shown::As("accuracy", "Acc."),
    Shown::As("mean_p_wrong", "p(w_i)"),
    Shown::As("mean_hysteresis_gap", "Gap"),
    Shown::Pct("wrong_following_rate", "WF (%)"),
    Shown::Pct("history_contamination_rate_clean_correct", "Contam. (%)"),
    Shown::Ci("hysteresis_gap_ci_low", "hysteresis_gap_ci_high", "Gap 95% CI"),
    Shown::As("clean_context_like_pass", "Clean-like (main)"),
    Shown::As("n_items", "n"),
];

/// The pair columns of the by-pair view.
const PAIR_SHOWN: [Shown; 2] = [
    Shown::As("model_short_name", "Model"),
    Shown::Text("dataset", "Dataset", dataset_display),
];

/// Key columns of `table06_r7_evidence_by_pair.csv`.
#[derive(Serialize, Default)]
struct PairKey {
    suite: String,
    model_key: String,
    model_short_name: String,
    dataset: String,
}

fn t6_row(
    name: &'static str,
    label: &str,
    c: &[Obs],
    x: &[Obs],
    samples: usize,
    seed: u64,
) -> Table06Row {
    let (ca, xa) = (aggregate(c), aggregate(x));
    let g = item_gaps(x, c);
    let mut stream = IndexStream::new(seed);
    let ci_ = paired_cis(&mut stream, g.len(), samples, &[Stat::Mean(&g)])[0];
    Table06Row {
        condition: name,
        condition_label: label.to_string(),
        accuracy: Num(xa.accuracy),
        mean_p_wrong: Num(xa.p_wrong),
        mean_p_correct: Num(xa.p_correct),
        mean_hysteresis_gap: Num(mean(&g)),
        wrong_following_rate: Num(xa.wrong_follow),
        positive_hysteresis_rate: Num(positive_hysteresis_rate(x, c)),
        history_contamination_rate_clean_correct: Num(contamination_advocated(c, x).0),
        clean_accuracy: Num(ca.accuracy),
        clean_p_correct: Num(ca.p_correct),
        clean_entropy: Num(ca.entropy),
        clean_max_probability: Num(ca.max_prob),
        entropy: Num(xa.entropy),
        max_probability: Num(xa.max_prob),
        n_items: xa.n,
        hysteresis_gap_ci_low: Num(ci_.0),
        hysteresis_gap_ci_high: Num(ci_.1),
        clean_context_like_pass: PyBool(Criterion::MAIN.passes(&ca, &xa)),
    }
}

pub(super) fn table06(ctx: &Ctx) -> Vec<Output> {
    let groups = Groups::of_pairs(r7_pairs(ctx));
    let (samples, seed, _) = ctx.opts.bootstrap(0);
    // A row for each condition that `g`'s pairs have, with the suites its rows come from.
    let rows = |g: &Group<()>| -> Vec<(String, Table06Row)> {
        let pairs: Vec<&PairData> = g.pairs().collect();
        table6_conditions(ctx.reg())
            .into_iter()
            .filter_map(|(name, cands, label)| {
                let (c, x, suites) = pooled(&pairs, &cands);
                if x.is_empty() {
                    return None;
                }
                Some((suites.join("+"), t6_row(name, &label, &c, &x, samples, seed)))
            })
            .collect()
    };
    let t: Vec<Table06Row> = rows(&groups.pooled()).into_iter().map(|(_, row)| row).collect();
    let mut bp = Vec::new();
    for g in groups.by_pair() {
        let p = g.pair().expect("a pair group");
        for (suite, row) in rows(&g) {
            let key = PairKey {
                suite,
                model_key: p.model_key.clone(),
                model_short_name: p.model.clone(),
                dataset: p.dataset.clone(),
            };
            bp.push(Join(key, row));
        }
    }
    let notes = vec![
        "Pooled over the pairs that have R7 rows (item-weighted means over all pooled items). Gap = mean over items of p_X(w) - p_clean(w); Contam. = #(clean correct and X follows the advocated wrong answer) / #(clean correct).".to_string(),
        "clean_context_like_pass applies the MAIN criterion to the pooled (or per-pair) aggregates.".to_string(),
        format!("Gap CI: item bootstrap over the pooled rows of each condition, {samples} replicates, fresh default_rng({seed}) per condition (the artifact's R7 summaries used 2,000 replicates)."),
        "R7's evidence block placement and wording are hyst-tui's (runner unreleased, docs/protocol.md §3.6). fresh_context_deletion is hierarchy R3a (the clean prompt).".to_string(),
    ];
    vec![
        Output::new(
            "table06_r7_evidence",
            "R0 vs R7 trusted-evidence recovery (pooled)",
            CriterionFamily::Main("clean_context_like_pass"),
            &t,
        )
        .with_view(&SHOWN)
        .with_notes(notes.clone()),
        Output::new(
            "table06_r7_evidence_by_pair",
            "R0 vs R7 trusted-evidence recovery by pair",
            CriterionFamily::Main("clean_context_like_pass"),
            &bp,
        )
        .with_view(&[&PAIR_SHOWN[..], &SHOWN].concat())
        .with_notes(notes),
    ]
}

/// The six metrics of Table 19 for one context (R0 or R7) against clean.
#[derive(Clone, Copy)]
struct T19Values {
    accuracy: f64,
    mean_p_wrong: f64,
    mean_p_correct: f64,
    mean_hysteresis_gap: f64,
    wrong_following_rate: f64,
    history_contamination_rate_clean_correct: f64,
}

impl T19Values {
    fn of(c: &[Obs], x: &[Obs]) -> T19Values {
        let xa = aggregate(x);
        T19Values {
            accuracy: xa.accuracy,
            mean_p_wrong: xa.p_wrong,
            mean_p_correct: xa.p_correct,
            mean_hysteresis_gap: mean(&item_gaps(x, c)),
            wrong_following_rate: xa.wrong_follow,
            history_contamination_rate_clean_correct: contamination_advocated(c, x).0,
        }
    }
}

/// `table19_r0_to_r7_by_dataset.csv`: R0, R7 and R7 - R0 of each metric.
#[derive(Serialize, Default)]
struct Table19Row {
    dataset: String,
    r0_accuracy: Num,
    r7_accuracy: Num,
    delta_accuracy: Num,
    r0_mean_p_wrong: Num,
    r7_mean_p_wrong: Num,
    delta_mean_p_wrong: Num,
    r0_mean_p_correct: Num,
    r7_mean_p_correct: Num,
    delta_mean_p_correct: Num,
    r0_mean_hysteresis_gap: Num,
    r7_mean_hysteresis_gap: Num,
    delta_mean_hysteresis_gap: Num,
    r0_wrong_following_rate: Num,
    r7_wrong_following_rate: Num,
    delta_wrong_following_rate: Num,
    r0_history_contamination_rate_clean_correct: Num,
    r7_history_contamination_rate_clean_correct: Num,
    delta_history_contamination_rate_clean_correct: Num,
    n_items: usize,
}

impl Table19Row {
    fn new(dataset: String, r0: &T19Values, r7: &T19Values, n_items: usize) -> Table19Row {
        Table19Row {
            dataset,
            r0_accuracy: Num(r0.accuracy),
            r7_accuracy: Num(r7.accuracy),
            delta_accuracy: Num(r7.accuracy - r0.accuracy),
            r0_mean_p_wrong: Num(r0.mean_p_wrong),
            r7_mean_p_wrong: Num(r7.mean_p_wrong),
            delta_mean_p_wrong: Num(r7.mean_p_wrong - r0.mean_p_wrong),
            r0_mean_p_correct: Num(r0.mean_p_correct),
            r7_mean_p_correct: Num(r7.mean_p_correct),
            delta_mean_p_correct: Num(r7.mean_p_correct - r0.mean_p_correct),
            r0_mean_hysteresis_gap: Num(r0.mean_hysteresis_gap),
            r7_mean_hysteresis_gap: Num(r7.mean_hysteresis_gap),
            delta_mean_hysteresis_gap: Num(r7.mean_hysteresis_gap - r0.mean_hysteresis_gap),
            r0_wrong_following_rate: Num(r0.wrong_following_rate),
            r7_wrong_following_rate: Num(r7.wrong_following_rate),
            delta_wrong_following_rate: Num(r7.wrong_following_rate - r0.wrong_following_rate),
            r0_history_contamination_rate_clean_correct: Num(
                r0.history_contamination_rate_clean_correct
            ),
            r7_history_contamination_rate_clean_correct: Num(
                r7.history_contamination_rate_clean_correct
            ),
            delta_history_contamination_rate_clean_correct: Num(r7
                .history_contamination_rate_clean_correct
                - r0.history_contamination_rate_clean_correct),
            n_items,
        }
    }
}

/// The dataset column of Table 19's view: the display name, `All datasets` for the last row.
fn dataset_shown(key: &str) -> String {
    if key == "all" {
        "All datasets".to_string()
    } else {
        dataset_display(key)
    }
}

/// Markdown/LaTeX view: one row per dataset, the paper's columns (the change R7 − R0 of Acc.,
/// p(w_i) and Gap as fractions, of WF and Contam. in percentage points, as printed), then n,
/// the change of p(c) and the R0 and R7 values themselves.
const T19_SHOWN: [Shown; 20] = [
    Shown::Text("dataset", "Dataset", dataset_shown),
    Shown::As("delta_accuracy", "Acc."),
    Shown::As("delta_mean_p_wrong", "p(w_i)"),
    Shown::As("delta_mean_hysteresis_gap", "Gap"),
    Shown::Pct("delta_wrong_following_rate", "WF (pp)"),
    Shown::Pct("delta_history_contamination_rate_clean_correct", "Contam. (pp)"),
    Shown::As("n_items", "n"),
    Shown::As("delta_mean_p_correct", "p(c)"),
    Shown::As("r0_accuracy", "R0 acc."),
    Shown::As("r7_accuracy", "R7 acc."),
    Shown::As("r0_mean_p_wrong", "R0 p(w)"),
    Shown::As("r7_mean_p_wrong", "R7 p(w)"),
    Shown::As("r0_mean_p_correct", "R0 p(c)"),
    Shown::As("r7_mean_p_correct", "R7 p(c)"),
    Shown::As("r0_mean_hysteresis_gap", "R0 gap"),
    Shown::As("r7_mean_hysteresis_gap", "R7 gap"),
    Shown::Pct("r0_wrong_following_rate", "R0 WF (%)"),
    Shown::Pct("r7_wrong_following_rate", "R7 WF (%)"),
    Shown::Pct("r0_history_contamination_rate_clean_correct", "R0 contam. (%)"),
    Shown::Pct("r7_history_contamination_rate_clean_correct", "R7 contam. (%)"),
];

pub(super) fn table19(ctx: &Ctx) -> Vec<Output> {
    let pairs: Vec<&PairData> = r7_pairs(ctx)
        .into_iter()
        .filter(|p| p.r0().is_some())
        .collect();
    let groups = Groups::of_pairs(pairs);
    let mut t = Vec::new();
    for g in groups.by_dataset().into_iter().chain([groups.pooled()]) {
        let (mut c, mut r0, mut r7) = (Vec::new(), Vec::new(), Vec::new());
        for p in g.pairs() {
            let (clean, r0c) = (
                p.clean().expect("r7 pair has clean"),
                p.r0().expect("filtered"),
            );
            let a = p.align(&[clean, r0c, R7]);
            c.extend(a.obs(0));
            r0.extend(a.obs(1));
            r7.extend(a.obs(2));
        }
        if c.is_empty() {
            continue;
        }
        let (v0, v7) = (T19Values::of(&c, &r0), T19Values::of(&c, &r7));
        let ds = g.dataset().unwrap_or("all").to_string();
        t.push(Table19Row::new(ds, &v0, &v7, c.len()));
    }
    vec![Output::new("table19_r0_to_r7_by_dataset", "Dataset-level change R0 -> R7", CriterionFamily::None, &t)
        .with_view(&T19_SHOWN)
        .with_notes(vec![
            "Items present in clean, R0 and R7, pooled per dataset (and over all datasets in the last row); delta = R7 - R0. The paper's columns (Acc., p(w_i), Gap, WF, Contam.) are these changes, WF and Contam. in percentage points.".into(),
            "mean_hysteresis_gap = mean over items of p_X(w) - p_clean(w); history_contamination_rate_clean_correct = #(clean correct and X follows w) / #(clean correct).".into(),
        ])]
}
