//! Truncation boundary: Table 5 (summary per pair × condition, and the paper's boundary table
//! with the aggregate-row bootstrap) and Table 18 (full boundary per pair).

use super::output::CriterionFamily;
use crate::dialogue::conditions::ids;
use serde::Serialize;

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::{Ci, Num, Pct, PyBool};
use super::index::{condition_label, dataset_display, dataset_short};
use super::{Ctx, Output};
/// The group's conditions in registry order.
fn truncation_order() -> &'static [&'static str] {
    crate::dialogue::conditions::group_keys(crate::dialogue::recipe::Group::Truncation)
}
use crate::metrics::bootstrap::{aggregate_row_ci, IndexStream};
use crate::metrics::criteria::Criterion;
use crate::metrics::{
    aggregate, contamination_any_wrong_flags, item_gaps, mean, restoration_ratio,
};


struct CondRow {
    cond: &'static str,
    source: &'static str,
    n: usize,
    clean_pw: f64,
    pw: f64,
    pc: f64,
    gap: f64,
    item_gaps: Vec<f64>,
    acc: f64,
    wf: f64,
    hist: f64,
    contam: f64,
    entropy: f64,
    max_prob: f64,
    restoration: f64,
    restoration_informative: bool,
    clean_like: bool,
}

struct TruncPair {
    model: String,
    model_key: String,
    dataset: String,
    rows: Vec<CondRow>,
}

fn collect(ctx: &Ctx) -> Vec<TruncPair> {
    let mut out = Vec::new();
    for p in &ctx.idx.pairs {
        if !truncation_order().iter().any(|c| p.has(c)) {
            continue;
        }
        let Some(clean) = p.clean() else {
            continue;
        };
        let resolved: Vec<(&'static str, &'static str)> = truncation_order()
            .iter()
            .filter_map(|c| p.resolve(p.reg.sources(c)).map(|s| (*c, s)))
            .collect();
        let mut conds = vec![clean];
        conds.extend(resolved.iter().map(|(_, s)| *s));
        let a = p.align(&conds);
        if a.n() == 0 {
            continue;
        }
        let c = a.obs(0);
        let ca = aggregate(&c);
        let pos = |name: &str| resolved.iter().position(|(k, _)| *k == name);
        let full_pw = pos(ids::FULL_HISTORY_RESET).map(|i| mean(&pw(&a.obs(i + 1))));
        let fresh_pw = pos(ids::FRESH_CONTEXT)
            .map(|i| mean(&pw(&a.obs(i + 1))))
            .unwrap_or(ca.p_wrong);
        let mut rows = Vec::new();
        for (i, (cond, source)) in resolved.iter().enumerate() {
            let x = a.obs(i + 1);
            let xa = aggregate(&x);
            let g = item_gaps(&x, &c);
            let any = contamination_any_wrong_flags(&c, &x);
            let (contam, _) = any.rate();
            let hist = any.num.iter().filter(|&&b| b).count() as f64 / a.n() as f64;
            let rest = full_pw.map(|f| restoration_ratio(fresh_pw, f, xa.p_wrong));
            rows.push(CondRow {
                cond,
                source,
                n: a.n(),
                clean_pw: ca.p_wrong,
                pw: xa.p_wrong,
                pc: xa.p_correct,
                gap: mean(&g),
                item_gaps: g,
                acc: xa.accuracy,
                wf: xa.wrong_follow,
                hist,
                contam,
                entropy: xa.entropy,
                max_prob: xa.max_prob,
                restoration: rest.map_or(f64::NAN, |r| r.ratio),
                restoration_informative: rest.is_some_and(|r| r.informative),
                clean_like: Criterion::MAIN.passes(&ca, &xa),
            });
        }
        out.push(TruncPair {
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: p.dataset.clone(),
            rows,
        });
    }
    out
}

/// `table05_truncation_summary.csv` (the artifact's `expanded_truncation_summary.csv`).
#[derive(Serialize, Default)]
struct SummaryRow {
    model: String,
    dataset: String,
    condition: &'static str,
    n_items: usize,
    clean_pw_mean: Num,
    condition_pw_mean: Num,
    condition_pc_mean: Num,
    hysteresis_gap_mean: Num,
    accuracy: Num,
    wrong_answer_following_rate: Num,
    history_contamination: Num,
    contamination_given_clean_correct: Num,
    entropy_mean: Num,
    max_probability_mean: Num,
    restoration_ratio: Num,
    clean_context_like_recovery: PyBool,
}

/// Markdown/LaTeX view of the summary.
#[derive(Serialize, Default)]
struct SummaryView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Context retained")]
    context_retained: String,
    n: usize,
    #[serde(rename = "p(w)")]
    pw: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "Acc. (%)")]
    accuracy: Pct,
    #[serde(rename = "WF (%)")]
    wrong_follow: Pct,
    #[serde(rename = "Contam. (%)")]
    contamination: Pct,
    #[serde(rename = "Rest.")]
    restoration: Num,
    #[serde(rename = "Clean-like")]
    clean_like: PyBool,
}

/// `table05_truncation_boundary.csv`: the paper's Table 5.
#[derive(Serialize, Default)]
struct BoundaryRow {
    condition: &'static str,
    label: String,
    mean_gap: Num,
    ci_low: Num,
    ci_high: Num,
    n_items: usize,
    n_pairs: usize,
    bootstrap_samples: usize,
    bootstrap_seed: u64,
    bootstrap_unit: &'static str,
    item_ci_low: Num,
    item_ci_high: Num,
    notes: String,
}

/// Markdown/LaTeX view of the boundary table.
#[derive(Serialize, Default)]
struct BoundaryView {
    #[serde(rename = "Context retained")]
    context_retained: String,
    #[serde(rename = "Mean gap")]
    mean_gap: Num,
    #[serde(rename = "95% CI")]
    ci: Ci,
    #[serde(rename = "Pairs")]
    pairs: usize,
    n: usize,
    #[serde(rename = "Item-bootstrap 95% CI")]
    item_ci: Ci,
}

/// `table18_truncation_by_pair.csv`.
#[derive(Serialize, Default)]
struct Table18Row {
    model: String,
    dataset: String,
    full_history_gap: Num,
    remove_strong_only_gap: Num,
    remove_medium_strong_gap: Num,
    remove_all_pressure_gap: Num,
    reset_only_gap: Num,
    fresh_context_gap: Num,
    best_nonfresh_condition: &'static str,
    first_condition_with_clean_context_like_recovery: &'static str,
    recovery_pattern: &'static str,
    /// The run's model key (`all` on the Mean row).
    model_key: String,
}

/// Markdown/LaTeX view of Table 18: the paper's columns (`Full, Strong, Med.+Str., All,
/// Reset`), then the fresh-context gap and the per-pair classifications.
#[derive(Serialize, Default)]
struct Table18View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Full")]
    full: Num,
    #[serde(rename = "Strong")]
    drop_strongest: Num,
    #[serde(rename = "Med.+Str.")]
    drop_medium_strong: Num,
    #[serde(rename = "All")]
    drop_all_pressure: Num,
    #[serde(rename = "Reset")]
    reset_only: Num,
    #[serde(rename = "Fresh")]
    fresh: Num,
    #[serde(rename = "Best non-fresh")]
    best_nonfresh: String,
    #[serde(rename = "First clean-like")]
    first_clean_like: String,
    #[serde(rename = "Pattern")]
    pattern: &'static str,
}

/// Table 5: the summary per pair and condition, and the paper's boundary table.
pub(super) fn table05(ctx: &Ctx) -> Vec<Output> {
    let pairs = collect(ctx);
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();

    // Table 5 summary (expanded_truncation_summary.csv)
    let mut t = Vec::new();
    let mut d = Vec::new();
    for tp in &pairs {
        for r in &tp.rows {
            t.push(SummaryRow {
                model: tp.model.clone(),
                dataset: tp.dataset.clone(),
                condition: r.cond,
                n_items: r.n,
                clean_pw_mean: Num(r.clean_pw),
                condition_pw_mean: Num(r.pw),
                condition_pc_mean: Num(r.pc),
                hysteresis_gap_mean: Num(r.gap),
                accuracy: Num(r.acc),
                wrong_answer_following_rate: Num(r.wf),
                history_contamination: Num(r.hist),
                contamination_given_clean_correct: Num(r.contam),
                entropy_mean: Num(r.entropy),
                max_probability_mean: Num(r.max_prob),
                restoration_ratio: Num(r.restoration),
                clean_context_like_recovery: PyBool(r.clean_like),
            });
            d.push(SummaryView {
                model: tp.model.clone(),
                dataset: dataset_display(&tp.dataset),
                context_retained: condition_label(ctx.reg(), r.cond),
                n: r.n,
                pw: Num(r.pw),
                gap: Num(r.gap),
                accuracy: Pct(r.acc),
                wrong_follow: Pct(r.wf),
                contamination: Pct(r.contam),
                restoration: Num(if r.restoration_informative {
                    r.restoration
                } else {
                    f64::NAN
                }),
                clean_like: PyBool(r.clean_like),
            });
        }
    }
    let fallbacks: Vec<String> = pairs
        .iter()
        .flat_map(|tp| {
            tp.rows.iter().filter(|r| r.source != r.cond).map(move |r| {
                format!(
                    "{} {}: {} taken from {}",
                    tp.model_key, tp.dataset, r.cond, r.source
                )
            })
        })
        .collect();
    let mut notes = vec![
        "hysteresis_gap_mean = mean over items of p_X(w) - p_clean(w). contamination_given_clean_correct here is the truncation-table definition #(clean correct and X not correct) / #(clean correct); history_contamination = #(clean correct and X not correct) / n.".to_string(),
        "restoration_ratio = (mean p_full(w) - mean p_X(w)) / (mean p_full(w) - mean p_fresh(w)); the CSV keeps the raw ratio, the Markdown/LaTeX view prints NA when |full - fresh| < 0.05. clean_context_like_recovery uses the MAIN criterion.".to_string(),
        "Truncation variants reconstruct the unreleased runner (docs/protocol.md §3.7): the retained assistant letters are the original ramp letters.".to_string(),
    ];
    if !fallbacks.is_empty() {
        notes.push(format!(
            "Equivalent conditions used where the truncation rows were absent: {}.",
            fallbacks.join("; ")
        ));
    }
    out.push(
        Output::new(
            "table05_truncation_summary",
            "Truncation boundary: summary per pair and condition",
            CriterionFamily::Main("clean_context_like_recovery"),
            &t,
        )
        .with_display(&d)
        .with_notes(notes),
    );

    // Table 5 paper view: mean gap over pairs + aggregate-row CI
    let (samples, seed, _) = ctx.opts.bootstrap(0);
    let mut b = Vec::new();
    let mut bd = Vec::new();
    let mut degenerate = false;
    for cond in truncation_order().iter().filter(|c| **c != ids::FRESH_CONTEXT) {
        let rows: Vec<&CondRow> = pairs
            .iter()
            .filter_map(|tp| tp.rows.iter().find(|r| r.cond == *cond))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let means: Vec<f64> = rows.iter().map(|r| r.gap).collect();
        let agg = aggregate_row_ci(&means, samples, seed);
        let pooled: Vec<f64> = rows
            .iter()
            .flat_map(|r| r.item_gaps.iter().copied())
            .collect();
        let mut stream = IndexStream::new(seed);
        let item = paired_cis(&mut stream, pooled.len(), samples, &[Stat::Mean(&pooled)])[0];
        let n: usize = rows.iter().map(|r| r.n).sum();
        let note = if rows.len() == 1 {
            degenerate = true;
            "degenerate aggregate-row CI: one pair, every replicate equals its mean; see item_ci_low/item_ci_high".to_string()
        } else {
            String::new()
        };
        b.push(BoundaryRow {
            condition: cond,
            label: condition_label(ctx.reg(), cond),
            mean_gap: Num(agg.estimate),
            ci_low: Num(agg.lo),
            ci_high: Num(agg.hi),
            n_items: n,
            n_pairs: rows.len(),
            bootstrap_samples: samples,
            bootstrap_seed: seed,
            bootstrap_unit: "model_dataset_aggregate_row",
            item_ci_low: Num(item.0),
            item_ci_high: Num(item.1),
            notes: note,
        });
        bd.push(BoundaryView {
            context_retained: condition_label(ctx.reg(), cond),
            mean_gap: Num(agg.estimate),
            ci: Ci(agg.lo, agg.hi),
            pairs: rows.len(),
            n,
            item_ci: Ci::from(item),
        });
    }
    let mut bnotes = vec![
        format!("Mean gap = mean of the per-pair mean gaps (the paper's Table 5 pools its five pairs this way; the same numbers are Table 18's Mean row); 95% CI = aggregate-row bootstrap over those pair means ({samples} replicates, fresh default_rng({seed}) per condition), as in the paper's Table 5."),
        format!("Item-bootstrap variant: the pooled item gaps of the condition, {samples} replicates, fresh default_rng({seed}) per condition (implicitly paired across conditions with equal n)."),
    ];
    if degenerate {
        bnotes.push("With a single model x dataset pair the aggregate-row interval is degenerate (lower = upper = the pair mean); use the item-bootstrap interval.".into());
    }
    out.push(
        Output::new(
            "table05_truncation_boundary",
            "Truncation boundary: mean gap and 95% CI",
            CriterionFamily::NoneBut("gap only"),
            &b,
        )
        .with_display(&bd)
        .with_notes(bnotes),
    );

    out
}

/// Table 18: the full truncation boundary per pair.
pub(super) fn table18(ctx: &Ctx) -> Vec<Output> {
    let pairs = collect(ctx);
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Table 18
    let mut t18 = Vec::new();
    let mut d18 = Vec::new();
    for tp in &pairs {
        let gap = |c: &str| {
            tp.rows
                .iter()
                .find(|r| r.cond == c)
                .map_or(f64::NAN, |r| r.gap)
        };
        let best = tp
            .rows
            .iter()
            .filter(|r| r.cond != ids::FRESH_CONTEXT && !r.gap.is_nan())
            .fold(None::<&CondRow>, |acc, r| match acc {
                Some(b) if b.gap.abs() <= r.gap.abs() => Some(b),
                _ => Some(r),
            })
            .map_or("", |r| r.cond);
        let first = tp
            .rows
            .iter()
            .find(|r| r.clean_like)
            .map_or("none", |r| r.cond);
        let pattern = recovery_pattern(&tp.rows);
        let full_history_gap = gap(ids::FULL_HISTORY_RESET);
        let remove_strong_only_gap = gap(ids::REMOVE_STRONG_ONLY);
        let remove_medium_strong_gap = gap(ids::REMOVE_MEDIUM_STRONG);
        let remove_all_pressure_gap = gap(ids::REMOVE_ALL_PRESSURE);
        let reset_only_gap = gap(ids::RESET_ONLY);
        let fresh_context_gap = gap(ids::FRESH_CONTEXT);
        t18.push(Table18Row {
            model: tp.model.clone(),
            model_key: tp.model_key.clone(),
            dataset: tp.dataset.clone(),
            full_history_gap: Num(full_history_gap),
            remove_strong_only_gap: Num(remove_strong_only_gap),
            remove_medium_strong_gap: Num(remove_medium_strong_gap),
            remove_all_pressure_gap: Num(remove_all_pressure_gap),
            reset_only_gap: Num(reset_only_gap),
            fresh_context_gap: Num(fresh_context_gap),
            best_nonfresh_condition: best,
            first_condition_with_clean_context_like_recovery: first,
            recovery_pattern: pattern,
        });
        d18.push(Table18View {
            model: tp.model.clone(),
            dataset: dataset_short(&tp.dataset),
            full: Num(full_history_gap),
            drop_strongest: Num(remove_strong_only_gap),
            drop_medium_strong: Num(remove_medium_strong_gap),
            drop_all_pressure: Num(remove_all_pressure_gap),
            reset_only: Num(reset_only_gap),
            fresh: Num(fresh_context_gap),
            best_nonfresh: if best.is_empty() {
                String::new()
            } else {
                condition_label(ctx.reg(), best)
            },
            first_clean_like: if first == "none" {
                "none".into()
            } else {
                condition_label(ctx.reg(), first)
            },
            pattern,
        });
    }
    // The paper's Mean row: the mean over the pairs of each gap column (pairs lacking a
    // condition are skipped for that column).
    let col_mean = |f: fn(&Table18Row) -> Num| {
        let v: Vec<f64> = t18.iter().map(|r| f(r).0).filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            f64::NAN
        } else {
            mean(&v)
        }
    };
    let mean_row = Table18Row {
        model: "Mean".into(),
        dataset: "all".into(),
        full_history_gap: Num(col_mean(|r| r.full_history_gap)),
        remove_strong_only_gap: Num(col_mean(|r| r.remove_strong_only_gap)),
        remove_medium_strong_gap: Num(col_mean(|r| r.remove_medium_strong_gap)),
        remove_all_pressure_gap: Num(col_mean(|r| r.remove_all_pressure_gap)),
        reset_only_gap: Num(col_mean(|r| r.reset_only_gap)),
        fresh_context_gap: Num(col_mean(|r| r.fresh_context_gap)),
        best_nonfresh_condition: "",
        first_condition_with_clean_context_like_recovery: "",
        recovery_pattern: "",
        model_key: "all".into(),
    };
    d18.push(Table18View {
        model: "Mean".into(),
        dataset: "–".into(),
        full: mean_row.full_history_gap,
        drop_strongest: mean_row.remove_strong_only_gap,
        drop_medium_strong: mean_row.remove_medium_strong_gap,
        drop_all_pressure: mean_row.remove_all_pressure_gap,
        reset_only: mean_row.reset_only_gap,
        fresh: mean_row.fresh_context_gap,
        ..Table18View::default()
    });
    t18.push(mean_row);
    out.push(
        Output::new("table18_truncation_by_pair", "Full truncation boundary per pair", CriterionFamily::Main("first_condition_with_clean_context_like_recovery"), &t18)
            .with_display(&d18)
            .with_notes(vec![
                "Mean (the paper's last row; CSV model Mean, dataset all) = the mean over the pairs of each gap column; it equals Table 5's Mean gap of the same condition (table05_truncation_boundary).".into(),
                "Gaps are mean p_X(w) - p_clean(w) per pair; best_nonfresh_condition = the non-fresh condition with the smallest |gap| (ties: earlier in the order full, drop strongest, drop medium+strong, drop all pressure, reset only).".into(),
                "first_condition_with_clean_context_like_recovery scans that order (then fresh_context) with the MAIN criterion; none if no condition passes.".into(),
                "recovery_pattern [gap: the artifact's rule is unreleased] = no_hysteresis if |full gap| <= 0.05; no_recovery if the gap does not fall from full history to the last condition; abrupt_boundary if the largest drop between consecutive conditions is at least half of the total drop; else gradual_recovery.".into(),
            ]),
    );
    out
}

fn recovery_pattern(rows: &[CondRow]) -> &'static str {
    let gaps: Vec<f64> = rows.iter().map(|r| r.gap).filter(|g| !g.is_nan()).collect();
    let Some(&first) = gaps.first() else {
        return "";
    };
    if rows.first().map(|r| r.cond) != Some(ids::FULL_HISTORY_RESET) {
        return "";
    }
    if first.abs() <= Criterion::MAIN.wrong_gap {
        return "no_hysteresis";
    }
    let total = first - gaps[gaps.len() - 1];
    if total <= 0.0 {
        return "no_recovery";
    }
    let max_drop = gaps
        .windows(2)
        .map(|w| w[0] - w[1])
        .fold(f64::NEG_INFINITY, f64::max);
    if max_drop >= 0.5 * total {
        "abrupt_boundary"
    } else {
        "gradual_recovery"
    }
}

/// One pair's truncation gaps (the rows Tables 5 and 18 use), for the truncation figure
/// (`figures::truncation`): model display name, dataset key, and per condition present (in
/// `TRUNCATION_ORDER`) its mean gap and item gaps.
pub(super) type PairGaps = (String, String, Vec<(&'static str, f64, Vec<f64>)>);

/// The truncation pairs of [`collect`], in pair order, as [`PairGaps`].
pub(super) fn pair_gaps(ctx: &Ctx) -> Vec<PairGaps> {
    collect(ctx)
        .into_iter()
        .map(|tp| {
            let rows = tp
                .rows
                .into_iter()
                .map(|r| (r.cond, r.gap, r.item_gaps))
                .collect();
            (tp.model, tp.dataset, rows)
        })
        .collect()
}
