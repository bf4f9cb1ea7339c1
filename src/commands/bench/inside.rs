//! `hyst-tui bench inside`: what the read-out and steering cost (engine/inside), on one model in
//! one run: the engine scoring from scratch, the probe without and with the letter lens, under
//! one steering setting, and alternating between two settings (every call re-reserves
//! llama.cpp's graphs).

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;

use crate::commands::items::selection;
use crate::commands::Ctx;
use crate::cli::SelectionArgs;
use hyst_tui::batch::steering::{random_like, steer_items};
use hyst_tui::engine::inside::{ControlVector, InspectOptions, Steering};
use hyst_tui::engine::{Engine, EngineOptions};
use hyst_tui::dialogue::conditions::ids;
use hyst_tui::protocol::ChatMessage;

pub fn run(ctx: &Ctx, model: &Option<String>, limit: usize, dataset: &str) -> Result<()> {
    let entry = ctx.model(model.as_deref())?;
    let path = entry.path(&hyst_tui::config::models_dir());
    let scratch = Engine::start(entry, &path, EngineOptions { cache: false, ..ctx.engine_options() })?;
    anyhow::ensure!(scratch.info().served.is_none(), "{} is served: the read-out needs the model in-process", entry.key);
    let sel = selection(dataset, &SelectionArgs { n: Some(limit.max(1)), seed: 42, subset: None, advocated: None, shuffle_options: None })?;
    let items = steer_items(&scratch, ctx.registry, &ctx.prompts()?, &sel, ids::ORDINARY_RESET, &mut |_, _, _| true)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let contexts: Vec<(&Vec<ChatMessage>, &Vec<char>)> = items.iter().flat_map(|i| [(&i.condition, &i.letters), (&i.clean, &i.letters)]).collect();
    let first = scratch.inspect(contexts[0].0, contexts[0].1, InspectOptions { residuals: true, ..Default::default() })?;
    let residuals = first.residuals.expect("asked");
    let (n_layer, n_embd) = (residuals.len(), residuals[0].len());
    let ones = ControlVector::new(n_embd, (1..n_layer).map(|l| (l, vec![1.0; n_embd]))).map_err(anyhow::Error::msg)?;
    let a = Arc::new(random_like(&ones, 1));
    let b = Arc::new(random_like(&a, 2));
    let mid = n_layer / 2;
    let setting = |v: &Arc<ControlVector>| Some(Steering { vector: v.clone(), alpha: 1.0, layers: (mid, mid) });
    let tokens: usize = contexts.iter().map(|(m, _)| scratch.prepare(m).map(|p| p.tokens.len()).unwrap_or(0)).sum();
    println!(
        "model {}: {} layers, {} wide · {} item(s): {} contexts (R0 and clean probe), {tokens} prompt tokens · {} threads",
        entry.key,
        n_layer,
        n_embd,
        items.len(),
        contexts.len(),
        scratch.info().threads
    );
    let time = |f: &mut dyn FnMut(usize) -> Result<()>| -> Result<f64> {
        let t0 = Instant::now();
        for i in 0..contexts.len() {
            f(i)?;
        }
        Ok(t0.elapsed().as_secs_f64())
    };
    let engine_s = time(&mut |i| scratch.score(contexts[i].0, contexts[i].1).map(|_| ()).map_err(Into::into))?;
    let probe = |lens: bool, steering: Option<Steering>| {
        let (scratch, contexts) = (&scratch, &contexts);
        move |i: usize| -> Result<()> {
            scratch.inspect(contexts[i].0, contexts[i].1, InspectOptions { lens, residuals: false, steering: steering.clone() })?;
            Ok(())
        }
    };
    let probe_s = time(&mut probe(false, None))?;
    let lens_s = time(&mut probe(true, None))?;
    let steered_s = time(&mut probe(false, setting(&a)))?;
    let alternating_s = time(&mut |i| probe(false, if i % 2 == 0 { setting(&a) } else { setting(&b) })(i))?;
    let n = contexts.len() as f64;
    let line = |what: &str, s: f64| println!("{what:<46} {:>8.1} ms/context", 1000.0 * s / n);
    line("engine, from scratch (--no-cache)", engine_s);
    line("read-out probe, score only", probe_s);
    line("read-out probe, with the letter lens", lens_s);
    line("read-out probe, one steering setting", steered_s);
    line("read-out probe, a new steering setting each call", alternating_s);
    println!("ratio probe / engine from scratch:            {:.2}", probe_s / engine_s);
    println!("ratio lens / probe (lens overhead):           {:.2}", lens_s / probe_s);
    println!("ratio one steering setting / probe:           {:.2}", steered_s / probe_s);
    println!(
        "ratio new setting each call / one setting:    {:.2} ({:+.1} ms per change of setting)",
        alternating_s / steered_s,
        1000.0 * (alternating_s - steered_s) / n
    );
    Ok(())
}
