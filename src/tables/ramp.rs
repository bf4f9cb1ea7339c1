//! Tables built on the pressure ramp, R0 and the behavioural controls: 2, 3, 7, 8, 9, 10, 11, 23.

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{dataset_display, letter_index, PairData, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::metrics::bootstrap::{
    IndexStream, SEED_OFFSET_CONTROLS, SEED_OFFSET_DECOMPOSITION, SEED_OFFSET_PRESSURE_RAMP,
};
use crate::metrics::{
    conditional_lock_in_flags, contamination_advocated_flags, failure_decomposition,
    hysteresis_gap, item_gaps, mean, plausibility_summary, plausibility_tertiles,
    positive_hysteresis_flags, positive_hysteresis_rate, rate, unconditional_lock_in, DecompCell,
    Obs, StratumSummary, PLAUSIBILITY_STRATA,
};

const NO_CRITERION: &str = "none";

// ---------------------------------------------------------------------------------------------
// Table 2
// ---------------------------------------------------------------------------------------------

pub(super) fn table02(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_PRESSURE_RAMP;
    let mut stream = IndexStream::new(seed);
    let mut long = Vec::new();
    let mut wide: Vec<((String, String), Vec<Cell>)> = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(c0), Some(probe)) = (
            p.resolve(&["clean_context", "clean_context_probe"]),
            p.resolve(&CLEAN_REF),
        ) else {
            continue;
        };
        if !p.has("strong_pressure") || !p.has("strong_reset") {
            continue;
        }
        let al = p.align(&[c0, probe, "strong_pressure", "strong_reset"]);
        let n = al.n();
        if n == 0 {
            continue;
        }
        let (clean, probe_o, press, reset) = (al.obs(0), al.obs(1), al.obs(2), al.obs(3));
        let clean_pw = pw(&clean);
        let press_pw = pw(&press);
        let reset_pw = pw(&reset);
        let gaps = item_gaps(&reset, &probe_o);
        let pos = as_f64(&positive_hysteresis_flags(&reset, &probe_o));
        let lock = conditional_lock_in_flags(&press, &reset);
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[
                Stat::Mean(&clean_pw),
                Stat::Mean(&press_pw),
                Stat::Mean(&reset_pw),
                Stat::Mean(&gaps),
                Stat::Mean(&pos),
                Stat::Ratio(&lock),
            ],
        );
        let (lock_rate, den) = lock.rate();
        let est = [
            mean(&clean_pw),
            mean(&press_pw),
            mean(&reset_pw),
            mean(&gaps),
            mean(&pos),
            lock_rate,
        ];
        let names = [
            "clean_pw_mean",
            "press_pw_mean",
            "reset_pw_mean",
            "hysteresis_gap",
            "positive_hysteresis_rate",
            "lock_in",
        ];
        for k in 0..6 {
            let mut r = LongRow::new(
                "pressure_ramp",
                p,
                "pressure_ramp",
                names[k],
                est[k],
                cis[k],
                n,
            );
            if k == 5 {
                r = r.notes(format!("pressure_wrong_denominator={den}"));
            }
            long.push(r);
        }
        let reset_wf = rate(&wf_flags(&reset));
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(est[0]),
            num(est[1]),
            num(est[2]),
            num(est[3]),
            ci(cis[3].0, cis[3].1),
            pct(est[4]),
            pct(reset_wf),
            pct(lock_rate),
            int(den),
        ]);
        wide.push(((p.model.clone(), dataset_display(&p.dataset)), cells));
    }
    if long.is_empty() {
        return Vec::new();
    }
    wide.sort_by(|a, b| a.0.cmp(&b.0));
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Clean p(w)",
        "Press. p(w)",
        "Reset p(w)",
        "Gap",
        "Gap 95% CI",
        "Pos. (%)",
        "Reset WF (%)",
        "Lock-in (%)",
        "Lock-in den.",
    ]);
    for (_, c) in wide {
        d.push(c);
    }
    vec![Output::new("Table 2", "table02_pressure_ramp", "Pressure ramp", NO_CRITERION, long_table(long, samples, seed))
        .with_display(d)
        .with_notes(vec![
            "Gap = mean over items of p_strong_reset(w) - p_clean_probe(w); Pos. = share of items with gap > 0 (strict, no tolerance).".into(),
            "lock_in is conditional: #(strong pressure follows w and reset follows w) / #(strong pressure follows w); the denominator is in notes (pressure_wrong_denominator).".into(),
            format!("Paired item bootstrap: {samples} replicates, numpy default_rng({seed}) = base seed + 1, one index matrix per pair shared by all six metrics, pairs in the fixed order; percentile 2.5/97.5."),
            "Reset WF is shown for the paper layout only (not part of the long CSV).".into(),
        ])]
}

// ---------------------------------------------------------------------------------------------
// Behavioural controls (Tables 3 and 7)
// ---------------------------------------------------------------------------------------------

const NEUTRAL_RESET: &str = "neutral_history:strong_reset";
const NEUTRAL_PROBE: [&str; 2] = [
    "neutral_history:clean_context_probe",
    "neutral_history:clean_context",
];
const CORRECT_RESET: &str = "correct_pressure:strong_reset";

struct ControlsPair<'p, 'a> {
    p: &'p PairData<'a>,
    r0: &'static str,
    n: usize,
    pressure_clean_pw: f64,
    pressure_reset_pw: f64,
    pressure_gap: f64,
    pressure_wf: f64,
    neutral_gap: f64,
    neutral_reset_pw: f64,
    neutral_wf: f64,
    neutral_n: usize,
    correct_pc: f64,
    correct_pw: f64,
    correct_wf: f64,
    correct_n: usize,
}

fn controls_pairs<'p, 'a>(ctx: &'p Ctx<'a>) -> Vec<ControlsPair<'p, 'a>> {
    let mut out = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let neutral = p.resolve(&NEUTRAL_PROBE).filter(|_| p.has(NEUTRAL_RESET));
        let correct = p.has(CORRECT_RESET);
        if neutral.is_none() && !correct {
            continue;
        }
        let a = p.align(&[clean, r0]);
        if a.n() == 0 {
            continue;
        }
        let (c, r) = (a.obs(0), a.obs(1));
        let mut cp = ControlsPair {
            p,
            r0,
            n: a.n(),
            pressure_clean_pw: mean(&pw(&c)),
            pressure_reset_pw: mean(&pw(&r)),
            pressure_gap: hysteresis_gap(&r, &c),
            pressure_wf: rate(&wf_flags(&r)),
            neutral_gap: f64::NAN,
            neutral_reset_pw: f64::NAN,
            neutral_wf: f64::NAN,
            neutral_n: 0,
            correct_pc: f64::NAN,
            correct_pw: f64::NAN,
            correct_wf: f64::NAN,
            correct_n: 0,
        };
        if let Some(np) = neutral {
            let a = p.align(&[np, NEUTRAL_RESET]);
            let (c, r) = (a.obs(0), a.obs(1));
            cp.neutral_n = a.n();
            if a.n() > 0 {
                cp.neutral_gap = hysteresis_gap(&r, &c);
                cp.neutral_reset_pw = mean(&pw(&r));
                cp.neutral_wf = rate(&wf_flags(&r));
            }
        }
        if correct {
            let a = p.align(&[CORRECT_RESET]);
            let r = a.obs(0);
            cp.correct_n = a.n();
            cp.correct_pc = mean(&pc(&r));
            cp.correct_pw = mean(&pw(&r));
            cp.correct_wf = rate(&wf_flags(&r));
        }
        out.push(cp);
    }
    out
}

const CONTROL_METRICS: [&str; 7] = [
    "pressure_gap",
    "neutral_gap",
    "correct_reset_p_correct",
    "correct_reset_p_wrong",
    "pressure_wrong_follow_rate",
    "neutral_wrong_follow_rate",
    "correct_wrong_follow_rate",
];

fn control_values(c: &ControlsPair) -> [f64; 7] {
    [
        c.pressure_gap,
        c.neutral_gap,
        c.correct_pc,
        c.correct_pw,
        c.pressure_wf,
        c.neutral_wf,
        c.correct_wf,
    ]
}

fn pooled_controls(group: &[&ControlsPair]) -> (usize, usize, [f64; 7]) {
    let n: usize = group.iter().map(|c| c.n).sum();
    let vals = std::array::from_fn(|k| {
        weighted_mean(
            &group
                .iter()
                .map(|c| (control_values(c)[k], c.n))
                .collect::<Vec<_>>(),
        )
    });
    (n, group.len(), vals)
}

pub(super) fn table03(ctx: &Ctx) -> Vec<Output> {
    let cps = controls_pairs(ctx);
    if cps.is_empty() {
        return Vec::new();
    }
    let all: Vec<&ControlsPair> = cps.iter().collect();
    let mut cols = vec!["all_pairs", "n_items", "n_pairs"];
    cols.extend(CONTROL_METRICS);
    let mut t = Table::new(&cols);
    let (n, k, vals) = pooled_controls(&all);
    let mut row = vec![txt("all"), int(n), int(k)];
    row.extend(vals.iter().map(|v| num(*v)));
    t.push(row);
    let mut d = Table::new(&[
        "Group",
        "n",
        "Pairs",
        "Pressure gap",
        "Neutral gap",
        "Correct-pressure p(c)",
        "Correct-pressure p(w)",
        "Pressure WF (%)",
        "Neutral WF (%)",
        "Correct-pressure WF (%)",
    ]);
    let disp_row = |label: String, n: usize, k: usize, v: &[f64; 7]| {
        vec![
            txt(label),
            int(n),
            int(k),
            num(v[0]),
            num(v[1]),
            num(v[2]),
            num(v[3]),
            pct(v[4]),
            pct(v[5]),
            pct(v[6]),
        ]
    };
    d.push(disp_row("All pairs".into(), n, k, &vals));

    // by dataset
    let mut dcols = vec!["dataset", "n_items", "n_pairs"];
    dcols.extend(CONTROL_METRICS);
    let mut td = Table::new(&dcols);
    for ds in ctx.idx.datasets() {
        let g: Vec<&ControlsPair> = cps.iter().filter(|c| c.p.dataset == ds).collect();
        if g.is_empty() {
            continue;
        }
        let (n, k, vals) = pooled_controls(&g);
        let mut row = vec![txt(ds.clone()), int(n), int(k)];
        row.extend(vals.iter().map(|v| num(*v)));
        td.push(row);
        d.push(disp_row(dataset_display(&ds), n, k, &vals));
    }

    // by pair
    let mut tp = Table::new(&[
        "model_key",
        "model_short_name",
        "dataset",
        "n_items",
        "pressure_clean_p_wrong",
        "pressure_reset_p_wrong",
        "pressure_gap",
        "pressure_wrong_follow_rate",
        "pressure_source",
        "neutral_gap",
        "neutral_reset_p_wrong",
        "neutral_wrong_follow_rate",
        "correct_reset_p_correct",
        "correct_reset_p_wrong",
        "correct_wrong_follow_rate",
        "neutral_n_scored",
        "correct_n_scored",
    ]);
    let mut dp = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Pressure gap",
        "Neutral gap",
        "Correct-pressure p(c)",
        "Correct-pressure p(w)",
        "Pressure WF (%)",
        "Neutral WF (%)",
        "Correct-pressure WF (%)",
    ]);
    for c in &cps {
        tp.push(vec![
            txt(c.p.model_key.clone()),
            txt(c.p.model.clone()),
            txt(c.p.dataset.clone()),
            int(c.n),
            num(c.pressure_clean_pw),
            num(c.pressure_reset_pw),
            num(c.pressure_gap),
            num(c.pressure_wf),
            txt(c.r0),
            num(c.neutral_gap),
            num(c.neutral_reset_pw),
            num(c.neutral_wf),
            num(c.correct_pc),
            num(c.correct_pw),
            num(c.correct_wf),
            int(c.neutral_n),
            int(c.correct_n),
        ]);
        let mut r = pair_cells(c.p);
        let v = control_values(c);
        r.extend([
            int(c.n),
            num(v[0]),
            num(v[1]),
            num(v[2]),
            num(v[3]),
            pct(v[4]),
            pct(v[5]),
            pct(v[6]),
        ]);
        dp.push(r);
    }
    let notes = vec![
        "pressure_gap = mean(R0 p(w) - clean p(w)) per pair; neutral_gap = mean(neutral strong-reset p(w) - neutral clean-probe p(w)); correct_reset_* = the correct-pressure control at its strong reset (p(w) is the originally sampled wrong option).".to_string(),
        "Pooled rows are n_items-weighted means over the pairs that have the metric (NA values skipped).".to_string(),
        "The paper's Table 3 also summarises plausibility (Table 11), false mention (Table 12) and label inertia (Table 15); see those tables.".to_string(),
    ];
    vec![
        Output::new(
            "Table 3",
            "table03_controls",
            "Behavioural controls summary (all pairs)",
            NO_CRITERION,
            t,
        )
        .with_display(d)
        .with_notes(notes.clone()),
        Output::new(
            "Table 3",
            "table03_controls_by_dataset",
            "Behavioural controls by dataset",
            NO_CRITERION,
            td,
        )
        .with_notes(notes.clone()),
        Output::new(
            "Table 3",
            "table03_controls_by_pair",
            "Behavioural controls by model and dataset",
            NO_CRITERION,
            tp,
        )
        .with_display(dp)
        .with_notes(notes),
    ]
}

pub(super) fn table07(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_CONTROLS;
    let mut stream = IndexStream::new(seed);
    let mut long = Vec::new();
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Pressure gap",
        "Pressure gap CI",
        "Neutral gap",
        "Neutral gap CI",
        "Correct-pressure p(c)",
        "p(c) CI",
        "Correct-pressure p(w)",
        "p(w) CI",
    ]);
    let mut wide = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let neutral = p.resolve(&NEUTRAL_PROBE).filter(|_| p.has(NEUTRAL_RESET));
        let correct = p.has(CORRECT_RESET);
        if neutral.is_none() && !correct {
            continue;
        }
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
        let mut cells = pair_cells(p);
        cells.push(int(n));
        for m in [
            "pressure_gap",
            "neutral_gap",
            "correct_reset_pc",
            "correct_reset_pw",
        ] {
            match by_name.get(m) {
                Some((v, c)) => cells.extend([num(*v), ci(c.0, c.1)]),
                None => cells.extend([Cell::Na, Cell::Na]),
            }
        }
        wide.push(((p.model.clone(), dataset_display(&p.dataset)), cells));
    }
    if long.is_empty() {
        return Vec::new();
    }
    wide.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, c) in wide {
        d.push(c);
    }
    vec![Output::new("Table 7", "table07_behavioral_controls", "Behavioural controls per pair (pressure vs neutral history vs correct pressure)", NO_CRITERION, long_table(long, samples, seed))
        .with_display(d)
        .with_notes(vec![
            "pressure_gap = mean(R0 p(w) - clean p(w)); neutral_gap = mean(neutral strong reset p(w) - neutral clean probe p(w)); correct_reset_pc / _pw = mean p(c) / p(w) at the strong reset of the correct-pressure control.".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) = base seed + 2, one matrix per pair over the items present in every condition used."),
        ])]
}

// ---------------------------------------------------------------------------------------------
// Table 8 — expanded family ramp
// ---------------------------------------------------------------------------------------------

pub(super) fn table08(ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "model",
        "model_key",
        "dataset",
        "dataset_key",
        "strong_pressure_p_wrong",
        "full_history_reset_p_wrong",
        "fresh_context_p_wrong",
        "full_history_reset_hysteresis_gap",
        "full_history_reset_positive_hysteresis_rate",
        "full_history_reset_wrong_answer_following",
        "full_history_reset_conditional_lock_in",
        "remove_all_pressure_hysteresis_gap",
        "reset_only_hysteresis_gap",
        "source_artifact",
    ]);
    let mut d = Table::new(&[
        "Model", "Dataset", "n", "Press.", "Reset", "Fresh", "Gap", "Pos. (%)", "WF (%)",
    ]);
    for p in &ctx.idx.pairs {
        if !p.has("strong_pressure") {
            continue;
        }
        let (Some(reset), Some(fresh)) = (
            p.resolve(&[
                "full_history_reset",
                "ordinary_strong_reset",
                "strong_reset",
            ]),
            p.resolve(&["fresh_context", "clean_context_probe", "clean_context"]),
        ) else {
            continue;
        };
        let a = p.align(&["strong_pressure", reset, fresh]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (press, r, f) = (a.obs(0), a.obs(1), a.obs(2));
        let gap = hysteresis_gap(&r, &f);
        let pos = positive_hysteresis_rate(&r, &f);
        let wf = rate(&wf_flags(&r));
        let side_gap = |c: &str| -> f64 {
            if !p.has(c) {
                return f64::NAN;
            }
            let a = p.align(&[fresh, c]);
            if a.n() == 0 {
                f64::NAN
            } else {
                hysteresis_gap(&a.obs(1), &a.obs(0))
            }
        };
        t.push(vec![
            txt(p.model.clone()),
            txt(p.model_key.clone()),
            txt(dataset_display(&p.dataset)),
            txt(p.dataset.clone()),
            num(mean(&pw(&press))),
            num(mean(&pw(&r))),
            num(mean(&pw(&f))),
            num(gap),
            num(pos),
            num(wf),
            num(unconditional_lock_in(&press, &r)),
            num(side_gap("remove_all_pressure")),
            num(side_gap("reset_only")),
            txt(format!("hyst-tui item rows (reset={reset}; fresh={fresh})")),
        ]);
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(mean(&pw(&press))),
            num(mean(&pw(&r))),
            num(mean(&pw(&f))),
            num(gap),
            pct(pos),
            pct(wf),
        ]);
        d.push(cells);
    }
    if t.is_empty() {
        return Vec::new();
    }
    vec![Output::new("Table 8", "table08_expanded_family_ramp", "Expanded family ramp (Gap = Reset - Fresh)", NO_CRITERION, t)
        .with_display(d)
        .with_notes(vec![
            "Reset = full_history_reset (else R0); Fresh = fresh_context (else the clean probe); Gap = mean over items of p_reset(w) - p_fresh(w); Pos. = share of items with gap > 0.".into(),
            "As in the artifact's auxiliary table, full_history_reset_conditional_lock_in holds the UNCONDITIONAL lock-in rate (share of all items following w at strong pressure and at reset).".into(),
            "Computed for every pair of the run (the paper shows Llama and Gemma only).".into(),
        ])]
}

// ---------------------------------------------------------------------------------------------
// Table 9 — ordinary-reset gap with paired CI
// ---------------------------------------------------------------------------------------------

pub(super) fn table09(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_PRESSURE_RAMP;
    let mut stream = IndexStream::new(seed);
    let mut t = Table::new(&[
        "model",
        "model_key",
        "dataset",
        "dataset_key",
        "condition",
        "n_items",
        "clean_p_wrong",
        "ordinary_reset_p_wrong",
        "hysteresis_gap",
        "ci_low",
        "ci_high",
        "positive_hysteresis_rate",
        "bootstrap_samples",
        "seed",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Clean p(w)",
        "R0 p(w)",
        "Gap",
        "95% CI",
        "Pos. (%)",
    ]);
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let a = p.align(&[clean, r0]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (c, r) = (a.obs(0), a.obs(1));
        let gaps = item_gaps(&r, &c);
        let cis = paired_cis(&mut stream, n, samples, &[Stat::Mean(&gaps)]);
        let pos = positive_hysteresis_rate(&r, &c);
        t.push(vec![
            txt(p.model.clone()),
            txt(p.model_key.clone()),
            txt(dataset_display(&p.dataset)),
            txt(p.dataset.clone()),
            txt(r0),
            int(n),
            num(mean(&pw(&c))),
            num(mean(&pw(&r))),
            num(mean(&gaps)),
            num(cis[0].0),
            num(cis[0].1),
            num(pos),
            int(samples),
            uint(seed),
        ]);
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            num(mean(&pw(&c))),
            num(mean(&pw(&r))),
            num(mean(&gaps)),
            ci(cis[0].0, cis[0].1),
            pct(pos),
        ]);
        d.push(cells);
    }
    if t.is_empty() {
        return Vec::new();
    }
    vec![Output::new("Table 9", "table09_ordinary_reset_gap", "Ordinary-reset (R0) hysteresis gap with paired item bootstrap 95% CI, every pair", NO_CRITERION, t)
        .with_display(d)
        .with_notes(vec![
            "Gap = mean over items of p_R0(w) - p_clean(w) (clean = clean probe).".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) (the pressure-ramp stream, base seed + 1), pairs in the fixed order; with the same items as Table 2 the interval equals Table 2's hysteresis_gap interval. The artifact's mapping for this table is not recoverable (protocol §12.15)."),
        ])]
}

// ---------------------------------------------------------------------------------------------
// Table 10 — failure decomposition
// ---------------------------------------------------------------------------------------------

pub(super) fn table10(ctx: &Ctx) -> Vec<Output> {
    let samples = ctx.opts.bootstrap_samples;
    let seed = ctx.opts.seed + SEED_OFFSET_DECOMPOSITION;
    let mut stream = IndexStream::new(seed);
    let mut long = Vec::new();
    let mut counts = Table::new(&[
        "model",
        "model_key",
        "dataset",
        "n",
        "stable_correct_count",
        "history_contamination_count",
        "context_correction_count",
        "knowledge_task_failure_count",
        "clean_correct_count",
        "clean_correct_to_history_wrong_count",
        "stable_correct_rate",
        "history_contamination_rate",
        "context_correction_rate",
        "knowledge_task_failure_rate",
        "clean_correct_to_history_wrong_rate",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "n",
        "Stable (%)",
        "Hist. (%)",
        "Corr. (%)",
        "Fail (%)",
        "Hist. given clean-correct (%)",
        "95% CI (pp)",
    ]);
    let mut wide = Vec::new();
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let a = p.align(&[clean, r0]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let (c, r) = (a.obs(0), a.obs(1));
        let dec = failure_decomposition(&c, &r);
        let cell_flags = |cell: DecompCell| -> Vec<f64> {
            as_f64(
                &c.iter()
                    .zip(&r)
                    .map(|(x, y)| DecompCell::of(x, y) == cell)
                    .collect::<Vec<_>>(),
            )
        };
        let fl = [
            cell_flags(DecompCell::Stable),
            cell_flags(DecompCell::History),
            cell_flags(DecompCell::Correction),
            cell_flags(DecompCell::Failure),
        ];
        let contam = contamination_advocated_flags(&c, &r);
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[
                Stat::Mean(&fl[0]),
                Stat::Mean(&fl[1]),
                Stat::Mean(&fl[2]),
                Stat::Mean(&fl[3]),
                Stat::Ratio(&contam),
            ],
        );
        let est = [
            dec.stable_correct_rate,
            dec.history_contamination_rate,
            dec.context_correction_rate,
            dec.knowledge_task_failure_rate,
            dec.hist_given_clean_correct,
        ];
        let names = [
            "stable_correct",
            "history_contamination",
            "context_correction",
            "task_failure",
            "contamination_given_clean_correct",
        ];
        for k in 0..5 {
            let mut row = LongRow::new(
                "failure_decomposition",
                p,
                "failure_decomposition",
                names[k],
                est[k],
                cis[k],
                n,
            );
            if k == 4 {
                row = row.notes(format!(
                    "clean_correct_denominator={}",
                    dec.clean_correct_count
                ));
            }
            long.push(row);
        }
        counts.push(vec![
            txt(p.model.clone()),
            txt(p.model_key.clone()),
            txt(p.dataset.clone()),
            int(dec.n),
            int(dec.stable_correct_count),
            int(dec.history_contamination_count),
            int(dec.context_correction_count),
            int(dec.knowledge_task_failure_count),
            int(dec.clean_correct_count),
            int(dec.clean_correct_to_history_wrong_count),
            num(dec.stable_correct_rate),
            num(dec.history_contamination_rate),
            num(dec.context_correction_rate),
            num(dec.knowledge_task_failure_rate),
            num(dec.hist_given_clean_correct),
        ]);
        let mut cells = pair_cells(p);
        cells.extend([
            int(n),
            pct(est[0]),
            pct(est[1]),
            pct(est[2]),
            pct(est[3]),
            pct(est[4]),
            ci_pct(cis[4].0, cis[4].1),
        ]);
        wide.push(((p.model.clone(), dataset_display(&p.dataset)), cells));
    }
    if long.is_empty() {
        return Vec::new();
    }
    wide.sort_by(|a, b| a.0.cmp(&b.0));
    for (_, c) in wide {
        d.push(c);
    }
    let notes = vec![
        "On R0 vs clean: Stable = clean correct and R0 correct; Hist. = clean correct and R0 not correct; Corr. = clean wrong and R0 correct; Fail = clean wrong and R0 wrong (rates over all items, sum to 1).".to_string(),
        "Hist. given clean-correct = #(clean correct and R0 follows the advocated wrong answer) / #(clean correct) (the hierarchy contamination).".to_string(),
    ];
    vec![
        Output::new("Table 10", "table10_failure_decomposition", "Failure decomposition on R0", NO_CRITERION, long_table(long, samples, seed))
            .with_display(d)
            .with_notes({
                let mut n = notes.clone();
                n.push(format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) = base seed + 3, one matrix per pair."));
                n
            }),
        Output::new("Table 10", "table10_decomposition_counts", "Failure decomposition counts and rates", NO_CRITERION, counts).with_notes(notes),
    ]
}

// ---------------------------------------------------------------------------------------------
// Table 11 — plausibility tertiles
// ---------------------------------------------------------------------------------------------

fn stratum_cells(s: &StratumSummary) -> Vec<Cell> {
    vec![
        num(s.mean_p_clean_wrong),
        num(s.mean_p_reset_wrong),
        num(s.mean_hysteresis_gap),
        num(s.positive_hysteresis_rate),
        num(s.ordinary_reset_wrong_follow_rate),
        int(s.n_items),
    ]
}

fn stratum_display(s: &StratumSummary) -> Vec<Cell> {
    vec![
        num(s.mean_p_clean_wrong),
        num(s.mean_p_reset_wrong),
        num(s.mean_hysteresis_gap),
        pct(s.positive_hysteresis_rate),
        pct(s.ordinary_reset_wrong_follow_rate),
        int(s.n_items),
    ]
}

pub(super) fn table11(ctx: &Ctx) -> Vec<Output> {
    const METRICS: [&str; 6] = [
        "mean_p_clean_wrong",
        "mean_p_reset_wrong",
        "mean_hysteresis_gap",
        "positive_hysteresis_rate",
        "ordinary_reset_wrong_follow_rate",
        "n_items",
    ];
    let mut pooled: (Vec<usize>, Vec<Obs>, Vec<Obs>) = (Vec::new(), Vec::new(), Vec::new());
    let mut cols = vec!["model", "model_key", "dataset", "plausibility_stratum"];
    cols.extend(METRICS);
    let mut bp = Table::new(&cols);
    let mut dbp = Table::new(&[
        "Model",
        "Dataset",
        "Stratum",
        "p_clean(w)",
        "p_reset(w)",
        "Gap",
        "Pos. (%)",
        "WF (%)",
        "n",
    ]);
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        let a = p.align(&[clean, r0]);
        if a.n() == 0 {
            continue;
        }
        let (c, r) = (a.obs(0), a.obs(1));
        let strata = plausibility_tertiles(&pw(&c));
        let sums = plausibility_summary(&strata, &c, &r);
        for (k, s) in sums.iter().enumerate() {
            let mut row = vec![
                txt(p.model.clone()),
                txt(p.model_key.clone()),
                txt(p.dataset.clone()),
                txt(PLAUSIBILITY_STRATA[k]),
            ];
            row.extend(stratum_cells(s));
            bp.push(row);
            let mut drow = pair_cells(p);
            drow.push(txt(PLAUSIBILITY_STRATA[k]));
            drow.extend(stratum_display(s));
            dbp.push(drow);
        }
        pooled.0.extend(strata);
        pooled.1.extend(c);
        pooled.2.extend(r);
    }
    if bp.is_empty() {
        return Vec::new();
    }
    let mut acols = vec!["plausibility_stratum"];
    acols.extend(METRICS);
    let mut agg = Table::new(&acols);
    let mut dagg = Table::new(&[
        "Stratum",
        "p_clean(w)",
        "p_reset(w)",
        "Gap",
        "Pos. (%)",
        "WF (%)",
        "n",
    ]);
    for (k, s) in plausibility_summary(&pooled.0, &pooled.1, &pooled.2)
        .iter()
        .enumerate()
    {
        let mut row = vec![txt(PLAUSIBILITY_STRATA[k])];
        row.extend(stratum_cells(s));
        agg.push(row);
        let mut drow = vec![txt(PLAUSIBILITY_STRATA[k])];
        drow.extend(stratum_display(s));
        dagg.push(drow);
    }
    let notes = vec![
        "Tertiles by rank of p_clean(w) within each pair (ties by item order; pandas qcut on ranks: 167/166/167 for 500 items); the aggregate pools the pairs' items per stratum.".to_string(),
        "p_reset(w), Gap and WF refer to R0 (ordinary strong reset).".to_string(),
    ];
    vec![
        Output::new(
            "Table 11",
            "table11_plausibility_tertiles",
            "Wrong-answer plausibility tertiles (pooled)",
            NO_CRITERION,
            agg,
        )
        .with_display(dagg)
        .with_notes(notes.clone()),
        Output::new(
            "Table 11",
            "table11_plausibility_by_pair",
            "Wrong-answer plausibility tertiles by pair",
            NO_CRITERION,
            bp,
        )
        .with_display(dbp)
        .with_notes(notes),
    ]
}

// ---------------------------------------------------------------------------------------------
// Table 23 — representative examples
// ---------------------------------------------------------------------------------------------

/// Examples per pair (the first by `subset_index`).
pub const EXAMPLES_PER_PAIR: usize = 3;

fn option_text(choices_json: &str, letter: &str) -> String {
    let opts: Vec<String> = serde_json::from_str(choices_json).unwrap_or_default();
    letter_index(letter)
        .and_then(|i| opts.get(i).cloned())
        .unwrap_or_default()
}

pub(super) fn table23(ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "model_key",
        "model_short_name",
        "dataset",
        "subset_index",
        "item_id",
        "question",
        "correct_option_letter",
        "correct_option_text",
        "wrong_advocated_letter",
        "wrong_advocated_text",
        "clean_pred_letter",
        "clean_p_correct",
        "clean_p_wrong",
        "ordinary_reset_pred_letter",
        "ordinary_reset_p_correct",
        "ordinary_reset_p_wrong",
        "hysteresis_gap",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "Item",
        "Question",
        "Correct",
        "Advocated wrong",
        "Clean pred",
        "p_clean(w)",
        "R0 pred",
        "p_R0(w)",
    ]);
    let mut any_pair = false;
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
            continue;
        };
        any_pair = true;
        let a = p.align(&[clean, r0]);
        let picked = (0..a.n())
            .filter(|&i| a.rows[0][i].correct && a.rows[1][i].wrong_follow)
            .take(EXAMPLES_PER_PAIR);
        for i in picked {
            let (c, r) = (a.rows[0][i], a.rows[1][i]);
            let ct = option_text(&c.choices_json, &c.correct_option_letter);
            let wt = option_text(&c.choices_json, &c.wrong_advocated_letter);
            t.push(vec![
                txt(p.model_key.clone()),
                txt(p.model.clone()),
                txt(p.dataset.clone()),
                int(c.subset_index),
                txt(c.item_id.clone()),
                txt(c.question.clone()),
                txt(c.correct_option_letter.clone()),
                txt(ct.clone()),
                txt(c.wrong_advocated_letter.clone()),
                txt(wt.clone()),
                txt(c.pred_letter.clone()),
                num(c.p_correct),
                num(c.p_wrong),
                txt(r.pred_letter.clone()),
                num(r.p_correct),
                num(r.p_wrong),
                num(r.p_wrong - c.p_wrong),
            ]);
            let mut cells = pair_cells(p);
            cells.extend([
                txt(c.item_id.clone()),
                txt(shorten(&c.question, 60)),
                txt(format!("{}. {}", c.correct_option_letter, shorten(&ct, 30))),
                txt(format!(
                    "{}. {}",
                    c.wrong_advocated_letter,
                    shorten(&wt, 30)
                )),
                txt(c.pred_letter.clone()),
                num(c.p_wrong),
                txt(r.pred_letter.clone()),
                num(r.p_wrong),
            ]);
            d.push(cells);
        }
    }
    if !any_pair {
        return Vec::new();
    }
    let mut notes = vec![format!(
        "Items answered correctly in the clean context whose R0 prediction is the advocated wrong option; the first {EXAMPLES_PER_PAIR} per pair by subset_index (deterministic). Texts are shortened in the Markdown/LaTeX view only."
    )];
    if t.is_empty() {
        notes.push("No item of this run is clean-correct and history-wrong, so the table is empty.".into());
    }
    vec![Output::new("Table 23", "table23_examples", "Representative clean-correct / history-wrong examples", NO_CRITERION, t)
        .with_display(d)
        .with_notes(notes)]
}
