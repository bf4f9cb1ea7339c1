//! Hugging Face hub downloads, kept in the hub's own cache and used from there in place.
//!
//! The cache is the one `huggingface_hub` (Python) and `hf-hub` (Rust) share, so a file that any
//! of them downloaded is found, and one downloaded here serves them too. For `OWNER/NAME`:
//!
//! ```text
//! <hub cache>/models--OWNER--NAME/blobs/<etag>                 the file's bytes (LFS: etag = sha256)
//! <hub cache>/models--OWNER--NAME/blobs/<etag>.incomplete      a download in progress
//! <hub cache>/models--OWNER--NAME/blobs/<etag>.lock            held while downloading
//! <hub cache>/models--OWNER--NAME/snapshots/<commit>/<file>    relative symlink to the blob
//! <hub cache>/models--OWNER--NAME/refs/<revision>              the commit a branch or tag named
//! ```
//!
//! The hub cache is `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`
//! (`$XDG_CACHE_HOME/huggingface/hub` when that is set); the endpoint is `$HF_ENDPOINT`, else
//! <https://huggingface.co>; a token comes from `$HF_TOKEN`, else `$HF_HOME/token`;
//! `HF_HUB_OFFLINE=1` uses the cache only.
//!
//! Downloading follows the hub's URL scheme `{endpoint}/{repo}/resolve/{revision}/{file}`: a HEAD
//! request (relative redirects followed) gives the commit (`X-Repo-Commit`), the etag
//! (`X-Linked-Etag`, else `ETag`) and the size (`X-Linked-Size`, else `Content-Length`); a GET
//! (redirects followed, e.g. to a CDN) streams the bytes into `<etag>.incomplete`. A download that
//! breaks off is resumed with an HTTP `Range: bytes=N-` request, up to `retries` times in the same
//! run and from wherever it stopped on the next run (a `206` must start at N; a `200` means the
//! server ignored the range, so the file starts over). Only a complete file whose sha256 matches
//! the pin in models.toml (and, for LFS files, the etag) becomes the blob; a mismatch deletes the
//! download. The models directory then gets a hard link to the blob, or a symlink where the two
//! directories are on different file systems: never a second copy.
//!
//! (`hf-hub` 0.4's own sync client resumes its `<etag>.part` files too, but appends whatever the
//! server sends — a `200` to a range request doubles the start — and a retry after a failure
//! before any byte was written restarts at offset 0 of an appending file; hence this client.)

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

mod client;

use super::{sha256_file, FetchError, FetchOptions};
use client::{Client, NetError, Remote};
use crate::config::ModelEntry;
use crate::util::human_bytes;

/// The hub's address when `HF_ENDPOINT` is not set.
pub(crate) const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Where and how the hub is reached, read from the variables `huggingface_hub` reads.
#[derive(Clone, Debug)]
pub(crate) struct HubEnv {
    /// Base URL, without a trailing `/`.
    pub endpoint: String,
    /// Whether `endpoint` came from `HF_ENDPOINT`.
    pub endpoint_from_env: bool,
    /// The hub cache directory (the one holding `models--OWNER--NAME`).
    pub cache: PathBuf,
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`: never contact the endpoint.
    pub offline: bool,
}

impl HubEnv {
    pub(crate) fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let home = var("HF_HOME").map(PathBuf::from).unwrap_or_else(|| {
            var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| directories::BaseDirs::new().map(|b| b.home_dir().join(".cache")))
                .unwrap_or_else(|| PathBuf::from(".cache"))
                .join("huggingface")
        });
        let cache = var("HF_HUB_CACHE")
            .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("hub"));
        let token = var("HF_TOKEN").or_else(|| var("HUGGING_FACE_HUB_TOKEN")).or_else(|| {
            let p = var("HF_TOKEN_PATH").map(PathBuf::from).unwrap_or_else(|| home.join("token"));
            fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
        });
        let (endpoint, endpoint_from_env) = match var("HF_ENDPOINT") {
            Some(e) => (e.trim_end_matches('/').to_string(), true),
            None => (DEFAULT_ENDPOINT.to_string(), false),
        };
        let offline = var("HF_HUB_OFFLINE").is_some_and(|v| !matches!(v.to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off"));
        Self {
            endpoint,
            endpoint_from_env,
            cache,
            token,
            offline,
        }
    }

    /// For error messages: which endpoint was used and why.
    pub(crate) fn endpoint_note(&self) -> String {
        if self.endpoint_from_env {
            format!("HF_ENDPOINT={}", self.endpoint)
        } else {
            format!("HF_ENDPOINT unset, using {}", self.endpoint)
        }
    }
}

/// One repository's folder in the hub cache.
struct RepoCache {
    dir: PathBuf,
}

impl RepoCache {
    fn new(cache: &Path, repo: &str) -> Self {
        Self {
            dir: cache.join(format!("models--{}", repo.replace('/', "--"))),
        }
    }

    fn blob(&self, etag: &str) -> PathBuf {
        self.dir.join("blobs").join(etag)
    }

    fn pointer(&self, commit: &str, file: &str) -> PathBuf {
        self.dir.join("snapshots").join(commit).join(file)
    }

    /// The blob behind `snapshots/<commit>/<file>` for `revision`, when the cache has it.
    fn cached(&self, revision: &str, file: &str) -> Option<PathBuf> {
        let commit = if is_commit_hash(revision) {
            revision.to_string()
        } else {
            fs::read_to_string(self.dir.join("refs").join(revision)).ok()?.trim().to_string()
        };
        if commit.is_empty() {
            return None;
        }
        let p = self.pointer(&commit, file);
        fs::metadata(&p).ok().filter(|m| m.is_file())?;
        fs::canonicalize(&p).ok()
    }

    /// Records a finished download the way the hub's clients do: the snapshot pointer (a
    /// relative symlink to the blob) and, for a branch or tag, the ref. Best effort: the file in
    /// the models directory links to the blob itself.
    fn record(&self, revision: &str, commit: &str, file: &str, etag: &str) -> Result<(), String> {
        let pointer = self.pointer(commit, file);
        if fs::metadata(&pointer).is_err() {
            let parent = pointer.parent().unwrap_or(&self.dir);
            fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            let _ = fs::remove_file(&pointer); // a dangling pointer
            let depth = Path::new(file).components().count() + 1; // <commit>/<subdirs…>
            let mut target = PathBuf::new();
            for _ in 0..depth {
                target.push("..");
            }
            target.push("blobs");
            target.push(etag);
            if symlink(&target, &pointer).is_err() {
                // No symlinks here (some Windows setups): the models directory links the blob.
                tracing::debug!("no snapshot symlink at {}", pointer.display());
            }
        }
        if revision != commit {
            let r = self.dir.join("refs").join(revision);
            if let Some(parent) = r.parent() {
                fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
            }
            fs::write(&r, commit).map_err(|e| format!("cannot write {}: {e}", r.display()))?;
        }
        Ok(())
    }
}

fn is_commit_hash(s: &str) -> bool {
    s.len() == 40 && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

/// An etag or commit from the server becomes a file name: letters, digits, `-`, `_`, `.` only.
fn safe_name(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('.') && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(windows)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::windows::fs::symlink_file(target, link)
}

#[cfg(not(any(unix, windows)))]
fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no symlinks on this platform"))
}

fn file_len(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// What a file's sha256 says.
enum Verdict {
    Good,
    /// The bytes do not hash to the etag they are stored under (a corrupt cache entry or transfer).
    Corrupt,
    /// Intact, but not the file models.toml pins.
    NotPinned { expected: String },
}

fn verdict(entry: &ModelEntry, etag: Option<&str>, actual: &str) -> Verdict {
    if let Some(e) = etag.filter(|e| is_sha256(e)) {
        if !e.eq_ignore_ascii_case(actual) {
            return Verdict::Corrupt;
        }
    }
    match &entry.sha256 {
        Some(expected) if expected != actual => Verdict::NotPinned {
            expected: expected.clone(),
        },
        _ => Verdict::Good,
    }
}

/// `models fetch` for a `hugging_face` source: see the module documentation.
#[allow(clippy::too_many_arguments)]
pub(super) fn fetch_hf(
    entry: &ModelEntry,
    repo: &str,
    file: &str,
    revision: Option<&str>,
    dest: &Path,
    opts: &FetchOptions,
    log: &mut dyn Write,
) -> Result<PathBuf, FetchError> {
    let key = entry.key.as_str();
    let fail = |message: String| FetchError::Failed {
        key: key.to_string(),
        message,
    };
    let env = HubEnv::from_env();
    let revision = revision.unwrap_or("main");
    let what = if revision == "main" {
        format!("{repo}/{file}")
    } else {
        format!("{repo}/{file} (revision {revision})")
    };
    let rc = RepoCache::new(&env.cache, repo);

    // 1. Already in the hub cache (an earlier fetch, or another tool)?
    if let Some(blob) = rc.cached(revision, file) {
        let actual = sha256_file(&blob).map_err(|e| fail(format!("cannot read {}: {e}", blob.display())))?;
        let etag = blob.file_name().and_then(|n| n.to_str()).map(str::to_string);
        match verdict(entry, etag.as_deref(), &actual) {
            Verdict::Good => {
                let _ = writeln!(log, "{key}: {what} is in the hub cache ({})", blob.display());
                return place(entry, &blob, dest, &actual, log);
            }
            Verdict::Corrupt => {
                let _ = writeln!(
                    log,
                    "{key}: the hub cache's {} is corrupt (sha256 {actual}); deleting it and downloading again",
                    blob.display()
                );
                fs::remove_file(&blob).map_err(|e| fail(format!("cannot delete {}: {e}", blob.display())))?;
            }
            Verdict::NotPinned { .. } => {
                let _ = writeln!(
                    log,
                    "{key}: the hub cache's copy of {what} has sha256 {actual}, not the pinned one; asking the hub for the current file"
                );
            }
        }
    }
    if env.offline {
        return Err(fail(format!(
            "{what} is not in the hub cache ({}) and HF_HUB_OFFLINE is set",
            env.cache.display()
        )));
    }

    // 2. Ask the hub what the file is.
    let client = Client::new(&env);
    let url = format!(
        "{}/{repo}/resolve/{}/{}",
        env.endpoint,
        revision.replace('/', "%2F"),
        file.replace(' ', "%20")
    );
    let remote = client.metadata(&url).map_err(|e| fail(describe(e, &what, repo, &url, &env)))?;
    let blob = rc.blob(&remote.etag);
    let blobs = rc.dir.join("blobs");
    fs::create_dir_all(&blobs).map_err(|e| fail(format!("cannot create the hub cache folder {}: {e}", blobs.display())))?;
    let lock_path = rc.dir.join("blobs").join(format!("{}.lock", remote.etag));
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| fail(format!("cannot create {}: {e}", lock_path.display())))?;
    if lock.try_lock().is_err() {
        let _ = writeln!(log, "{key}: waiting for another download of {what} to finish ({})", lock_path.display());
        lock.lock().map_err(|e| fail(format!("cannot lock {}: {e}", lock_path.display())))?;
    }

    // 3. The blob may be there under another revision; else download it.
    let have_blob = fs::metadata(&blob).is_ok_and(|m| m.is_file() && m.len() == remote.size);
    let actual = if have_blob {
        let actual = sha256_file(&blob).map_err(|e| fail(format!("cannot read {}: {e}", blob.display())))?;
        match verdict(entry, Some(&remote.etag), &actual) {
            Verdict::Good => actual,
            Verdict::Corrupt => {
                fs::remove_file(&blob).map_err(|e| fail(format!("cannot delete {}: {e}", blob.display())))?;
                download_blob(entry, &client, &url, &remote, &blob, &what, &env, opts, log)?
            }
            Verdict::NotPinned { expected } => {
                return Err(fail(format!(
                    "the hub serves {what} (commit {}) with sha256 {actual}, but models.toml pins {expected}; nothing was linked \
                     (the hub cache keeps its intact copy {}; fix `sha256` or `revision` in models.toml)",
                    remote.commit,
                    blob.display()
                )));
            }
        }
    } else {
        download_blob(entry, &client, &url, &remote, &blob, &what, &env, opts, log)?
    };
    rc.record(revision, &remote.commit, file, &remote.etag).map_err(fail)?;
    drop(lock);
    place(entry, &blob, dest, &actual, log)
}

/// Downloads into `<blob>.incomplete`, checks it, and renames it to the blob. Returns its sha256.
#[allow(clippy::too_many_arguments)]
fn download_blob(
    entry: &ModelEntry,
    client: &Client,
    url: &str,
    remote: &Remote,
    blob: &Path,
    what: &str,
    env: &HubEnv,
    opts: &FetchOptions,
    log: &mut dyn Write,
) -> Result<String, FetchError> {
    let key = entry.key.as_str();
    let fail = |message: String| FetchError::Failed {
        key: key.to_string(),
        message,
    };
    let partial = blob.with_file_name(format!("{}.incomplete", remote.etag));
    let have = file_len(&partial);
    if have > 0 && have <= remote.size {
        let _ = writeln!(
            log,
            "{key}: resuming the download of {what} at {have} of {} bytes from {}",
            remote.size, env.endpoint
        );
    } else {
        let _ = writeln!(
            log,
            "{key}: downloading {what} ({}) from {} into the hub cache {}",
            human_bytes(remote.size),
            env.endpoint,
            env.cache.display()
        );
    }
    client
        .download(url, &partial, remote.size, opts, key, log)
        .map_err(|m| fail(format!("{what}: {m}")))?;
    let actual = sha256_file(&partial).map_err(|e| fail(format!("cannot read {}: {e}", partial.display())))?;
    match verdict(entry, Some(&remote.etag), &actual) {
        Verdict::Good => {}
        Verdict::Corrupt => {
            let _ = fs::remove_file(&partial);
            return Err(fail(format!(
                "the download of {what} is corrupt: sha256 {actual}, the hub's etag is {}; it was deleted, run the command again",
                remote.etag
            )));
        }
        Verdict::NotPinned { expected } => {
            let _ = fs::remove_file(&partial);
            return Err(FetchError::Mismatch {
                key: key.to_string(),
                path: format!("{what} (commit {})", remote.commit),
                expected,
                actual,
            });
        }
    }
    fs::rename(&partial, blob).map_err(|e| fail(format!("cannot move {} to {}: {e}", partial.display(), blob.display())))?;
    Ok(actual)
}

/// One line about a failed metadata request, naming the file and the endpoint.
fn describe(e: NetError, what: &str, repo: &str, url: &str, env: &HubEnv) -> String {
    let note = env.endpoint_note();
    match e {
        NetError::Unreachable(m) => format!("cannot download {what}: the hub is unreachable ({m}; {note})"),
        NetError::Protocol(m) => format!("cannot download {what} from {url}: {m} ({note})"),
        NetError::Status {
            code,
            hub_code,
            hub_message,
        } => {
            let why = match (code, hub_code.as_deref()) {
                (_, Some("GatedRepo")) | (403, _) => format!(
                    "access to {repo} is restricted (HTTP {code}): accept its terms on the hub and set HF_TOKEN"
                ),
                (_, Some("RepoNotFound")) | (401, _) => format!(
                    "repository {repo} not found (HTTP {code}; a private or gated one needs HF_TOKEN)"
                ),
                (_, Some("RevisionNotFound")) => format!("revision not found in {repo} (HTTP {code})"),
                (404, _) => format!("{what} not found (HTTP 404 for {url})"),
                _ => format!(
                    "HTTP {code} for {url}{}",
                    hub_message.map(|m| format!(": {m}")).unwrap_or_default()
                ),
            };
            format!("cannot download {what}: {why} ({note})")
        }
    }
}

/// Links the blob into the models directory: a hard link, else a symlink; never a copy.
fn place(entry: &ModelEntry, blob: &Path, dest: &Path, actual: &str, log: &mut dyn Write) -> Result<PathBuf, FetchError> {
    let fail = |message: String| FetchError::Failed {
        key: entry.key.clone(),
        message,
    };
    let dir = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
    let tmp = dir.join(format!(".{}.link", entry.file));
    let _ = fs::remove_file(&tmp);
    let how = match fs::hard_link(blob, &tmp) {
        Ok(()) => "a hard link to".to_string(),
        Err(hard) => {
            symlink(blob, &tmp).map_err(|e| {
                fail(format!(
                    "cannot link {} to {} (hard link: {hard}; symlink: {e})",
                    dest.display(),
                    blob.display()
                ))
            })?;
            format!("a symlink (no hard link: {hard}) to")
        }
    };
    if let Err(e) = fs::rename(&tmp, dest) {
        let _ = fs::remove_file(&tmp);
        return Err(fail(format!("cannot put the link at {}: {e}", dest.display())));
    }
    let pin = if entry.sha256.is_some() { "verified" } else { "not pinned" };
    let _ = writeln!(
        log,
        "{}: {} is {how} {} in the hub cache (sha256 {actual}, {pin})",
        entry.key,
        dest.display(),
        blob.display()
    );
    Ok(dest.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::{no_proxy_for, origin};

    #[test]
    fn origin_and_proxy_bypass() {
        assert_eq!(origin("http://127.0.0.1:8080/a/b"), "http://127.0.0.1:8080");
        assert_eq!(origin("https://huggingface.co"), "https://huggingface.co");
        assert!(no_proxy_for("http://127.0.0.1:9/x"));
        assert!(no_proxy_for("http://localhost:9/x"));
        assert!(no_proxy_for("http://[::1]:9/x"));
    }

    #[test]
    fn names_from_the_server_are_checked() {
        assert!(safe_name("a3f1c0ffee"));
        assert!(!safe_name("../../etc"));
        assert!(!safe_name(".hidden"));
        assert!(!safe_name(""));
        assert!(is_commit_hash(&"a".repeat(40)));
        assert!(!is_commit_hash("main"));
    }

    #[test]
    fn cached_lookup_follows_refs_and_pointers() {
        let dir = tempfile::tempdir().unwrap();
        let rc = RepoCache::new(dir.path(), "o/r");
        let etag = "e".repeat(64);
        std::fs::create_dir_all(rc.dir.join("blobs")).unwrap();
        std::fs::write(rc.blob(&etag), b"GGUF").unwrap();
        let commit = "c".repeat(40);
        assert!(rc.cached("main", "sub/x.gguf").is_none());
        rc.record("main", &commit, "sub/x.gguf", &etag).unwrap();
        let got = rc.cached("main", "sub/x.gguf").unwrap();
        assert_eq!(got, std::fs::canonicalize(rc.blob(&etag)).unwrap());
        assert_eq!(rc.cached(&commit, "sub/x.gguf"), Some(got));
        assert!(rc.cached("v2", "sub/x.gguf").is_none());
    }
}
