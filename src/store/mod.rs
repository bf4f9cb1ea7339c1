//! Durable results. A run directory holds:
//! - `cache/scores.jsonl` — an append-only, content-addressed cache of scored contexts. Each line
//!   is a checksum, a tab and one [`ScoreRow`] as JSON (so not JSON Lines, despite the name:
//!   `run_cache.rs`), keyed by `key = sha256(model sha256, prompt token hash, letters, scoring
//!   settings, provenance)`. Rows of one item are appended in one write and fsynced (in item order; the
//!   scores of items a stopped batch abandons come as they end), so a crash or `kill -9` loses at
//!   most the items in flight; a torn last line is detected and cut off on the next open.
//! - `item_rows.jsonl` and `item_rows.parquet` — the rows this run's configuration selects, sorted,
//!   written atomically (temp file + rename) at the end of a run. Tables are built from these.
//! - `manifest.json` — configuration (and, only here, timestamps).

pub(crate) mod run_cache;
pub(crate) mod float;
pub mod fslock;
pub(crate) mod lock;
pub mod rows;
pub mod run_dir;
pub mod shared;

pub use run_cache::ScoreCache;
pub use rows::{ItemRow, ScoreRow, SCORING_SETTINGS};
pub use run_dir::{read_item_rows, sort_rows, write_item_rows, Manifest, RunConfig, RunDirError};

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temp file in the same directory, fsync, rename. On any
/// failure (a full disk, a file-size limit) the temp file is removed, so `path` keeps its old
/// content and nothing half-written is left beside it.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(temp_name(path, std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        let half = bytes.len() / 2;
        f.write_all(&bytes[..half])?;
        fault::point(path);
        f.write_all(&bytes[half..])?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The temp file [`write_atomic`] writes `path` through, for process `pid`: `.NAME.tmpPID`.
fn temp_name(path: &Path, pid: u32) -> String {
    format!(".{}.tmp{pid}", path.file_name().map(|s| s.to_string_lossy()).unwrap_or_default())
}

/// The pid in a temp file name of [`write_atomic`]'s (`.NAME.tmpPID`), if `name` is one.
fn temp_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?;
    let (stem, pid) = rest.rsplit_once(".tmp")?;
    (!stem.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then(|| pid.parse().ok())?
}

/// Removes the temp files that [`write_atomic`] left in `dir` and its subdirectories (one level:
/// `cache/`, `tables/`, `figures/`) when a process died mid-write (`kill -9`, power loss). Only
/// files of processes that no longer run are removed, so a reader rebuilding tables in the same
/// directory keeps its own. Returns how many were removed.
pub(crate) fn remove_stale_temp_files(dir: &Path) -> usize {
    let mut removed = 0;
    let mut dirs = vec![dir.to_path_buf()];
    if let Ok(rd) = std::fs::read_dir(dir) {
        dirs.extend(rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
    }
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let name = e.file_name();
            let Some(pid) = temp_pid(&name.to_string_lossy()) else { continue };
            if pid != std::process::id() && !process_alive(pid) && std::fs::remove_file(e.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill(2) with signal 0 sends nothing; it only asks whether the pid exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    true
}

/// Fault injection for the fault-campaign test (tests/faults.rs), off unless `HYST_FAULT_AT` is
/// set: `TARGET@N:SIGNAL` raises SIGKILL (`kill`) or SIGTERM (`term`) in this process halfway
/// through the N-th write whose target matches TARGET, a file name (`item_rows.parquet`,
/// `manifest.json`, `scores.jsonl` for the score store's appends) or a directory prefix
/// (`tables/`, `figures/`); the target `context` counts the contexts a batch's engine scored (the
/// signal comes right after the N-th). It exists so that a test can stop the program inside a write, the
/// moment a kill from outside almost never hits.
pub(crate) mod fault {
    use std::path::Path;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::OnceLock;

    struct Spec {
        target: String,
        nth: usize,
        signal: i32,
    }

    fn spec() -> Option<&'static Spec> {
        static SPEC: OnceLock<Option<Spec>> = OnceLock::new();
        SPEC.get_or_init(|| {
            let v = std::env::var("HYST_FAULT_AT").ok()?;
            let (target, rest) = v.rsplit_once('@')?;
            let (nth, sig) = rest.split_once(':')?;
            let signal = match sig {
                "kill" => libc::SIGKILL,
                "term" => libc::SIGTERM,
                _ => return None,
            };
            Some(Spec { target: target.to_string(), nth: nth.parse().ok()?, signal })
        })
        .as_ref()
    }

    /// Called halfway through every durable write of `path`.
    pub(crate) fn point(path: &Path) {
        let Some(s) = spec() else { return };
        let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let parent = path.parent().and_then(|p| p.file_name()).map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        if name != s.target && !format!("{parent}/{name}").starts_with(&s.target) {
            return;
        }
        static SEEN: AtomicUsize = AtomicUsize::new(0);
        if SEEN.fetch_add(1, Ordering::SeqCst) + 1 == s.nth {
            // SAFETY: raise(3) on this process with a valid signal number.
            unsafe { libc::raise(s.signal) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_round_trip_and_other_names_are_not_temp_files() {
        let p = Path::new("/x/reproduction.csv");
        assert_eq!(temp_name(p, 1234), ".reproduction.csv.tmp1234");
        assert_eq!(temp_pid(".reproduction.csv.tmp1234"), Some(1234));
        for other in ["reproduction.csv", ".lock", ".tmp12", ".a.tmp", ".a.tmpx1", "a.tmp12"] {
            assert_eq!(temp_pid(other), None, "{other}");
        }
    }

    #[test]
    fn a_failed_write_leaves_no_temp_file_and_stale_ones_of_dead_processes_go() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: the rename fails after the temp file is written.
        let target = dir.path().join("t.md");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "x").unwrap();
        assert!(write_atomic(&target, b"abc").is_err());
        let names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["t.md"]);

        // A pid above any kernel's pid_max belongs to no process; our own pid is alive.
        let sub = dir.path().join("tables");
        std::fs::create_dir(&sub).unwrap();
        let dead = u32::MAX / 2;
        std::fs::write(sub.join(temp_name(Path::new("a.csv"), dead)), "x").unwrap();
        std::fs::write(dir.path().join(temp_name(Path::new("b.csv"), dead)), "x").unwrap();
        let mine = dir.path().join(temp_name(Path::new("c.csv"), std::process::id()));
        std::fs::write(&mine, "x").unwrap();
        assert_eq!(remove_stale_temp_files(dir.path()), 2);
        assert!(mine.exists());
        assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
    }
}
