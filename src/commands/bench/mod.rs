//! `hyst-tui bench engine`, `bench batch` and `bench served`: ratios measured in one run, on the
//! batch pipeline itself (self-conditioned ramp + recovery operations of the hierarchy suite,
//! identical prompts scored once, the batch's scoring order). Each sub-command has its file; this
//! one holds what they share.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};

use hyst_tui::batch::{conditions_for, score_item, CachedScorer};
use hyst_tui::config::ModelEntry;
use hyst_tui::data::Selected;
use hyst_tui::dialogue::conditions::{build, ids, Registry};
use hyst_tui::dialogue::{Builder, Control, DialogueItem, Suite};
use hyst_tui::engine::Engine;
use hyst_tui::prompts::PromptSet;
use hyst_tui::store::ScoreCache;

mod answers;
mod batch;
mod engine;
mod inside;
mod served;
pub use answers::run as answers;
pub use batch::{run as batch, BatchBench};
pub use engine::run as engine;
pub use inside::run as inside;
pub use served::run as served;

/// `--curve`: numbers of sequences, comma separated (1 to 256 each), or `none`.
pub fn parse_curve(s: &str) -> Result<Vec<u32>> {
    if s == "none" {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|x| match x.trim().parse::<u32>() {
            Ok(n) if (1..=256).contains(&n) => Ok(n),
            _ => anyhow::bail!("--curve: {x:?} is not a number of sequences from 1 to 256 (or use `none`)"),
        })
        .collect()
}

/// Number of nodes of the prefix trie of the given token sequences = the fewest tokens any
/// evaluation order with perfect prefix sharing must decode.
pub fn trie_nodes(seqs: &[Vec<i32>]) -> usize {
    let mut nodes: HashMap<(usize, i32), usize> = HashMap::new();
    for s in seqs {
        let mut at = 0usize; // root
        for &t in s {
            let next = nodes.len() + 1;
            at = *nodes.entry((at, t)).or_insert(next);
        }
    }
    nodes.len()
}

struct Measured {
    evaluated: usize,
    reused: usize,
    secs: f64,
    /// Bits of every log-score, in scoring order (to prove reuse changes nothing).
    bits: Vec<u64>,
    /// Option probabilities of each scored context, in scoring order.
    probs: Vec<Vec<f64>>,
}

impl Measured {
    fn n_contexts(&self) -> usize {
        self.probs.len()
    }
}

fn measure(reg: &'static Registry, engine: &Engine, model: &ModelEntry, items: &[Selected], prompts: &PromptSet) -> Result<Measured> {
    let b = Builder::new(prompts);
    let tmp = std::env::temp_dir().join(format!("hyst-bench-{}-{}", std::process::id(), engine.info().cache));
    let _ = std::fs::remove_dir_all(&tmp);
    let cache = std::sync::RwLock::new(ScoreCache::open(&tmp.join("scores.jsonl"))?);
    let conds = conditions_for(reg, &[Suite::Hierarchy]);
    engine.clear_cache()?;
    let (mut evaluated, mut reused, mut bits, mut probs) = (0, 0, Vec::new(), Vec::new());
    let t0 = Instant::now();
    for s in items {
        let mut sc = CachedScorer::new(engine, &cache, model, "bench", &hyst_tui::engine::provenance::provenance(0));
        score_item(&mut sc, &b, s, model, &conds, &[Control::PressureWrong], "bench")?;
        for r in &sc.pending {
            evaluated += r.tokens_evaluated;
            reused += r.tokens_reused;
            bits.extend(r.log_scores.iter().map(|x| x.to_bits()));
            probs.push(r.probs.clone());
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(Measured { evaluated, reused, secs, bits, probs })
}

fn raw_throughput(reg: &Registry, engine: &Engine, prompts: &PromptSet, item: &Selected, n: usize) -> Result<f64> {
    let b = Builder::new(prompts);
    let conv = build(reg.find(ids::ORDINARY_RESET).context("R0")?, &b, &DialogueItem::from(item), &['A'; 4], 'A');
    let toks = engine.prepare(&conv.messages)?.tokens;
    Ok(n as f64 / engine.raw_decode(toks, n)?)
}
/// A bench whose probabilities differ with and without prefix reuse, or between numbers of
/// workers, fails (exit code 1) after printing its measurements: the engine's exactness does not
/// hold on this build, and its scores must not be trusted.
fn verdict(reuse_identical: bool, packed_identical: bool, differing_workers: &[usize]) -> Result<()> {
    let mut what = Vec::new();
    if !reuse_identical {
        what.push("with and without prefix reuse".to_string());
    }
    if !packed_identical {
        what.push("with and without packing".to_string());
    }
    if !differing_workers.is_empty() {
        let w: Vec<String> = differing_workers.iter().map(usize::to_string).collect();
        what.push(format!("with {} workers against 1", w.join(", ")));
    }
    if what.is_empty() {
        return Ok(());
    }
    anyhow::bail!(
        "probabilities differ {}: scores of this build are not exact (see `hyst-tui doctor`)",
        what.join(" and ")
    )
}

#[cfg(test)]
mod tests {
    use super::{trie_nodes, verdict};

    #[test]
    fn a_difference_is_a_failing_verdict() {
        assert!(verdict(true, true, &[]).is_ok());
        assert_eq!(
            verdict(true, false, &[]).unwrap_err().to_string(),
            "probabilities differ with and without packing: scores of this build are not exact (see `hyst-tui doctor`)"
        );
        assert_eq!(
            verdict(false, true, &[]).unwrap_err().to_string(),
            "probabilities differ with and without prefix reuse: scores of this build are not exact (see `hyst-tui doctor`)"
        );
        assert_eq!(
            verdict(true, true, &[2, 4]).unwrap_err().to_string(),
            "probabilities differ with 2, 4 workers against 1: scores of this build are not exact (see `hyst-tui doctor`)"
        );
        assert!(verdict(false, true, &[3]).unwrap_err().to_string().starts_with("probabilities differ with and without prefix reuse and with 3 workers against 1: "));
    }

    #[test]
    fn trie_counts_shared_prefixes_once() {
        assert_eq!(trie_nodes(&[vec![1, 2, 3], vec![1, 2, 4], vec![5]]), 5);
        assert_eq!(trie_nodes(&[vec![1, 2], vec![1, 2]]), 2);
    }
}
