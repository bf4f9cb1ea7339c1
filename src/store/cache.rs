//! The append-only score cache (`cache/scores.jsonl`).
//!
//! Each line is `<sha256 of the JSON>\t<JSON ScoreRow>\n`. On open, lines are read until the first
//! one that is incomplete or whose checksum does not match; the file is truncated there (a torn
//! write from a crash), so appends always continue a valid file.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::rows::ScoreRow;

pub struct ScoreCache {
    path: PathBuf,
    file: File,
    rows: HashMap<String, ScoreRow>,
    /// Bytes cut off a torn tail when the cache was opened.
    pub repaired_bytes: u64,
}

fn checksum(json: &str) -> String {
    hex::encode(Sha256::digest(json.as_bytes()))
}

impl ScoreCache {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut file = OpenOptions::new().create(true).read(true).append(true).open(path)?;
        let mut rows = HashMap::new();
        let mut good: u64 = 0;
        {
            let mut r = BufReader::new(&file);
            let mut line = String::new();
            loop {
                line.clear();
                let n = r.read_line(&mut line)?;
                if n == 0 || !line.ends_with('\n') {
                    break;
                }
                let body = &line[..line.len() - 1];
                let Some((sum, json)) = body.split_once('\t') else { break };
                if checksum(json) != sum {
                    break;
                }
                let Ok(row) = serde_json::from_str::<ScoreRow>(json) else { break };
                rows.insert(row.key.clone(), row);
                good += n as u64;
            }
        }
        let len = file.metadata()?.len();
        let repaired_bytes = len - good;
        if repaired_bytes > 0 {
            file.set_len(good)?;
            file.sync_all()?;
        }
        file.seek(SeekFrom::End(0))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            rows,
            repaired_bytes,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn get(&self, key: &str) -> Option<&ScoreRow> {
        self.rows.get(key)
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Appends rows in one write and fsyncs (new keys only).
    pub fn append(&mut self, rows: &[ScoreRow]) -> std::io::Result<()> {
        let mut buf = String::new();
        for r in rows {
            if self.rows.contains_key(&r.key) {
                continue;
            }
            let json = serde_json::to_string(r).map_err(std::io::Error::other)?;
            buf.push_str(&checksum(&json));
            buf.push('\t');
            buf.push_str(&json);
            buf.push('\n');
        }
        if buf.is_empty() {
            return Ok(());
        }
        self.file.write_all(buf.as_bytes())?;
        self.file.sync_data()?;
        for r in rows {
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
            key: k.into(),
            model_key: "m".into(),
            model_sha256: "s".into(),
            letters: "AB".into(),
            probs: vec![0.25, 0.75],
            log_scores: vec![-2.0, -1.0],
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
        }
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
        let full = std::fs::read(&p).unwrap();
        assert_eq!(full.iter().filter(|&&b| b == b'\n').count(), 2);
        // Simulate a crash in the middle of writing a third row.
        let mut torn = full.clone();
        torn.extend_from_slice(b"deadbeef\t{\"key\":\"c\",\"mod");
        std::fs::write(&p, &torn).unwrap();
        let mut c = ScoreCache::open(&p).unwrap();
        assert_eq!(c.len(), 2);
        assert!(c.repaired_bytes > 0);
        c.append(&[row("c")]).unwrap();
        drop(c);
        let c = ScoreCache::open(&p).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c.repaired_bytes, 0);
        assert_eq!(c.get("c").unwrap().probs, vec![0.25, 0.75]);
        // A corrupted (bit-flipped) line is also where reading stops.
        let mut bad = std::fs::read(&p).unwrap();
        let i = bad.len() - 5;
        bad[i] ^= 1;
        std::fs::write(&p, &bad).unwrap();
        assert_eq!(ScoreCache::open(&p).unwrap().len(), 2);
    }
}
