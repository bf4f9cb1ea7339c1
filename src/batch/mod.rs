//! Batch mode: models × datasets × conditions, resumable, with a durable store.
//!
//! For each model, dataset and selected item: run the self-conditioned ramp(s), build every
//! condition of the requested suites, and score each context through [`item::CachedScorer`],
//! which looks up the content-addressed run cache, then the shared store. The item's new scores
//! are appended (one write + fsync) before the next item starts, so an interruption loses at
//! most the item in flight and a rerun recomputes nothing it already has.
//!
//! The run reports what happens through a [`BatchObserver`] (the CLI draws a progress bar from
//! it, the explorer a status line); nothing here writes to the terminal.

pub(crate) mod item;
pub mod plan;
pub(crate) mod runplan;
pub mod dryrun;
pub mod shard;
mod merge;
pub mod slurm;
pub mod status;
pub mod lens;
pub mod steering;
pub mod steered;
mod engines;
mod pair;
pub use pair::OPEN_DIR;
use pair::{run_pair, write_outputs, Commit, LiveTables, PairJob};
pub use merge::{merge, shard_dirs, MergeSummary};
pub use engines::{check_model_files, EngineReport};
use engines::ModelEngines;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::config::ModelsConfig;
use crate::data::{load_selection, DatasetSpec, ReleasedLists, Selected, SelectionOptions};
use crate::dialogue::{Builder, Suite};
use crate::protocol::ProvenanceKind;
use crate::store::lock::RunLock;
use crate::store::shared::SharedScores;
use crate::dialogue::recipe::ExperimentSource;
use crate::store::run_dir::{load_item_rows, runs_registry};
use crate::store::{sort_rows, Manifest, RunConfig, ScoreCache};
use crate::tables::TableOptions;

pub use item::{conditions_for, model_sha256, score_item, CachedScorer};
pub use plan::{default_pack, plan, BatchPlan, BatchRequest, RunPlan, Shard};

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
    /// Where the contexts of the item just scored came from, and the totals of the run so far.
    ContextsScored { item: &'a ContextCounts, totals: &'a Totals },
    ItemFinished { item_id: &'a str, items_done: usize, items_total: usize },
    Finished { summary: &'a BatchSummary },
}

/// Where an item's contexts (its rows) came from. Each distinct context of the item is counted
/// once, by where it was first found: scored by the engine, found in the run's own cache (an
/// earlier start of the run, or an item committed before), or in the shared store. `repeated`
/// counts the rows whose prompt another row of the same item has (one score serves both), so
/// `contexts = scored + from_run_cache + from_shared + repeated`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextCounts {
    pub contexts: usize,
    pub scored: usize,
    pub from_run_cache: usize,
    pub from_shared: usize,
    pub repeated: usize,
}

/// Running totals of a batch.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// The contexts of the items done (see [`ContextCounts`]; what the engine scored for items
    /// a stop abandoned is in `kept_unfinished`).
    pub contexts: usize,
    pub scored: usize,
    pub from_run_cache: usize,
    pub from_shared: usize,
    pub repeated: usize,
    pub tokens_evaluated: u64,
    pub tokens_reused: u64,
    /// Scores of items a stopped or failed batch did not finish, stored without rows (a resume
    /// takes them from the store).
    pub kept_unfinished: usize,
}

impl Totals {
    /// Counts the contexts of an item done.
    fn add_item(&mut self, c: &ContextCounts) {
        self.contexts += c.contexts;
        self.scored += c.scored;
        self.from_run_cache += c.from_run_cache;
        self.from_shared += c.from_shared;
        self.repeated += c.repeated;
    }
}

/// Says whether a batch should stop; asked by the scoring threads before each prompt.
pub type StopCheck = std::sync::Arc<dyn Fn() -> bool + Send + Sync>;

/// Receives a batch's events and says how to learn that it should stop (`None`: never).
pub trait BatchObserver {
    fn event(&mut self, event: BatchEvent<'_>);
    fn stop_check(&self) -> Option<StopCheck> {
        None
    }
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
    /// Seconds committing items (score-store appends, the manifest) and writing the outputs at
    /// the end (item rows, parquet, tables, figures).
    pub commit_seconds: f64,
    pub output_seconds: f64,
    /// What each in-process engine measured, per model in run order.
    pub engines: Vec<EngineReport>,
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

/// The items of each dataset of a plan, after selection, by-item sharding and the limit
/// (a by-model shard takes its ranges of these: [`pair_ranges`]).
/// With `--seeds`, one selection per dataset and seed (dataset-major), each item's dataset key
/// marked `<dataset>@seed<S>`.
pub fn plan_items(plan: &BatchPlan) -> Result<Vec<Vec<Selected>>> {
    let cfg = &plan.config;
    let mut out = Vec::new();
    for spec in &plan.dataset_specs {
        for seed in seeds_of(cfg) {
        let mut opts = selection_of(cfg);
        opts.seed = seed.unwrap_or(cfg.seed);
        let mut sel = load_selection(spec, &opts).with_context(|| match &cfg.plan {
            Some(p) => format!("the plan {}'s dataset {spec} (give its file with --datasets KIND:PATH)", p.name),
            None => format!("dataset {spec}"),
        })?;
        if let Some(s) = seed {
            for x in &mut sel {
                x.item.dataset = seeded_dataset(&x.item.dataset, s);
            }
        }
        if let (Some((k, n)), shard::ShardBy::Item) = (cfg.shard, cfg.shard_by) {
            sel.retain(|s| s.subset_index % n == k - 1);
        }
        if let Some(l) = cfg.limit {
            sel.truncate(l);
        }
        out.push(sel);
        }
    }
    Ok(out)
}

/// The seeds of a run: `None` once (the run's one seed), or each `--seeds` seed.
fn seeds_of(cfg: &RunConfig) -> Vec<Option<u64>> {
    if cfg.seeds.is_empty() {
        vec![None]
    } else {
        cfg.seeds.iter().map(|&s| Some(s)).collect()
    }
}

/// The dataset key of a seed's rows in a `--seeds` run.
pub fn seeded_dataset(key: &str, seed: u64) -> String {
    format!("{key}@seed{seed}")
}

/// The (model, dataset index, suites) pairs of a run in run order: every model × dataset with
/// the run's suites, or the plan's pairs with their own suites.
fn pair_work(cfg: &RunConfig, dataset_specs: &[String]) -> Result<Vec<(String, usize, Vec<Suite>)>> {
    let keys: Vec<String> = dataset_specs.iter().map(|d| DatasetSpec::parse(d).map(|s| s.key())).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    let per = seeds_of(cfg).len();
    for m in &cfg.models {
        for (i, k) in keys.iter().enumerate() {
            let suites = match &cfg.plan {
                Some(p) => match p.suites_of(m, k) {
                    Some(s) => s.to_vec(),
                    None => continue,
                },
                None => cfg.suites.clone(),
            };
            for j in 0..per {
                out.push((m.clone(), i * per + j, suites.clone()));
            }
        }
    }
    Ok(out)
}

/// The item positions (into its dataset's selection) that each pair of `work` runs: all of
/// them, or, in a by-model shard, the shard's ranges (empty for the other tasks' pairs).
pub(crate) fn pair_ranges(plan: &BatchPlan, selections: &[Vec<Selected>], work: &[(String, usize, Vec<Suite>)]) -> Result<Vec<Range<usize>>> {
    let all = work.iter().map(|(_, d, _)| 0..selections[*d].len()).collect();
    let (Some((k, n)), shard::ShardBy::Model) = (plan.config.shard, plan.config.shard_by) else {
        return Ok(all);
    };
    let tasks = shard::split_by_model(&dryrun::pair_units(plan, selections, work), n)?;
    let mut out = vec![0..0; work.len()];
    for (p, r) in &tasks[k - 1].ranges {
        out[*p] = r.clone();
    }
    Ok(out)
}

/// One range of items of a by-model task, described for people (scripts, `slurm --dry-run`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct TaskRange {
    pub model: String,
    pub dataset: String,
    /// 1-based positions in the pair's items, inclusive.
    pub first: usize,
    pub last: usize,
    pub of: usize,
    pub first_id: String,
    pub last_id: String,
}

/// A task of a run split by model: what `hyst-tui slurm` gives array task `task`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ModelTask {
    pub task: usize,
    pub model: String,
    pub items: usize,
    pub tokens_estimate: usize,
    pub ranges: Vec<TaskRange>,
}

/// The split of an unsharded plan into `n` by-model tasks: the same split every task computes
/// for itself from `--shard K/N --shard-by model`.
pub fn model_tasks(plan: &BatchPlan, n: usize) -> Result<Vec<ModelTask>> {
    let selections = plan_items(plan)?;
    let work = pair_work(&plan.config, &plan.dataset_specs)?;
    let tasks = shard::split_by_model(&dryrun::pair_units(plan, &selections, &work), n)?;
    tasks
        .into_iter()
        .map(|t| {
            let ranges = t
                .ranges
                .iter()
                .map(|(p, r)| {
                    let (model, d, _) = &work[*p];
                    let items = &selections[*d];
                    Ok(TaskRange {
                        model: model.clone(),
                        dataset: dryrun::selection_dataset_key(plan, selections.len(), *d)?,
                        first: r.start + 1,
                        last: r.end,
                        of: items.len(),
                        first_id: items[r.start].item.id.clone(),
                        last_id: items[r.end - 1].item.id.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(ModelTask {
                task: t.task,
                model: t.model,
                items: t.items,
                tokens_estimate: t.tokens,
                ranges,
            })
        })
        .collect()
}

/// Runs a batch.
pub fn run(models: &ModelsConfig, plan: &BatchPlan, observer: &mut dyn BatchObserver) -> Result<BatchSummary> {
    let t0 = Instant::now();
    let cfg = &plan.config;
    let out = &plan.out;
    let selections = plan_items(plan)?;
    // Every model file must be there before the run directory is touched.
    check_model_files(models, &cfg.models)?;
    let _lock = RunLock::acquire(out)?;
    steered::keep_copies(plan.registry, out)?;
    check_provenance(out, cfg)?;
    // Served models' records of an earlier start of this run: their scores must come from the
    // same server (checked when each model starts).
    let served_before = engines::previous_served(out);
    let cache_path = out.join("cache").join("scores.jsonl");
    let cache = ScoreCache::open(&cache_path)?;
    if let Some(msg) = cache.report.describe(&cache_path) {
        tracing::warn!("{msg}");
        observer.event(BatchEvent::Notice { message: &msg });
    }
    // (Served scores carry their server's provenance, checked per model below.)
    if let Some(other) = cache.provenances().iter().find(|p| **p != cfg.provenance && !ProvenanceKind::of(p).is_served()) {
        bail!(provenance_mismatch(out, other, &cfg.provenance));
    }
    let shared = match &plan.shared_store {
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
    let ranges = pair_ranges(plan, &selections, &work)?;
    let total: usize = ranges.iter().map(|r| r.len()).sum();
    let ids: Vec<(&str, &str)> =
        work.iter().zip(&ranges).flat_map(|((_, d, _), r)| selections[*d][r.clone()].iter().map(|s| (s.item.dataset.as_str(), s.item.id.as_str()))).collect();
    for message in steered::held_back_notices(&plan.steerings, &ids) {
        observer.event(BatchEvent::Notice { message: &message });
    }
    let mut manifest = Manifest::new(cfg.clone(), plan.command_line.clone(), total);
    manifest.steered = steered::records(&plan.steerings);
    manifest.write(out)?;
    observer.event(BatchEvent::Started { out, items_total: total, items_done: 0 });

    let table_opts = TableOptions::for_plan(cfg.plan.as_ref());
    let builders: Vec<(Builder, String)> = plan.format_prompts().into_iter().map(|(p, fp)| (Builder::new(p), fp)).collect();
    let cache = RwLock::new(cache);
    let shared = shared.map(RwLock::new);
    let mut run = Commit {
        cache: &cache,
        shared: shared.as_ref(),
        rows: Vec::new(),
        totals: Totals::default(),
        done: 0,
        total,
        live: LiveTables::start(out, plan.tables_every, plan.registry, table_opts.clone()),
        manifest,
        out,
        commit_seconds: 0.0,
    };
    let mut interrupted = false;
    let mut reports = Vec::new();
    for mkey in &cfg.models {
        let mine: Vec<(&(String, usize, Vec<Suite>), &Range<usize>)> =
            work.iter().zip(&ranges).filter(|((m, _, _), r)| m == mkey && !r.is_empty()).collect();
        if mine.is_empty() {
            continue;
        }
        let model = models.get(mkey)?;
        let engines = ModelEngines::start(model, plan, &served_before, &mut run.manifest, observer)?;
        for ((_, d, suites), range) in mine {
            let job = PairJob {
                model,
                sha: &engines.sha,
                provenance: &engines.provenance,
                builders: &builders,
                conds: conditions_for(plan.registry, suites),
                controls: item::controls_for(suites),
                items: &selections[*d][range.clone()],
                cache: &cache,
                shared: shared.as_ref(),
                steerings: &plan.steerings,
            };
            engines.record_kv(plan)?;
            if run_pair(&job, &engines.workers, &mut run, observer)? {
                interrupted = true;
                break;
            }
            if plan.lens && lens::read_out_pair(plan, &engines.workers[0], model, &job, observer)? {
                interrupted = true;
                break;
            }
        }
        reports.extend(engines.shut_down(plan)?);
        if interrupted {
            break;
        }
    }
    let Commit { mut rows, totals, done, live, mut manifest, commit_seconds, .. } = run;
    if let Some(l) = live {
        l.finish();
    }
    let t_out = Instant::now();
    manifest.items_done = done;
    for (key, rec) in manifest.served.iter_mut() {
        rec.count_coverage(key, &rows);
    }
    // The tables of the finished items, also when the run was stopped (then the manifest says
    // it is not complete, and a resume rewrites them).
    sort_rows(&mut rows, plan.registry);
    let tables = write_outputs(out, &rows, plan.registry, &table_opts)?;
    if !interrupted {
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
        commit_seconds,
        output_seconds: t_out.elapsed().as_secs_f64(),
        engines: reports,
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
/// lock), under the conditions of the experiment files its manifest records and `extra`
/// (`--experiment`). Malformed rows are skipped and reported.
pub fn rebuild_tables(dir: &Path, extra: &[ExperimentSource]) -> Result<Rebuilt> {
    let reg = runs_registry(&[dir.to_path_buf()], extra)?;
    // The open-answer rows of a run with --answers open or both are in open/.
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    for rd in pair::row_dirs(dir) {
        let loaded = load_item_rows(&rd, reg)?;
        let prefix = if rd == dir { String::new() } else { format!("{}: ", pair::OPEN_DIR) };
        skipped.extend(loaded.describe_skipped().map(|s| format!("{prefix}{s}")));
        rows.extend(loaded.rows);
    }
    let files = pair::write_tables_by_format(dir, &rows, reg, &TableOptions::for_run_dir(dir)?)?;
    Ok(Rebuilt {
        rows: rows.len(),
        files,
        skipped: (!skipped.is_empty()).then(|| skipped.join("; ")),
    })
}

/// What [`rebuild_reproduction`] did.
pub struct Reproduction {
    pub rows: usize,
    /// `reproduction.md` and `reproduction.csv`.
    pub files: Vec<PathBuf>,
    pub counts: crate::tables::ReproductionCounts,
    /// One line about malformed rows that were skipped, if any.
    pub skipped: Option<String>,
}

/// `compare --paper DIR`: rewrites the run's `reproduction.md` and `reproduction.csv` from its
/// stored item rows, with the table scopes of the plan its manifest records (no model, no lock;
/// the table files are not rewritten). Its conditions are those of [`rebuild_tables`].
pub fn rebuild_reproduction(dir: &Path, extra: &[ExperimentSource]) -> Result<Reproduction> {
    if !dir.is_dir() {
        bail!("{}: no such run directory", dir.display());
    }
    if !dir.join(crate::store::run_dir::ITEM_ROWS_JSONL).is_file() {
        bail!(
            "{}: not a run directory (it has no {})",
            dir.display(),
            crate::store::run_dir::ITEM_ROWS_JSONL
        );
    }
    let reg = runs_registry(&[dir.to_path_buf()], extra)?;
    let loaded = load_item_rows(dir, reg)?;
    let opts = TableOptions::for_run_dir(dir)?;
    let (files, counts) = crate::tables::write_reproduction(&loaded.rows, reg, dir, &opts)?;
    Ok(Reproduction {
        rows: loaded.rows.len(),
        files,
        counts,
        skipped: loaded.describe_skipped(),
    })
}

