//! One writer per run directory. A batch, a merge or a batch started from the explorer holds an
//! exclusive lock on `DIR/.lock` for its whole life; a second writer fails at once, naming the
//! process that holds it. The operating system releases the lock when its process ends (even
//! on `kill -9`), so a lock file left by a dead process is simply taken over. Readers
//! (`tables --from`, the explorer on a stored run, `compare`) take no lock.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use thiserror::Error;

pub(crate) const LOCK_FILE: &str = ".lock";

#[derive(Debug, Error)]
pub(crate) enum LockError {
    #[error("run directory {dir} is in use by pid {pid}")]
    InUse { dir: PathBuf, pid: String },
    #[error("cannot lock run directory {dir}: {source}")]
    Io {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Held while a process writes to a run directory; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the run directory's lock (creating the directory if needed), or fails at once.
    pub(crate) fn acquire(dir: &Path) -> Result<RunLock, LockError> {
        let io = |source| LockError::Io { dir: dir.to_path_buf(), source };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = OpenOptions::new().create(true).truncate(false).read(true).write(true).open(dir.join(LOCK_FILE)).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(in_use(dir, &mut file)),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        // Ours now: record who holds it (a stale pid from a dead process is overwritten).
        file.set_len(0).and_then(|_| file.seek(SeekFrom::Start(0))).and_then(|_| writeln!(file, "{}", std::process::id())).and_then(|_| file.sync_all()).map_err(io)?;
        // What a writer killed mid-write left (no living writer can own it: we hold the lock).
        let removed = super::remove_stale_temp_files(dir);
        if removed > 0 {
            tracing::info!("{}: removed {removed} temporary file(s) left by an interrupted run", dir.display());
        }
        Ok(RunLock { _file: file })
    }

    /// Fails when a writer holds `dir`'s lock now (naming its pid), without creating or changing
    /// anything in `dir` (which may be another user's, or read-only): for readers that must not
    /// read a run while it is being written, such as `merge` reading its shards.
    pub(crate) fn check_free(dir: &Path) -> Result<(), LockError> {
        let Ok(mut file) = File::open(dir.join(LOCK_FILE)) else { return Ok(()) };
        match file.try_lock_shared() {
            Ok(()) => Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => Err(in_use(dir, &mut file)),
            Err(std::fs::TryLockError::Error(e)) => Err(LockError::Io { dir: dir.to_path_buf(), source: e }),
        }
    }
}

/// The error for a lock that `file` (the lock file of `dir`) shows held: its holder's pid.
fn in_use(dir: &Path, file: &mut File) -> LockError {
    let mut pid = String::new();
    let _ = file.read_to_string(&mut pid);
    let pid = pid.trim();
    LockError::InUse {
        dir: dir.to_path_buf(),
        pid: if pid.is_empty() { "unknown".into() } else { pid.to_string() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_fails_and_a_released_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let a = RunLock::acquire(dir.path()).unwrap();
        let e = RunLock::acquire(dir.path()).unwrap_err().to_string();
        assert_eq!(e, format!("run directory {} is in use by pid {}", dir.path().display(), std::process::id()));
        assert_eq!(RunLock::check_free(dir.path()).unwrap_err().to_string(), e);
        drop(a);
        RunLock::check_free(dir.path()).unwrap();
        // The file still names the old holder, but nobody holds the lock: taken over.
        let _b = RunLock::acquire(dir.path()).unwrap();
        let pid = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
    }
}
