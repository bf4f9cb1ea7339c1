//! `hyst-tui bench batch`: the batch pipeline itself, timed end to end on the hierarchy suite,
//! one prompt per decode call (sequential), packed (`--pack`) and from scratch; each against
//! raw llama.cpp replaying exactly the calls the run made, with where the wall time went; a
//! curve of throughput against tokens per decode call; and the scaling over workers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};

use super::super::Ctx;
use super::{raw_throughput, trie_nodes, verdict};
use hyst_tui::batch::{BatchEvent, BatchObserver, BatchRequest, BatchSummary, EngineReport};
use hyst_tui::config::models_dir;
use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::dialogue::Suite;
use hyst_tui::engine::{Engine, EngineOptions, KvOp, SCORING_PHASES};
use hyst_tui::protocol::AnswerFormat;

/// What `bench batch` is asked for.
pub struct BatchBench<'a> {
    pub model: Option<&'a str>,
    pub limit: usize,
    pub dataset: &'a str,
    /// The most workers in the scaling table.
    pub max_workers: Option<usize>,
    /// Sequences of the packed run.
    pub pack: u32,
    /// Sequences of each point of the throughput curve (empty: no curve).
    pub curve: Vec<u32>,
    /// Where the curve's figure goes.
    pub figure: PathBuf,
}

/// One run of the batch pipeline.
pub(super) struct Run {
    pub(super) label: String,
    pack: u32,
    pub(super) summary: BatchSummary,
    pub(super) engine: EngineReport,
    /// Seconds from the first item started to the last one committed.
    pub(super) scoring: f64,
    /// Seconds from the model's loading to the first item started.
    loading: f64,
    /// Every item row's option log-scores, in row order.
    pub(super) log_scores: Vec<String>,
}

impl Run {
    fn tokens(&self) -> u64 {
        self.summary.totals.tokens_evaluated
    }

    fn tokens_per_call(&self) -> f64 {
        self.engine.decode_tokens as f64 / self.engine.decode_calls.max(1) as f64
    }

    fn tps(&self) -> f64 {
        self.tokens() as f64 / self.scoring
    }
}

/// Times the stages of a run from its events.
#[derive(Default)]
struct Timer {
    loading: Option<Instant>,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Timer {
    fn between(a: Option<Instant>, b: Option<Instant>) -> f64 {
        match (a, b) {
            (Some(a), Some(b)) => (b - a).as_secs_f64().max(1e-9),
            _ => f64::NAN,
        }
    }
}

impl BatchObserver for Timer {
    fn event(&mut self, e: BatchEvent<'_>) {
        match e {
            BatchEvent::ModelLoading { .. } if self.loading.is_none() => self.loading = Some(Instant::now()),
            BatchEvent::ItemStarted { .. } if self.first.is_none() => self.first = Some(Instant::now()),
            BatchEvent::ItemFinished { .. } => self.last = Some(Instant::now()),
            _ => {}
        }
    }
    fn stop_check(&self) -> Option<hyst_tui::batch::StopCheck> {
        Some(std::sync::Arc::new(super::super::interrupted))
    }
}

fn scratch_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hyst-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs the batch pipeline on `limit` items of `dataset` (one worker, no score store, tables
/// at the end only) with `pack` sequences, prefix reuse on or off, recording its KV operations.
fn pipeline(ctx: &Ctx, key: &str, dataset: &str, limit: usize, pack: u32, cache: bool, workers: usize, label: String) -> Result<Run> {
    pipeline_in(ctx, key, dataset, limit, pack, cache, workers, label, AnswerFormat::Letters)
}

/// [`pipeline`] in one answer format (an open-answer run's rows are under `open/`).
#[allow(clippy::too_many_arguments)]
pub(super) fn pipeline_in(ctx: &Ctx, key: &str, dataset: &str, limit: usize, pack: u32, cache: bool, workers: usize, label: String, format: AnswerFormat) -> Result<Run> {
    let dir = scratch_dir(&label.replace(' ', "-"));
    let req = BatchRequest {
        models: vec![key.to_string()],
        datasets: vec![dataset.to_string()],
        suites: vec![Suite::Hierarchy],
        limit: Some(limit),
        out: Some(dir.clone()),
        workers: Some(workers),
        tables_every: Some(0),
        score_store: Some("off".into()),
        experiments: ctx.experiments.clone(),
        answers: vec![format],
        prompts_dir: ctx.global.prompts.clone(),
        ..BatchRequest::default()
    };
    let engine = EngineOptions { cache, pack, ..ctx.engine_options() };
    let mut plan = hyst_tui::batch::plan(&ctx.config, &req, ctx.prompts()?, engine, "bench".into())?;
    plan.record_kv = workers == 1;
    let mut timer = Timer::default();
    let summary = hyst_tui::batch::run(&ctx.config, &plan, &mut timer)?;
    let rows_dir = match format {
        AnswerFormat::Letters => dir.clone(),
        AnswerFormat::Open => dir.join(hyst_tui::batch::OPEN_DIR),
    };
    let log_scores = hyst_tui::store::read_item_rows(&rows_dir, plan.registry)?.into_iter().map(|r| r.option_log_scores_json).collect();
    let _ = std::fs::remove_dir_all(&dir);
    anyhow::ensure!(!summary.interrupted, "interrupted");
    let engine = summary.engines.first().cloned().context("the run reported no in-process engine (bench batch measures a model loaded here)")?;
    Ok(Run {
        label,
        pack,
        scoring: Timer::between(timer.first, timer.last),
        loading: Timer::between(timer.loading, timer.first),
        summary,
        engine,
        log_scores,
    })
}

/// Raw llama.cpp on exactly the KV operations and decode calls of `run`, on a fresh context
/// of the same shape: seconds.
fn matched_raw(ctx: &Ctx, key: &str, run: &Run) -> Result<f64> {
    let entry = ctx.model(Some(key))?;
    let opts = EngineOptions { pack: run.pack, ..ctx.engine_options() };
    let e = Engine::start(entry, &entry.path(&models_dir()), opts)?;
    let secs = e.replay(Arc::new(run.engine.kv_ops.clone()))?;
    e.shutdown();
    Ok(secs)
}

/// Where the wall time of a run went: the measured parts, each with its share, and their sum
/// against the wall time (what is left is dialogue building, score lookups and hand-offs
/// between threads, which nothing times).
fn split(run: &Run) -> Vec<(String, f64)> {
    let e = &run.engine;
    let mut rows = vec![("model loading".to_string(), run.loading)];
    rows.extend(SCORING_PHASES.iter().map(|p| p.to_string()).zip(e.phases.iter().copied()));
    let inside: f64 = e.phases.iter().sum();
    rows.push(("rest of the engine's jobs".into(), (e.busy - inside).max(0.0)));
    rows.push(("score store and manifest".into(), run.summary.commit_seconds));
    rows.push(("item rows, tables, figures".into(), run.summary.output_seconds));
    rows
}

fn print_split(run: &Run) {
    let wall = run.summary.seconds;
    println!("where the time goes ({}, {wall:.2}s wall):", run.label);
    let rows = split(run);
    for (name, secs) in &rows {
        println!("  {name:<28} {secs:>8.3}s  {:>5.1}%", 100.0 * secs / wall);
    }
    let sum: f64 = rows.iter().map(|r| r.1).sum();
    println!("  {:<28} {sum:>8.3}s  {:>5.1}% of the wall time (the rest: dialogue building, score lookups, hand-offs)", "sum of the parts", 100.0 * sum / wall);
}

pub fn run(ctx: &Ctx, a: &BatchBench) -> Result<()> {
    let key = ctx.model(a.model)?.key.clone();
    let mut items = select(&DatasetSpec::parse(a.dataset)?.load()?, None, 42);
    items.truncate(a.limit.max(1));
    let n = items.len();
    let pack = a.pack.max(2);
    let seq = pipeline(ctx, &key, a.dataset, n, 1, true, 1, "sequential (pack 1)".into())?;
    let packed = pipeline(ctx, &key, a.dataset, n, pack, true, 1, format!("packed (pack {pack})"))?;
    let scratch = pipeline(ctx, &key, a.dataset, n, 1, false, 1, "from scratch".into())?;
    let runs = [&seq, &packed, &scratch];
    let raws: Vec<f64> = runs.iter().map(|r| matched_raw(ctx, &key, r)).collect::<Result<_>>()?;
    let pos0 = {
        let entry = ctx.model(Some(&key))?;
        let e = Engine::start(entry, &entry.path(&models_dir()), ctx.engine_options())?;
        let b = raw_throughput(ctx.registry, &e, &ctx.prompts()?, &items[0], 512)?;
        e.shutdown();
        b
    };
    // The prefix-trie bound of the contexts the sequential run scored.
    let trie = trie_nodes(&contexts_of(&seq.engine.kv_ops));
    let nf = n as f64;
    println!(
        "model {key} · hierarchy suite · {n} item(s) of {} · {:.0} contexts scored per item · {} threads",
        a.dataset,
        seq.summary.totals.scored as f64 / nf,
        ctx.engine_options().threads
    );
    println!("tokens per item, with reuse:        {:.1}", seq.tokens() as f64 / nf);
    println!("tokens per item, without reuse:     {:.1}", scratch.tokens() as f64 / nf);
    println!("tokens per item, prefix-trie bound: {:.1}", trie as f64 / nf);
    println!("ratio reuse/trie-bound tokens:      {:.3}", seq.tokens() as f64 / trie as f64);
    println!();
    println!(
        "{:<22} {:>8} {:>8} {:>8} {:>7} {:>9} {:>6} {:>9} {:>8} {:>9} {:>9}",
        "", "scoring", "tokens", "tok/s", "calls", "tok/call", "pad", "raw", "e2e/raw", "speed-up", "/tokens"
    );
    for (r, raw) in runs.iter().zip(&raws) {
        let speed_up = scratch.scoring / r.scoring;
        let token_ratio = scratch.tokens() as f64 / r.tokens() as f64;
        println!(
            "{:<22} {:>7.2}s {:>8} {:>8.1} {:>7} {:>9.1} {:>5.1}% {:>8.2}s {:>8.3} {:>9.2} {:>9.3}",
            r.label,
            r.scoring,
            r.tokens(),
            r.tps(),
            r.engine.decode_calls,
            r.tokens_per_call(),
            100.0 * r.engine.pad_tokens as f64 / r.engine.decode_tokens.max(1) as f64,
            raw,
            raw / r.scoring,
            speed_up,
            speed_up / token_ratio
        );
    }
    println!(
        "columns: scoring = first item started to last committed; raw = raw llama.cpp replaying that run's KV operations and decode calls; e2e/raw = raw / scoring; speed-up = from-scratch scoring / this; /tokens = speed-up / (from-scratch tokens / these tokens)"
    );
    println!(
        "position-0 anchor (512 tokens per call from an empty cache, not the calls hyst-tui makes): {pos0:.1} tok/s; sequential end-to-end / position-0: {:.3}",
        seq.tps() / pos0
    );
    let packed_same = packed.log_scores == seq.log_scores;
    let reuse_same = scratch.log_scores == seq.log_scores;
    println!(
        "scores of {} contexts: packed vs sequential {}; sequential vs from scratch {}",
        seq.log_scores.len(),
        if packed_same { "bit-identical" } else { "DIFFERENT" },
        if reuse_same { "bit-identical" } else { "DIFFERENT" }
    );
    println!();
    print_split(&seq);
    print_split(&packed);
    if !a.curve.is_empty() {
        println!();
        curve(ctx, &key, a, n, &[&seq, &packed])?;
    }
    let differing = scaling(ctx, &key, a.dataset, n, a.max_workers)?;
    verdict(reuse_same, packed_same, &differing)
}

/// The token ids of every context a recorded run scored: each sequence's tokens are followed
/// through the operations, and a context ends where logits are read.
pub(super) fn contexts_of(ops: &[KvOp]) -> Vec<Vec<i32>> {
    use std::collections::HashMap;
    let mut seqs: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut saved: HashMap<u64, Vec<i32>> = HashMap::new();
    let mut last: &[(i32, i32, i32, bool)] = &[];
    let mut out = Vec::new();
    for op in ops {
        match op {
            KvOp::ClearAll => seqs.clear(),
            KvOp::Clear { seq } => {
                seqs.remove(seq);
            }
            KvOp::Trim { seq, from } => seqs.entry(*seq).or_default().truncate(*from as usize),
            KvOp::Save { seq, id } => {
                saved.insert(*id, seqs.get(seq).cloned().unwrap_or_default());
            }
            KvOp::Restore { seq, id } => {
                seqs.insert(*seq, saved.get(id).cloned().unwrap_or_default());
            }
            KvOp::Copy { from, to } => {
                let t = seqs.get(from).cloned().unwrap_or_default();
                seqs.insert(*to, t);
            }
            KvOp::Decode { tokens } => {
                for &(t, pos, seq, _) in tokens {
                    let s = seqs.entry(seq).or_default();
                    s.truncate(pos as usize);
                    s.push(t);
                }
                last = tokens;
            }
            KvOp::Logits { index } => {
                if let Some(&(_, pos, seq, _)) = last.get(*index as usize) {
                    out.push(seqs[&seq][..=pos as usize].to_vec());
                }
            }
        }
    }
    out
}

/// Times the batch pipeline with 1, 2, 4, … workers (up to `max_workers`, default the cores)
/// on the same items and checks that every probability is the same whatever the number of
/// workers; returns the numbers of workers whose probabilities differ from one worker's.
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
    println!("\nscaling over workers ({threads} CPU threads in all, divided between the workers; hierarchy suite, {limit} item(s), one sequence each):");
    println!("{:>8} {:>10} {:>10} {:>10} {:>9} {:>11}  {}", "workers", "seconds", "items/s", "tokens/s", "speed-up", "efficiency", "probabilities");
    let mut base: Option<(f64, Vec<String>)> = None;
    let mut differing = Vec::new();
    for w in counts {
        let r = pipeline(ctx, key, dataset, limit, 1, true, w, format!("{w} workers"))?;
        let secs = r.scoring;
        let (t1, same) = match &base {
            None => (secs, "reference".to_string()),
            Some((t1, p)) if *p == r.log_scores => (*t1, "identical".to_string()),
            Some((t1, _)) => {
                differing.push(w);
                (*t1, "DIFFERENT".to_string())
            }
        };
        if base.is_none() {
            base = Some((secs, r.log_scores.clone()));
        }
        println!(
            "{w:>8} {secs:>10.2} {:>10.3} {:>10.1} {:>9.2} {:>10.0}%  {same}",
            r.summary.items_done as f64 / secs,
            r.tokens() as f64 / secs,
            t1 / secs,
            100.0 * t1 / secs / w as f64
        );
    }
    Ok(differing)
}

/// Throughput against tokens per decode call: one run per number of sequences, a table and
/// an SVG figure.
fn curve(ctx: &Ctx, key: &str, a: &BatchBench, n: usize, done: &[&Run]) -> Result<()> {
    println!("throughput against tokens per decode call (prefix reuse, one run per number of sequences):");
    println!("{:>6} {:>9} {:>10} {:>9}  {}", "pack", "tok/call", "tok/s", "vs pack 1", "scores");
    let mut points = Vec::new();
    let mut base: Option<(f64, Vec<String>)> = None;
    for &p in &a.curve {
        let owned;
        let r = match done.iter().find(|r| r.pack == p) {
            Some(r) => *r,
            None => {
                owned = pipeline(ctx, key, a.dataset, n, p, true, 1, format!("pack {p}"))?;
                &owned
            }
        };
        let (b, scores) = base.get_or_insert_with(|| (r.tps(), r.log_scores.clone())).clone();
        let same = if scores == r.log_scores { "identical" } else { "DIFFERENT" };
        println!("{p:>6} {:>9.1} {:>10.1} {:>9.2}  {same}", r.tokens_per_call(), r.tps(), r.tps() / b);
        points.push((p, r.tokens_per_call(), r.tps()));
    }
    write_figure(&a.figure, key, &points)?;
    println!("figure: {}", a.figure.display());
    Ok(())
}

fn write_figure(path: &Path, key: &str, points: &[(u32, f64, f64)]) -> Result<()> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
        let x_max = points.iter().map(|p| p.1).fold(1.0, f64::max) * 2.0;
        let y_max = points.iter().map(|p| p.2).fold(1.0, f64::max) * 1.15;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{key}: throughput against tokens per decode call"), ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d((1.0..x_max).log_scale(), 0.0..y_max)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .configure_mesh()
            .x_desc("tokens per decode call (mean, padding included)")
            .y_desc("tokens per second (scoring)")
            .draw()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let line: Vec<(f64, f64)> = points.iter().map(|p| (p.1, p.2)).collect();
        chart.draw_series(LineSeries::new(line.clone(), BLUE.stroke_width(2))).map_err(|e| anyhow::anyhow!("{e}"))?;
        chart
            .draw_series(points.iter().map(|&(p, x, y)| {
                EmptyElement::at((x, y)) + Circle::new((0, 0), 4, BLUE.filled()) + Text::new(format!("pack {p}"), (6, -14), ("sans-serif", 12))
            }))
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))
}
