//! Batch mode: models × datasets × conditions, resumable, with a durable store.
//!
//! For each model, dataset and selected item: run the self-conditioned ramp(s), build every
//! condition of the requested suites, and score each context through [`item::CachedScorer`],
//! which looks up the content-addressed score cache first. The item's new scores are appended
//! (one write + fsync) before the next item starts, so an interruption loses at most the item in
//! flight and a rerun recomputes nothing it already has.
//!
//! The run reports what happens through a [`BatchObserver`] (the CLI draws a progress bar from
//! it, the explorer a status line); nothing here writes to the terminal.

pub mod item;
pub mod plan;
pub mod runplan;
pub mod dryrun;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::config::{models_dir, ModelsConfig};
use crate::data::{load_selection, DatasetSpec, ReleasedLists, Selected, SelectionOptions};
use crate::dialogue::{Builder, Suite};
use crate::engine::Engine;
use crate::store::lock::RunLock;
use crate::store::shared::SharedScores;
use crate::store::run_dir::load_item_rows;
use crate::store::{read_item_rows, sort_rows, write_item_rows, ItemRow, Manifest, RunConfig, ScoreCache};
use crate::tables::{write_tables, TableOptions};

pub use item::{conditions_for, model_sha256, score_item, CachedScorer};
pub use plan::{plan, BatchPlan, BatchRequest, RunPlan, Shard};

/// What a running batch reports, in order: `Started`, then per model `ModelLoading`, then per
/// item `ItemStarted`, `ContextsScored`, `ItemFinished`; `Finished` at the end (also after a
/// stop request).
#[derive(Debug)]
pub enum BatchEvent<'a> {
    Started { out: &'a Path, items_total: usize, items_done: usize },
    /// Something the user should read once (e.g. damaged cache records were moved aside).
    Notice { message: &'a str },
    ModelLoading { model: &'a str },
    ItemStarted { model: &'a str, dataset: &'a str, item_id: &'a str },
    /// The contexts of the item just scored: how many the engine evaluated and how many came from
    /// the store, and the totals of the run so far.
    ContextsScored { scored: usize, from_store: usize, totals: &'a Totals },
    ItemFinished { item_id: &'a str, items_done: usize, items_total: usize },
    Finished { summary: &'a BatchSummary },
}

/// Running totals of a batch.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    pub scored: usize,
    pub from_store: usize,
    pub tokens_evaluated: u64,
    pub tokens_reused: u64,
}

/// Receives a batch's events and says when to stop (checked before each item).
pub trait BatchObserver {
    fn event(&mut self, event: BatchEvent<'_>);
    fn stop_requested(&self) -> bool {
        false
    }
}

/// An observer that ignores everything and never stops the run.
pub struct Silent;

impl BatchObserver for Silent {
    fn event(&mut self, _: BatchEvent<'_>) {}
}

/// Outcome of a batch run.
#[derive(Clone, Debug)]
pub struct BatchSummary {
    pub items_done: usize,
    pub items_total: usize,
    pub totals: Totals,
    pub seconds: f64,
    pub interrupted: bool,
    pub tables: Vec<PathBuf>,
}

impl BatchSummary {
    /// Share of prompt tokens that came from the KV cache, in percent.
    pub fn reuse_percent(&self) -> f64 {
        let t = &self.totals;
        let all = t.tokens_evaluated + t.tokens_reused;
        if all == 0 {
            0.0
        } else {
            100.0 * t.tokens_reused as f64 / all as f64
        }
    }
}

/// The selection options stored in a run configuration.
fn selection_of(cfg: &RunConfig) -> SelectionOptions {
    SelectionOptions {
        n: cfg.n,
        seed: cfg.seed,
        released: match (&cfg.subset_csv, &cfg.advocated_csv) {
            (Some(s), Some(a)) => Some(ReleasedLists {
                subset: s.into(),
                advocated: a.into(),
            }),
            _ => None,
        },
        shuffle_options: cfg.shuffle_options,
    }
}

/// The items of each dataset of a plan, after selection, sharding and the limit.
pub fn plan_items(plan: &BatchPlan) -> Result<Vec<Vec<Selected>>> {
    let cfg = &plan.config;
    let opts = selection_of(cfg);
    let mut out = Vec::new();
    for spec in &plan.dataset_specs {
        let mut sel = load_selection(spec, &opts).with_context(|| match &cfg.plan {
            Some(p) => format!("the plan {}'s dataset {spec} (give its file with --datasets KIND:PATH)", p.name),
            None => format!("dataset {spec}"),
        })?;
        if let Some((k, n)) = cfg.shard {
            sel.retain(|s| s.subset_index % n == k - 1);
        }
        if let Some(l) = cfg.limit {
            sel.truncate(l);
        }
        out.push(sel);
    }
    Ok(out)
}

/// The (model, dataset index, suites) pairs of a run in run order: every model × dataset with
/// the run's suites, or the plan's pairs with their own suites.
fn pair_work(cfg: &RunConfig, dataset_specs: &[String]) -> Result<Vec<(String, usize, Vec<Suite>)>> {
    let keys: Vec<String> = dataset_specs.iter().map(|d| DatasetSpec::parse(d).map(|s| s.key())).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for m in &cfg.models {
        for (i, k) in keys.iter().enumerate() {
            let suites = match &cfg.plan {
                Some(p) => match p.suites_of(m, k) {
                    Some(s) => s.to_vec(),
                    None => continue,
                },
                None => cfg.suites.clone(),
            };
            out.push((m.clone(), i, suites));
        }
    }
    Ok(out)
}

/// Runs a batch.
pub fn run(models: &ModelsConfig, plan: &BatchPlan, observer: &mut dyn BatchObserver) -> Result<BatchSummary> {
    let t0 = Instant::now();
    let cfg = &plan.config;
    let out = &plan.out;
    let selections = plan_items(plan)?;
    // Every model file must be there before the run directory is touched.
    for mkey in &cfg.models {
        let model = models.get(mkey)?;
        crate::engine::worker::check_gguf_file(&model.path(&models_dir()))
            .map_err(|e| anyhow::anyhow!("model `{}`: {e}", model.key))?;
    }
    let _lock = RunLock::acquire(out)?;
    check_provenance(out, cfg)?;
    let cache_path = out.join("cache").join("scores.jsonl");
    let mut cache = ScoreCache::open(&cache_path)?;
    if let Some(msg) = cache.report.describe(&cache_path) {
        tracing::warn!("{msg}");
        observer.event(BatchEvent::Notice { message: &msg });
    }
    if let Some(other) = cache.provenances().iter().find(|p| **p != cfg.provenance) {
        bail!(provenance_mismatch(out, other, &cfg.provenance));
    }
    let mut shared = match &plan.shared_store {
        Some(p) => {
            let s = SharedScores::open(p)?;
            if let Some(msg) = s.report.describe(p) {
                tracing::warn!("{msg}");
                observer.event(BatchEvent::Notice { message: &msg });
            }
            Some(s)
        }
        None => None,
    };
    let work = pair_work(cfg, &plan.dataset_specs)?;
    let total: usize = work.iter().map(|(_, d, _)| selections[*d].len()).sum();
    let mut manifest = Manifest::new(cfg.clone(), plan.command_line.clone(), total);
    manifest.write(out)?;
    observer.event(BatchEvent::Started { out, items_total: total, items_done: 0 });

    let b = Builder::new(&plan.prompts);
    let mut rows: Vec<ItemRow> = Vec::new();
    let mut totals = Totals::default();
    let mut done = 0usize;
    let mut interrupted = false;
    'models: for mkey in &cfg.models {
        let mine: Vec<&(String, usize, Vec<Suite>)> = work.iter().filter(|(m, _, _)| m == mkey).collect();
        if mine.is_empty() {
            continue;
        }
        let model = models.get(mkey)?;
        let path = model.path(&models_dir());
        let sha = model_sha256(model, &path)?;
        observer.event(BatchEvent::ModelLoading { model: &model.key });
        let engine = Engine::start(model, &path, plan.engine.clone()).with_context(|| format!("model `{}`", model.key))?;
        for (_, d, suites) in mine {
            let conds = conditions_for(suites);
            let controls = item::controls_for(suites);
            for s in &selections[*d] {
                if observer.stop_requested() {
                    interrupted = true;
                    break 'models;
                }
                observer.event(BatchEvent::ItemStarted {
                    model: &model.key,
                    dataset: &s.item.dataset,
                    item_id: &s.item.id,
                });
                let mut scorer = CachedScorer::new(&engine, &cache, model, &sha, &cfg.provenance);
                scorer.shared = shared.as_ref();
                let item_rows = score_item(&mut scorer, &b, s, model, &conds, &controls, &cfg.prompts_fingerprint)
                    .with_context(|| format!("item {}", s.item.id))?;
                for r in &scorer.pending {
                    totals.tokens_evaluated += r.tokens_evaluated as u64;
                    totals.tokens_reused += r.tokens_reused as u64;
                }
                let (scored, from_store) = (scorer.misses, scorer.hits);
                totals.scored += scored;
                totals.from_store += from_store;
                let pending = std::mem::take(&mut scorer.pending);
                let imported = std::mem::take(&mut scorer.imported);
                drop(scorer);
                let mut new_rows = imported;
                new_rows.extend(pending.iter().cloned());
                cache.append(&new_rows).with_context(|| format!("cannot append to {}", cache.path().display()))?;
                if let Some(s) = shared.as_mut() {
                    s.append(&pending).with_context(|| format!("cannot append to the shared score store {}", s.path().display()))?;
                }
                rows.extend(item_rows);
                done += 1;
                observer.event(BatchEvent::ContextsScored { scored, from_store, totals: &totals });
                observer.event(BatchEvent::ItemFinished {
                    item_id: &s.item.id,
                    items_done: done,
                    items_total: total,
                });
            }
        }
        engine.shutdown();
    }
    manifest.items_done = done;
    let mut tables = Vec::new();
    if !interrupted {
        sort_rows(&mut rows);
        write_item_rows(out, &rows)?;
        tables = write_tables(&rows, out, &TableOptions::default())?;
        manifest.finish();
    }
    manifest.write(out)?;
    let summary = BatchSummary {
        items_done: done,
        items_total: total,
        totals,
        seconds: t0.elapsed().as_secs_f64(),
        interrupted,
        tables,
    };
    observer.event(BatchEvent::Finished { summary: &summary });
    Ok(summary)
}

/// The error for scores of another numeric provenance in a run directory.
fn provenance_mismatch(dir: &Path, theirs: &str, ours: &str) -> String {
    let theirs = if theirs.is_empty() { "an unknown build (recorded before hyst-tui kept provenance)" } else { theirs };
    format!(
        "{} holds scores of another numeric provenance, which cannot be mixed with this build's: \
         stored: {theirs}; this build: {ours} (use another --out, or the build that made them)",
        dir.display()
    )
}

/// A run directory made by another build cannot be resumed by this one.
fn check_provenance(dir: &Path, cfg: &RunConfig) -> Result<()> {
    if !dir.join(crate::store::run_dir::MANIFEST_FILE).exists() {
        return Ok(());
    }
    let m = Manifest::read(dir)?;
    if m.config.provenance != cfg.provenance {
        bail!(provenance_mismatch(dir, &m.config.provenance, &cfg.provenance));
    }
    Ok(())
}

/// What [`rebuild_tables`] did.
pub struct Rebuilt {
    pub rows: usize,
    pub files: Vec<PathBuf>,
    /// One line about malformed rows that were skipped, if any.
    pub skipped: Option<String>,
}

/// `tables --from DIR`: rebuilds every table of a run from its stored item rows (no model, no
/// lock). Malformed rows are skipped and reported.
pub fn rebuild_tables(dir: &Path) -> Result<Rebuilt> {
    let loaded = load_item_rows(dir)?;
    let files = write_tables(&loaded.rows, dir, &TableOptions::default())?;
    Ok(Rebuilt {
        rows: loaded.rows.len(),
        files,
        skipped: loaded.describe_skipped(),
    })
}

/// What [`merge`] did.
pub struct MergeSummary {
    pub runs: usize,
    pub rows: usize,
    pub shards: Vec<Option<(usize, usize)>>,
    pub tables: Vec<PathBuf>,
}

/// Combines complete runs of one configuration (shards) into `out`: item rows, tables, manifest.
pub fn merge(dirs: &[PathBuf], out: &Path, command_line: String) -> Result<MergeSummary> {
    let mut base: Option<RunConfig> = None;
    let mut rows = Vec::new();
    let mut shards = Vec::new();
    for d in dirs {
        let m = Manifest::read(d)?;
        if !m.complete {
            bail!("{}: the run is not complete (resume it first)", d.display());
        }
        let c = m.config.without_shard();
        match &base {
            None => base = Some(c),
            Some(b) if b.provenance != c.provenance => bail!(
                "runs of different numeric provenance cannot be merged: {}: {}; {}: {}",
                dirs[0].display(),
                if b.provenance.is_empty() { "unknown" } else { &b.provenance },
                d.display(),
                if c.provenance.is_empty() { "unknown" } else { &c.provenance }
            ),
            Some(b) if *b != c => bail!(
                "{}: its configuration differs from {} (mixed runs cannot be merged)",
                d.display(),
                dirs[0].display()
            ),
            _ => {}
        }
        shards.push(m.config.shard);
        rows.extend(read_item_rows(d)?);
    }
    let Some(cfg) = base else { bail!("nothing to merge") };
    let _lock = RunLock::acquire(out)?;
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert((r.model_key.clone(), r.dataset.clone(), r.item_id.clone(), r.condition.clone())));
    sort_rows(&mut rows);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    write_item_rows(out, &rows)?;
    let tables = write_tables(&rows, out, &TableOptions::default())?;
    let mut manifest = Manifest::new(cfg, command_line, 0);
    manifest.started = String::new();
    manifest.complete = true;
    manifest.write(out)?;
    Ok(MergeSummary {
        runs: dirs.len(),
        rows: rows.len(),
        shards,
        tables,
    })
}
