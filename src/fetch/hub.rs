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

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{sha256_file, FetchError, FetchOptions};
use crate::config::ModelEntry;
use crate::util::{human_bytes, no_proxy_for, origin};

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

/// What the endpoint says about one file.
#[derive(Debug)]
struct Remote {
    commit: String,
    etag: String,
    size: u64,
}

/// Why a request failed.
#[derive(Debug)]
enum NetError {
    /// An HTTP error status, with the hub's `X-Error-Code` / `X-Error-Message` when given.
    Status {
        code: u16,
        hub_code: Option<String>,
        hub_message: Option<String>,
    },
    /// No answer (refused, DNS, TLS, timeout).
    Unreachable(String),
    /// An answer that is not what the hub sends.
    Protocol(String),
}

/// How one download attempt ended, when not with the whole file.
enum Broke {
    /// Worth resuming: a cut connection, a timeout, a 5xx.
    Retry(String),
    /// Resuming will not help.
    Fatal(String),
    Interrupted,
}

struct Client<'e> {
    env: &'e HubEnv,
    /// Follows redirects (downloads may go to a CDN on another host; the token is only sent to
    /// the same host).
    agent: ureq::Agent,
    /// Follows none (metadata: only relative redirects are followed, by hand).
    head: ureq::Agent,
}

impl<'e> Client<'e> {
    fn new(env: &'e HubEnv) -> Self {
        let proxy = !no_proxy_for(&env.endpoint);
        let builder = || {
            ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(30))
                .timeout_read(Duration::from_secs(60))
                .user_agent(&format!("hyst-tui/{}", env!("CARGO_PKG_VERSION")))
                .redirect_auth_headers(ureq::RedirectAuthHeaders::SameHost)
                .try_proxy_from_env(proxy)
        };
        Self {
            env,
            agent: builder().build(),
            head: builder().redirects(0).build(),
        }
    }

    fn request(&self, agent: &ureq::Agent, method: &str, url: &str) -> ureq::Request {
        let r = agent.request(method, url);
        match &self.env.token {
            Some(t) => r.set("Authorization", &format!("Bearer {t}")),
            None => r,
        }
    }

    fn call(req: ureq::Request) -> Result<ureq::Response, NetError> {
        req.call().map_err(|e| match e {
            ureq::Error::Status(code, r) => NetError::Status {
                code,
                hub_code: r.header("x-error-code").map(str::to_string),
                hub_message: r.header("x-error-message").map(str::to_string),
            },
            ureq::Error::Transport(t) => NetError::Unreachable(t.to_string()),
        })
    }

    /// HEAD on the resolve URL, like `huggingface_hub`'s `get_hf_file_metadata`.
    fn metadata(&self, url: &str) -> Result<Remote, NetError> {
        let mut url = url.to_string();
        let mut resp = Self::call(self.request(&self.head, "HEAD", &url))?;
        for _ in 0..10 {
            let relative = resp
                .header("location")
                .filter(|l| (300..400).contains(&resp.status()) && l.starts_with('/') && !l.starts_with("//"))
                .map(str::to_string);
            match relative {
                Some(loc) => {
                    url = format!("{}{loc}", origin(&url));
                    resp = Self::call(self.request(&self.head, "HEAD", &url))?;
                }
                None => break,
            }
        }
        let header = |k: &str| resp.header(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let commit = header("x-repo-commit")
            .ok_or_else(|| NetError::Protocol("no X-Repo-Commit header in the answer (is this a Hugging Face hub?)".into()))?;
        let etag = header("x-linked-etag")
            .or_else(|| header("etag"))
            .map(|e| e.trim_start_matches("W/").trim_matches('"').to_string())
            .ok_or_else(|| NetError::Protocol("no ETag header in the answer".into()))?;
        if !safe_name(&commit) || !safe_name(&etag) {
            return Err(NetError::Protocol(format!("unusable commit {commit:?} or etag {etag:?} in the answer")));
        }
        let redirect = (300..400).contains(&resp.status());
        let mut size = header("x-linked-size").and_then(|s| s.parse::<u64>().ok());
        if size.is_none() && !redirect {
            size = header("content-length").and_then(|s| s.parse().ok());
        }
        if size.is_none() {
            // A redirect to another host without X-Linked-Size: ask the target.
            if let Some(loc) = header("location") {
                let r = Self::call(self.agent.request("HEAD", &loc))?;
                size = r.header("content-length").and_then(|s| s.trim().parse().ok());
            }
        }
        let size = size.ok_or_else(|| NetError::Protocol("no X-Linked-Size or Content-Length header in the answer".into()))?;
        Ok(Remote { commit, etag, size })
    }

    /// Downloads `url` into `partial` until it holds `size` bytes, resuming after breaks.
    fn download(&self, url: &str, partial: &Path, size: u64, opts: &FetchOptions, key: &str, log: &mut dyn Write) -> Result<(), String> {
        let pb = if opts.progress {
            indicatif::ProgressBar::new(size)
        } else {
            indicatif::ProgressBar::hidden()
        };
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec} ({eta})",
        ) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_message(key.to_string());
        let mut retry = 0u32;
        let result = loop {
            match self.download_once(url, partial, size, opts, &pb, log) {
                Ok(()) => break Ok(()),
                Err(Broke::Fatal(m)) => break Err(m),
                Err(Broke::Interrupted) => {
                    break Err(format!(
                        "interrupted at {} of {size} bytes; run the same command again to resume (partial download kept: {})",
                        file_len(partial),
                        partial.display()
                    ))
                }
                Err(Broke::Retry(m)) => {
                    let have = file_len(partial);
                    if retry >= opts.retries {
                        break Err(format!(
                            "the download broke off at {have} of {size} bytes ({m}); run the same command again to resume from there (partial download kept: {})",
                            partial.display()
                        ));
                    }
                    retry += 1;
                    let wait = Duration::from_secs(1 << (retry - 1).min(5));
                    pb.suspend(|| {
                        let _ = writeln!(
                            log,
                            "{key}: the download broke off at {have} of {size} bytes ({m}); resuming in {}s (retry {retry} of {})",
                            wait.as_secs(),
                            opts.retries
                        );
                    });
                    let t0 = std::time::Instant::now();
                    while t0.elapsed() < wait && !(opts.interrupted)() {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
            }
        };
        pb.finish_and_clear();
        result
    }

    fn download_once(
        &self,
        url: &str,
        partial: &Path,
        size: u64,
        opts: &FetchOptions,
        pb: &indicatif::ProgressBar,
        log: &mut dyn Write,
    ) -> Result<(), Broke> {
        let mut start = file_len(partial);
        if start > size {
            let _ = fs::remove_file(partial);
            start = 0;
        }
        if start == size && partial.exists() {
            return Ok(());
        }
        let mut req = self.request(&self.agent, "GET", url);
        if start > 0 {
            req = req.set("Range", &format!("bytes={start}-"));
        }
        let resp = match Self::call(req) {
            Ok(r) => r,
            Err(NetError::Status { code: 416, .. }) => {
                let _ = fs::remove_file(partial);
                return Err(Broke::Retry("the server refused the resume offset; starting over".into()));
            }
            Err(NetError::Status { code, .. }) if code >= 500 || code == 429 || code == 408 => {
                return Err(Broke::Retry(format!("HTTP {code}")))
            }
            Err(NetError::Status { code, .. }) => return Err(Broke::Fatal(format!("HTTP {code} for {url}"))),
            Err(NetError::Unreachable(m) | NetError::Protocol(m)) => return Err(Broke::Retry(m)),
        };
        let write_err = |e: std::io::Error| Broke::Fatal(format!("cannot write {}: {e}", partial.display()));
        let (mut out, mut have) = match resp.status() {
            206 => {
                let range_start = resp
                    .header("content-range")
                    .and_then(|v| v.trim().strip_prefix("bytes "))
                    .and_then(|v| v.split('-').next())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                if range_start != Some(start) {
                    let _ = fs::remove_file(partial);
                    return Err(Broke::Retry(format!(
                        "asked for bytes from {start}, the server sent Content-Range {:?}; starting over",
                        resp.header("content-range").unwrap_or("")
                    )));
                }
                (OpenOptions::new().append(true).open(partial).map_err(write_err)?, start)
            }
            200 => {
                if start > 0 {
                    pb.suspend(|| {
                        let _ = writeln!(log, "the server does not resume downloads (no answer to a Range request); starting over");
                    });
                }
                (File::create(partial).map_err(write_err)?, 0)
            }
            s => return Err(Broke::Fatal(format!("unexpected HTTP {s} for {url}"))),
        };
        pb.set_position(have);
        let mut reader = resp.into_reader();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            if (opts.interrupted)() {
                let _ = out.sync_data();
                return Err(Broke::Interrupted);
            }
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let _ = out.sync_data();
                    return Err(Broke::Retry(e.to_string()));
                }
            };
            if have + n as u64 > size {
                drop(out);
                let _ = fs::remove_file(partial);
                return Err(Broke::Fatal(format!("the server sent more than the {size} bytes it announced")));
            }
            out.write_all(&buf[..n]).map_err(write_err)?;
            have += n as u64;
            pb.set_position(have);
        }
        out.sync_all().map_err(write_err)?;
        if have < size {
            return Err(Broke::Retry("the connection closed early".into()));
        }
        Ok(())
    }
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
