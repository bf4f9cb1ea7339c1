//! `hyst-tui --batch` / `batch`, `tables --from`, `merge`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use super::{interrupted, protocol::prompt_set, Ctx};
use crate::batch::{self, read_item_rows, sort_rows, write_item_rows, BatchPlan, Manifest, RunConfig};
use crate::cli::BatchArgs;
use crate::dialogue::Suite;
use crate::store::SCORING_SETTINGS;

fn parse_shard(s: &str) -> Result<(usize, usize)> {
    let (k, n) = s.split_once('/').context("--shard must look like K/N, e.g. 2/8")?;
    let (k, n): (usize, usize) = (k.trim().parse()?, n.trim().parse()?);
    if n == 0 || k == 0 || k > n {
        bail!("--shard {s}: need 1 <= K <= N");
    }
    Ok((k, n))
}

pub fn plan(ctx: &Ctx, a: &BatchArgs) -> Result<BatchPlan> {
    let models = if a.models.is_empty() { vec![ctx.config.default_model.clone()] } else { a.models.clone() };
    for m in &models {
        ctx.config.get(m)?;
    }
    let datasets = if a.datasets.is_empty() { vec!["sample".to_string()] } else { a.datasets.clone() };
    for d in &datasets {
        crate::data::DatasetSpec::parse(d)?;
    }
    let mut suites: Vec<Suite> = Vec::new();
    for s in if a.suites.is_empty() { vec!["hierarchy".to_string()] } else { a.suites.clone() } {
        let v = Suite::parse(&s).with_context(|| {
            format!("unknown suite {s:?} (hierarchy, ramp, controls, false-context, truncation, relabel, r7, all)")
        })?;
        suites.extend(v);
    }
    suites.sort();
    suites.dedup();
    if a.subset.is_some() != a.advocated.is_some() {
        bail!("--subset and --advocated go together");
    }
    let prompts = prompt_set(ctx)?;
    let config = RunConfig {
        models,
        datasets: datasets.clone(),
        n: a.n,
        seed: a.seed.unwrap_or(42),
        subset_csv: a.subset.as_ref().map(|p| p.display().to_string()),
        advocated_csv: a.advocated.as_ref().map(|p| p.display().to_string()),
        suites,
        limit: a.limit,
        shard: a.shard.as_deref().map(parse_shard).transpose()?,
        shuffle_options: a.shuffle_options,
        prompts_fingerprint: prompts.fingerprint(),
        scoring_settings: SCORING_SETTINGS.into(),
    };
    let out = match &a.out {
        Some(o) => o.clone(),
        None => {
            let h = hex::encode(Sha256::digest(serde_json::to_string(&config)?.as_bytes()));
            let name = format!(
                "{}__{}__{}",
                config.models.join("+"),
                datasets.iter().map(|d| crate::data::DatasetSpec::parse(d).map(|s| s.key()).unwrap_or_default()).collect::<Vec<_>>().join("+"),
                &h[..10]
            );
            crate::config::data_dir().join("runs").join(name)
        }
    };
    Ok(BatchPlan {
        config,
        dataset_specs: datasets,
        out,
        prompts,
        engine: ctx.engine_options(),
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
    })
}

pub fn run(ctx: &Ctx, a: &BatchArgs) -> Result<()> {
    let p = plan(ctx, a)?;
    eprintln!("run directory: {}", p.out.display());
    let s = batch::run(&ctx.config, &p, &interrupted)?;
    let reuse = if s.tokens_evaluated + s.tokens_reused > 0 {
        100.0 * s.tokens_reused as f64 / (s.tokens_evaluated + s.tokens_reused) as f64
    } else {
        0.0
    };
    eprintln!(
        "{} of {} items in {:.1}s · {} contexts scored, {} from the store · {} tokens evaluated, {} reused ({reuse:.0}% reuse)",
        s.items_done, s.items_total, s.seconds, s.scored, s.cached, s.tokens_evaluated, s.tokens_reused
    );
    if s.interrupted {
        // The same command with --out pointing at this run resumes it.
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
        args.push(p.out.display().to_string());
        bail!(
            "interrupted: {} of {} items are stored in {}; resume (nothing is recomputed) with: {}",
            s.items_done,
            s.items_total,
            p.out.display(),
            args.join(" ")
        );
    }
    println!("rows: {}", p.out.join("item_rows.jsonl").display());
    println!("summary: {}", p.out.join("summary.md").display());
    println!("tables: {} files in {}", s.tables.len(), p.out.join("tables").display());
    Ok(())
}

pub fn tables_from(dir: &Path) -> Result<()> {
    let rows = read_item_rows(dir)?;
    let files = crate::tables::write_tables(&rows, dir, &crate::tables::TableOptions::default())?;
    println!("{} table files rebuilt from {} item rows in {}", files.len(), rows.len(), dir.join("tables").display());
    Ok(())
}

fn read_manifest(dir: &Path) -> Result<Manifest> {
    let p = dir.join("manifest.json");
    let text = std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a hyst-tui manifest", p.display()))
}

pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let mut base: Option<RunConfig> = None;
    let mut rows = Vec::new();
    let mut shards = Vec::new();
    for d in dirs {
        let m = read_manifest(d)?;
        if !m.complete {
            bail!("{}: the run is not complete (resume it first)", d.display());
        }
        let c = m.config.without_shard();
        match &base {
            None => base = Some(c),
            Some(b) if *b != c => bail!("{}: its configuration differs from {} (mixed runs cannot be merged)", d.display(), dirs[0].display()),
            _ => {}
        }
        shards.push(m.config.shard);
        rows.extend(read_item_rows(d)?);
    }
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert((r.model_key.clone(), r.dataset.clone(), r.item_id.clone(), r.condition.clone())));
    sort_rows(&mut rows);
    std::fs::create_dir_all(out)?;
    write_item_rows(out, &rows)?;
    let files = crate::tables::write_tables(&rows, out, &crate::tables::TableOptions::default())?;
    let mut cfg = base.expect("at least one dir");
    cfg.shard = None;
    let manifest = Manifest {
        tool: "hyst-tui".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        config: cfg,
        started: String::new(),
        finished: None,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        items_done: 0,
        items_total: 0,
        complete: true,
    };
    crate::store::write_atomic(&out.join("manifest.json"), serde_json::to_string_pretty(&manifest)?.as_bytes())?;
    println!("merged {} runs ({} item rows, shards {:?}) into {}; {} table files", dirs.len(), rows.len(), shards, out.display(), files.len());
    Ok(())
}
