//! Behavioural controls: Table 3 (pooled, by dataset, by pair) and Table 7 (per pair with
//! paired CIs) — pressure vs neutral history vs correct pressure.

use super::boot::{paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{dataset_display, PairData, CLEAN_REF, R0_REF};
use super::{Ctx, Output};
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_CONTROLS};
use crate::metrics::{hysteresis_gap, item_gaps, mean, rate};

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

fn controls_pairs<'p, 'a>(ctx: &Ctx<'p, 'a>) -> Vec<ControlsPair<'p, 'a>> {
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
        Output::from_table(
            "table03_controls",
            "Behavioural controls summary (all pairs)",
            NO_CRITERION,
            t,
        )
        .with_display_table(d)
        .with_notes(notes.clone()),
        Output::from_table(
            "table03_controls_by_dataset",
            "Behavioural controls by dataset",
            NO_CRITERION,
            td,
        )
        .with_notes(notes.clone()),
        Output::from_table(
            "table03_controls_by_pair",
            "Behavioural controls by model and dataset",
            NO_CRITERION,
            tp,
        )
        .with_display_table(dp)
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
    vec![Output::new("table07_behavioral_controls", "Behavioural controls per pair (pressure vs neutral history vs correct pressure)", NO_CRITERION, &long_table(long, samples, seed))
        .with_display_table(d)
        .with_notes(vec![
            "pressure_gap = mean(R0 p(w) - clean p(w)); neutral_gap = mean(neutral strong reset p(w) - neutral clean probe p(w)); correct_reset_pc / _pw = mean p(c) / p(w) at the strong reset of the correct-pressure control.".into(),
            format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) = base seed + 2, one matrix per pair over the items present in every condition used."),
        ])]
}
