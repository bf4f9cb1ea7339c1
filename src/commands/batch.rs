//! `hyst-tui --batch` / `batch`: the CLI around `hyst_tui::batch`, with the progress bar drawn
//! from the batch's events.

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{command_line, interrupted, Ctx};
use crate::cli::BatchArgs;
use hyst_tui::batch::{self, BatchEvent, BatchObserver, BatchPlan, BatchRequest, RunPlan};
use hyst_tui::dialogue::recipe::ExperimentSource;
use hyst_tui::protocol::AnswerFormat;

/// The library's batch request for these arguments.
pub fn request(a: &BatchArgs, score_store: Option<&str>, allow_inexact_reuse: bool) -> BatchRequest {
    BatchRequest {
        allow_inexact_reuse,
        plan: None,
        workers: a.workers.map(usize::from),
        concurrency: a.concurrency.map(usize::from),
        tables_every: a.tables_every,
        models: a.models.clone(),
        datasets: a.datasets.clone(),
        suites: a.suites(),
        selection: a.selection.options(),
        out: a.out.clone(),
        limit: a.limit,
        shard: a.shard,
        shard_by: a.shard_by,
        score_store: score_store.map(str::to_string),
        seeds: a.seeds.clone(),
        experiments: Vec::new(),
        answers: a.answers.formats(),
        prompts_dir: None,
    }
}

pub fn plan(ctx: &Ctx, a: &BatchArgs) -> Result<BatchPlan> {
    let mut req = request(a, ctx.global.score_store.as_deref(), ctx.global.allow_inexact_reuse);
    req.experiments = ctx.experiments.clone();
    req.prompts_dir = ctx.global.prompts.clone();
    if let Some(p) = &a.plan {
        // The plan's experiment files join `--experiment`'s (each file once).
        for path in RunPlan::experiment_files(p)? {
            let e = ExperimentSource::read(&path)?;
            if !req.experiments.iter().any(|f| f.sha256 == e.sha256) {
                req.experiments.push(e);
            }
        }
        req.plan = Some(RunPlan::load(p, &ctx.config)?);
    }
    let mut engine = ctx.engine_options();
    if let Some(mb) = a.snapshot_mem {
        engine.snapshot_mem = Some(mb * 1024 * 1024);
    }
    engine.pack = a.pack.unwrap_or_else(batch::default_pack);
    let mut p = batch::plan(&ctx.config, &req, ctx.prompts()?, engine, command_line())?;
    p.lens = a.lens;
    Ok(p)
}

/// `--dry-run`: the work of the run, as a table or (`--json`) one JSON object.
fn dry_run(p: &BatchPlan, json: bool) -> Result<()> {
    let d = batch::dryrun::dry_run(p)?;
    if json {
        println!("{}", serde_json::to_string(&d)?);
        return Ok(());
    }
    if let Some(plan) = &p.config.plan {
        println!("plan: {} — {}", plan.name, plan.description);
    }
    println!("run directory: {}", d.out);
    println!(
        "{:<18} {:<14} {:<40} {:>6} {:>9} {:>14} {:>14}",
        "MODEL", "DATASET", "SUITES", "ITEMS", "CONTEXTS", "TOKENS (reuse)", "(no reuse)"
    );
    for x in &d.pairs {
        println!(
            "{:<18} {:<14} {:<40} {:>6} {:>9} {:>14} {:>14}",
            x.model,
            x.dataset,
            x.suites.join(","),
            x.items,
            x.contexts,
            x.tokens_estimate,
            x.tokens_estimate_without_reuse
        );
    }
    println!(
        "{:<18} {:<14} {:<40} {:>6} {:>9} {:>14} {:>14}",
        "total", "", "", d.items, d.contexts, d.tokens_estimate, d.tokens_estimate_without_reuse
    );
    println!("(tokens estimated at {} characters per token, no model loaded)", batch::dryrun::CHARS_PER_TOKEN);
    for (t, pairs) in &d.tables {
        let list: Vec<String> = pairs.iter().map(|(m, ds)| format!("{m}/{ds}")).collect();
        println!("{t} pools {} pairs: {}", pairs.len(), list.join(", "));
    }
    Ok(())
}

/// Progress on stderr: an indicatif bar on a terminal; otherwise a plain line every 5 seconds.
/// Ctrl-C (see [`interrupted`]) asks the batch to stop after the prompts in flight.
struct CliProgress {
    bar: Option<ProgressBar>,
    started: Instant,
    last_line: Option<Instant>,
    tokens: u64,
}

impl CliProgress {
    fn new() -> Self {
        CliProgress {
            bar: None,
            started: Instant::now(),
            last_line: None,
            tokens: 0,
        }
    }

    fn println(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => say!("{msg}"),
        }
    }
}

impl BatchObserver for CliProgress {
    fn event(&mut self, e: BatchEvent<'_>) {
        match e {
            BatchEvent::Started { out, items_total, .. } => {
                say!("run directory: {}", out.display());
                self.started = Instant::now();
                if std::io::stderr().is_terminal() {
                    let bar = ProgressBar::with_draw_target(Some(items_total as u64), ProgressDrawTarget::stderr());
                    bar.set_style(
                        ProgressStyle::with_template(
                            "[{bar:24}] {pos}/{len} items · {per_sec} · {msg} · ETA {eta} · {prefix}",
                        )
                        .expect("valid template")
                        .progress_chars("#>-"),
                    );
                    bar.enable_steady_tick(Duration::from_millis(200));
                    self.bar = Some(bar);
                }
            }
            BatchEvent::ModelLoading { model } => self.println(&format!("loading {model}")),
            BatchEvent::Notice { message } => self.println(message),
            BatchEvent::ItemStarted { item_id, .. } => {
                if let Some(b) = &self.bar {
                    b.set_prefix(item_id.to_string());
                }
            }
            BatchEvent::ContextsScored { totals, .. } => self.tokens = totals.tokens_evaluated,
            BatchEvent::ItemFinished { item_id, items_done, items_total } => {
                let secs = self.started.elapsed().as_secs_f64().max(1e-9);
                let tok_s = format!("{:.0} tok/s", self.tokens as f64 / secs);
                match &self.bar {
                    Some(b) => {
                        b.set_message(tok_s);
                        b.set_position(items_done as u64);
                    }
                    None => {
                        let due = self.last_line.is_none_or(|t| t.elapsed() >= Duration::from_secs(5));
                        if due || items_done == items_total {
                            self.last_line = Some(Instant::now());
                            say!(
                                "{items_done}/{items_total} items · {:.2} items/s · {tok_s} · {item_id}",
                                items_done as f64 / secs
                            );
                        }
                    }
                }
            }
            BatchEvent::Finished { .. } => {
                if let Some(b) = self.bar.take() {
                    b.finish();
                }
            }
        }
    }

    fn stop_check(&self) -> Option<batch::StopCheck> {
        Some(std::sync::Arc::new(interrupted))
    }
}

pub fn run(ctx: &Ctx, a: &BatchArgs) -> Result<()> {
    let p = plan(ctx, a)?;
    if a.dry_run {
        return dry_run(&p, a.json);
    }
    if let Some(limit) = a.wait_for_server {
        wait_for_servers(ctx, &p.config.models, std::time::Duration::from_secs(limit))?;
    }
    let s = batch::run(&ctx.config, &p, &mut CliProgress::new())?;
    let t = &s.totals;
    say!(
        "{} of {} items in {:.1}s · {} · {} tokens evaluated, {} reused ({:.0}% reuse)",
        s.items_done,
        s.items_total,
        s.seconds,
        contexts_line(t, p.shared_store.is_some()),
        t.tokens_evaluated,
        t.tokens_reused,
        s.reuse_percent()
    );
    if s.interrupted {
        let unfinished = match t.kept_unfinished {
            0 => String::new(),
            1 => "; 1 score of an unfinished item is kept too".to_string(),
            n => format!("; {n} scores of unfinished items are kept too"),
        };
        bail!(
            "{}: {} of {} items are stored in {} (its tables are those of the finished items{unfinished}); resume (nothing is recomputed) with: {}",
            super::stop_reason(),
            s.items_done,
            s.items_total,
            p.out.display(),
            resume_command(&p.out)
        );
    }
    // Each answer format's outputs: letters in the run directory, open answers in open/.
    for format in &p.config.answers {
        let dir = match format {
            AnswerFormat::Letters => p.out.clone(),
            AnswerFormat::Open => p.out.join(batch::OPEN_DIR),
        };
        let label = match format {
            AnswerFormat::Letters if p.config.answers.len() == 1 => String::new(),
            f => format!(" ({})", f.key()),
        };
        println!("rows{label}: {}", dir.join("item_rows.jsonl").display());
        println!("summary{label}: {}", dir.join("summary.md").display());
        let in_dir = |d: &str| s.tables.iter().filter(|f| f.parent() == Some(dir.join(d).as_path())).count();
        println!("tables{label}: {} files in {}", in_dir("tables"), dir.join("tables").display());
        println!("figures{label}: {} files in {}", in_dir("figures"), dir.join("figures").display());
    }
    if p.config.answers.len() > 1 {
        println!("letters against open answers: {}", p.out.join("tables").join("answer_formats.md").display());
    }
    Ok(())
}

/// Where the contexts of the items done came from (docs/guide/batch.md, "The last line"): the
/// terms add up to the first number, the run's item rows. The shared store is named only when
/// the run uses one.
fn contexts_line(t: &batch::Totals, shared_store: bool) -> String {
    let shared = if shared_store { format!(", {} from the shared store", t.from_shared) } else { String::new() };
    format!(
        "{} contexts: {} scored, {} from this run's cache{shared}, {} repeated within an item",
        t.contexts, t.scored, t.from_run_cache, t.repeated
    )
}

/// `--wait-for-server`: waits for the server of every served model of the run, in turn.
fn wait_for_servers(ctx: &Ctx, models: &[String], limit: std::time::Duration) -> Result<()> {
    for key in models {
        let entry = ctx.config.get(key)?;
        let Some(ep) = &entry.endpoint else { continue };
        say!("waiting up to {} s for the server of {key} ({})", limit.as_secs(), ep.base());
        match hyst_tui::engine::served::wait_until_answers(entry, limit, &super::interrupted) {
            Ok(waited) => say!("{key}: the server answered after {:.0} s", waited.as_secs_f64()),
            Err(_) if super::interrupted() => bail!("{} while waiting for the server of {key}: nothing was scored", super::stop_reason()),
            Err(e) => bail!("{key}: {e}"),
        }
    }
    Ok(())
}

/// The same command line with `--out` pointing at this run (which resumes it).
fn resume_command(out: &Path) -> String {
    let mut args: Vec<String> = Vec::new();
    let mut it = std::env::args();
    while let Some(a) = it.next() {
        if a == "--out" {
            it.next();
        } else if !a.starts_with("--out=") {
            args.push(a);
        }
    }
    args.push("--out".into());
    args.push(out.display().to_string());
    args.join(" ")
}
