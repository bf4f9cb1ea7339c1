//! Paper tables from a run's item-level rows (protocol.md §4–§8).
//!
//! [`write_tables`] indexes the rows by (model, dataset) pair and condition, builds every table
//! the rows have data for, and writes each as `tables/<stem>.csv` (the artifact's column names
//! where §8 gives them), `tables/<stem>.md` (a padded pipe table) and `tables/<stem>.tex` (a
//! booktabs `tabular` inside a `table` float), plus `summary.md` linking them all. A table whose
//! conditions are missing is not written (the summary lists it with what it needs).
//!
//! Everything is deterministic: pairs in the artifact's fixed order (paper models first, then
//! by key; TruthfulQA-MC before MMLU-Pro), items by `subset_index`, fixed float formatting, no
//! timestamps. Bootstrap intervals use the numpy-exact streams of `metrics::bootstrap`.

mod boot;
mod cctp;
mod common;
mod controls;
mod decomposition;
mod definitions;
mod examples;
mod expanded_family;
mod false_context;
pub mod format;
mod hierarchy;
pub mod index;
mod plausibility;
mod pressure_ramp;
mod r7;
mod relabel;
mod reset_gap;
mod summary;
pub mod testutil;
mod truncation;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use crate::store::{write_atomic, ItemRow};
use format::{tex_escape, Table};
use index::RunIndex;

/// Bootstrap settings of the tables.
#[derive(Clone, Debug)]
pub struct TableOptions {
    /// Replicates per interval (artifact: 10,000).
    pub bootstrap_samples: usize,
    /// Base seed (artifact: 12345); groups add the §7 offsets (+1 ramp, +2 controls,
    /// +3 decomposition, +4 recovery operations, +5 relabel).
    pub seed: u64,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            bootstrap_samples: crate::metrics::bootstrap::BOOTSTRAP_SAMPLES,
            seed: crate::metrics::bootstrap::BOOTSTRAP_SEED,
        }
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

/// One generated table (three files).
#[derive(Clone, Debug)]
pub struct Output {
    /// `Table 2`, … or `Aux`.
    pub id: &'static str,
    /// File stem, e.g. `table02_pressure_ramp`.
    pub stem: String,
    pub title: String,
    /// Which clean-context-like criterion family (or CCTP tube) the table uses.
    pub family: String,
    /// CSV content (artifact schema).
    pub csv: Table,
    /// Markdown/LaTeX view when it differs from the CSV (e.g. a wide view of a long table).
    pub display: Option<Table>,
    pub notes: Vec<String>,
}

impl Output {
    fn new(id: &'static str, stem: &str, title: &str, family: &str, csv: Table) -> Output {
        Output {
            id,
            stem: stem.to_string(),
            title: title.to_string(),
            family: family.to_string(),
            csv,
            display: None,
            notes: Vec::new(),
        }
    }
    fn with_display(mut self, t: Table) -> Output {
        self.display = Some(t);
        self
    }
    fn with_notes(mut self, notes: Vec<String>) -> Output {
        self.notes.extend(notes);
        self
    }
    fn shown(&self) -> &Table {
        self.display.as_ref().unwrap_or(&self.csv)
    }
    fn heading(&self) -> String {
        if self.id == "Aux" {
            self.title.clone()
        } else {
            format!("{}: {}", self.id, self.title)
        }
    }

    fn markdown(&self) -> String {
        let mut s = format!("# {}\n\n", self.heading());
        s.push_str(&format!(
            "Criterion family: {}. Source CSV: `{}.csv`.\n\n",
            self.family, self.stem
        ));
        s.push_str(&self.shown().to_markdown());
        if !self.notes.is_empty() {
            s.push_str("\nNotes:\n");
            for n in &self.notes {
                s.push_str(&format!("- {}\n", n.replace('\n', " ")));
            }
        }
        s
    }

    fn latex(&self) -> String {
        let mut s = format!(
            "% hyst-tui {}\n% Criterion family: {}\n",
            self.heading(),
            self.family
        );
        s.push_str("% Requires \\usepackage{booktabs}.\n");
        s.push_str("\\begin{table}[ht]\n\\centering\n\\small\n");
        s.push_str(&format!("\\caption{{{}}}\n", tex_escape(&self.heading())));
        s.push_str(&format!("\\label{{tab:{}}}\n", self.stem.replace('_', "-")));
        s.push_str(&self.shown().to_latex_tabular());
        s.push_str("\\end{table}\n");
        for n in &self.notes {
            s.push_str(&format!("% Note: {}\n", n.replace(['\n', '\r'], " ")));
        }
        s
    }
}

/// Shared state of the table builders.
pub(crate) struct Ctx<'a> {
    pub idx: RunIndex<'a>,
    pub opts: &'a TableOptions,
}

/// What each table needs (listed in the summary when it is not written).
pub(crate) const SPECS: &[(&str, &str, &str)] = &[
    ("Table 1", "Recovery operations (definitions)", "nothing (condition registry)"),
    ("Table 2", "Pressure ramp", "clean_context (or clean_context_probe), strong_pressure, strong_reset"),
    ("Table 3", "Behavioural controls summary", "clean, R0 (ordinary_strong_reset or strong_reset), and neutral_history:strong_reset + neutral_history:clean_context_probe and/or correct_pressure:strong_reset"),
    ("Table 4", "Recovered pairs per operation", "clean + R0 + at least one hierarchy operation"),
    ("Table 5", "Truncation boundary", "clean + truncation conditions (full_history_reset ... fresh_context)"),
    ("Table 6", "R0 vs R7 trusted evidence", "clean + evidence_grounded_recovery (+ R0, R5, R3a rows when present)"),
    ("Table 7", "Behavioural controls per pair", "as Table 3"),
    ("Table 8", "Expanded family ramp", "strong_pressure + full_history_reset (or R0) + fresh_context (or clean)"),
    ("Table 9", "Ordinary-reset gap per pair", "clean + R0"),
    ("Table 10", "Failure decomposition on R0", "clean + R0"),
    ("Table 11", "Plausibility tertiles", "clean + R0"),
    ("Table 12", "Pressure vs false context", "clean + clean_no_mention / neutral_wrong_mention / explicit_false_wrong_mention / quoted_false_claim (+ user_pressure or R0)"),
    ("Table 13", "Relabel restoration metrics", "baseline_strong_reset + another relabel condition"),
    ("Table 14", "Relabel outcome metrics", "baseline_strong_reset + another relabel condition"),
    ("Table 15", "Semantic vs letter following", "option_relabel_shuffle_reset"),
    ("Table 16", "Recovery counts, strict vs MRO rule", "clean + R0 + at least one hierarchy operation"),
    ("Table 17", "Minimal recovery operation per pair", "clean + R0 + at least one hierarchy operation"),
    ("Table 18", "Full truncation boundary per pair", "as Table 5"),
    ("Table 19", "Dataset-level change R0 -> R7", "clean + R0 + evidence_grounded_recovery"),
    ("Table 20", "CCTP clean-tube criterion (definition)", "nothing (metrics constants)"),
    ("Table 21", "CCTP summary", "clean + R0 option log-scores (correct_pressure:strong_reset optional)"),
    ("Table 22", "Clean-restoration tolerance families (definition)", "nothing (metrics constants)"),
    ("Table 23", "Clean-correct / history-wrong examples", "clean + R0 with a clean-correct item that follows the wrong answer at R0"),
    ("Aux", "Recovery hierarchy summary", "clean + R0 + at least one hierarchy operation"),
    ("Aux", "Recovery operations with paired item bootstrap CIs", "clean + R0 + at least one main hierarchy operation"),
    ("Aux", "Threshold sweep of the clean-context-like criterion", "clean + R0 + at least one main hierarchy operation"),
];

/// Builds every table the rows have data for. Pure (no I/O); [`write_tables`] writes them.
pub fn build_tables(rows: &[ItemRow], opts: &TableOptions) -> Vec<Output> {
    let ctx = Ctx {
        idx: RunIndex::new(rows),
        opts,
    };
    let ctx = &ctx;
    // The builders are independent (each owns its bootstrap streams), so they run in parallel;
    // the result does not depend on scheduling because the outputs are sorted by stem below.
    type Builder<'c> = Box<dyn FnOnce() -> Vec<Output> + Send + 'c>;
    let builders: Vec<Builder> = vec![
        Box::new(definitions::table01),
        Box::new(move || pressure_ramp::table02(ctx)),
        Box::new(move || controls::table03(ctx)),
        Box::new(move || {
            let hier = hierarchy::Hierarchy::build(ctx);
            let mut v = hier.table04();
            v.extend(hier.table16());
            v.extend(hier.table17(ctx));
            v.extend(hier.aux_summary());
            v.extend(hier.aux_threshold_sweep());
            v
        }),
        Box::new(move || truncation::tables(ctx)),
        Box::new(move || r7::table06(ctx)),
        Box::new(move || controls::table07(ctx)),
        Box::new(move || expanded_family::table08(ctx)),
        Box::new(move || reset_gap::table09(ctx)),
        Box::new(move || decomposition::table10(ctx)),
        Box::new(move || plausibility::table11(ctx)),
        Box::new(move || false_context::table12(ctx)),
        Box::new(move || relabel::tables(ctx)),
        Box::new(move || r7::table19(ctx)),
        Box::new(definitions::table20),
        Box::new(move || cctp::table21(ctx)),
        Box::new(definitions::table22),
        Box::new(move || examples::table23(ctx)),
    ];
    let mut out: Vec<Output> = std::thread::scope(|s| {
        let handles: Vec<_> = builders.into_iter().map(|b| s.spawn(b)).collect();
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

/// Writes every table the rows have data for into `out_dir/tables/` (CSV, Markdown, LaTeX) and
/// `out_dir/summary.md`. Table files of an earlier run that this run does not produce
/// (`tables/table*.{csv,md,tex}`, `tables/aux_*.{csv,md,tex}`) are removed so the directory
/// never mixes runs. Returns the written paths (tables in stem order, then `summary.md`).
pub fn write_tables(
    rows: &[ItemRow],
    out_dir: &Path,
    opts: &TableOptions,
) -> Result<Vec<PathBuf>, TablesError> {
    let outputs = build_tables(rows, opts);
    let dir = out_dir.join("tables");
    let mut written = Vec::new();
    for o in &outputs {
        for (ext, content) in [
            ("csv", o.csv.to_csv()),
            ("md", o.markdown()),
            ("tex", o.latex()),
        ] {
            let p = dir.join(format!("{}.{ext}", o.stem));
            write(&p, content.as_bytes())?;
            written.push(p);
        }
    }
    remove_stale(&dir, &written)?;
    let idx = RunIndex::new(rows);
    let summary = summary::render(&idx, opts, &outputs);
    let p = out_dir.join("summary.md");
    write(&p, summary.as_bytes())?;
    written.push(p);
    Ok(written)
}

fn remove_stale(dir: &Path, keep: &[PathBuf]) -> Result<(), TablesError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(source) => {
            return Err(TablesError::Io {
                path: dir.to_path_buf(),
                source,
            })
        }
    };
    let mut stale = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        let ours = (name.starts_with("table") || name.starts_with("aux_"))
            && (name.ends_with(".csv") || name.ends_with(".md") || name.ends_with(".tex"));
        if ours && p.is_file() && !keep.contains(&p) {
            stale.push(p);
        }
    }
    stale.sort();
    for p in stale {
        std::fs::remove_file(&p).map_err(|source| TablesError::Io {
            path: p.clone(),
            source,
        })?;
    }
    Ok(())
}
