//! Durable results. A run directory holds:
//! - `cache/scores.jsonl` — an append-only, content-addressed cache of scored contexts. Each line
//!   is one [`ScoreRow`] keyed by `key = sha256(model sha256, prompt token hash, letters, scoring
//!   settings)`. Rows of one item are appended in one write and fsynced, so a crash or `kill -9`
//!   loses at most the item in flight; a torn last line is detected and cut off on the next open.
//! - `item_rows.jsonl` and `item_rows.parquet` — the rows this run's configuration selects, sorted,
//!   written atomically (temp file + rename) at the end of a run. Tables are built from these.
//! - `manifest.json` — configuration (and, only here, timestamps).

pub(crate) mod cache;
pub(crate) mod float;
pub mod fslock;
pub(crate) mod lock;
pub mod rows;
pub mod run_dir;
pub mod shared;

pub use cache::ScoreCache;
pub use rows::{ItemRow, ScoreRow, SCORING_SETTINGS};
pub use run_dir::{read_item_rows, sort_rows, write_item_rows, Manifest, RunConfig, RunDirError};

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().map(|s| s.to_string_lossy()).unwrap_or_default(),
        std::process::id()
    ));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
