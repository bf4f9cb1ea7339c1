//! The run cache: a run directory's append-only score cache (`cache/scores.jsonl`), not to be
//! confused with prefix reuse (the engine's KV cache) or the shared score store (`shared.rs`).
//!
//! Each line is `<sha256 of the JSON>\t<JSON ScoreRow>\n`, appended one item at a time (one write,
//! then fsync). Opening the cache never throws a valid record away:
//! - an incomplete final line (no newline) is a torn write from a crash: it is cut off;
//! - any other line that cannot be read (checksum mismatch, not JSON, not a score record) is
//!   moved to `quarantine.jsonl` next to the cache, with its line number and the reason, and
//!   every valid record before and after it is kept (the cache file is rewritten atomically);
//! - a record written by a newer hyst-tui (a higher `schema_version`) is an error: this build
//!   cannot know what it means, and it must not be dropped either.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::rows::{record_version, ScoreRow, SCHEMA_VERSION};
use super::write_atomic;

/// Name of the file damaged lines are moved to (next to the cache file).
pub(crate) const QUARANTINE_FILE: &str = "quarantine.jsonl";

#[derive(Debug, Error)]
pub enum CacheError {
    #[error("score cache {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot lock {path}: its file system ({fs}) has no file locks ({source}), so processes cannot share a score store there; put the store on a file system with locks (a local disk, NFSv4, NFSv3 with lockd running) with --score-store FILE, or use --score-store off")]
    NoLocks {
        path: PathBuf,
        fs: String,
        #[source]
        source: std::io::Error,
    },
    #[error("score cache {path}: line {line} was written by a newer hyst-tui (record schema {found}, this build reads up to {SCHEMA_VERSION}); use that version or another run directory")]
    NewerRecord { path: PathBuf, line: usize, found: u32 },
}

/// A line moved aside when the cache was opened.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Quarantined {
    /// 1-based line number in the cache file as it was found.
    pub line: usize,
    pub reason: String,
    /// The line's text (lossy UTF-8, without the newline).
    pub text: String,
}

/// What opening the cache repaired.
#[derive(Clone, Debug, Default)]
pub struct OpenReport {
    /// Valid records read.
    pub records: usize,
    /// Bytes of an incomplete final line that were cut off.
    pub torn_bytes: u64,
    /// Unreadable lines moved to the quarantine file.
    pub quarantined: Vec<Quarantined>,
}

impl OpenReport {
    /// One line for the user, or `None` when nothing was repaired.
    pub(crate) fn describe(&self, cache: &Path) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(first) = self.quarantined.first() {
            let q = cache.with_file_name(QUARANTINE_FILE);
            parts.push(format!(
                "{} damaged record{} moved to {} (line {}: {}){}",
                self.quarantined.len(),
                if self.quarantined.len() == 1 { "" } else { "s" },
                q.display(),
                first.line,
                first.reason,
                if self.quarantined.len() > 1 { ", …" } else { "" }
            ));
        }
        if self.torn_bytes > 0 {
            parts.push(format!("an incomplete last record ({} bytes) was cut off", self.torn_bytes));
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!(
            "score cache {}: {}; {} valid records kept (damaged ones are scored again)",
            cache.display(),
            parts.join("; "),
            self.records
        ))
    }
}

pub struct ScoreCache {
    path: PathBuf,
    file: File,
    rows: HashMap<String, ScoreRow>,
    /// Provenance of the records, in order of first appearance.
    provenances: Vec<String>,
    pub report: OpenReport,
}

fn checksum(json: &str) -> String {
    hex::encode(Sha256::digest(json.as_bytes()))
}

/// One cache line for a row.
pub(crate) fn line_of(r: &ScoreRow) -> String {
    let json = serde_json::to_string(r).expect("a score row serialises");
    format!("{}\t{json}\n", checksum(&json))
}

/// Reads one complete line (without its newline): the row, or why it is unreadable.
pub(crate) fn parse_line(path: &Path, n: usize, bytes: &[u8]) -> Result<Result<ScoreRow, String>, CacheError> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(Err("not valid UTF-8".into()));
    };
    let Some((sum, json)) = text.split_once('\t') else {
        return Ok(Err("no checksum field".into()));
    };
    if checksum(json) != sum {
        return Ok(Err("checksum mismatch".into()));
    }
    match record_version(json) {
        Err(e) => return Ok(Err(format!("not a JSON record: {e}"))),
        Ok(v) if v > SCHEMA_VERSION => {
            return Err(CacheError::NewerRecord {
                path: path.to_path_buf(),
                line: n,
                found: v,
            })
        }
        Ok(_) => {}
    }
    Ok(serde_json::from_str::<ScoreRow>(json).map_err(|e| format!("not a score record: {e}")))
}

/// A valid record found when a cache file was opened, and where its line is.
pub(crate) struct Scanned {
    pub(crate) row: ScoreRow,
    /// Byte offset of the line (after any repair) and its length without the newline.
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

/// Reads a cache file, repairs it (cuts a torn tail, moves unreadable lines to the quarantine
/// file and rewrites the file with the valid lines) and returns the valid records in file order.
/// The caller holds whatever lock keeps other writers out.
pub(crate) fn scan_and_repair(path: &Path) -> Result<(Vec<Scanned>, OpenReport), CacheError> {
    let io = |source| CacheError::Io { path: path.to_path_buf(), source };
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(io)?;
    }
    let mut file = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(io)?;

    let mut rows = Vec::new();
    let mut report = OpenReport::default();
    let mut kept = Vec::with_capacity(bytes.len());
    let mut start = 0;
    let mut n = 0;
    while start < bytes.len() {
        let Some(len) = bytes[start..].iter().position(|&b| b == b'\n') else {
            // No newline: the tail of a write that did not finish.
            report.torn_bytes = (bytes.len() - start) as u64;
            break;
        };
        n += 1;
        let line = &bytes[start..start + len];
        match parse_line(path, n, line)? {
            Ok(row) => {
                rows.push(Scanned {
                    row,
                    offset: kept.len() as u64,
                    len: len as u32,
                });
                kept.extend_from_slice(&bytes[start..start + len + 1]);
                report.records += 1;
            }
            // An empty line is dropped without ceremony.
            Err(_) if line.iter().all(|b| b.is_ascii_whitespace()) => {}
            Err(reason) => report.quarantined.push(Quarantined {
                line: n,
                reason,
                text: String::from_utf8_lossy(line).into_owned(),
            }),
        }
        start += len + 1;
    }
    if !report.quarantined.is_empty() {
        // Keep the damaged lines first, then rewrite the cache with the valid ones.
        let q = path.with_file_name(QUARANTINE_FILE);
        let qio = |source| CacheError::Io { path: q.clone(), source };
        let mut qf = OpenOptions::new().create(true).append(true).open(&q).map_err(qio)?;
        let mut buf = String::new();
        for d in &report.quarantined {
            buf.push_str(&serde_json::to_string(d).expect("serialises"));
            buf.push('\n');
        }
        qf.write_all(buf.as_bytes()).and_then(|_| qf.sync_all()).map_err(qio)?;
        write_atomic(path, &kept).map_err(io)?;
    } else if report.torn_bytes > 0 {
        file.set_len(kept.len() as u64).and_then(|_| file.sync_all()).map_err(io)?;
    }
    Ok((rows, report))
}

impl ScoreCache {
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let (scanned, report) = scan_and_repair(path)?;
        let io = |source| CacheError::Io { path: path.to_path_buf(), source };
        let mut file = OpenOptions::new().read(true).append(true).open(path).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        let mut rows = HashMap::new();
        let mut provenances: Vec<String> = Vec::new();
        for s in scanned {
            if !provenances.contains(&s.row.provenance) {
                provenances.push(s.row.provenance.clone());
            }
            rows.entry(s.row.key.clone()).or_insert(s.row);
        }
        Ok(Self {
            path: path.to_path_buf(),
            file,
            rows,
            provenances,
            report,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn get(&self, key: &str) -> Option<&ScoreRow> {
        self.rows.get(key)
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Every record, in key order.
    pub(crate) fn sorted_rows(&self) -> Vec<&ScoreRow> {
        let mut v: Vec<&ScoreRow> = self.rows.values().collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The numeric provenances of the records (empty string = recorded before provenance was).
    pub(crate) fn provenances(&self) -> &[String] {
        &self.provenances
    }

    /// Appends rows (new keys only) in one write and fsyncs. If the write fails (disk full, file
    /// size limit), the file is cut back to where it was, so every earlier record stays readable.
    pub fn append(&mut self, rows: &[ScoreRow]) -> Result<(), CacheError> {
        let mut buf = String::new();
        let mut seen = std::collections::HashSet::new();
        for r in rows {
            if self.rows.contains_key(&r.key) || !seen.insert(r.key.as_str()) {
                continue;
            }
            buf.push_str(&line_of(r));
        }
        if buf.is_empty() {
            return Ok(());
        }
        let io = |source| CacheError::Io { path: self.path.clone(), source };
        let before = self.file.metadata().map_err(io)?.len();
        let (first, second) = buf.as_bytes().split_at(buf.len() / 2);
        let written = self.file.write_all(first).and_then(|_| {
            super::fault::point(&self.path);
            self.file.write_all(second)
        });
        if let Err(e) = written.and_then(|_| self.file.sync_data()) {
            let _ = self.file.set_len(before);
            let _ = self.file.sync_all();
            return Err(io(e));
        }
        for r in rows {
            if !self.provenances.contains(&r.provenance) {
                self.provenances.push(r.provenance.clone());
            }
            self.rows.entry(r.key.clone()).or_insert_with(|| r.clone());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: &str) -> ScoreRow {
        ScoreRow {
            schema_version: SCHEMA_VERSION,
            key: k.into(),
            model_key: "m".into(),
            model_sha256: "s".into(),
            letters: "AB".into(),
            probs: vec![0.25, 0.75],
            log_scores: vec![-2.0, f64::NEG_INFINITY],
            pred: "B".into(),
            entropy: 0.5,
            max_prob: 0.75,
            margin_top2: 1.0,
            letter_mass: f64::NAN,
            top_tokens: vec![],
            prompt_tokens: 10,
            prompt_hash: "h".into(),
            tokens_evaluated: 10,
            tokens_reused: 0,
            scoring: "x".into(),
            provenance: "cpu".into(),
            context_key: String::new(),
            letter_bound: None,
            open: None,
        }
    }

    fn lines(p: &Path) -> Vec<String> {
        std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn torn_tail_is_cut_and_appends_continue() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c/scores.jsonl");
        {
            let mut c = ScoreCache::open(&p).unwrap();
            c.append(&[row("a"), row("b")]).unwrap();
            c.append(&[row("a")]).unwrap(); // duplicate key: ignored
        }
        assert_eq!(lines(&p).len(), 2);
        // A crash in the middle of writing a third row.
        let mut torn = std::fs::read(&p).unwrap();
        torn.extend_from_slice(b"deadbeef\t{\"key\":\"c\",\"mod");
        std::fs::write(&p, &torn).unwrap();
        let mut c = ScoreCache::open(&p).unwrap();
        assert_eq!(c.len(), 2);
        assert!(c.report.torn_bytes > 0 && c.report.quarantined.is_empty());
        c.append(&[row("c")]).unwrap();
        drop(c);
        let c = ScoreCache::open(&p).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c.report.torn_bytes, 0);
        assert_eq!(c.get("c").unwrap().probs, vec![0.25, 0.75]);
        // Non-finite values come back exactly.
        assert_eq!(c.get("c").unwrap().log_scores[1], f64::NEG_INFINITY);
        assert!(c.get("c").unwrap().letter_mass.is_nan());
        assert!(!p.with_file_name(QUARANTINE_FILE).exists());
    }

    #[test]
    fn a_damaged_line_in_the_middle_is_quarantined_and_the_rest_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("scores.jsonl");
        {
            let mut c = ScoreCache::open(&p).unwrap();
            for k in ["a", "b", "c", "d", "e"] {
                c.append(&[row(k)]).unwrap();
            }
        }
        let original = lines(&p);
        // Flip one byte inside the JSON of line 2 and make line 4 garbage.
        let mut l = original.clone();
        l[1] = l[1].replacen("\"m\"", "\"n\"", 1);
        l[3] = "not a record at all".into();
        std::fs::write(&p, l.join("\n") + "\n").unwrap();
        let c = ScoreCache::open(&p).unwrap();
        assert_eq!(c.len(), 3);
        for k in ["a", "c", "e"] {
            assert!(c.get(k).is_some(), "{k}");
        }
        let q: Vec<(usize, String)> = c.report.quarantined.iter().map(|q| (q.line, q.reason.clone())).collect();
        assert_eq!(q, vec![(2, "checksum mismatch".to_string()), (4, "no checksum field".to_string())]);
        let msg = c.report.describe(&p).unwrap();
        assert!(msg.contains("2 damaged records") && msg.contains("line 2: checksum mismatch") && msg.contains("3 valid records kept"), "{msg}");
        drop(c);
        // The cache now holds exactly the valid lines, byte for byte; the quarantine the others.
        assert_eq!(lines(&p), vec![original[0].clone(), original[2].clone(), original[4].clone()]);
        let qlines = lines(&p.with_file_name(QUARANTINE_FILE));
        assert_eq!(qlines.len(), 2);
        let v: serde_json::Value = serde_json::from_str(&qlines[1]).unwrap();
        assert_eq!(v["line"], 4);
        assert_eq!(v["text"], "not a record at all");
        // Reopening finds nothing more to repair.
        let c = ScoreCache::open(&p).unwrap();
        assert!(c.report.describe(&p).is_none());
    }

    #[test]
    fn version_1_records_are_read_and_newer_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("scores.jsonl");
        // A record as version 1 wrote it: no schema_version, no provenance, null for NaN.
        let v1 = r#"{"key":"old","model_key":"m","model_sha256":"s","letters":"AB","probs":[0.5,0.5],"log_scores":[-1.0,-1.0],"pred":"A","entropy":0.69,"max_prob":0.5,"margin_top2":0.0,"letter_mass":null,"top_tokens":[],"prompt_tokens":3,"prompt_hash":"h","tokens_evaluated":3,"tokens_reused":0,"scoring":"x"}"#;
        std::fs::write(&p, format!("{}\t{v1}\n", checksum(v1))).unwrap();
        let c = ScoreCache::open(&p).unwrap();
        let r = c.get("old").unwrap();
        assert_eq!((r.schema_version, r.provenance.as_str()), (1, ""));
        assert!(r.letter_mass.is_nan());
        assert_eq!(c.provenances(), [String::new()]);
        drop(c);
        let v9 = r#"{"schema_version":9,"key":"new","something":"unknown"}"#;
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str(&format!("{}\t{v9}\n", checksum(v9)));
        std::fs::write(&p, &text).unwrap();
        let e = ScoreCache::open(&p).err().expect("a newer record is refused").to_string();
        assert!(e.contains("line 2") && e.contains("newer hyst-tui") && e.contains("schema 9"), "{e}");
        // Nothing was rewritten or quarantined.
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        assert!(!p.with_file_name(QUARANTINE_FILE).exists());
    }
}
