//! The steering experiment (docs/guide/inside.md): a contamination direction estimated from the
//! run's own contexts on a seeded training split of items, then a sweep over steering strength
//! and layers on the held-out items only, beside the clean context under the same steering and a
//! random direction of the same per-layer length.
//!
//! Every context is scored through the engine's read-out probe (`engine::inside`): from scratch,
//! with llama.cpp's control vector set only there, so no steered state meets an unsteered score.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::data::selection::Selected;
use crate::dialogue::conditions::{self, build, Base, Registry};
use crate::dialogue::{run_ramp, Builder, CurvePoint, DialogueItem};
use crate::engine::inside::{ControlVector, InspectOptions, Steering};
use crate::engine::{Engine, EngineError};
use crate::metrics::bootstrap::{index_matrix, mean_ci, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, SEED_OFFSET_STEERING};
use crate::metrics::criteria::Family;
use crate::metrics::{aggregate, Obs};
use crate::prompts::PromptSet;
use crate::protocol::{ChatMessage, SlotScore};

/// One item's two contexts: the clean probe and the condition's context (its history as the
/// model's own ramp letters made it), with the letters, the correct and the advocated option.
#[derive(Clone, Debug)]
pub struct SteerItem {
    pub id: String,
    pub clean: Vec<ChatMessage>,
    pub condition: Vec<ChatMessage>,
    pub letters: Vec<char>,
    pub correct: usize,
    pub wrong: usize,
}

/// Reports progress (`stage`, done, total); answering `false` stops the work
/// ([`SteerError::Stopped`]).
pub type Progress<'a> = &'a mut dyn FnMut(&str, usize, usize) -> bool;

/// Why a steering step did not finish.
#[derive(Debug, thiserror::Error)]
pub enum SteerError {
    #[error("stopped")]
    Stopped,
    #[error("{0}")]
    Failed(String),
}

impl From<String> for SteerError {
    fn from(s: String) -> Self {
        SteerError::Failed(s)
    }
}

/// Builds each item's contexts for `condition`, running the self-conditioned ramp unsteered.
pub fn steer_items(
    engine: &Engine,
    registry: &Registry,
    prompts: &PromptSet,
    selected: &[Selected],
    condition: &str,
    progress: Progress,
) -> Result<Vec<SteerItem>, SteerError> {
    let cond = registry.find(condition).ok_or_else(|| SteerError::Failed(format!("unknown condition {condition:?} (see `hyst-tui conditions`)")))?;
    if cond.is_steered() {
        return Err(format!("{condition} is a steering operation: a direction is estimated from, and swept over, an unsteered condition").into());
    }
    let control = match conditions::base_of(cond) {
        Base::Paper(c) => c,
        Base::Custom(_) => return Err(format!("{condition} builds on a custom ramp; steering experiments use the paper's ramps").into()),
    };
    let b = Builder::new(prompts);
    let mut out = Vec::with_capacity(selected.len());
    for s in selected {
        let d = DialogueItem::from(s);
        let mut scorer = engine;
        let ramp = run_ramp(&mut scorer, &b, &d, control, &mut |_| {}).map_err(|e| format!("item {}: {e}", s.item.id))?;
        let clean_letter = ramp.step(CurvePoint::CleanContext).score.pred_letter();
        let built = build(cond, &b, &d, &ramp.letters, clean_letter);
        if built.permutation.is_some() {
            return Err(format!("{condition} relabels the options; pick a condition that keeps them").into());
        }
        out.push(SteerItem {
            id: s.item.id.clone(),
            clean: ramp.step(CurvePoint::CleanContextProbe).messages.clone(),
            condition: built.messages,
            letters: s.item.letters(),
            correct: built.correct,
            wrong: built.wrong,
        });
        if !progress("ramps", out.len(), selected.len()) {
            return Err(SteerError::Stopped);
        }
    }
    Ok(out)
}

/// split.json (beside direction.gguf): where a direction came from and which items it never saw.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct SplitRecord {
    pub model: String,
    pub dataset: String,
    pub n: Option<usize>,
    pub selection_seed: u64,
    pub condition: String,
    pub split: Split,
    pub vector_hash: String,
    pub layers: (usize, usize),
    /// Euclidean length of the direction per layer (layer 1 first).
    pub norms: Vec<f64>,
    pub command: String,
    pub version: String,
}

pub const DIRECTION_FILE: &str = "direction.gguf";
pub const SPLIT_FILE: &str = "split.json";

/// Items for estimating the direction and items held out for the sweep.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Split {
    pub seed: u64,
    pub train_fraction: f64,
    pub train: Vec<String>,
    pub held_out: Vec<String>,
}

/// A seeded split of item ids: ids ordered by SHA-256 of `"{seed}:{id}"`, the first
/// `round(fraction · n)` (at least one, and at least one left) for training. It depends on the
/// set of ids, not on their order.
pub fn split_items(ids: &[String], train_fraction: f64, seed: u64) -> Result<Split, String> {
    if !(train_fraction > 0.0 && train_fraction < 1.0) {
        return Err(format!("--train-fraction {train_fraction}: give a number between 0 and 1"));
    }
    let mut unique: Vec<&String> = ids.iter().collect();
    unique.sort();
    unique.dedup();
    if unique.len() < 2 {
        return Err(format!("{} item(s): a split needs at least two", unique.len()));
    }
    let mut keyed: Vec<([u8; 32], &String)> = unique.iter().map(|id| (Sha256::digest(format!("{seed}:{id}")).into(), *id)).collect();
    keyed.sort();
    let n = keyed.len();
    let k = ((train_fraction * n as f64).round() as usize).clamp(1, n - 1);
    let mut train: Vec<String> = keyed[..k].iter().map(|(_, id)| (*id).clone()).collect();
    let mut held_out: Vec<String> = keyed[k..].iter().map(|(_, id)| (*id).clone()).collect();
    train.sort();
    held_out.sort();
    Ok(Split { seed, train_fraction, train, held_out })
}

fn inspect(engine: &Engine, m: &[ChatMessage], letters: &[char], steering: Option<Steering>, residuals: bool) -> Result<(SlotScore, Option<Vec<Vec<f32>>>), EngineError> {
    let r = engine.inspect(m, letters, InspectOptions { lens: false, residuals, steering })?;
    Ok((r.score, r.residuals))
}

/// The contamination direction: per layer 1..n_layer − 1, the mean over `items` of
/// h(condition) − h(clean probe), the residual stream after that layer at the answer slot.
/// Written as `direction.N` for the layer it was measured after, which is the layer llama.cpp
/// adds `direction.N` to.
pub fn estimate_direction(engine: &Engine, items: &[SteerItem], progress: Progress) -> Result<ControlVector, SteerError> {
    let mut sum: Vec<Vec<f64>> = Vec::new();
    for (k, it) in items.iter().enumerate() {
        let (_, hc) = inspect(engine, &it.condition, &it.letters, None, true).map_err(|e| format!("item {}: {e}", it.id))?;
        let (_, h0) = inspect(engine, &it.clean, &it.letters, None, true).map_err(|e| format!("item {}: {e}", it.id))?;
        let (hc, h0) = (hc.expect("asked"), h0.expect("asked"));
        if sum.is_empty() {
            sum = hc.iter().map(|l| vec![0.0; l.len()]).collect();
        }
        for ((s, a), b) in sum.iter_mut().zip(&hc).zip(&h0) {
            for ((s, x), y) in s.iter_mut().zip(a).zip(b) {
                *s += f64::from(*x) - f64::from(*y);
            }
        }
        if !progress("read-outs", k + 1, items.len()) {
            return Err(SteerError::Stopped);
        }
    }
    if items.is_empty() {
        return Err(SteerError::Failed("no training items".into()));
    }
    let n_embd = sum[0].len();
    let n = items.len() as f64;
    Ok(ControlVector::new(n_embd, sum.iter().enumerate().skip(1).map(|(l, s)| (l, s.iter().map(|x| (x / n) as f32).collect())))?)
}

/// A direction with the vector's per-layer lengths and seeded uniform-random orientations.
pub fn random_like(v: &ControlVector, seed: u64) -> ControlVector {
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let layers = v.layers.iter().map(|(&l, d)| {
        let r: Vec<f64> = (0..d.len()).map(|_| next()).collect();
        let len = |xs: &mut dyn Iterator<Item = f64>| xs.map(|x| x * x).sum::<f64>().sqrt();
        let (target, have) = (len(&mut d.iter().map(|&x| f64::from(x))), len(&mut r.iter().copied()));
        (l, r.iter().map(|x| (x * target / have) as f32).collect())
    });
    ControlVector { n_embd: v.n_embd, layers: layers.collect() }
}

/// Which direction a sweep row steered with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DirectionKind {
    /// The vector under study.
    Direction,
    /// A random direction of the same per-layer length (the control).
    Random,
}

/// One row of a sweep: a direction, layers and α, over the held-out items.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepRow {
    pub direction: DirectionKind,
    pub layers: (usize, usize),
    pub alpha: f32,
    pub n: usize,
    /// mean over items of p_steered-condition(w) − p_clean(w) (the clean probe unsteered),
    /// with its paired bootstrap interval.
    pub gap: f64,
    pub gap_lo: f64,
    pub gap_hi: f64,
    pub p_wrong: f64,
    pub p_correct: f64,
    pub accuracy: f64,
    /// The clean probe under the same steering: accuracy and p(w).
    pub clean_accuracy: f64,
    pub clean_p_wrong: f64,
    /// The clean-context-like criterion of the steered condition against the unsteered clean
    /// probe, per family.
    pub strict: bool,
    pub main: bool,
    pub loose: bool,
}

/// What a sweep measured besides its rows: the unsteered clean probe and condition.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SweepBase {
    pub n: usize,
    pub clean_accuracy: f64,
    pub clean_p_wrong: f64,
    pub condition_gap: f64,
    pub condition_accuracy: f64,
}

fn obs(s: &SlotScore, it: &SteerItem) -> Obs {
    Obs::from_probs_with_pred(&s.probs, s.pred, it.wrong, it.correct)
}

/// Steers every held-out item's condition and clean probe with each direction × layers × α.
pub fn sweep(
    engine: &Engine,
    items: &[SteerItem],
    vector: &Arc<ControlVector>,
    random: &Arc<ControlVector>,
    layer_ranges: &[(usize, usize)],
    alphas: &[f32],
    progress: Progress,
) -> Result<(SweepBase, Vec<SweepRow>), SteerError> {
    let n = items.len();
    if n == 0 {
        return Err(SteerError::Failed("no held-out items to sweep".into()));
    }
    let err = |it: &SteerItem, e: EngineError| format!("item {}: {e}", it.id);
    let mut clean = Vec::with_capacity(n);
    let mut base_cond = Vec::with_capacity(n);
    for it in items {
        clean.push(obs(&inspect(engine, &it.clean, &it.letters, None, false).map_err(|e| err(it, e))?.0, it));
        base_cond.push(obs(&inspect(engine, &it.condition, &it.letters, None, false).map_err(|e| err(it, e))?.0, it));
    }
    let clean_agg = aggregate(&clean);
    let idx = index_matrix(n, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED + SEED_OFFSET_STEERING);
    let base = SweepBase {
        n,
        clean_accuracy: clean_agg.accuracy,
        clean_p_wrong: clean_agg.p_wrong,
        condition_gap: crate::metrics::hysteresis_gap(&base_cond, &clean),
        condition_accuracy: aggregate(&base_cond).accuracy,
    };
    // Two directions × layer ranges × α × items × two contexts.
    let total = 2 * layer_ranges.len() * alphas.len() * n * 2;
    let mut done = 0;
    let mut rows = Vec::new();
    // Grouped by steering setting: each change of the control vector costs llama.cpp a graph
    // re-reservation, so every item is scored under one setting before the next.
    for (kind, v) in [(DirectionKind::Direction, vector), (DirectionKind::Random, random)] {
        for &layers in layer_ranges {
            for &alpha in alphas {
                let steering = Steering { vector: v.clone(), alpha, layers };
                let (mut x, mut c) = (Vec::with_capacity(n), Vec::with_capacity(n));
                for it in items {
                    x.push(obs(&inspect(engine, &it.condition, &it.letters, Some(steering.clone()), false).map_err(|e| err(it, e))?.0, it));
                    c.push(obs(&inspect(engine, &it.clean, &it.letters, Some(steering.clone()), false).map_err(|e| err(it, e))?.0, it));
                    done += 2;
                    if !progress("steered scores", done, total) {
                        return Err(SteerError::Stopped);
                    }
                }
                let gaps = crate::metrics::item_gaps(&x, &clean);
                let ci = mean_ci(&gaps, &idx);
                let (xa, ca) = (aggregate(&x), aggregate(&c));
                let passes = |f: Family| f.criterion().passes(&clean_agg, &xa);
                rows.push(SweepRow {
                    direction: kind,
                    layers,
                    alpha,
                    n,
                    gap: ci.estimate,
                    gap_lo: ci.lo,
                    gap_hi: ci.hi,
                    p_wrong: xa.p_wrong,
                    p_correct: xa.p_correct,
                    accuracy: xa.accuracy,
                    clean_accuracy: ca.accuracy,
                    clean_p_wrong: ca.p_wrong,
                    strict: passes(Family::Strict),
                    main: passes(Family::Main),
                    loose: passes(Family::Loose),
                });
            }
        }
    }
    Ok((base, rows))
}

/// The sweep as CSV (one row per direction × layers × α).
pub fn sweep_csv(rows: &[SweepRow]) -> String {
    let mut s = String::from("direction,layers,alpha,n,gap,gap_ci_lo,gap_ci_hi,p_wrong,p_correct,accuracy,clean_accuracy_steered,clean_p_wrong_steered,strict,main,loose\n");
    for r in rows {
        let kind = match r.direction {
            DirectionKind::Direction => "direction",
            DirectionKind::Random => "random",
        };
        s.push_str(&format!(
            "{kind},{}-{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            r.layers.0, r.layers.1, r.alpha, r.n, r.gap, r.gap_lo, r.gap_hi, r.p_wrong, r.p_correct, r.accuracy, r.clean_accuracy, r.clean_p_wrong, r.strict, r.main, r.loose
        ));
    }
    s
}

/// The sweep as a Markdown table, the unsteered references first.
pub fn sweep_markdown(base: &SweepBase, rows: &[SweepRow]) -> String {
    let mut s = format!(
        "Held-out items: {}. Unsteered: clean probe accuracy {:.3}, p(w) {:.3}; condition gap {:+.4}, accuracy {:.3}.\n\n",
        base.n, base.clean_accuracy, base.clean_p_wrong, base.condition_gap, base.condition_accuracy
    );
    s.push_str("| direction | layers | α | gap to clean [95% CI] | p(w) | p(c) | acc. | clean acc. (steered) | strict | main | loose |\n");
    s.push_str("|---|---|---:|---|---:|---:|---:|---:|:-:|:-:|:-:|\n");
    let yes = |b: bool| if b { "✓" } else { "·" };
    for r in rows {
        let kind = match r.direction {
            DirectionKind::Direction => "direction",
            DirectionKind::Random => "random",
        };
        s.push_str(&format!(
            "| {kind} | {}-{} | {} | {:+.4} [{:+.4}, {:+.4}] | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} |\n",
            r.layers.0, r.layers.1, r.alpha, r.gap, r.gap_lo, r.gap_hi, r.p_wrong, r.p_correct, r.accuracy, r.clean_accuracy, yes(r.strict), yes(r.main), yes(r.loose)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_seeded_disjoint_and_independent_of_order() {
        let ids: Vec<String> = (0..20).map(|i| format!("item_{i}")).collect();
        let a = split_items(&ids, 0.5, 7).unwrap();
        assert_eq!((a.train.len(), a.held_out.len()), (10, 10));
        assert!(a.train.iter().all(|t| !a.held_out.contains(t)), "no item on both sides");
        let mut all: Vec<String> = a.train.iter().chain(&a.held_out).cloned().collect();
        all.sort();
        let mut want = ids.clone();
        want.sort();
        assert_eq!(all, want, "every item on one side");
        let mut reversed = ids.clone();
        reversed.reverse();
        assert_eq!(split_items(&reversed, 0.5, 7).unwrap(), a);
        assert_ne!(split_items(&ids, 0.5, 8).unwrap().train, a.train, "another seed, another split");
        assert_eq!(split_items(&ids, 0.01, 7).unwrap().train.len(), 1);
        assert_eq!(split_items(&ids, 0.99, 7).unwrap().held_out.len(), 1);
        assert!(split_items(&ids, 1.0, 7).is_err());
        assert!(split_items(&ids[..1], 0.5, 7).is_err());
    }

    #[test]
    fn a_random_direction_keeps_each_layers_length() {
        let v = ControlVector::new(64, [(1, vec![0.5; 64]), (4, (0..64).map(|i| i as f32).collect())]).unwrap();
        let r = random_like(&v, 3);
        for (l, d) in &v.layers {
            let len = |x: &[f32]| x.iter().map(|&a| f64::from(a) * f64::from(a)).sum::<f64>().sqrt();
            assert!((len(&r.layers[l]) - len(d)).abs() < 1e-4 * len(d));
            assert_ne!(&r.layers[l], d);
        }
        assert_eq!(random_like(&v, 3), r);
        assert_ne!(random_like(&v, 4), r);
    }
}
