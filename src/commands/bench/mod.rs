//! `hyst-tui bench engine` and `bench batch`: ratios measured in one run, on the batch pipeline
//! itself (self-conditioned ramp + recovery operations of the hierarchy suite, identical prompts
//! scored once, the batch's scoring order).

use hyst_tui::dialogue::conditions::ids;
use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};

use super::Ctx;

mod batch;
pub use batch::{run as batch, BatchBench};

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
use hyst_tui::batch::{conditions_for, score_item, CachedScorer};
use hyst_tui::config::{models_dir, ModelEntry};
use hyst_tui::data::selection::select;
use hyst_tui::data::{DatasetSpec, Selected};
use hyst_tui::dialogue::conditions::{build, Registry};
use hyst_tui::dialogue::{Builder, Control, DialogueItem, Suite};
use hyst_tui::engine::{Engine, EngineOptions, Job, JobOutput};
use hyst_tui::prompts::PromptSet;
use hyst_tui::store::ScoreCache;

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
    match engine.run(Job::RawDecode { tokens: toks, n_tokens: n })? {
        JobOutput::Timed(s) => Ok(n as f64 / s),
        _ => anyhow::bail!("unexpected engine reply"),
    }
}

fn engines(ctx: &Ctx, model: Option<&str>) -> Result<(Engine, Engine, String)> {
    let entry = ctx.model(model)?;
    let path = entry.path(&models_dir());
    let opts = ctx.engine_options();
    let cached = Engine::start(entry, &path, EngineOptions { cache: true, ..opts.clone() })?;
    let scratch = Engine::start(entry, &path, EngineOptions { cache: false, ..opts })?;
    Ok((cached, scratch, entry.key.clone()))
}

fn sample(n: usize) -> Result<Vec<Selected>> {
    Ok(select(&DatasetSpec::Sample.load()?, Some(n.max(1)), 42))
}

pub fn engine(ctx: &Ctx, model: Option<&str>, raw_tokens: usize, n_items: usize) -> Result<()> {
    let (cached_e, scratch_e, key) = engines(ctx, model)?;
    let prompts = ctx.prompts()?;
    let items = sample(n_items)?;
    println!("model {key} · {} threads · {} item(s) of the bundled sample · ramp (7 points) + 10 recovery branches per item", cached_e.info().threads, items.len());
    let raw_tps = raw_throughput(ctx.registry, &cached_e, &prompts, &items[0], raw_tokens)?;
    println!("raw llama.cpp prompt decode: {raw_tokens} tokens in one call = {raw_tps:.1} tok/s");
    let c = measure(ctx.registry, &cached_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let s = measure(ctx.registry, &scratch_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let e2e = c.evaluated as f64 / c.secs;
    println!("engine, prefix reuse: {} tokens evaluated ({} reused) in {:.2}s = {e2e:.1} tok/s", c.evaluated, c.reused, c.secs);
    println!("engine, from scratch: {} tokens evaluated in {:.2}s = {:.1} tok/s", s.evaluated, s.secs, s.evaluated as f64 / s.secs);
    println!("ratio engine/raw throughput:   {:.3}", e2e / raw_tps);
    println!("ratio tokens scratch/reuse:    {:.2}", s.evaluated as f64 / c.evaluated as f64);
    println!("ratio wall time scratch/reuse: {:.2}", s.secs / c.secs);
    println!("scores bit-identical with and without reuse: {}", if c.bits == s.bits { "yes" } else { "NO" });
    verdict(c.bits == s.bits, true, &[])
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

/// `bench served`: the same hierarchy workload scored through a served model and in-process on
/// the entry's own GGUF (prefix reuse and from scratch), on this machine, in one run: contexts/s,
/// tokens/s, their ratios, and how far the served letter distributions are from the local ones.
/// Contexts are sent one at a time, in the batch's order (a batch keeps `--concurrency` in flight).
pub fn served(ctx: &Ctx, model: &str, limit: usize, dataset: &str) -> Result<()> {
    let entry = ctx.model(Some(model))?;
    let ep = entry.endpoint.as_ref().with_context(|| format!("model {model} has no `endpoint` in models.toml (bench served compares a served model with its GGUF)"))?;
    anyhow::ensure!(
        entry.has_file(),
        "model {model} names no GGUF `file`: bench served needs the same weights in-process to compare with"
    );
    let path = entry.path(&models_dir());
    anyhow::ensure!(path.is_file(), "{} is not present (hyst-tui models fetch {model})", path.display());
    let local = ModelEntry { endpoint: None, ..entry.clone() };
    let opts = ctx.engine_options();
    let served_e = Engine::start(entry, &path, opts.clone())?;
    let cached_e = Engine::start(&local, &path, EngineOptions { cache: true, ..opts.clone() })?;
    let scratch_e = Engine::start(&local, &path, EngineOptions { cache: false, ..opts })?;
    let prompts = ctx.prompts()?;
    let mut items = select(&DatasetSpec::parse(dataset)?.load()?, None, 42);
    items.truncate(limit.max(1));
    println!(
        "model {model}: {} {} vs in-process on {} · {} threads here · {} item(s), hierarchy suite (ramp + recovery branches)",
        ep.api.name(),
        ep.base(),
        path.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default(),
        cached_e.info().threads,
        items.len()
    );
    let sv = measure(ctx.registry, &served_e, entry, &items, &prompts)?;
    let c = measure(ctx.registry, &cached_e, &local, &items, &prompts)?;
    let s = measure(ctx.registry, &scratch_e, &local, &items, &prompts)?;
    served_e.shutdown();
    let line = |what: &str, m: &Measured| {
        println!(
            "{what:<28} {:>4} contexts in {:>7.2}s = {:>6.2} contexts/s · {:>6} tokens evaluated ({} reused) = {:>7.1} tok/s",
            m.n_contexts(),
            m.secs,
            m.n_contexts() as f64 / m.secs,
            m.evaluated,
            m.reused,
            m.evaluated as f64 / m.secs
        )
    };
    line("served", &sv);
    line("in-process, prefix reuse", &c);
    line("in-process, from scratch", &s);
    println!("ratio wall time served / in-process reuse:   {:.2}", sv.secs / c.secs);
    println!("ratio wall time served / in-process scratch: {:.2}", sv.secs / s.secs);
    println!(
        "ratio tok/s served / in-process scratch:     {:.2} (the same prompts, each evaluated whole)",
        (sv.evaluated as f64 / sv.secs) / (s.evaluated as f64 / s.secs)
    );
    anyhow::ensure!(sv.n_contexts() == s.n_contexts(), "served scored {} contexts, in-process {}", sv.n_contexts(), s.n_contexts());
    let worst = sv
        .probs
        .iter()
        .zip(&s.probs)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
        .fold(0.0f64, f64::max);
    let same_pred = sv
        .probs
        .iter()
        .zip(&s.probs)
        .filter(|(a, b)| argmax(a) == argmax(b))
        .count();
    println!(
        "served vs in-process: max |dp| {worst:.2e} over {} contexts; same prediction in {same_pred}/{}",
        s.n_contexts(),
        s.n_contexts()
    );
    Ok(())
}

fn argmax(p: &[f64]) -> usize {
    p.iter().enumerate().fold(0, |best, (i, v)| if *v > p[best] { i } else { best })
}
