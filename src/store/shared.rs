//! The score store shared by every run and the explorer: `<data dir>/scores/scores.jsonl`.
//!
//! It holds every context any batch or explorer session has scored, content-addressed like a
//! run's own cache (same line format, same repair on open), so nothing is ever scored twice:
//! a batch looks here before the engine and copies what it finds into its run directory (which
//! stays self-contained and portable); the explorer finds scores by the context they belong to
//! (model file, prompt format, messages, letters, provenance) without tokenizing, so it can show
//! a batch's values before its model has even loaded.
//!
//! Several processes may use it at once. Appends and the repair on open happen under an
//! exclusive lock on `scores.lock`; each process first reads what the others appended. Only an
//! index (key → position in the file) is kept in memory; records are read back on demand.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::run_cache::{line_of, parse_line, scan_and_repair, CacheError, OpenReport};
use super::rows::{ScoreRow, SCORING_SETTINGS};
use crate::protocol::ChatMessage;

/// The default location: `<data dir>/scores/scores.jsonl`.
pub(crate) fn default_path() -> PathBuf {
    crate::config::data_dir().join("scores").join("scores.jsonl")
}

/// Where the shared store is, as chosen by `--score-store` (`explicit`), else
/// `$HYST_SCORE_STORE`, else [`default_path`]; `off` (either way) means no shared store.
pub fn configured_path(explicit: Option<&str>) -> Option<PathBuf> {
    let choice = explicit.map(str::to_string).or_else(|| std::env::var("HYST_SCORE_STORE").ok());
    match choice.as_deref() {
        Some("off") => None,
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => Some(default_path()),
    }
}

/// The key of a scoring context as the explorer and the batch both know it before tokenizing:
/// the model file, how prompts are formatted for it (chat template and system policy), the
/// messages, the shown letters, the scoring settings and the numeric provenance.
pub(crate) fn context_key(model_sha256: &str, prompt_format: &str, messages: &[ChatMessage], letters: &str, provenance: &str) -> String {
    let mut h = Sha256::new();
    let msgs = serde_json::to_string(messages).expect("messages serialise");
    for part in [model_sha256, prompt_format, &msgs, letters, SCORING_SETTINGS, provenance] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

pub struct SharedScores {
    path: PathBuf,
    lock_path: PathBuf,
    file: File,
    /// Bytes of the file read so far.
    read_to: u64,
    /// score key → (offset, length) of its line.
    by_key: HashMap<String, (u64, u32)>,
    /// context key → score key.
    by_context: HashMap<String, String>,
    pub report: OpenReport,
}

/// Holds the store's writer lock while alive.
struct WriterLock(File);

impl WriterLock {
    fn take(path: &Path) -> Result<WriterLock, CacheError> {
        let io = |source| CacheError::Io { path: path.to_path_buf(), source };
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(io)?;
        }
        let f = OpenOptions::new().create(true).truncate(false).write(true).open(path).map_err(io)?;
        f.lock().map_err(|source| {
            if super::fslock::means_no_locks(&source) {
                CacheError::NoLocks { path: path.to_path_buf(), fs: super::fslock::fs_type(path), source }
            } else {
                io(source)
            }
        })?;
        Ok(WriterLock(f))
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl SharedScores {
    /// Opens (and if needed repairs) the store at `path`.
    pub(crate) fn open(path: &Path) -> Result<SharedScores, CacheError> {
        let lock_path = path.with_extension("lock");
        let _lock = WriterLock::take(&lock_path)?;
        let (scanned, report) = scan_and_repair(path)?;
        let io = |source| CacheError::Io { path: path.to_path_buf(), source };
        let mut file = OpenOptions::new().read(true).append(true).open(path).map_err(io)?;
        let read_to = file.seek(SeekFrom::End(0)).map_err(io)?;
        let mut s = SharedScores {
            path: path.to_path_buf(),
            lock_path,
            file,
            read_to,
            by_key: HashMap::new(),
            by_context: HashMap::new(),
            report,
        };
        for x in scanned {
            s.index(&x.row, x.offset, x.len);
        }
        Ok(s)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn index(&mut self, row: &ScoreRow, offset: u64, len: u32) {
        self.by_key.entry(row.key.clone()).or_insert((offset, len));
        if !row.context_key.is_empty() {
            self.by_context.entry(row.context_key.clone()).or_insert_with(|| row.key.clone());
        }
    }

    fn read_at(&self, offset: u64, len: u32) -> Option<ScoreRow> {
        let mut buf = vec![0u8; len as usize];
        let mut f = &self.file;
        f.seek(SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut buf).ok()?;
        parse_line(&self.path, 0, &buf).ok()?.ok()
    }

    /// The record of a score key.
    pub(crate) fn get(&self, key: &str) -> Option<ScoreRow> {
        let &(o, l) = self.by_key.get(key)?;
        self.read_at(o, l)
    }

    /// The record of a context key (see [`context_key`]).
    pub(crate) fn get_context(&self, context: &str) -> Option<ScoreRow> {
        self.get(self.by_context.get(context)?)
    }

    /// Reads the records other processes appended since this one last looked. Returns how many.
    pub(crate) fn refresh(&mut self) -> Result<usize, CacheError> {
        let io = |source| CacheError::Io { path: self.path.clone(), source };
        let end = self.file.metadata().map_err(io)?.len();
        if end <= self.read_to {
            return Ok(0);
        }
        let mut bytes = Vec::with_capacity((end - self.read_to) as usize);
        let mut f = &self.file;
        f.seek(SeekFrom::Start(self.read_to)).map_err(io)?;
        f.take(end - self.read_to).read_to_end(&mut bytes).map_err(io)?;
        let mut start = 0usize;
        let mut added = 0;
        while let Some(len) = bytes[start..].iter().position(|&b| b == b'\n') {
            let offset = self.read_to + start as u64;
            // A damaged line from another writer is left for the next open to quarantine.
            if let Ok(Ok(row)) = parse_line(&self.path, 0, &bytes[start..start + len]) {
                self.index(&row, offset, len as u32);
                added += 1;
            }
            start += len + 1;
        }
        self.read_to += start as u64;
        Ok(added)
    }

    /// Appends records whose key the store does not hold yet, under the writer lock, after
    /// reading what other processes appended. A failed write is cut back.
    pub(crate) fn append(&mut self, rows: &[ScoreRow]) -> Result<usize, CacheError> {
        let _lock = WriterLock::take(&self.lock_path)?;
        self.refresh()?;
        let io = |source| CacheError::Io { path: self.path.clone(), source };
        let mut buf = Vec::new();
        let mut placed = Vec::new();
        let start = self.file.metadata().map_err(io)?.len();
        let mut seen = std::collections::HashSet::new();
        for r in rows {
            if self.by_key.contains_key(&r.key) || !seen.insert(r.key.as_str()) {
                continue;
            }
            let line = line_of(r);
            placed.push((r, start + buf.len() as u64, (line.len() - 1) as u32));
            buf.extend_from_slice(line.as_bytes());
        }
        if buf.is_empty() {
            return Ok(0);
        }
        if let Err(e) = self.file.write_all(&buf).and_then(|_| self.file.sync_data()) {
            let _ = self.file.set_len(start);
            return Err(io(e));
        }
        self.read_to = start + buf.len() as u64;
        let n = placed.len();
        for (r, o, l) in placed {
            self.index(r, o, l);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::rows::SCHEMA_VERSION;

    fn row(k: &str, ctx: &str) -> ScoreRow {
        ScoreRow {
            schema_version: SCHEMA_VERSION,
            key: k.into(),
            model_key: "m".into(),
            model_sha256: "s".into(),
            letters: "AB".into(),
            probs: vec![0.25, 0.75],
            log_scores: vec![-2.0, -0.5],
            pred: "B".into(),
            entropy: 0.5,
            max_prob: 0.75,
            margin_top2: 1.0,
            letter_mass: 0.9,
            top_tokens: vec![],
            prompt_tokens: 10,
            prompt_hash: "h".into(),
            tokens_evaluated: 10,
            tokens_reused: 0,
            scoring: "x".into(),
            provenance: "cpu".into(),
            context_key: ctx.into(),
            letter_bound: None,
            open: None,
        }
    }

    #[test]
    fn two_handles_see_each_others_records_and_never_duplicate_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("scores/scores.jsonl");
        let mut a = SharedScores::open(&p).unwrap();
        let mut b = SharedScores::open(&p).unwrap();
        assert_eq!(a.append(&[row("k1", "c1"), row("k2", "")]).unwrap(), 2);
        // b appends k2 again (not yet seen by b) and k3: only k3 is written.
        assert_eq!(b.append(&[row("k2", ""), row("k3", "c3")]).unwrap(), 1);
        assert_eq!(a.get("k3"), None);
        assert_eq!(a.refresh().unwrap(), 1);
        assert_eq!(a.get("k3").unwrap().probs, vec![0.25, 0.75]);
        assert_eq!(a.get_context("c1").unwrap().key, "k1");
        assert_eq!(b.get_context("c1").unwrap().key, "k1");
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 3);
        let c = SharedScores::open(&p).unwrap();
        assert_eq!(c.by_key.len(), 3);
        assert_eq!(c.get_context("c3").unwrap().key, "k3");
    }

    #[test]
    fn context_keys_depend_on_every_part() {
        let m = vec![ChatMessage::user("Q")];
        let k = context_key("sha", "fmt", &m, "AB", "cpu");
        assert_ne!(k, context_key("sha2", "fmt", &m, "AB", "cpu"));
        assert_ne!(k, context_key("sha", "fmt2", &m, "AB", "cpu"));
        assert_ne!(k, context_key("sha", "fmt", &[ChatMessage::user("Q2")], "AB", "cpu"));
        assert_ne!(k, context_key("sha", "fmt", &m, "ABC", "cpu"));
        assert_ne!(k, context_key("sha", "fmt", &m, "AB", "cuda"));
    }
}
