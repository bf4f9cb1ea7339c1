//! Behavioural controls: Table 3 (pooled, by dataset, by pair) and Table 7 (per pair with
//! paired CIs) — pressure vs neutral history vs correct pressure.

use super::output::CriterionFamily;
use crate::dialogue::conditions::ids;
use serde::Serialize;

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::{Ci, Join, Num, Pct, Shown};
use super::grouping::{DatasetKey, Group, Groups};
use super::index::{dataset_display, PairData};
use super::{false_context, plausibility, relabel, Ctx, Output};
use crate::metrics::bootstrap::SEED_OFFSET_CONTROLS;
use crate::metrics::{hysteresis_gap, item_gaps, mean, rate};

const NEUTRAL_RESET: &str = "neutral_history:strong_reset";
const NEUTRAL_PROBE: [&str; 2] = [
    "neutral_history:clean_context_probe",
    "neutral_history:clean_context",
];
const CORRECT_RESET: &str = "correct_pressure:strong_reset";

/// The controls a pair has: the neutral-history clean probe (when its strong reset is present
/// too) and whether the correct-pressure strong reset is present; `None` when it has neither.
fn controls_of(p: &PairData) -> Option<(Option<&'static str>, bool)> {
    let neutral = p.resolve(&NEUTRAL_PROBE).filter(|_| p.has(NEUTRAL_RESET));
    let correct = p.has(CORRECT_RESET);
    (neutral.is_some() || correct).then_some((neutral, correct))
}

/// What a pair contributes to the controls tables.
struct ControlsPair {
    r0: &'static str,
    n: usize,
    pressure_clean_pw: f64,
    pressure_reset_pw: f64,
    neutral_reset_pw: f64,
    neutral_n: usize,
    correct_n: usize,
    m: Metrics,
}

/// The pairs with clean, R0 and at least one control, each with its control metrics.
fn controls_groups<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Groups<'p, 'a, ControlsPair> {
    let mut out = Vec::new();
    for (p, r0, a) in ctx.idx.clean_r0_pairs() {
        let Some((neutral, correct)) = controls_of(p) else {
            continue;
        };
        let (c, r) = (a.obs(0), a.obs(1));
        let mut cp = ControlsPair {
            r0,
            n: a.n(),
            pressure_clean_pw: mean(&pw(&c)),
            pressure_reset_pw: mean(&pw(&r)),
            neutral_reset_pw: f64::NAN,
            neutral_n: 0,
            correct_n: 0,
            m: Metrics {
                pressure_gap: hysteresis_gap(&r, &c),
                pressure_wf: rate(&wf_flags(&r)),
                neutral_gap: f64::NAN,
                neutral_wf: f64::NAN,
                correct_pc: f64::NAN,
                correct_pw: f64::NAN,
                correct_wf: f64::NAN,
            },
        };
        if let Some(np) = neutral {
            let a = p.align(&[np, NEUTRAL_RESET]);
            let (c, r) = (a.obs(0), a.obs(1));
            cp.neutral_n = a.n();
            if a.n() > 0 {
                cp.m.neutral_gap = hysteresis_gap(&r, &c);
                cp.neutral_reset_pw = mean(&pw(&r));
                cp.m.neutral_wf = rate(&wf_flags(&r));
            }
        }
        if correct {
            let a = p.align(&[CORRECT_RESET]);
            let r = a.obs(0);
            cp.correct_n = a.n();
            cp.m.correct_pc = mean(&pc(&r));
            cp.m.correct_pw = mean(&pw(&r));
            cp.m.correct_wf = rate(&wf_flags(&r));
        }
        out.push((p, cp));
    }
    Groups::new(out)
}

/// The seven control metrics of a pair, or n_items-weighted means over a group of pairs.
#[derive(Clone, Copy)]
struct Metrics {
    pressure_gap: f64,
    neutral_gap: f64,
    correct_pc: f64,
    correct_pw: f64,
    pressure_wf: f64,
    neutral_wf: f64,
    correct_wf: f64,
}

/// (n_items, n_pairs, weighted metrics) of a group of pairs.
fn pooled_controls(group: &Group<ControlsPair>) -> (usize, usize, Metrics) {
    let n: usize = group.values().map(|c| c.n).sum();
    let w = |f: fn(&Metrics) -> f64| {
        weighted_mean(&group.values().map(|c| (f(&c.m), c.n)).collect::<Vec<_>>())
    };
    let m = Metrics {
        pressure_gap: w(|m| m.pressure_gap),
        neutral_gap: w(|m| m.neutral_gap),
        correct_pc: w(|m| m.correct_pc),
        correct_pw: w(|m| m.correct_pw),
        pressure_wf: w(|m| m.pressure_wf),
        neutral_wf: w(|m| m.neutral_wf),
        correct_wf: w(|m| m.correct_wf),
    };
    (n, group.n_pairs(), m)
}

/// The pooled columns of `table03_controls.csv` and `table03_controls_by_dataset.csv` (after
/// the group column).
#[derive(Serialize, Default)]
struct PooledCols {
    n_items: usize,
    n_pairs: usize,
    pressure_gap: Num,
    neutral_gap: Num,
    correct_reset_p_correct: Num,
    correct_reset_p_wrong: Num,
    pressure_wrong_follow_rate: Num,
    neutral_wrong_follow_rate: Num,
    correct_wrong_follow_rate: Num,
}

impl PooledCols {
    fn new(n_items: usize, n_pairs: usize, m: &Metrics) -> PooledCols {
        PooledCols {
            n_items,
            n_pairs,
            pressure_gap: Num(m.pressure_gap),
            neutral_gap: Num(m.neutral_gap),
            correct_reset_p_correct: Num(m.correct_pc),
            correct_reset_p_wrong: Num(m.correct_pw),
            pressure_wrong_follow_rate: Num(m.pressure_wf),
            neutral_wrong_follow_rate: Num(m.neutral_wf),
            correct_wrong_follow_rate: Num(m.correct_wf),
        }
    }
}

/// The group column of `table03_controls.csv`.
#[derive(Serialize, Default)]
struct AllPairsKey {
    all_pairs: &'static str,
}

/// `table03_controls_by_pair.csv`.
#[derive(Serialize, Default)]
struct ByPairRow {
    model_key: String,
    model_short_name: String,
    dataset: String,
    n_items: usize,
    pressure_clean_p_wrong: Num,
    pressure_reset_p_wrong: Num,
    pressure_gap: Num,
    pressure_wrong_follow_rate: Num,
    pressure_source: &'static str,
    neutral_gap: Num,
    neutral_reset_p_wrong: Num,
    neutral_wrong_follow_rate: Num,
    correct_reset_p_correct: Num,
    correct_reset_p_wrong: Num,
    correct_wrong_follow_rate: Num,
    neutral_n_scored: usize,
    correct_n_scored: usize,
}

/// The seven metrics in the Markdown/LaTeX views.
#[derive(Serialize, Default)]
struct MetricsView {
    #[serde(rename = "Pressure gap")]
    pressure_gap: Num,
    #[serde(rename = "Neutral gap")]
    neutral_gap: Num,
    #[serde(rename = "Correct-pressure p(c)")]
    correct_pc: Num,
    #[serde(rename = "Correct-pressure p(w)")]
    correct_pw: Num,
    #[serde(rename = "Pressure WF (%)")]
    pressure_wf: Pct,
    #[serde(rename = "Neutral WF (%)")]
    neutral_wf: Pct,
    #[serde(rename = "Correct-pressure WF (%)")]
    correct_wf: Pct,
}

impl From<&Metrics> for MetricsView {
    fn from(m: &Metrics) -> MetricsView {
        MetricsView {
            pressure_gap: Num(m.pressure_gap),
            neutral_gap: Num(m.neutral_gap),
            correct_pc: Num(m.correct_pc),
            correct_pw: Num(m.correct_pw),
            pressure_wf: Pct(m.pressure_wf),
            neutral_wf: Pct(m.neutral_wf),
            correct_wf: Pct(m.correct_wf),
        }
    }
}

/// The leading columns of the pooled view (all pairs, then each dataset).
#[derive(Serialize, Default)]
struct GroupHead {
    #[serde(rename = "Group")]
    group: String,
    n: usize,
    #[serde(rename = "Pairs")]
    pairs: usize,
}

/// The leading columns of the per-pair view.
#[derive(Serialize, Default)]
struct PairHead {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    n: usize,
}

pub(super) fn table03(ctx: &Ctx) -> Vec<Output> {
    let groups = controls_groups(ctx);
    if groups.is_empty() {
        return Vec::new();
    }
    let (n, k, m) = pooled_controls(&groups.pooled());
    let t = [Join(
        AllPairsKey { all_pairs: "all" },
        PooledCols::new(n, k, &m),
    )];
    let group = |group: String, n: usize, pairs: usize, m: &Metrics| {
        Join(GroupHead { group, n, pairs }, MetricsView::from(m))
    };
    let mut d = vec![group("All pairs".into(), n, k, &m)];

    let mut td = Vec::new();
    for g in groups.by_dataset() {
        let ds = g.dataset().expect("a dataset group");
        let (n, k, m) = pooled_controls(&g);
        d.push(group(dataset_display(ds), n, k, &m));
        td.push(Join(DatasetKey::of(ds), PooledCols::new(n, k, &m)));
    }

    let mut tp = Vec::new();
    let mut dp = Vec::new();
    for (p, c) in groups.members() {
        tp.push(ByPairRow {
            model_key: p.model_key.clone(),
            model_short_name: p.model.clone(),
            dataset: p.dataset.clone(),
            n_items: c.n,
            pressure_clean_p_wrong: Num(c.pressure_clean_pw),
            pressure_reset_p_wrong: Num(c.pressure_reset_pw),
            pressure_gap: Num(c.m.pressure_gap),
            pressure_wrong_follow_rate: Num(c.m.pressure_wf),
            pressure_source: c.r0,
            neutral_gap: Num(c.m.neutral_gap),
            neutral_reset_p_wrong: Num(c.neutral_reset_pw),
            neutral_wrong_follow_rate: Num(c.m.neutral_wf),
            correct_reset_p_correct: Num(c.m.correct_pc),
            correct_reset_p_wrong: Num(c.m.correct_pw),
            correct_wrong_follow_rate: Num(c.m.correct_wf),
            neutral_n_scored: c.neutral_n,
            correct_n_scored: c.correct_n,
        });
        let (model, dataset) = model_dataset(p);
        let n = c.n;
        dp.push(Join(
            PairHead { model, dataset, n },
            MetricsView::from(&c.m),
        ));
    }
    let notes = vec![
        "pressure_gap = mean(R0 p(w) - clean p(w)) per pair; neutral_gap = mean(neutral strong-reset p(w) - neutral clean-probe p(w)); correct_reset_* = the correct-pressure control at its strong reset (p(w) is the originally sampled wrong option).".to_string(),
        "Pooled rows are n_items-weighted means over the pairs that have the metric (NA values skipped).".to_string(),
        "The paper's Table 3 also summarises plausibility (Table 11), false mention (Table 12) and label inertia (Table 15); see those tables.".to_string(),
    ];
    vec![
        Output::new(
            "table03_controls",
            "Behavioural controls summary (all pairs)",
            CriterionFamily::None,
            &t,
        )
        .with_display(&d)
        .with_notes(notes.clone()),
        Output::new(
            "table03_controls_by_dataset",
            "Behavioural controls by dataset",
            CriterionFamily::None,
            &td,
        )
        .with_notes(notes.clone()),
        Output::new(
            "table03_controls_by_pair",
            "Behavioural controls by model and dataset",
            CriterionFamily::None,
            &tp,
        )
        .with_display(&dp)
        .with_notes(notes),
    ]
}

/// Markdown/LaTeX view of Table 7 (NA where the pair lacks the control).
#[derive(Serialize, Default)]
struct Table07View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    n: usize,
    #[serde(rename = "Press. gap")]
    pressure_gap: Option<Num>,
    #[serde(rename = "Press. gap CI")]
    pressure_gap_ci: Option<Ci>,
    #[serde(rename = "Neutral gap")]
    neutral_gap: Option<Num>,
    #[serde(rename = "Neutral gap CI")]
    neutral_gap_ci: Option<Ci>,
    #[serde(rename = "Corr. p(c)")]
    correct_pc: Option<Num>,
    #[serde(rename = "Corr. p(c) CI")]
    correct_pc_ci: Option<Ci>,
    #[serde(rename = "Corr. p(w)")]
    correct_pw: Option<Num>,
    #[serde(rename = "Corr. p(w) CI")]
    correct_pw_ci: Option<Ci>,
}

pub(super) fn table07(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_CONTROLS);
    let mut long = Vec::new();
    let mut wide = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.clean(), p.r0()) else {
            continue;
        };
        let Some((neutral, correct)) = controls_of(p) else {
            continue;
        };
        let mut conds = vec![clean, r0];
        if let Some(np) = neutral {
            conds.extend([np, NEUTRAL_RESET]);
        }
        if correct {
            conds.push(CORRECT_RESET);
        }
        let a = p.align(&conds);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let press_gap = item_gaps(&a.obs(1), &a.obs(0));
        let neutral_gap = if neutral.is_some() {
            item_gaps(&a.obs(3), &a.obs(2))
        } else {
            Vec::new()
        };
        let (cpc, cpw) = if correct {
            let o = a.obs(conds.len() - 1);
            (pc(&o), pw(&o))
        } else {
            (Vec::new(), Vec::new())
        };
        let mut stats = vec![Stat::Mean(&press_gap)];
        let mut names = vec!["pressure_gap"];
        if neutral.is_some() {
            stats.push(Stat::Mean(&neutral_gap));
            names.push("neutral_gap");
        }
        if correct {
            stats.push(Stat::Mean(&cpc));
            stats.push(Stat::Mean(&cpw));
            names.extend(["correct_reset_pc", "correct_reset_pw"]);
        }
        let cis = paired_cis(&mut stream, n, samples, &stats);
        let vals: Vec<f64> = stats
            .iter()
            .map(|s| match s {
                Stat::Mean(v) => mean(v),
                _ => f64::NAN,
            })
            .collect();
        let mut by_name = std::collections::BTreeMap::new();
        for k in 0..names.len() {
            long.push(LongRow::new(
                "behavioral_controls",
                p,
                "behavioral_controls",
                names[k],
                vals[k],
                cis[k],
                n,
            ));
            by_name.insert(names[k], (vals[k], cis[k]));
        }
        let get = |m: &str| by_name.get(m).map(|&(v, c)| (Num(v), Ci::from(c))).unzip();
        let (pressure_gap, pressure_gap_ci) = get("pressure_gap");
        let (neutral_gap, neutral_gap_ci) = get("neutral_gap");
        let (correct_pc, correct_pc_ci) = get("correct_reset_pc");
        let (correct_pw, correct_pw_ci) = get("correct_reset_pw");
        let (model, dataset) = model_dataset(p);
        wide.push(Table07View {
            model,
            dataset,
            n,
            pressure_gap,
            pressure_gap_ci,
            neutral_gap,
            neutral_gap_ci,
            correct_pc,
            correct_pc_ci,
            correct_pw,
            correct_pw_ci,
        });
    }
    if long.is_empty() {
        return Vec::new();
    }
    sort_by_model_dataset(&mut wide, |r| (&r.model, &r.dataset));
    let mut out = vec![Output::new("table07_behavioral_controls", "Behavioural controls per pair (pressure vs neutral history vs correct pressure)", CriterionFamily::None, &long_table(long, samples, seed))
        .with_display(&wide)
        .with_notes(vec![
            "Press. gap = pressure_gap = mean(R0 p(w) - clean p(w)); Neutral gap = neutral_gap = mean(neutral strong reset p(w) - neutral clean probe p(w)); Corr. p(c) / Corr. p(w) = correct_reset_pc / _pw = mean p(c) / p(w) at the strong reset of the correct-pressure control.".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) = base seed + 2, one matrix per pair over the items present in every condition used."),
            "The paper's printed Table 7 is the pooled row: table07_behavioral_controls_pooled.".into(),
        ])];
    out.extend(table07_pooled(ctx));
    out
}

/// The group column of `table07_behavioral_controls_pooled.csv`.
#[derive(Serialize, Default)]
struct SuiteKey {
    suite: &'static str,
}

/// Markdown/LaTeX view of the pooled row: the paper's columns, then n, pairs and the WF rates.
#[derive(Serialize, Default)]
struct Table07PooledView {
    #[serde(rename = "Suite")]
    suite: String,
    #[serde(rename = "Press. gap")]
    pressure_gap: Num,
    #[serde(rename = "Neutral gap")]
    neutral_gap: Num,
    #[serde(rename = "Corr. p(c)")]
    correct_pc: Num,
    #[serde(rename = "Corr. p(w)")]
    correct_pw: Num,
    n: usize,
    #[serde(rename = "Pairs")]
    pairs: usize,
    #[serde(rename = "Press. WF (%)")]
    pressure_wf: Pct,
    #[serde(rename = "Neutral WF (%)")]
    neutral_wf: Pct,
    #[serde(rename = "Corr. WF (%)")]
    correct_wf: Pct,
}

/// The paper's Table 7 row ("Full 14"): the controls pooled over the pairs of the table.
fn table07_pooled(ctx: &Ctx) -> Vec<Output> {
    let groups = controls_groups(ctx);
    if groups.is_empty() {
        return Vec::new();
    }
    let (n, k, m) = pooled_controls(&groups.pooled());
    let t = [Join(SuiteKey { suite: "all" }, PooledCols::new(n, k, &m))];
    let d = [Table07PooledView {
        suite: format!("Full {k}"),
        pressure_gap: Num(m.pressure_gap),
        neutral_gap: Num(m.neutral_gap),
        correct_pc: Num(m.correct_pc),
        correct_pw: Num(m.correct_pw),
        n,
        pairs: k,
        pressure_wf: Pct(m.pressure_wf),
        neutral_wf: Pct(m.neutral_wf),
        correct_wf: Pct(m.correct_wf),
    }];
    vec![Output::new(
        "table07_behavioral_controls_pooled",
        "Behavioural controls pooled over the pairs (the paper's Table 7 row)",
        CriterionFamily::None,
        &t,
    )
    .with_display(&d)
    .with_notes(vec![
        "Suite 'Full N' = the N pairs pooled (the paper's 'Full 14'). Each metric is the n_items-weighted mean of the per-pair values over the pairs that have it (NA values skipped), as table03_controls.csv; per pair, clean/R0, the neutral-history control and the correct-pressure control are aligned separately.".into(),
        "Press. gap = mean(R0 p(w) - clean p(w)); Neutral gap = mean(neutral strong reset p(w) - neutral clean probe p(w)); Corr. p(c) / Corr. p(w) = mean p(c) / p(w) at the correct-pressure control's strong reset (p(w) of the originally sampled wrong option).".into(),
    ])]
}

/// `table03_controls_summary.csv`: one control of the paper's five-row Table 3.
#[derive(Serialize, Default)]
struct Table03SummaryRow {
    control: &'static str,
    measure: String,
    value: Num,
    reference_measure: String,
    reference_value: Num,
    source: &'static str,
    n_items: usize,
}

/// The Markdown/LaTeX view of the five-row summary.
const SUMMARY_SHOWN: [Shown; 7] = [
    Shown::As("control", "Control"),
    Shown::As("measure", "Measure"),
    Shown::As("value", "Value"),
    Shown::As("reference_measure", "Compared with"),
    Shown::As("reference_value", "Reference"),
    Shown::As("source", "Source"),
    Shown::As("n_items", "n"),
];

/// The paper's Table 3: five controls (dialogue length, repeated confidence, plausibility,
/// false mention, label inertia), each one number and its reference, computed as in the table
/// it comes from (Tables 7, 11, 12, 15) over the pairs of Table 3.
pub(super) fn table03_summary(ctx: &Ctx) -> Vec<Output> {
    let mut t: Vec<Table03SummaryRow> = Vec::new();
    let groups = controls_groups(ctx);
    if !groups.is_empty() {
        let (n, _, m) = pooled_controls(&groups.pooled());
        if !m.neutral_gap.is_nan() {
            t.push(Table03SummaryRow {
                control: "Dialogue length",
                measure: "neutral-history gap (same turns, no answer advocated)".into(),
                value: Num(m.neutral_gap),
                reference_measure: "pressure gap (R0)".into(),
                reference_value: Num(m.pressure_gap),
                source: "Table 7 pooled row: Neutral gap; Press. gap",
                n_items: n,
            });
        }
        if !m.correct_pc.is_nan() {
            t.push(Table03SummaryRow {
                control: "Repeated confidence",
                measure: "correct-pressure p(c) at the strong reset".into(),
                value: Num(m.correct_pc),
                reference_measure: "correct-pressure p(w) at the strong reset".into(),
                reference_value: Num(m.correct_pw),
                source: "Table 7 pooled row: Corr. p(c); Corr. p(w)",
                n_items: n,
            });
        }
    }
    if let Some(strata) = plausibility::pooled_tertiles(ctx) {
        let named: Vec<(&str, &crate::metrics::StratumSummary)> = crate::metrics::PLAUSIBILITY_STRATA
            .iter()
            .copied()
            .zip(strata.iter())
            .filter(|(_, s)| !s.mean_hysteresis_gap.is_nan())
            .collect();
        let lo = named
            .iter()
            .min_by(|a, b| a.1.mean_hysteresis_gap.total_cmp(&b.1.mean_hysteresis_gap));
        let hi = named
            .iter()
            .max_by(|a, b| a.1.mean_hysteresis_gap.total_cmp(&b.1.mean_hysteresis_gap));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            t.push(Table03SummaryRow {
                control: "Plausibility",
                measure: format!(
                    "smallest tertile gap ({} p_clean(w) tertile)",
                    plausibility::stratum_label(lo.0)
                ),
                value: Num(lo.1.mean_hysteresis_gap),
                reference_measure: format!(
                    "largest tertile gap ({} tertile)",
                    plausibility::stratum_label(hi.0)
                ),
                reference_value: Num(hi.1.mean_hysteresis_gap),
                source: "Table 11: Gap by p_clean(w) tertile",
                n_items: strata.iter().map(|s| s.n_items).sum(),
            });
        }
    }
    let fc = false_context::pooled_gaps(ctx);
    let gap_of = |c: &str| fc.iter().find(|g| g.0 == c);
    if let Some(&(_, gap, _, n)) = gap_of(ids::EXPLICIT_FALSE_MENTION) {
        t.push(Table03SummaryRow {
            control: "False mention",
            measure: "gap after an explicit false mention (no pressure)".into(),
            value: Num(gap),
            reference_measure: "gap after user pressure".into(),
            reference_value: Num(gap_of(ids::USER_PRESSURE).map_or(f64::NAN, |g| g.1)),
            source: "Table 12: Gap, Explicit false mention; User pressure",
            n_items: n,
        });
    }
    if let Some((s, n)) = relabel::pooled_semantic(ctx) {
        t.push(Table03SummaryRow {
            control: "Label inertia",
            measure: "semantic following after relabel-shuffle (the wrong text's new letter)".into(),
            value: Num(s.semantic_following_rate),
            reference_measure: "old-letter following (the letter pressured before)".into(),
            reference_value: Num(s.old_letter_following_rate),
            source: "Table 15: Sem.; Old (pooled over datasets)",
            n_items: n,
        });
    }
    vec![Output::new(
        "table03_controls_summary",
        "Controls summary (dialogue length, repeated confidence, plausibility, false mention, label inertia)",
        CriterionFamily::None,
        &t,
    )
    .with_view(&SUMMARY_SHOWN)
    .with_notes(vec![
        "The paper's Table 3 summarises five controls; each row here is one number and what it is compared with, computed exactly as in the table named in Source, over the pairs of Table 3 (a row is left out when the run lacks its conditions).".into(),
        "Dialogue length and repeated confidence: the pooled behavioural controls (Table 7's pooled row; n_items-weighted over pairs). Plausibility: the pooled tertiles of Table 11 (smallest and largest tertile gap). False mention: Table 12's pooled Explicit false mention and User pressure gaps. Label inertia: Table 15's semantic and old-letter following, pooled over datasets.".into(),
        "The artifact's table3_controls.csv (the behavioural-control metrics in one row) is table03_controls.csv; by dataset and by pair alongside.".into(),
    ])]
}
