//! The files of a run directory that are not the score cache: `manifest.json` (the run's
//! configuration and progress) and the item rows (`item_rows.jsonl`, `item_rows.parquet`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::rows::ItemRow;
use super::write_atomic;
use crate::dialogue::{conditions, Suite};

pub const MANIFEST_FILE: &str = "manifest.json";
pub const ITEM_ROWS_JSONL: &str = "item_rows.jsonl";
pub const ITEM_ROWS_PARQUET: &str = "item_rows.parquet";

/// Errors reading or writing a run directory.
#[derive(Debug, Error)]
pub enum RunDirError {
    #[error("cannot read {path} (is this a batch run directory?): {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {message}")]
    BadRow { path: PathBuf, line: usize, message: String },
    #[error("{path}: not a hyst-tui manifest: {message}")]
    BadManifest { path: PathBuf, message: String },
    #[error("writing {path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

/// Everything that determines a batch run's rows (the manifest's `config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub models: Vec<String>,
    pub datasets: Vec<String>,
    pub n: Option<usize>,
    pub seed: u64,
    pub subset_csv: Option<String>,
    pub advocated_csv: Option<String>,
    pub suites: Vec<Suite>,
    pub limit: Option<usize>,
    /// (k, n): this run holds items with `subset_index % n == k - 1`.
    pub shard: Option<(usize, usize)>,
    pub shuffle_options: Option<u64>,
    pub prompts_fingerprint: String,
    pub scoring_settings: String,
}

impl RunConfig {
    /// The configuration without the shard (what shards of one run must share).
    pub fn without_shard(&self) -> RunConfig {
        RunConfig {
            shard: None,
            ..self.clone()
        }
    }
}

/// `manifest.json`: the configuration, the command line and progress (the only file of a run
/// with timestamps).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub tool: String,
    pub version: String,
    pub config: RunConfig,
    pub started: String,
    pub finished: Option<String>,
    pub command_line: String,
    pub items_done: usize,
    pub items_total: usize,
    pub complete: bool,
}

impl Manifest {
    /// A manifest of this build of hyst-tui for `config`, not yet complete.
    pub fn new(config: RunConfig, command_line: String, items_total: usize) -> Manifest {
        Manifest {
            tool: "hyst-tui".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            config,
            started: now_string(),
            finished: None,
            command_line,
            items_done: 0,
            items_total,
            complete: false,
        }
    }

    pub fn read(dir: &Path) -> Result<Manifest, RunDirError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| RunDirError::Read { path: path.clone(), source })?;
        serde_json::from_str(&text).map_err(|e| RunDirError::BadManifest { path, message: e.to_string() })
    }

    pub fn write(&self, dir: &Path) -> Result<(), RunDirError> {
        let path = dir.join(MANIFEST_FILE);
        let json = serde_json::to_string_pretty(self).expect("a manifest serialises");
        write_atomic(&path, json.as_bytes()).map_err(|source| RunDirError::Write { path, source })
    }

    /// Marks the run complete now.
    pub fn finish(&mut self) {
        self.complete = true;
        self.finished = Some(now_string());
    }
}

/// Seconds since the Unix epoch, as text.
fn now_string() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", d.as_secs())
}

/// Position of a condition in the registry (item rows are sorted by it).
fn condition_order(key: &str) -> usize {
    conditions::all().iter().position(|c| c.key == key).unwrap_or(usize::MAX)
}

/// Sorts rows by (model, dataset, subset index, condition order).
pub fn sort_rows(rows: &mut [ItemRow]) {
    rows.sort_by(|a, b| {
        (&a.model_key, &a.dataset, a.subset_index, condition_order(&a.condition), &a.condition).cmp(&(
            &b.model_key,
            &b.dataset,
            b.subset_index,
            condition_order(&b.condition),
            &b.condition,
        ))
    });
}

/// Writes `item_rows.jsonl` and `item_rows.parquet` atomically.
pub fn write_item_rows(dir: &Path, rows: &[ItemRow]) -> Result<(), RunDirError> {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r).expect("an item row serialises"));
        s.push('\n');
    }
    let path = dir.join(ITEM_ROWS_JSONL);
    write_atomic(&path, s.as_bytes()).map_err(|source| RunDirError::Write { path, source })?;
    write_item_rows_parquet(&dir.join(ITEM_ROWS_PARQUET), rows)
}

/// Item rows as a Parquet table: one typed column per [`ItemRow`] field.
fn write_item_rows_parquet(path: &Path, rows: &[ItemRow]) -> Result<(), RunDirError> {
    use polars::prelude::{DataFrame, ParquetWriter};
    let err = |e: polars::prelude::PolarsError| RunDirError::Parquet {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut df = DataFrame::new(rows.len(), ItemRow::parquet_columns(rows)).map_err(err)?;
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf).finish(&mut df).map_err(err)?;
    write_atomic(path, &buf).map_err(|source| RunDirError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads `item_rows.jsonl` of a run directory.
pub fn read_item_rows(dir: &Path) -> Result<Vec<ItemRow>, RunDirError> {
    let path = dir.join(ITEM_ROWS_JSONL);
    let text = std::fs::read_to_string(&path).map_err(|source| RunDirError::Read { path: path.clone(), source })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| RunDirError::BadRow {
                path: path.clone(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// Reads `item_rows.jsonl` of a run directory line by line: each non-empty line's 1-based
/// number with its row, or with the error that line gave, so that one damaged line does not
/// hide the others (the explorer skips and reports such lines). Fails only when the file
/// cannot be read.
pub fn read_item_rows_numbered(dir: &Path) -> Result<Vec<(usize, Result<ItemRow, RunDirError>)>, RunDirError> {
    let path = dir.join(ITEM_ROWS_JSONL);
    let text = std::fs::read_to_string(&path).map_err(|source| RunDirError::Read { path: path.clone(), source })?;
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let row = serde_json::from_str(l).map_err(|e| RunDirError::BadRow {
                path: path.clone(),
                line: i + 1,
                message: e.to_string(),
            });
            (i + 1, row)
        })
        .collect())
}
