//! `hyst-tui bench served`: a served model against its own GGUF in-process.

use anyhow::{Context, Result};

use super::{measure, Measured};
use crate::commands::Ctx;
use hyst_tui::config::{models_dir, ModelEntry};
use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::engine::{Engine, EngineOptions};

/// `bench served`: the same hierarchy workload scored through a served model and in-process on
/// the entry's own GGUF (prefix reuse and from scratch), on this machine, in one run: contexts/s,
/// tokens/s, their ratios, and how far the served letter distributions are from the local ones.
/// Contexts are sent one at a time, in the batch's order (a batch keeps `--concurrency` in flight).
pub fn run(ctx: &Ctx, model: &str, limit: usize, dataset: &str) -> Result<()> {
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