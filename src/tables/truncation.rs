//! Truncation boundary: Table 5 (summary per pair × condition, and the paper's boundary table
//! with the aggregate-row bootstrap) and Table 18 (full boundary per pair).

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{condition_label, dataset_display, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::dialogue::conditions::TRUNCATION_ORDER;
use crate::metrics::bootstrap::{aggregate_row_ci, IndexStream};
use crate::metrics::criteria::Criterion;
use crate::metrics::{
    aggregate, contamination_any_wrong_flags, item_gaps, mean, restoration_ratio,
};

/// Conditions only the truncation suite produces (their presence makes a truncation pair).
use crate::dialogue::conditions::TRUNCATION_ORDER as TRUNCATION_ONLY;

fn resolve_candidates(cond: &str) -> Vec<&'static str> {
    match cond {
        "full_history_reset" => vec!["full_history_reset", R0_REF[0], R0_REF[1]],
        "fresh_context" => vec![
            "fresh_context",
            "fresh_context_deletion",
            CLEAN_REF[0],
            CLEAN_REF[1],
        ],
        "remove_strong_only" => vec!["remove_strong_only"],
        "remove_medium_strong" => vec!["remove_medium_strong"],
        "remove_all_pressure" => vec!["remove_all_pressure"],
        "reset_only" => vec!["reset_only"],
        _ => vec![],
    }
}

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
        if !TRUNCATION_ONLY.iter().any(|c| p.has(c)) {
            continue;
        }
        let Some(clean) = p
            .resolve(&CLEAN_REF)
            .or_else(|| p.resolve(&["fresh_context"]))
        else {
            continue;
        };
        let resolved: Vec<(&'static str, &'static str)> = TRUNCATION_ORDER
            .iter()
            .filter_map(|c| p.resolve(&resolve_candidates(c)).map(|s| (*c, s)))
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
        let full_pw = pos("full_history_reset").map(|i| mean(&pw(&a.obs(i + 1))));
        let fresh_pw = pos("fresh_context")
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

/// Table 5: the summary per pair and condition, and the paper's boundary table.
pub(super) fn table05(ctx: &Ctx) -> Vec<Output> {
    let pairs = collect(ctx);
    if pairs.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();

    // Table 5 summary (expanded_truncation_summary.csv)
    let mut t = Table::new(&[
        "model",
        "dataset",
        "condition",
        "n_items",
        "clean_pw_mean",
        "condition_pw_mean",
        "condition_pc_mean",
        "hysteresis_gap_mean",
        "accuracy",
        "wrong_answer_following_rate",
        "history_contamination",
        "contamination_given_clean_correct",
        "entropy_mean",
        "max_probability_mean",
        "restoration_ratio",
        "clean_context_like_recovery",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "Context retained",
        "n",
        "p(w)",
        "Gap",
        "Acc. (%)",
        "WF (%)",
        "Contam. (%)",
        "Rest.",
        "Clean-like",
    ]);
    for tp in &pairs {
        for r in &tp.rows {
            t.push(vec![
                txt(tp.model.clone()),
                txt(tp.dataset.clone()),
                txt(r.cond),
                int(r.n),
                num(r.clean_pw),
                num(r.pw),
                num(r.pc),
                num(r.gap),
                num(r.acc),
                num(r.wf),
                num(r.hist),
                num(r.contam),
                num(r.entropy),
                num(r.max_prob),
                num(r.restoration),
                boolc(r.clean_like),
            ]);
            d.push(vec![
                txt(tp.model.clone()),
                txt(dataset_display(&tp.dataset)),
                txt(condition_label(r.cond)),
                int(r.n),
                num(r.pw),
                num(r.gap),
                pct(r.acc),
                pct(r.wf),
                pct(r.contam),
                num(if r.restoration_informative {
                    r.restoration
                } else {
                    f64::NAN
                }),
                boolc(r.clean_like),
            ]);
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
        "Truncation variants reconstruct the unreleased runner (protocol §1.5): the retained assistant letters are the original ramp letters.".to_string(),
    ];
    if !fallbacks.is_empty() {
        notes.push(format!(
            "Equivalent conditions used where the truncation rows were absent: {}.",
            fallbacks.join("; ")
        ));
    }
    out.push(
        Output::from_table(
            "table05_truncation_summary",
            "Truncation boundary: summary per pair and condition",
            "main (clean_context_like_recovery)",
            t,
        )
        .with_display_table(d)
        .with_notes(notes),
    );

    // Table 5 paper view: mean gap over pairs + aggregate-row CI
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed;
    let mut b = Table::new(&[
        "condition",
        "label",
        "mean_gap",
        "ci_low",
        "ci_high",
        "n_items",
        "n_pairs",
        "bootstrap_samples",
        "bootstrap_seed",
        "bootstrap_unit",
        "item_ci_low",
        "item_ci_high",
        "notes",
    ]);
    let mut bd = Table::new(&[
        "Context retained",
        "Mean gap",
        "95% CI",
        "Pairs",
        "n",
        "Item-bootstrap 95% CI",
    ]);
    let mut degenerate = false;
    for cond in TRUNCATION_ORDER.iter().filter(|c| **c != "fresh_context") {
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
        b.push(vec![
            txt(*cond),
            txt(condition_label(cond)),
            num(agg.estimate),
            num(agg.lo),
            num(agg.hi),
            int(n),
            int(rows.len()),
            int(samples),
            uint(seed),
            txt("model_dataset_aggregate_row"),
            num(item.0),
            num(item.1),
            txt(note),
        ]);
        bd.push(vec![
            txt(condition_label(cond)),
            num(agg.estimate),
            ci(agg.lo, agg.hi),
            int(rows.len()),
            int(n),
            ci(item.0, item.1),
        ]);
    }
    let mut bnotes = vec![
        format!("Mean gap = mean of the per-pair mean gaps; 95% CI = aggregate-row bootstrap over those pair means ({samples} replicates, fresh default_rng({seed}) per condition), as in the paper's Table 5."),
        format!("Item-bootstrap variant: the pooled item gaps of the condition, {samples} replicates, fresh default_rng({seed}) per condition (implicitly paired across conditions with equal n)."),
    ];
    if degenerate {
        bnotes.push("With a single model x dataset pair the aggregate-row interval is degenerate (lower = upper = the pair mean); use the item-bootstrap interval.".into());
    }
    out.push(
        Output::from_table(
            "table05_truncation_boundary",
            "Truncation boundary: mean gap and 95% CI",
            "none (gap only)",
            b,
        )
        .with_display_table(bd)
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
    let mut t18 = Table::new(&[
        "model",
        "dataset",
        "full_history_gap",
        "remove_strong_only_gap",
        "remove_medium_strong_gap",
        "remove_all_pressure_gap",
        "reset_only_gap",
        "fresh_context_gap",
        "best_nonfresh_condition",
        "first_condition_with_clean_context_like_recovery",
        "recovery_pattern",
    ]);
    let mut d18 = Table::new(&[
        "Model",
        "Dataset",
        "Full",
        "Drop strongest",
        "Drop med.+strong",
        "Drop all pressure",
        "Reset only",
        "Fresh",
        "Best non-fresh",
        "First clean-like",
        "Pattern",
    ]);
    for tp in &pairs {
        let gap = |c: &str| {
            tp.rows
                .iter()
                .find(|r| r.cond == c)
                .map_or(f64::NAN, |r| r.gap)
        };
        let gaps: Vec<f64> = TRUNCATION_ORDER.iter().map(|c| gap(c)).collect();
        let best = tp
            .rows
            .iter()
            .filter(|r| r.cond != "fresh_context" && !r.gap.is_nan())
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
        let mut row = vec![txt(tp.model.clone()), txt(tp.dataset.clone())];
        row.extend(gaps.iter().map(|g| num(*g)));
        row.extend([txt(best), txt(first), txt(pattern)]);
        t18.push(row);
        let mut drow = vec![txt(tp.model.clone()), txt(dataset_display(&tp.dataset))];
        drow.extend(gaps.iter().map(|g| num(*g)));
        drow.extend([
            txt(if best.is_empty() {
                String::new()
            } else {
                condition_label(best)
            }),
            txt(if first == "none" {
                "none".into()
            } else {
                condition_label(first)
            }),
            txt(pattern),
        ]);
        d18.push(drow);
    }
    out.push(
        Output::from_table("table18_truncation_by_pair", "Full truncation boundary per pair", "main (first_condition_with_clean_context_like_recovery)", t18)
            .with_display_table(d18)
            .with_notes(vec![
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
    if rows.first().map(|r| r.cond) != Some("full_history_reset") {
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
