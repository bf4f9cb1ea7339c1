//! `hyst-tui steer direction`, `hyst-tui steer sweep` and `hyst-tui lens`: the steering
//! experiment of `batch::steering` and the lens across items of `batch::lens`, from the command
//! line (docs/guide/inside.md).

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::items::selection;
use hyst_tui::dialogue::conditions::ids;
use super::{command_line, interrupted, open_engine, stop_reason, Ctx};
use crate::cli::{LensArgs, SteerDirectionArgs, SteerItemsArgs, SteerSweepArgs};
use hyst_tui::batch::lens::{condition_label, default_conditions, lens_rows, write_lens};
use hyst_tui::batch::steering::{
    SplitRecord, DIRECTION_FILE, SPLIT_FILE,
    estimate_direction, random_like, split_items, steer_items, sweep as run_sweep, sweep_csv, sweep_markdown, DirectionKind, SteerError,
    SteerItem,
};
use hyst_tui::data::selection::Selected;
use hyst_tui::engine::inside::ControlVector;
use hyst_tui::engine::Engine;
use hyst_tui::tables::{render_steering_sweep, SweepPoint, SweepSeries};


/// A progress line on stderr (overwritten in place on a terminal); false once interrupted.
fn progress(stage: &str, done: usize, total: usize) -> bool {
    use std::io::IsTerminal as _;
    if std::io::stderr().is_terminal() {
        say!("\x1b[1A\x1b[2K{stage}: {done}/{total}");
    } else if done == total || done % 10 == 0 {
        say!("{stage}: {done}/{total}");
    }
    !interrupted()
}

fn steer_err(e: SteerError) -> anyhow::Error {
    match e {
        SteerError::Stopped => anyhow::anyhow!("{} (nothing was written)", stop_reason()),
        SteerError::Failed(s) => anyhow::anyhow!(s),
    }
}

/// The engine (refused when served), the selection and the condition studied (`recorded`: the
/// one a direction was estimated on, the default then; another one named is refused).
fn open(ctx: &Ctx, a: &SteerItemsArgs, recorded: Option<&str>) -> Result<(Engine, Vec<Selected>, String, String)> {
    let condition = match (&a.condition, recorded) {
        (Some(c), Some(r)) if c != r => {
            bail!("the direction was estimated on {r}; sweeping it on {c} needs a direction of its own (or drop --condition)")
        }
        (Some(c), _) => c.clone(),
        (None, Some(r)) => r.to_string(),
        (None, None) => ids::ORDINARY_RESET.to_string(),
    };
    if ctx.registry.find(&condition).is_none() {
        bail!("unknown condition {condition:?} (see `hyst-tui conditions`)");
    }
    let (engine, sel, key) = open_model(ctx, a.model.as_deref(), &a.dataset, &a.selection)?;
    Ok((engine, sel, key, condition))
}

fn open_model(ctx: &Ctx, model: Option<&str>, dataset: &str, selection_args: &crate::cli::SelectionArgs) -> Result<(Engine, Vec<Selected>, String)> {
    let sel = selection(dataset, selection_args)?;
    if sel.is_empty() {
        bail!("the selection of {dataset} is empty");
    }
    let engine = open_engine(ctx, model)?;
    let key = engine.info().key.clone();
    if engine.info().served.is_some() {
        bail!("{key} is served: steering needs the model's layers, which a server does not expose (use the GGUF in-process)");
    }
    Ok((engine, sel, key))
}

fn items_of(ctx: &Ctx, engine: &Engine, sel: &[Selected], ids: &[String], condition: &str) -> Result<Vec<SteerItem>> {
    let chosen: Vec<Selected> = sel.iter().filter(|s| ids.contains(&s.item.id)).cloned().collect();
    if let Some(missing) = ids.iter().find(|id| !sel.iter().any(|s| &s.item.id == *id)) {
        bail!("item {missing:?} of the split is not in this selection: give the --dataset, --n and --seed the direction was estimated with");
    }
    say!("");
    steer_items(engine, &ctx.registry, &ctx.prompts()?, &chosen, condition, &mut progress).map_err(steer_err)
}

pub fn direction(ctx: &Ctx, a: &SteerDirectionArgs) -> Result<()> {
    let (engine, sel, key, condition) = open(ctx, &a.items, None)?;
    let ids: Vec<String> = sel.iter().map(|s| s.item.id.clone()).collect();
    let split = split_items(&ids, a.train_fraction, a.split_seed).map_err(|e| anyhow::anyhow!(e))?;
    say!("{} items: {} to estimate the direction, {} held out (split seed {})", ids.len(), split.train.len(), split.held_out.len(), a.split_seed);
    let items = items_of(ctx, &engine, &sel, &split.train, &condition)?;
    say!("");
    let vector = estimate_direction(&engine, &items, &mut progress).map_err(steer_err)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let file = a.out.join(DIRECTION_FILE);
    vector.write(&file, &key).with_context(|| format!("cannot write {}", file.display()))?;
    let norms: Vec<f64> = vector.layers.values().map(|d| d.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt()).collect();
    let record = SplitRecord {
        model: key,
        dataset: a.items.dataset.clone(),
        n: a.items.selection.n,
        selection_seed: a.items.selection.seed,
        condition,
        split,
        vector_hash: vector.hash(),
        layers: vector.span(),
        norms: norms.clone(),
        command: command_line(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let rec = a.out.join(SPLIT_FILE);
    std::fs::write(&rec, serde_json::to_string_pretty(&record)? + "\n").with_context(|| format!("cannot write {}", rec.display()))?;
    let (peak, at) = norms.iter().enumerate().fold((0.0, 0), |(m, i), (j, &v)| if v > m { (v, j) } else { (m, i) });
    println!("direction: {} (layers {}-{}, longest at layer {} with length {peak:.3})", file.display(), record.layers.0, record.layers.1, at + record.layers.0);
    println!("split: {} ({} training items, {} held out)", rec.display(), record.split.train.len(), record.split.held_out.len());
    println!("next: hyst-tui steer sweep --direction {} --model {}", a.out.display(), record.model);
    Ok(())
}

fn read_record(dir: &Path) -> Result<SplitRecord> {
    let p = dir.join(SPLIT_FILE);
    let text = std::fs::read_to_string(&p).with_context(|| format!("cannot read {} (made by `hyst-tui steer direction --out {}`)", p.display(), dir.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a split record", p.display()))
}

pub fn sweep(ctx: &Ctx, a: &SteerSweepArgs) -> Result<()> {
    let (vector, held_out_ids, record, out) = match (&a.direction, &a.vector) {
        (Some(dir), _) => {
            let record = read_record(dir)?;
            let v = ControlVector::read(&dir.join(DIRECTION_FILE)).map_err(|e| anyhow::anyhow!(e))?;
            if v.hash() != record.vector_hash {
                bail!("{}: the direction is not the one {SPLIT_FILE} was written with", dir.display());
            }
            (v, Some(record.split.held_out.clone()), Some(record), a.out.clone().unwrap_or_else(|| dir.clone()))
        }
        (None, Some(file)) => {
            let out = a.out.clone().context("--out DIR is needed with --vector")?;
            (ControlVector::read(file).map_err(|e| anyhow::anyhow!(e))?, None, None, out)
        }
        (None, None) => bail!("give --direction DIR or --vector FILE"),
    };
    let (engine, sel, key, condition) = open(ctx, &a.items, record.as_ref().map(|r| r.condition.as_str()))?;
    if let Some(r) = &record {
        if r.model != key {
            bail!("the direction was estimated on {} but this sweep runs {key}: pass --model {}", r.model, r.model);
        }
        if r.dataset != a.items.dataset || r.selection_seed != a.items.selection.seed {
            bail!(
                "the direction was estimated on --dataset {} --seed {}: sweep the same selection (its held-out items)",
                r.dataset,
                r.selection_seed
            );
        }
    }
    let ids = held_out_ids.unwrap_or_else(|| sel.iter().map(|s| s.item.id.clone()).collect());
    let layer_ranges = if a.layers.is_empty() {
        let (lo, hi) = vector.span();
        let mid = lo + (hi - lo) / 2;
        vec![(mid, mid)]
    } else {
        a.layers.clone()
    };
    if a.alphas.is_empty() || a.alphas.iter().any(|x| !x.is_finite()) {
        bail!("--alphas: give one or more finite strengths");
    }
    // Every setting is checked before minutes of ramps and unsteered scores.
    let (n_layer, n_embd) = engine.shape()?;
    for &layers in &layer_ranges {
        vector.fits(n_layer, n_embd, layers).map_err(anyhow::Error::msg)?;
    }
    say!("{} held-out items × {} layer range(s) × {} α, direction and random control", ids.len(), layer_ranges.len(), a.alphas.len());
    let items = items_of(ctx, &engine, &sel, &ids, &condition)?;
    let vector = Arc::new(vector);
    let random = Arc::new(random_like(&vector, a.random_seed));
    say!("");
    let (base, rows) = run_sweep(&engine, &items, &vector, &random, &layer_ranges, &a.alphas, &mut progress).map_err(steer_err)?;
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let write = |name: &str, text: &str| -> Result<()> {
        let p = out.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    write("sweep.csv", &sweep_csv(&rows))?;
    let title = format!("Steering {condition} on {key}: {} held-out items", base.n);
    write("sweep.md", &format!("# {title}\n\n{}", sweep_markdown(&base, &rows)))?;
    write(
        "sweep.json",
        &(serde_json::to_string_pretty(&json!({
            "model": key,
            "dataset": a.items.dataset,
            "condition": condition,
            "vector": a.vector.as_ref().map(|p| p.display().to_string()),
            "direction": a.direction.as_ref().map(|p| p.display().to_string()),
            "vector_hash": vector.hash(),
            "random_seed": a.random_seed,
            "held_out": ids,
            "estimated_on": record.as_ref().map(|r| json!({"condition": r.condition, "train": r.split.train, "split_seed": r.split.seed})),
            "unsteered": base,
            "rows": rows,
            "command": command_line(),
        }))? + "\n"),
    )?;
    let mut series = Vec::new();
    for kind in [DirectionKind::Direction, DirectionKind::Random] {
        for &layers in &layer_ranges {
            let points = rows
                .iter()
                .filter(|r| r.direction == kind && r.layers == layers)
                .map(|r| SweepPoint { alpha: f64::from(r.alpha), gap: r.gap, lo: r.gap_lo, hi: r.gap_hi, clean_accuracy: r.clean_accuracy })
                .collect();
            let what = if kind == DirectionKind::Direction { "direction" } else { "random, same length" };
            series.push(SweepSeries { label: format!("{what}, layers {}-{}", layers.0, layers.1), control: kind == DirectionKind::Random, points });
        }
    }
    let svg = render_steering_sweep(&title, &series, base.condition_gap, base.clean_accuracy).map_err(|e| anyhow::anyhow!("the sweep figure: {e}"))?;
    write("sweep.svg", &svg)?;
    print!("{}", sweep_markdown(&base, &rows));
    println!("\nwritten: {}/sweep.{{csv,md,json,svg}}", out.display());
    Ok(())
}

pub fn lens(ctx: &Ctx, a: &LensArgs) -> Result<()> {
    let conditions = if a.conditions.is_empty() { default_conditions(ctx.registry) } else { a.conditions.clone() };
    if let Some(bad) = conditions.iter().find(|c| ctx.registry.find(c).is_none()) {
        bail!("unknown condition {bad:?} (see `hyst-tui conditions`)");
    }
    // A steering operation is read out under its steering: its vector is read before the model.
    let chosen: Vec<&hyst_tui::dialogue::Condition> = conditions.iter().filter_map(|k| ctx.registry.find(k)).collect();
    let steerings = hyst_tui::batch::steered::load(ctx.registry, &chosen, Path::new(""))?;
    let (engine, sel, key) = open_model(ctx, a.model.as_deref(), &a.dataset, &a.selection)?;
    if !steerings.is_empty() {
        hyst_tui::batch::steered::check_fits(&steerings, &key, engine.shape()?)?;
    }
    say!("{} items × {} conditions", sel.len(), conditions.len());
    say!("");
    let rows = lens_rows(&engine, ctx.registry, &ctx.prompts()?, &sel, &conditions, &steerings, &mut progress).map_err(steer_err)?;
    let anchor = rows.iter().map(|r| r.anchor).fold(0.0, f64::max);
    if anchor > 1e-6 {
        say!("warning: the lens's last layer differs from the score by up to {anchor:.1e}: this head is not computed as llama.cpp computes it here (see lens_depth.csv's max_anchor)");
    }
    let depth = write_lens(&a.out, &rows, &conditions, ctx.registry, &key, &a.dataset, sel.len())?;
    let label = |c: &str| condition_label(ctx.registry, c);
    println!("{:<44} {:>3} {:>12} {:>11} {:>7}", "condition", "n", "wrong ahead", "mean depth", "range");
    for d in &depth {
        let range = match (d.min_depth, d.max_depth) {
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => "-".into(),
        };
        println!("{:<44} {:>3} {:>12} {:>11.1} {:>7}", label(&d.condition), d.n, d.wrong_ahead, d.mean_depth, range);
    }
    println!("\nwritten: {}/lens.jsonl, lens_depth.csv, lens.svg", a.out.display());
    Ok(())
}

