//! `hyst-tui bench engine` and `bench batch`: ratios measured in one run.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use anyhow::{Context, Result};

use super::{open_engine, protocol::prompt_set, Ctx};
use crate::batch::{conditions_for, controls_for};
use crate::data::selection::select;
use crate::data::DatasetSpec;
use crate::dialogue::conditions::{build, Kind};
use crate::dialogue::{run_ramp, Builder, Control, DialogueItem, Suite};
use crate::engine::{ChatMessage, Engine, EngineError, Job, JobOutput, Scorer, SlotScore};

/// Scores through the engine and records every context's tokens; optionally clears the KV cache
/// before each score (the no-reuse baseline).
struct Recording<'a> {
    engine: &'a Engine,
    scratch: bool,
    contexts: Vec<Vec<i32>>,
    evaluated: usize,
    reused: usize,
}

impl Scorer for Recording<'_> {
    fn score(&mut self, messages: &[ChatMessage], letters: &[char]) -> Result<SlotScore, EngineError> {
        if self.scratch {
            self.engine.clear_cache()?;
        }
        let p = self.engine.prepare(messages)?;
        let s = self.engine.score(messages, letters)?;
        self.evaluated += s.tokens_evaluated;
        self.reused += s.tokens_reused;
        self.contexts.push(p.tokens);
        Ok(s)
    }
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
    contexts: Vec<Vec<i32>>,
    evaluated: usize,
    reused: usize,
    secs: f64,
    scores: Vec<Vec<u64>>,
}

fn run_workload(engine: &Engine, items: &[DialogueItem], b: &Builder, scratch: bool, suites: &[Suite]) -> Result<Measured> {
    engine.clear_cache()?;
    let mut rec = Recording { engine, scratch, contexts: vec![], evaluated: 0, reused: 0 };
    let conds: Vec<_> = conditions_for(suites).into_iter().filter(|c| !matches!(c.kind, Kind::Curve(..))).collect();
    let t0 = Instant::now();
    let mut scores = Vec::new();
    for d in items {
        let mut letters_by_control = HashMap::new();
        for c in controls_for(suites) {
            let r = run_ramp(&mut rec, b, d, c, &mut |_| {})?;
            for st in &r.steps {
                scores.push(st.score.log_scores.iter().map(|x| x.to_bits()).collect());
            }
            letters_by_control.insert(c, r.letters);
        }
        for c in &conds {
            let built = build(c, b, d, &letters_by_control[&Control::PressureWrong]);
            let s = rec.score(&built.messages, &d.item.letters())?;
            scores.push(s.log_scores.iter().map(|x| x.to_bits()).collect());
        }
    }
    Ok(Measured { secs: t0.elapsed().as_secs_f64(), contexts: rec.contexts, evaluated: rec.evaluated, reused: rec.reused, scores })
}

fn sample_items(n: usize) -> Result<Vec<DialogueItem>> {
    let items = DatasetSpec::Sample.load()?;
    Ok(select(&items, Some(n), 42).iter().map(DialogueItem::from).collect())
}

pub fn engine(ctx: &Ctx, model: Option<&str>, raw_tokens: usize, n_items: usize) -> Result<()> {
    let engine = open_engine(ctx, model)?;
    let prompts = prompt_set(ctx)?;
    let b = Builder::new(&prompts);
    let items = sample_items(n_items.max(1))?;
    println!("model {} · {} threads · {} items of the bundled sample", engine.info().key, engine.info().threads, items.len());

    // Raw llama.cpp: one decode of N prompt tokens (taken from a real rendered prompt).
    let conv = crate::dialogue::conditions::build(
        crate::dialogue::conditions::find("ordinary_strong_reset").context("R0")?,
        &b,
        &items[0],
        &['A'; 4],
    );
    let toks = engine.prepare(&conv.messages)?.tokens;
    let raw_secs = match engine.run(Job::RawDecode { tokens: toks, n_tokens: raw_tokens })? {
        JobOutput::Timed(s) => s,
        _ => anyhow::bail!("unexpected engine reply"),
    };
    let raw_tps = raw_tokens as f64 / raw_secs;
    println!("raw llama.cpp prompt decode: {raw_tokens} tokens in {raw_secs:.3}s = {raw_tps:.1} tok/s");

    // Workload: 5-step ramp (+ clean and clean probe) and 8 branches (R0..R6) per item.
    let suites = [Suite::Hierarchy];
    let cached = run_workload(&engine, &items, &b, false, &suites)?;
    let scratch = run_workload(&engine, &items, &b, true, &suites)?;
    let e2e_tps = cached.evaluated as f64 / cached.secs;
    let identical = cached.scores == scratch.scores;
    println!(
        "engine, prefix reuse: {} contexts, {} tokens evaluated ({} reused) in {:.3}s = {e2e_tps:.1} evaluated tok/s",
        cached.contexts.len(), cached.evaluated, cached.reused, cached.secs
    );
    println!(
        "engine, from scratch: {} tokens evaluated in {:.3}s = {:.1} tok/s",
        scratch.evaluated, scratch.secs, scratch.evaluated as f64 / scratch.secs
    );
    println!("ratio engine/raw throughput:        {:.3}", e2e_tps / raw_tps);
    println!("ratio tokens scratch/reuse:         {:.2}x fewer tokens with reuse", scratch.evaluated as f64 / cached.evaluated as f64);
    println!("ratio wall time scratch/reuse:      {:.2}x faster with reuse", scratch.secs / cached.secs);
    println!("scores identical with and without reuse: {}", if identical { "yes (bit-for-bit)" } else { "NO" });
    engine.shutdown();
    Ok(())
}

pub fn batch(ctx: &Ctx, model: Option<&str>, limit: usize) -> Result<()> {
    let engine = open_engine(ctx, model)?;
    let prompts = prompt_set(ctx)?;
    let b = Builder::new(&prompts);
    let items = sample_items(limit.max(1))?;
    let conv = build(crate::dialogue::conditions::find("ordinary_strong_reset").context("R0")?, &b, &items[0], &['A'; 4]);
    let toks = engine.prepare(&conv.messages)?.tokens;
    let n_raw = toks.len().min(512);
    let raw_secs = match engine.run(Job::RawDecode { tokens: toks, n_tokens: n_raw })? {
        JobOutput::Timed(s) => s,
        _ => anyhow::bail!("unexpected engine reply"),
    };
    let raw_tps = n_raw as f64 / raw_secs;
    let suites = [Suite::Hierarchy];
    let cached = run_workload(&engine, &items, &b, false, &suites)?;
    let scratch = run_workload(&engine, &items, &b, true, &suites)?;
    // Distinct contexts per item for the trie bound (duplicates like R3a = clean score once).
    let per_item = cached.contexts.len() / items.len();
    let mut trie = 0usize;
    for chunk in cached.contexts.chunks(per_item) {
        let uniq: BTreeSet<Vec<i32>> = chunk.iter().cloned().collect();
        trie += trie_nodes(&uniq.into_iter().collect::<Vec<_>>());
    }
    let n = items.len() as f64;
    println!("model {} · hierarchy suite · {} items · {per_item} contexts per item", engine.info().key, items.len());
    println!("tokens per item, with reuse:        {:.1}", cached.evaluated as f64 / n);
    println!("tokens per item, without reuse:     {:.1}", scratch.evaluated as f64 / n);
    println!("tokens per item, prefix-trie bound: {:.1}", trie as f64 / n);
    println!("ratio scratch/reuse tokens:         {:.2}", scratch.evaluated as f64 / cached.evaluated as f64);
    println!("ratio reuse/trie-bound tokens:      {:.3}", cached.evaluated as f64 / trie as f64);
    println!("ratio wall time scratch/reuse:      {:.2}", scratch.secs / cached.secs);
    println!(
        "end-to-end {:.1} tok/s vs raw llama.cpp {raw_tps:.1} tok/s: ratio {:.3}",
        cached.evaluated as f64 / cached.secs,
        cached.evaluated as f64 / cached.secs / raw_tps
    );
    engine.shutdown();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::trie_nodes;

    #[test]
    fn trie_counts_shared_prefixes_once() {
        assert_eq!(trie_nodes(&[vec![1, 2, 3], vec![1, 2, 4], vec![5]]), 5);
        assert_eq!(trie_nodes(&[vec![1, 2], vec![1, 2]]), 2);
    }
}
