//! `hyst-tui bench engine`: the engine on the bundled sample's hierarchy workload, with prefix
//! reuse and from scratch, against raw llama.cpp decoding one long prompt.

use anyhow::Result;

use super::{measure, raw_throughput, verdict};
use crate::commands::Ctx;
use hyst_tui::config::models_dir;
use hyst_tui::data::selection::select;
use hyst_tui::data::{DatasetSpec, Selected};
use hyst_tui::engine::{Engine, EngineOptions};

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

pub fn run(ctx: &Ctx, model: Option<&str>, raw_tokens: usize, n_items: usize) -> Result<()> {
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
