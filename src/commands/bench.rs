//! `hyst-tui bench engine` and `bench batch`: ratios measured in one run, on the batch pipeline
//! itself (self-conditioned ramp + recovery operations of the hierarchy suite, identical prompts
//! scored once, the batch's scoring order).

use hyst_tui::dialogue::conditions::ids;
use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};

use super::Ctx;
use hyst_tui::batch::{conditions_for, score_item, BatchEvent, BatchObserver, BatchRequest, CachedScorer};
use hyst_tui::config::{models_dir, ModelEntry};
use hyst_tui::data::selection::select;
use hyst_tui::data::{DatasetSpec, Selected};
use hyst_tui::dialogue::conditions::{build, find};
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
    /// Token ids of each scored context, per item.
    contexts: Vec<Vec<Vec<i32>>>,
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

fn measure(engine: &Engine, model: &ModelEntry, items: &[Selected], prompts: &PromptSet) -> Result<Measured> {
    let b = Builder::new(prompts);
    let tmp = std::env::temp_dir().join(format!("hyst-bench-{}-{}", std::process::id(), engine.info().cache));
    let _ = std::fs::remove_dir_all(&tmp);
    let cache = std::sync::RwLock::new(ScoreCache::open(&tmp.join("scores.jsonl"))?);
    let conds = conditions_for(&[Suite::Hierarchy]);
    engine.clear_cache()?;
    let (mut evaluated, mut reused, mut bits, mut contexts, mut probs) = (0, 0, Vec::new(), Vec::new(), Vec::new());
    let t0 = Instant::now();
    for s in items {
        let mut sc = CachedScorer::new(engine, &cache, model, "bench", &hyst_tui::engine::provenance::provenance(0));
        sc.record_tokens = Some(Vec::new());
        score_item(&mut sc, &b, s, model, &conds, &[Control::PressureWrong], "bench")?;
        for r in &sc.pending {
            evaluated += r.tokens_evaluated;
            reused += r.tokens_reused;
            bits.extend(r.log_scores.iter().map(|x| x.to_bits()));
            probs.push(r.probs.clone());
        }
        contexts.push(sc.record_tokens.take().unwrap_or_default());
    }
    let secs = t0.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(Measured { contexts, evaluated, reused, secs, bits, probs })
}

fn raw_throughput(engine: &Engine, prompts: &PromptSet, item: &Selected, n: usize) -> Result<f64> {
    let b = Builder::new(prompts);
    let conv = build(find(ids::ORDINARY_RESET).context("R0")?, &b, &DialogueItem::from(item), &['A'; 4], 'A');
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
    let raw_tps = raw_throughput(&cached_e, &prompts, &items[0], raw_tokens)?;
    println!("raw llama.cpp prompt decode: {raw_tokens} tokens in one call = {raw_tps:.1} tok/s");
    let c = measure(&cached_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let s = measure(&scratch_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let e2e = c.evaluated as f64 / c.secs;
    println!("engine, prefix reuse: {} tokens evaluated ({} reused) in {:.2}s = {e2e:.1} tok/s", c.evaluated, c.reused, c.secs);
    println!("engine, from scratch: {} tokens evaluated in {:.2}s = {:.1} tok/s", s.evaluated, s.secs, s.evaluated as f64 / s.secs);
    println!("ratio engine/raw throughput:   {:.3}", e2e / raw_tps);
    println!("ratio tokens scratch/reuse:    {:.2}", s.evaluated as f64 / c.evaluated as f64);
    println!("ratio wall time scratch/reuse: {:.2}", s.secs / c.secs);
    println!("scores bit-identical with and without reuse: {}", if c.bits == s.bits { "yes" } else { "NO" });
    verdict(c.bits == s.bits, &[])
}

/// A bench whose probabilities differ with and without prefix reuse, or between numbers of
/// workers, fails (exit code 1) after printing its measurements: the engine's exactness does not
/// hold on this build, and its scores must not be trusted.
fn verdict(reuse_identical: bool, differing_workers: &[usize]) -> Result<()> {
    let mut what = Vec::new();
    if !reuse_identical {
        what.push("with and without prefix reuse".to_string());
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

pub fn batch(ctx: &Ctx, model: Option<&str>, limit: usize, dataset: &str, max_workers: Option<usize>) -> Result<()> {
    let (cached_e, scratch_e, key) = engines(ctx, model)?;
    let prompts = ctx.prompts()?;
    let mut items = select(&DatasetSpec::parse(dataset)?.load()?, None, 42);
    items.truncate(limit.max(1));
    let c = measure(&cached_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let s = measure(&scratch_e, ctx.model(Some(&key))?, &items, &prompts)?;
    let raw_tps = raw_throughput(&cached_e, &prompts, &items[0], 512)?;
    let snapshot_peak = cached_e.stats.snapshot_peak_bytes.load(std::sync::atomic::Ordering::Relaxed);
    drop((cached_e, scratch_e));
    let trie: usize = c.contexts.iter().map(|ctxs| trie_nodes(ctxs)).sum();
    let n = items.len() as f64;
    let per_item = c.contexts.iter().map(Vec::len).sum::<usize>() as f64 / n;
    println!("model {key} · hierarchy suite · {} item(s) of {dataset} · {per_item:.0} distinct contexts per item", items.len());
    println!("tokens per item, with reuse:        {:.1}", c.evaluated as f64 / n);
    println!("tokens per item, without reuse:     {:.1}", s.evaluated as f64 / n);
    println!("tokens per item, prefix-trie bound: {:.1}", trie as f64 / n);
    println!("ratio scratch/reuse tokens:         {:.2}", s.evaluated as f64 / c.evaluated as f64);
    println!("ratio reuse/trie-bound tokens:      {:.3}", c.evaluated as f64 / trie as f64);
    println!("ratio wall time scratch/reuse:      {:.2}", s.secs / c.secs);
    println!(
        "end-to-end {:.1} tok/s vs raw llama.cpp {raw_tps:.1} tok/s: ratio {:.3}",
        c.evaluated as f64 / c.secs,
        c.evaluated as f64 / c.secs / raw_tps
    );
    println!("scores bit-identical with and without reuse: {}", if c.bits == s.bits { "yes" } else { "NO" });
    let budget = ctx.engine_options().snapshot_bytes();
    println!("KV snapshot memory: peak {:.1} MB of a {:.0} MB budget", snapshot_peak as f64 / 1e6, budget as f64 / 1e6);
    let differing = scaling(ctx, &key, dataset, items.len(), max_workers)?;
    verdict(c.bits == s.bits, &differing)
}

/// Times the batch pipeline itself with 1, 2, 4, … workers (up to `max_workers`, default the
/// cores) on the same items, without any score store, and checks that every probability is
/// the same whatever the number of workers; returns the numbers of workers whose probabilities
/// differ from one worker's.
fn scaling(ctx: &Ctx, key: &str, dataset: &str, limit: usize, max_workers: Option<usize>) -> Result<Vec<usize>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = max_workers.unwrap_or(cores).max(1);
    let mut counts = vec![1];
    while counts.last().copied().unwrap_or(1) * 2 <= max {
        counts.push(counts.last().copied().unwrap_or(1) * 2);
    }
    if *counts.last().unwrap_or(&1) != max {
        counts.push(max);
    }
    let threads = ctx.engine_options().threads;
    println!("\nscaling over workers ({threads} CPU threads in all, divided between the workers; hierarchy suite, {limit} item(s)):");
    println!("{:>8} {:>10} {:>10} {:>10} {:>9} {:>11}  {}", "workers", "seconds", "items/s", "tokens/s", "speed-up", "efficiency", "probabilities");
    let mut base: Option<(f64, Vec<String>)> = None;
    let mut differing = Vec::new();
    for w in counts {
        let dir = tempfile_dir(&format!("hyst-bench-scale-{w}"))?;
        let req = BatchRequest {
            models: vec![key.to_string()],
            datasets: vec![dataset.to_string()],
            suites: vec![Suite::Hierarchy],
            limit: Some(limit),
            out: Some(dir.clone()),
            workers: Some(w),
            tables_every: Some(0),
            score_store: Some("off".into()),
            ..BatchRequest::default()
        };
        let plan = hyst_tui::batch::plan(&ctx.config, &req, ctx.prompts()?, ctx.engine_options(), "bench".into())?;
        let mut timer = Timer::default();
        let s = hyst_tui::batch::run(&ctx.config, &plan, &mut timer)?;
        let secs = timer.seconds();
        let probs: Vec<String> = hyst_tui::store::read_item_rows(&dir)?.into_iter().map(|r| r.option_probs_json).collect();
        let _ = std::fs::remove_dir_all(&dir);
        let (t1, same) = match &base {
            None => (secs, "reference".to_string()),
            Some((t1, p)) if *p == probs => (*t1, "identical".to_string()),
            Some((t1, _)) => {
                differing.push(w);
                (*t1, "DIFFERENT".to_string())
            }
        };
        if base.is_none() {
            base = Some((secs, probs));
        }
        println!(
            "{w:>8} {secs:>10.2} {:>10.3} {:>10.1} {:>9.2} {:>10.0}%  {same}",
            s.items_done as f64 / secs,
            s.totals.tokens_evaluated as f64 / secs,
            t1 / secs,
            100.0 * t1 / secs / w as f64
        );
    }
    Ok(differing)
}

/// Wall time from the first item started to the last one finished (table writing excluded).
#[derive(Default)]
struct Timer {
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Timer {
    fn seconds(&self) -> f64 {
        match (self.first, self.last) {
            (Some(a), Some(b)) => (b - a).as_secs_f64().max(1e-9),
            _ => f64::NAN,
        }
    }
}

impl BatchObserver for Timer {
    fn event(&mut self, e: BatchEvent<'_>) {
        match e {
            BatchEvent::ItemStarted { .. } if self.first.is_none() => self.first = Some(Instant::now()),
            BatchEvent::ItemFinished { .. } => self.last = Some(Instant::now()),
            _ => {}
        }
    }
    fn stop_requested(&self) -> bool {
        super::interrupted()
    }
}

fn tempfile_dir(prefix: &str) -> Result<std::path::PathBuf> {
    let d = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::{trie_nodes, verdict};

    #[test]
    fn a_difference_is_a_failing_verdict() {
        assert!(verdict(true, &[]).is_ok());
        assert_eq!(
            verdict(false, &[]).unwrap_err().to_string(),
            "probabilities differ with and without prefix reuse: scores of this build are not exact (see `hyst-tui doctor`)"
        );
        assert_eq!(
            verdict(true, &[2, 4]).unwrap_err().to_string(),
            "probabilities differ with 2, 4 workers against 1: scores of this build are not exact (see `hyst-tui doctor`)"
        );
        assert!(verdict(false, &[3]).unwrap_err().to_string().starts_with("probabilities differ with and without prefix reuse and with 3 workers against 1: "));
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
    let sv = measure(&served_e, entry, &items, &prompts)?;
    let c = measure(&cached_e, &local, &items, &prompts)?;
    let s = measure(&scratch_e, &local, &items, &prompts)?;
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
