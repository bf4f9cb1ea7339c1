//! Paper tables from a run's item-level rows (docs/protocol.md §5–§9).
//!
//! [`write_tables`] indexes the rows by (model, dataset) pair and condition, builds every table
//! the rows have data for, and writes each as `tables/<stem>.csv` (the artifact's column names
//! where the artifact gives them, docs/protocol.md §9.4), `tables/<stem>.md` (a padded pipe table) and `tables/<stem>.tex` (a
//! booktabs `tabular` inside a `table` float), plus `summary.md` linking them all and
//! `reproduction.md` / `.csv` (the paper's printed values side by side, [`paper`]). A table
//! whose conditions are missing is not written (the summary lists it with what it needs).
//!
//! Layout: [`registry::TABLES`] lists every table once (id, file stems, what it needs, builder);
//! each table family has its own file (`pressure_ramp`, `controls`, `hierarchy/`, …) whose
//! builder fills typed rows (`format::rows`: a `Serialize` struct per CSV, its field names the
//! column names), written by `csv::Writer` and rendered to Markdown/LaTeX via `format::Table`.
//! A builder writes only what is new about its table: `grouping` pools its pairs (pooled, by
//! dataset, by pair, with the shared key columns), `Output::new` drops a table of no rows, an
//! `output::CriterionFamily` names the criterion it applies, and a view that only re-heads CSV
//! columns is a list of `format::Shown` columns (ARCHITECTURE.md, "Adding a table").
//!
//! Everything is deterministic: pairs in the artifact's fixed order (paper models first, then
//! by key; TruthfulQA-MC before MMLU-Pro), items by `subset_index`, fixed float formatting, no
//! timestamps. Bootstrap intervals use the numpy-exact streams of `metrics::bootstrap`.

pub(crate) mod answer_formats;
mod boot;
mod cctp;
mod common;
mod controls;
mod decomposition;
mod definitions;
mod examples;
mod expanded_family;
mod experiments;
mod false_context;
mod figures;
mod format;
mod grouping;
mod hierarchy;
mod index;
mod output;
mod paper;
mod plausibility;
mod pressure_ramp;
mod r7;
mod registry;
mod relabel;
mod reset_gap;
mod served;
mod summary;
#[cfg(test)]
pub(crate) mod testutil;
mod truncation;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_paper_tables;
#[cfg(test)]
mod tests_reproduction;
#[cfg(test)]
mod tests_scopes;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::dialogue::conditions::Registry;
use crate::store::run_dir::{Manifest, RunDirError, RunPlan, MANIFEST_FILE};
use crate::metrics::bootstrap::IndexStream;
use crate::store::{write_atomic, ItemRow};
use hierarchy::Hierarchy;
use index::RunIndex;
pub(crate) use output::Output;
pub use paper::ReproductionCounts;
pub use figures::lens::render_lens_lead;
pub use figures::steering::{render_steering_sweep, SweepPoint, SweepSeries};
use registry::TABLES;

/// Table id (`Table 2`, `Aux`) → the (model key, dataset key) pairs it pools.
pub type TableScopes = BTreeMap<String, BTreeSet<(String, String)>>;

/// Bootstrap settings and scopes of the tables.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// Replicates per interval (`metrics::bootstrap::BOOTSTRAP_SAMPLES` by default).
    pub bootstrap_samples: usize,
    /// Base seed (`metrics::bootstrap::BOOTSTRAP_SEED` by default); each group adds its offset
    /// (the `SEED_OFFSET_*` constants; docs/protocol.md §8.3).
    pub seed: u64,
    /// A run plan's table scopes (`RunPlan::table_scopes`): a table named here pools exactly
    /// these pairs of the run; a table not named pools every pair.
    pub scopes: TableScopes,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            bootstrap_samples: crate::metrics::bootstrap::BOOTSTRAP_SAMPLES,
            seed: crate::metrics::bootstrap::BOOTSTRAP_SEED,
            scopes: TableScopes::new(),
        }
    }
}

impl TableOptions {
    /// The bootstrap set-up of one table group: the run's replicate count, the group's seed (the
    /// base seed + `offset`, docs/protocol.md §8.3) and a fresh index stream on that seed.
    pub(crate) fn bootstrap(&self, offset: u64) -> (usize, u64, IndexStream) {
        let seed = self.seed + offset;
        (self.bootstrap_samples, seed, IndexStream::new(seed))
    }

    /// The default settings with the scopes of a run plan (none without a plan).
    pub fn for_plan(plan: Option<&RunPlan>) -> TableOptions {
        TableOptions {
            scopes: plan.map(|p| p.table_scopes.clone()).unwrap_or_default(),
            ..TableOptions::default()
        }
    }

    /// The options of a run directory: the scopes of the plan its `manifest.json` records
    /// (default options when the directory has no manifest).
    pub fn for_run_dir(dir: &Path) -> Result<TableOptions, RunDirError> {
        if !dir.join(MANIFEST_FILE).exists() {
            return Ok(TableOptions::default());
        }
        let m = Manifest::read(dir)?;
        Ok(TableOptions::for_plan(m.config.plan.as_ref()))
    }
}

/// Errors of [`write_tables`].
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Shared state of the table builders.
pub(crate) struct Ctx<'p, 'a> {
    pub(crate) idx: &'p RunIndex<'a>,
    pub(crate) opts: &'p TableOptions,
    /// The recovery hierarchy (Tables 4, 16, 17 and the aux tables), built once on first use.
    hierarchy: OnceLock<Hierarchy<'p, 'a>>,
}

impl<'p, 'a> Ctx<'p, 'a> {
    fn new(idx: &'p RunIndex<'a>, opts: &'p TableOptions) -> Self {
        Ctx {
            idx,
            opts,
            hierarchy: OnceLock::new(),
        }
    }

    /// The conditions of the run the tables are built from.
    pub(crate) fn reg(&self) -> &'static Registry {
        self.idx.reg
    }

    /// The recovery hierarchy with its per-operation bootstrap (computed once, shared).
    pub(crate) fn hierarchy(&self) -> &Hierarchy<'p, 'a> {
        self.hierarchy
            .get_or_init(|| Hierarchy::build(self.idx, self.opts))
    }
}

/// Builds every table the indexed rows have data for. Pure (no I/O); [`write_tables`] writes
/// them. A table with a scope in `opts.scopes` is built from the index of its scope's pairs.
pub(crate) fn build_tables(idx: &RunIndex, opts: &TableOptions) -> Vec<Output> {
    build_with(&Ctx::new(idx, opts))
}

/// [`build_tables`] with `ctx` for the tables without a scope; the figures then share it (its
/// hierarchy is built once).
fn build_with(ctx: &Ctx) -> Vec<Output> {
    let opts = ctx.opts;
    // One index (and context, with its own hierarchy) per distinct scope.
    let mut scopes: Vec<&BTreeSet<(String, String)>> = Vec::new();
    for s in opts.scopes.values() {
        if !scopes.contains(&s) {
            scopes.push(s);
        }
    }
    let scoped: Vec<RunIndex> = scopes.iter().map(|s| ctx.idx.restrict(s)).collect();
    let scoped_ctxs: Vec<Ctx> = scoped.iter().map(|i| Ctx::new(i, opts)).collect();
    // Which scoped context a table uses (None: `ctx`).
    let scope_of = |id: &str| -> Option<usize> {
        opts.scopes
            .get(id)
            .map(|s| scopes.iter().position(|x| *x == s).expect("listed"))
    };
    // The builders are independent (each owns its bootstrap streams; the shared hierarchy is
    // built once per scope), so they run in parallel; the result does not depend on scheduling
    // because the outputs are sorted by stem below.
    let mut out: Vec<Output> = std::thread::scope(|s| {
        let handles: Vec<_> = TABLES
            .iter()
            .map(|spec| {
                let scoped = scope_of(spec.id).map(|i| &scoped_ctxs[i]);
                s.spawn(move || match scoped {
                    Some(c) => spec.run(c),
                    None => spec.run(ctx),
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    // Sort by file stem so the table files come out in a fixed order (tableNN before aux_).
    out.sort_by(|a, b| {
        let ka = (a.stem.starts_with("aux_"), a.stem.clone());
        let kb = (b.stem.starts_with("aux_"), b.stem.clone());
        ka.cmp(&kb)
    });
    out
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), TablesError> {
    write_atomic(path, bytes).map_err(|source| TablesError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes every table the rows have data for into `out_dir/tables/` (CSV, Markdown, LaTeX),
/// every figure they have data for into `out_dir/figures/` (SVG, [`figures`]) and
/// `out_dir/summary.md`. Table files of an earlier run that this run does not produce
/// (`tables/table*.{csv,md,tex}`, `tables/aux_*.{csv,md,tex}`) and figures it does not draw
/// (`figures/*.svg`) are removed so the directories never mix runs. Also writes
/// `reproduction.md` and `reproduction.csv` (the paper's printed values next to the run's). Returns
/// the written paths (tables in stem order, then figures in their fixed order, then `summary.md`,
/// `reproduction.md`, `reproduction.csv`). `reg` holds the rows' conditions (the run's registry).
pub fn write_tables(
    rows: &[ItemRow],
    reg: &'static Registry,
    out_dir: &Path,
    opts: &TableOptions,
) -> Result<Vec<PathBuf>, TablesError> {
    let idx = RunIndex::new(rows, reg);
    let ctx = Ctx::new(&idx, opts);
    let outputs = build_with(&ctx);
    let dir = out_dir.join("tables");
    let mut written = Vec::new();
    for o in &outputs {
        for (ext, content) in [
            ("csv", o.csv.clone()),
            ("md", o.markdown()),
            ("tex", o.latex()),
        ] {
            let p = dir.join(format!("{}.{ext}", o.stem));
            write(&p, content.as_bytes())?;
            written.push(p);
        }
    }
    remove_stale(&dir, &written, is_table_file)?;
    let figures = figures::write_figures(&ctx, &out_dir.join("figures"), &mut written)?;
    let summary = summary::render(&idx, opts, &outputs, &figures);
    let p = out_dir.join("summary.md");
    write(&p, summary.as_bytes())?;
    written.push(p);
    let (files, _) = reproduction(&idx, opts, &outputs, out_dir)?;
    written.extend(files);
    Ok(written)
}

/// `reproduction.md` and `reproduction.csv`: the paper's printed values side by side with the
/// run's (see [`paper`]).
/// Table files of hyst-tui's own experiment tables (outside the paper's numbering).
const EXPERIMENT_STEMS: [&str; 4] = ["experiment_operations", "experiment_ramps", "self_consistency", "seed_sensitivity"];

pub const REPRODUCTION_FILES: [&str; 2] = ["reproduction.md", "reproduction.csv"];

fn reproduction(
    idx: &RunIndex,
    opts: &TableOptions,
    outputs: &[Output],
    out_dir: &Path,
) -> Result<(Vec<PathBuf>, ReproductionCounts), TablesError> {
    let cs = paper::compare(idx, opts, outputs);
    let mut files = Vec::new();
    for (name, text) in REPRODUCTION_FILES
        .iter()
        .zip([paper::markdown(&cs), paper::csv(&cs)])
    {
        let p = out_dir.join(name);
        write(&p, text.as_bytes())?;
        files.push(p);
    }
    Ok((files, paper::counts(&cs)))
}

/// `compare --paper`: rebuilds only `reproduction.md` and `reproduction.csv` of a run from its
/// rows (the tables are computed, not written). Returns the written paths and the counts.
pub fn write_reproduction(
    rows: &[ItemRow],
    reg: &'static Registry,
    out_dir: &Path,
    opts: &TableOptions,
) -> Result<(Vec<PathBuf>, ReproductionCounts), TablesError> {
    let idx = RunIndex::new(rows, reg);
    let outputs = build_tables(&idx, opts);
    reproduction(&idx, opts, &outputs, out_dir)
}

/// Whether `name` is one of the files `tables/` holds: `table*`, `aux_*` or an experiment
/// table, as CSV, Markdown or LaTeX.
fn is_table_file(name: &str) -> bool {
    (name.starts_with("table")
        || name.starts_with("aux_")
        || EXPERIMENT_STEMS.iter().any(|s| name.starts_with(&format!("{s}."))))
        && (name.ends_with(".csv") || name.ends_with(".md") || name.ends_with(".tex"))
}

/// Removes the files of `dir` whose name `ours` accepts and that are not in `keep`, in path
/// order. A missing `dir` has nothing to remove.
fn remove_stale(
    dir: &Path,
    keep: &[PathBuf],
    ours: impl Fn(&str) -> bool,
) -> Result<(), TablesError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(TablesError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut stale: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| ours(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .filter(|p| p.is_file() && !keep.contains(p))
        .collect();
    stale.sort();
    for p in stale {
        std::fs::remove_file(&p).map_err(|source| TablesError::Io {
            path: p.clone(),
            source,
        })?;
    }
    Ok(())
}
