//! Tables of experiment operations (bundled experiment files and `--experiment FILE`):
//! `experiment_operations` (every experiment operation of every pair against clean and against
//! R0) and `self_consistency` (the bundled self-consistency decoupling).
//!
//! Both draw their bootstrap indices from streams of their own (base seed + 6 and + 7), so adding
//! an experiment never moves a digit of the paper's tables.

use super::output::CriterionFamily;
use serde::Serialize;

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::{Ci, Num, Pct, PyBool};
use super::index::{dataset_short, PairData};
use super::{Ctx, Output};
use crate::dialogue::conditions::ids;
use crate::metrics::bootstrap::{SEED_OFFSET_EXPERIMENTS, SEED_OFFSET_EXPERIMENT_RAMPS, SEED_OFFSET_SELF_CONSISTENCY};
use crate::metrics::criteria::Family;
use crate::metrics::{aggregate, item_gaps, mean, positive_hysteresis_flags};

/// `experiment_operations.csv`: one row per pair × experiment operation.
#[derive(Serialize, Default)]
struct ExperimentRow {
    model: String,
    model_key: String,
    dataset: String,
    condition: &'static str,
    short: &'static str,
    label: &'static str,
    source_file: &'static str,
    n_items: usize,
    clean_p_wrong: Num,
    ordinary_reset_p_wrong: Num,
    p_wrong: Num,
    gap_vs_clean: Num,
    gap_vs_clean_ci_low: Num,
    gap_vs_clean_ci_high: Num,
    gap_vs_r0: Num,
    gap_vs_r0_ci_low: Num,
    gap_vs_r0_ci_high: Num,
    positive_hysteresis_rate: Num,
    wrong_follow_rate: Num,
    accuracy: Num,
    clean_like_strict: PyBool,
    clean_like_main: PyBool,
    clean_like_loose: PyBool,
    r0_like_strict: PyBool,
    r0_like_main: PyBool,
    r0_like_loose: PyBool,
    bootstrap_samples: usize,
    seed: u64,
}

#[derive(Serialize, Default)]
struct ExperimentView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Op.")]
    short: &'static str,
    n: usize,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "95% CI")]
    gap_ci: Ci,
    #[serde(rename = "vs R0")]
    vs_r0: Num,
    #[serde(rename = "vs R0 95% CI")]
    vs_r0_ci: Ci,
    #[serde(rename = "Pos. (%)")]
    positive: Pct,
    #[serde(rename = "WF (%)")]
    wf: Pct,
    #[serde(rename = "Clean-like (strict/main/loose)")]
    clean_like: String,
    #[serde(rename = "R0-like (strict/main/loose)")]
    r0_like: String,
}

fn marks(p: [bool; 3]) -> String {
    p.iter().map(|&b| if b { "pass" } else { "fail" }).collect::<Vec<_>>().join("/")
}

/// One operation of one pair against clean and R0: (n, clean, R0, x observations).
fn aligned(p: &PairData, key: &str) -> Option<(usize, Vec<crate::metrics::Obs>, Vec<crate::metrics::Obs>, Vec<crate::metrics::Obs>)> {
    let (clean, r0) = (p.clean()?, p.r0()?);
    if !p.has(key) {
        return None;
    }
    let a = p.align(&[clean, r0, key]);
    (a.n() > 0).then(|| (a.n(), a.obs(0), a.obs(1), a.obs(2)))
}

pub(super) fn experiment_operations(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_EXPERIMENTS);
    let (mut t, mut d) = (Vec::new(), Vec::new());
    for p in &ctx.idx.pairs {
        for op in ctx.reg().recovery_ops().iter().filter(|o| o.is_experiment()) {
            let Some((n, c, r, x)) = aligned(p, op.key) else { continue };
            let (vs_clean, vs_r0) = (item_gaps(&x, &c), item_gaps(&x, &r));
            let pos = as_f64(&positive_hysteresis_flags(&x, &c));
            let cis = paired_cis(&mut stream, n, samples, &[Stat::Mean(&vs_clean), Stat::Mean(&vs_r0)]);
            let (ca, ra, xa) = (aggregate(&c), aggregate(&r), aggregate(&x));
            let clean_like = Family::ALL.map(|f| f.criterion().passes(&ca, &xa));
            let r0_like = Family::ALL.map(|f| f.criterion().passes(&ra, &xa));
            t.push(ExperimentRow {
                model: p.model.clone(),
                model_key: p.model_key.clone(),
                dataset: p.dataset.clone(),
                condition: op.key,
                short: op.short,
                label: op.label,
                source_file: op.origin,
                n_items: n,
                clean_p_wrong: Num(ca.p_wrong),
                ordinary_reset_p_wrong: Num(ra.p_wrong),
                p_wrong: Num(xa.p_wrong),
                gap_vs_clean: Num(mean(&vs_clean)),
                gap_vs_clean_ci_low: Num(cis[0].0),
                gap_vs_clean_ci_high: Num(cis[0].1),
                gap_vs_r0: Num(mean(&vs_r0)),
                gap_vs_r0_ci_low: Num(cis[1].0),
                gap_vs_r0_ci_high: Num(cis[1].1),
                positive_hysteresis_rate: Num(mean(&pos)),
                wrong_follow_rate: Num(xa.wrong_follow),
                accuracy: Num(xa.accuracy),
                clean_like_strict: PyBool(clean_like[0]),
                clean_like_main: PyBool(clean_like[1]),
                clean_like_loose: PyBool(clean_like[2]),
                r0_like_strict: PyBool(r0_like[0]),
                r0_like_main: PyBool(r0_like[1]),
                r0_like_loose: PyBool(r0_like[2]),
                bootstrap_samples: samples,
                seed,
            });
            d.push(ExperimentView {
                model: p.model.clone(),
                dataset: dataset_short(&p.dataset),
                short: op.short,
                n,
                gap: Num(mean(&vs_clean)),
                gap_ci: Ci::from(cis[0]),
                vs_r0: Num(mean(&vs_r0)),
                vs_r0_ci: Ci::from(cis[1]),
                positive: Pct(mean(&pos)),
                wf: Pct(xa.wrong_follow),
                clean_like: marks(clean_like),
                r0_like: marks(r0_like),
            });
        }
    }
    let families = Family::ALL.map(|f| f.name()).join(", ");
    vec![Output::new(
        "experiment_operations",
        "Experiment operations against clean and against R0",
        CriterionFamily::Several("strict, main and loose clean-context-like families (labelled columns)"),
        &t,
    )
    .with_display(&d)
    .with_notes(vec![
        "Every operation of an experiment file (bundled, or --experiment FILE) that the run scored, per pair. Gap = mean over items of p_X(w) - p_clean(w); vs R0 = mean of p_X(w) - p_R0(w) (negative: the operation repairs more than the ordinary reset).".into(),
        "Pos. = share of items with p_X(w) > p_clean(w); WF = share of items whose prediction is the advocated wrong option.".into(),
        format!("Clean-like: the criterion family with clean as reference; R0-like: the same criterion with R0 as reference (indistinguishable from the ordinary reset). Families: {families}."),
        format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) (base seed + 6, its own stream), pairs in the fixed order, then operations in registry order."),
    ])]
}

/// `experiment_ramps.csv`: one row per pair × custom ramp step.
#[derive(Serialize, Default)]
struct RampRow {
    model: String,
    model_key: String,
    dataset: String,
    ramp: &'static str,
    step: usize,
    condition: &'static str,
    source_file: &'static str,
    n_items: usize,
    clean_p_wrong: Num,
    p_wrong: Num,
    p_correct: Num,
    gap_vs_clean: Num,
    gap_vs_clean_ci_low: Num,
    gap_vs_clean_ci_high: Num,
    positive_hysteresis_rate: Num,
    wrong_follow_rate: Num,
    accuracy: Num,
    bootstrap_samples: usize,
    seed: u64,
}

#[derive(Serialize, Default)]
struct RampView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Ramp")]
    ramp: &'static str,
    #[serde(rename = "Step")]
    step: String,
    n: usize,
    #[serde(rename = "p(w)")]
    p_wrong: Num,
    #[serde(rename = "p(c)")]
    p_correct: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "95% CI")]
    gap_ci: Ci,
    #[serde(rename = "Pos. (%)")]
    positive: Pct,
    #[serde(rename = "WF (%)")]
    wf: Pct,
}

/// Every step of every custom pressure ramp (`[[ramp]]` of an experiment file) the run scored,
/// per pair, against the clean context.
pub(super) fn experiment_ramps(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_EXPERIMENT_RAMPS);
    let (mut t, mut d) = (Vec::new(), Vec::new());
    for p in &ctx.idx.pairs {
        let Some(clean) = p.clean() else { continue };
        for r in ctx.reg().custom_ramps() {
            for k in 0..r.steps.len() {
                let Some(cond) = ctx.reg().find(&r.step_key(k)) else { continue };
                if !p.has(&cond.key) {
                    continue;
                }
                let a = p.align(&[clean, &cond.key]);
                let n = a.n();
                if n == 0 {
                    continue;
                }
                let (c, x) = (a.obs(0), a.obs(1));
                let gaps = item_gaps(&x, &c);
                let pos = as_f64(&positive_hysteresis_flags(&x, &c));
                let ci = paired_cis(&mut stream, n, samples, &[Stat::Mean(&gaps)])[0];
                let (ca, xa) = (aggregate(&c), aggregate(&x));
                t.push(RampRow {
                    model: p.model.clone(),
                    model_key: p.model_key.clone(),
                    dataset: p.dataset.clone(),
                    ramp: r.name.as_str(),
                    step: k + 1,
                    condition: cond.key.as_str(),
                    source_file: r.origin.as_str(),
                    n_items: n,
                    clean_p_wrong: Num(ca.p_wrong),
                    p_wrong: Num(xa.p_wrong),
                    p_correct: Num(xa.p_correct),
                    gap_vs_clean: Num(mean(&gaps)),
                    gap_vs_clean_ci_low: Num(ci.0),
                    gap_vs_clean_ci_high: Num(ci.1),
                    positive_hysteresis_rate: Num(mean(&pos)),
                    wrong_follow_rate: Num(xa.wrong_follow),
                    accuracy: Num(xa.accuracy),
                    bootstrap_samples: samples,
                    seed,
                });
                d.push(RampView {
                    model: p.model.clone(),
                    dataset: dataset_short(&p.dataset),
                    ramp: r.name.as_str(),
                    step: format!("{} {}", k + 1, r.steps[k].name),
                    n,
                    p_wrong: Num(xa.p_wrong),
                    p_correct: Num(xa.p_correct),
                    gap: Num(mean(&gaps)),
                    gap_ci: Ci::from(ci),
                    positive: Pct(mean(&pos)),
                    wf: Pct(xa.wrong_follow),
                });
            }
        }
    }
    vec![Output::new("experiment_ramps", "Custom pressure ramps: every step against clean", CriterionFamily::None, &t)
        .with_display(&d)
        .with_notes(vec![
            "Every step of a custom pressure ramp ([[ramp]] of an experiment file) the run scored, per pair. Each step's assistant turn is the model's own letter at that step (self-conditioned, like the paper's ramp).".into(),
            "Gap = mean over items of p_step(w) - p_clean(w); Pos. = share of items with p_step(w) > p_clean(w); WF = share of items whose prediction is the advocated wrong option.".into(),
            format!("Paired item bootstrap of the gap: {samples} replicates, default_rng({seed}) (base seed + 8, its own stream), pairs in the fixed order, then ramps and steps in file order."),
        ])]
}

/// `self_consistency.csv`: one row per pair with R0 and the self-consistency operations.
#[derive(Serialize, Default)]
struct SelfConsistencyRow {
    model: String,
    model_key: String,
    dataset: String,
    n_items: usize,
    clean_p_wrong: Num,
    gap_model_letters: Num,
    gap_correct_letters: Num,
    gap_clean_letters: Num,
    gap_user_turns_only: Num,
    own_answers_effect: Num,
    own_answers_effect_ci_low: Num,
    own_answers_effect_ci_high: Num,
    own_answers_share: Num,
    pressure_only_share: Num,
    pressure_only_share_ci_low: Num,
    pressure_only_share_ci_high: Num,
    bootstrap_samples: usize,
    seed: u64,
}

#[derive(Serialize, Default)]
struct SelfConsistencyView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    n: usize,
    #[serde(rename = "R0 gap")]
    r0: Num,
    #[serde(rename = "R0c gap")]
    correct: Num,
    #[serde(rename = "R0p gap")]
    clean: Num,
    #[serde(rename = "R0u gap")]
    user_only: Num,
    #[serde(rename = "Own answers (R0 - R0p)")]
    own: Num,
    #[serde(rename = "95% CI")]
    own_ci: Ci,
    #[serde(rename = "Pressure share (R0p / R0)")]
    pressure_share: Num,
}

pub(super) fn self_consistency(ctx: &Ctx) -> Vec<Output> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_SELF_CONSISTENCY);
    let ops = [ids::RESET_AFTER_CORRECT_LETTERS, ids::RESET_AFTER_CLEAN_LETTERS, ids::RESET_AFTER_USER_TURNS_ONLY];
    let short = |k: &str| ctx.reg().recovery_op(k).map_or("", |o| o.short);
    let (mut t, mut d) = (Vec::new(), Vec::new());
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.clean(), p.r0()) else { continue };
        if !ops.iter().all(|k| p.has(k)) {
            continue;
        }
        let a = p.align(&[clean, r0, ops[0], ops[1], ops[2]]);
        let n = a.n();
        if n == 0 {
            continue;
        }
        let c = a.obs(0);
        let gaps: Vec<Vec<f64>> = (1..5).map(|k| item_gaps(&a.obs(k), &c)).collect();
        let own: Vec<f64> = gaps[0].iter().zip(&gaps[2]).map(|(m, q)| m - q).collect();
        let share = |m: f64, q: f64| if m > 0.0 { q / m } else { f64::NAN };
        let (g_model, g_clean) = (mean(&gaps[0]), mean(&gaps[2]));
        let pw_clean = pw(&c);
        let pw_model: Vec<f64> = pw(&a.obs(1));
        let pw_cleanletters: Vec<f64> = pw(&a.obs(3));
        // The pressure-only share as a restoration-style ratio of pair means: (R0p - clean) /
        // (R0 - clean), bootstrapped with the items paired.
        let cis = paired_cis(
            &mut stream,
            n,
            samples,
            &[Stat::Mean(&own), Stat::Restoration { clean: &pw_clean, r0: &pw_model, x: &pw_cleanletters }],
        );
        let pressure_ci = (cis[1].0, cis[1].1);
        t.push(SelfConsistencyRow {
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: p.dataset.clone(),
            n_items: n,
            clean_p_wrong: Num(mean(&pw_clean)),
            gap_model_letters: Num(g_model),
            gap_correct_letters: Num(mean(&gaps[1])),
            gap_clean_letters: Num(g_clean),
            gap_user_turns_only: Num(mean(&gaps[3])),
            own_answers_effect: Num(mean(&own)),
            own_answers_effect_ci_low: Num(cis[0].0),
            own_answers_effect_ci_high: Num(cis[0].1),
            own_answers_share: Num(share(g_model, mean(&own))),
            pressure_only_share: Num(share(g_model, g_clean)),
            pressure_only_share_ci_low: Num(pressure_ci.0),
            pressure_only_share_ci_high: Num(pressure_ci.1),
            bootstrap_samples: samples,
            seed,
        });
        d.push(SelfConsistencyView {
            model: p.model.clone(),
            dataset: dataset_short(&p.dataset),
            n,
            r0: Num(g_model),
            correct: Num(mean(&gaps[1])),
            clean: Num(g_clean),
            user_only: Num(mean(&gaps[3])),
            own: Num(mean(&own)),
            own_ci: Ci::from(cis[0]),
            pressure_share: Num(share(g_model, g_clean)),
        });
    }
    vec![Output::new(
        "self_consistency",
        "Self-consistency decoupling: the R0 gap with the assistant's earlier letters replaced",
        CriterionFamily::None,
        &t,
    )
    .with_display(&d)
    .with_notes(vec![
        format!(
            "Every column is a hysteresis gap mean p_X(w) - p_clean(w) after the same four pressure messages and the R0 final turn: R0 with the model's own letters, {} with every assistant letter set to the correct one, {} set to the model's clean prediction, {} with no assistant turns (the pressure messages and the R0 turn as one user turn).",
            short(ops[0]), short(ops[1]), short(ops[2])
        ),
        format!("Own answers = R0 gap - {} gap: the part of the residue that goes away when the model's earlier answers agree with its clean answer (its consistency with its own transcript). Pressure share = {} gap / R0 gap: what the user's pressure leaves on its own (NA when the R0 gap is not positive; its CI is a paired ratio of means, NA when |R0 gap| < 0.05).", short(ops[1]), short(ops[1])),
        format!("Paired item bootstrap: {samples} replicates, default_rng({seed}) (base seed + 7, its own stream), pairs in the fixed order."),
    ])]
}

/// `seed_sensitivity.csv`: one row per (model, dataset) × main operation of a `--seeds` run.
#[derive(Serialize, Default)]
struct SeedRow {
    model: String,
    model_key: String,
    dataset: String,
    condition: &'static str,
    short: &'static str,
    n_seeds: usize,
    seeds: String,
    n_items_per_seed: String,
    gap_per_seed: String,
    positive_rate_per_seed: String,
    gap_mean: Num,
    gap_min: Num,
    gap_max: Num,
    gap_sd: Num,
    positive_rate_mean: Num,
    positive_rate_min: Num,
    positive_rate_max: Num,
    positive_rate_sd: Num,
}

#[derive(Serialize, Default)]
struct SeedView {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Op.")]
    short: &'static str,
    #[serde(rename = "Seeds")]
    n_seeds: usize,
    #[serde(rename = "Gap per seed")]
    gaps: String,
    #[serde(rename = "Mean")]
    mean: Num,
    #[serde(rename = "Min")]
    min: Num,
    #[serde(rename = "Max")]
    max: Num,
    #[serde(rename = "SD")]
    sd: Num,
    #[serde(rename = "Pos. mean (%)")]
    pos: Pct,
    #[serde(rename = "Pos. SD (%)")]
    pos_sd: Pct,
}

/// `(mean, min, max, sample SD)`; the SD is NaN with fewer than two values.
pub(crate) fn spread(v: &[f64]) -> (f64, f64, f64, f64) {
    let m = mean(v);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sd = if v.len() < 2 {
        f64::NAN
    } else {
        (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
    };
    (m, min, max, sd)
}

/// The dataset key and seed of a `--seeds` run's dataset (`sample@seed43` → (`sample`, 43)).
fn split_seed(dataset: &str) -> Option<(&str, u64)> {
    let (base, s) = dataset.rsplit_once("@seed")?;
    Some((base, s.parse().ok()?))
}

pub(super) fn seed_sensitivity(ctx: &Ctx) -> Vec<Output> {
    // (model key, base dataset) -> the pairs of each seed, in seed order.
    let mut groups: std::collections::BTreeMap<(String, String), Vec<(u64, &PairData)>> = Default::default();
    for p in &ctx.idx.pairs {
        if let Some((base, seed)) = split_seed(&p.dataset) {
            groups.entry((p.model_key.clone(), base.to_string())).or_default().push((seed, p));
        }
    }
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.6}")).collect::<Vec<_>>().join(";");
    let (mut t, mut d) = (Vec::new(), Vec::new());
    for ((model_key, dataset), mut seeds) in groups {
        seeds.sort_by_key(|(s, _)| *s);
        if seeds.len() < 2 {
            continue;
        }
        for op in crate::dialogue::conditions::main_ops() {
            let (mut used, mut ns, mut gaps, mut pos) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for (s, p) in &seeds {
                let Some(clean) = p.clean() else { continue };
                let key = p.resolve(p.reg.sources(op.key));
                let Some(key) = key else { continue };
                let a = p.align(&[clean, key]);
                if a.n() == 0 {
                    continue;
                }
                let (c, x) = (a.obs(0), a.obs(1));
                used.push(s.to_string());
                ns.push(a.n().to_string());
                gaps.push(mean(&item_gaps(&x, &c)));
                pos.push(mean(&as_f64(&positive_hysteresis_flags(&x, &c))));
            }
            if gaps.len() < 2 {
                continue;
            }
            let (gm, gmin, gmax, gsd) = spread(&gaps);
            let (pm, pmin, pmax, psd) = spread(&pos);
            let model = seeds[0].1.model.clone();
            t.push(SeedRow {
                model: model.clone(),
                model_key: model_key.clone(),
                dataset: dataset.clone(),
                condition: op.key,
                short: op.short,
                n_seeds: gaps.len(),
                seeds: used.join(";"),
                n_items_per_seed: ns.join(";"),
                gap_per_seed: fmt(&gaps),
                positive_rate_per_seed: fmt(&pos),
                gap_mean: Num(gm),
                gap_min: Num(gmin),
                gap_max: Num(gmax),
                gap_sd: Num(gsd),
                positive_rate_mean: Num(pm),
                positive_rate_min: Num(pmin),
                positive_rate_max: Num(pmax),
                positive_rate_sd: Num(psd),
            });
            d.push(SeedView {
                model,
                dataset: dataset_short(&dataset),
                short: op.short,
                n_seeds: gaps.len(),
                gaps: gaps.iter().map(|g| format!("{g:.3}")).collect::<Vec<_>>().join(", "),
                mean: Num(gm),
                min: Num(gmin),
                max: Num(gmax),
                sd: Num(gsd),
                pos: Pct(pm),
                pos_sd: Pct(psd),
            });
        }
    }
    vec![Output::new("seed_sensitivity", "Construction-seed sensitivity of the hysteresis gap", CriterionFamily::None, &t)
        .with_display(&d)
        .with_notes(vec![
            "One run with --seeds: each seed selects the items and draws the advocated wrong option anew (CPython Random(seed) and Random(f\"{seed}:{item_id}\")); its rows carry the dataset key <dataset>@seed<S>, so every other table shows each seed as its own pair.".into(),
            "Gap = mean over items of p_X(w) - p_clean(w) per seed (R0 from ordinary_strong_reset, else the ramp's strong_reset); Pos. = share of items with a positive gap. Across seeds: mean, min, max and the sample standard deviation (n - 1).".into(),
        ])]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tables::index::RunIndex;
    use crate::tables::TableOptions;

    #[test]
    fn spread_by_hand() {
        let (m, lo, hi, sd) = spread(&[0.1, 0.2, 0.6]);
        assert!((m - 0.3).abs() < 1e-12);
        assert_eq!((lo, hi), (0.1, 0.6));
        // deviations -0.2, -0.1, 0.3: squares 0.04 + 0.01 + 0.09 = 0.14, / 2 = 0.07
        assert!((sd - 0.07f64.sqrt()).abs() < 1e-12);
        assert!(spread(&[0.5]).3.is_nan());
        assert_eq!(split_seed("sample@seed43"), Some(("sample", 43)));
        assert_eq!(split_seed("sample"), None);
    }

    /// Two seeds of one pair whose R0 rows differ by exactly +0.1 in p(w) on every item: the gap
    /// moves by 0.1, so min/max differ by 0.1 and the SD is 0.1 / sqrt(2).
    #[test]
    fn seed_sensitivity_on_synthetic_rows() {
        let base: Vec<crate::store::ItemRow> = crate::tables::testutil::synthetic_rows(3)
            .into_iter()
            .filter(|r| r.model_key == "toy_a" && r.dataset == "truthfulqa_mc")
            .collect();
        assert!(!base.is_empty());
        let mut rows = Vec::new();
        for (seed, shift) in [(42u64, 0.0), (43, 0.1)] {
            for r in &base {
                let mut r = r.clone();
                r.dataset = format!("{}@seed{seed}", r.dataset);
                if r.condition == ids::ORDINARY_RESET {
                    r.p_wrong += shift;
                }
                rows.push(r);
            }
        }
        let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
        let opts = TableOptions::default();
        let ctx = Ctx::new(&idx, &opts);
        let out = seed_sensitivity(&ctx);
        assert_eq!(out.len(), 1);
        let mut rd = csv::Reader::from_reader(out[0].csv.as_bytes());
        let h = rd.headers().unwrap().clone();
        let col = |rec: &csv::StringRecord, name: &str| rec[h.iter().position(|x| x == name).unwrap()].to_string();
        let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        let r0 = recs.iter().find(|r| col(r, "short") == "R0").expect("R0 row");
        assert_eq!(col(r0, "dataset"), "truthfulqa_mc");
        assert_eq!(col(r0, "seeds"), "42;43");
        let gaps: Vec<f64> = col(r0, "gap_per_seed").split(';').map(|g| g.parse().unwrap()).collect();
        assert!((gaps[1] - gaps[0] - 0.1).abs() < 1e-6, "{gaps:?}");
        let num = |k: &str| col(r0, k).parse::<f64>().unwrap();
        assert!((num("gap_max") - num("gap_min") - 0.1).abs() < 1e-6);
        assert!((num("gap_sd") - 0.1 / 2f64.sqrt()).abs() < 1e-6);
        assert!((num("gap_mean") - (gaps[0] + 0.05)).abs() < 1e-6);
        // an operation whose rows did not move has no spread
        if let Some(r1) = recs.iter().find(|r| col(r, "short") == "R1") {
            assert!(num_of(&col(r1, "gap_sd")).abs() < 1e-12);
        }
    }

    fn num_of(s: &str) -> f64 {
        s.parse().unwrap()
    }
}
