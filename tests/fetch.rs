//! `models fetch` for a `hugging_face` source, end to end through the binary, against a small
//! hub-compatible HTTP server that runs inside the test (no internet, no extra service).
//!
//! The server answers like huggingface.co does for an LFS file: `HEAD/GET
//! /{repo}/resolve/{revision}/{file}` → 302 to an absolute "CDN" URL, with `X-Repo-Commit`,
//! `X-Linked-Etag` (the sha256) and `X-Linked-Size`; the CDN serves the bytes, honouring
//! `Range: bytes=N-` with a 206, and can be told to cut the connection after some bytes.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");
const REPO: &str = "test-org/tiny-GGUF";
const FILE: &str = "tiny-Q8_0.gguf";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const SIZE: usize = 3 * 1024 * 1024 + 17;

/// A few MB of deterministic bytes that start like a GGUF file.
fn payload() -> Vec<u8> {
    let mut v = Vec::with_capacity(SIZE);
    v.extend_from_slice(b"GGUF");
    v.extend_from_slice(&3u32.to_le_bytes());
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while v.len() < SIZE {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(SIZE);
    v
}

fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// One request the server saw.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    range: Option<String>,
}

struct Hub {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// For the next GETs of the bytes: close the connection after this many body bytes.
    cuts: Arc<Mutex<VecDeque<usize>>>,
}

impl Hub {
    fn start(data: Vec<u8>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let cuts = Arc::new(Mutex::new(VecDeque::new()));
        let data = Arc::new(data);
        let (s, c) = (seen.clone(), cuts.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (s, c, d) = (s.clone(), c.clone(), data.clone());
                std::thread::spawn(move || {
                    let _ = serve(stream, port, &d, &s, &c);
                });
            }
        });
        Hub { port, seen, cuts }
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn cut_next_download_after(&self, n: usize) {
        self.cuts.lock().unwrap().push_back(n);
    }
}

fn serve(mut stream: TcpStream, port: u16, data: &[u8], seen: &Mutex<Vec<Seen>>, cuts: &Mutex<VecDeque<usize>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    reader.read_line(&mut first)?;
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: path.clone(),
        range: range.clone(),
    });
    let sha = sha256_hex(data);
    let cdn = format!("/cdn/{sha}");
    let head = method == "HEAD";
    let mut out: Vec<u8> = Vec::new();
    if path == format!("/{REPO}/resolve/main/{FILE}") {
        write!(
            out,
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:{port}{cdn}\r\nX-Repo-Commit: {COMMIT}\r\n\
             X-Linked-Etag: \"{sha}\"\r\nX-Linked-Size: {}\r\nETag: \"{}\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            data.len(),
            "a".repeat(40)
        )?;
        stream.write_all(&out)?;
    } else if path == cdn {
        let start = range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes="))
            .and_then(|r| r.split('-').next())
            .and_then(|s| s.parse::<usize>().ok());
        let body = &data[start.unwrap_or(0).min(data.len())..];
        match start {
            Some(s) => write!(
                out,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {s}-{}/{}\r\n",
                data.len() - 1,
                data.len()
            )?,
            None => write!(out, "HTTP/1.1 200 OK\r\n")?,
        }
        write!(out, "Content-Length: {}\r\nConnection: close\r\n\r\n", body.len())?;
        stream.write_all(&out)?;
        if !head {
            let cut = cuts.lock().unwrap().pop_front();
            match cut {
                Some(n) => {
                    stream.write_all(&body[..n.min(body.len())])?;
                    stream.flush()?;
                    // Cut the connection mid-body.
                    let _ = stream.shutdown(Shutdown::Both);
                    return Ok(());
                }
                None => stream.write_all(body)?,
            }
        }
    } else {
        stream.write_all(
            b"HTTP/1.1 404 Not Found\r\nX-Error-Code: EntryNotFound\r\nX-Error-Message: Entry not found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )?;
    }
    stream.flush()?;
    let _ = stream.shutdown(Shutdown::Write);
    // Drain so the client never sees a reset.
    let mut sink = [0u8; 1024];
    let _ = reader.read(&mut sink);
    Ok(())
}

/// A temp dir with models.toml (one hugging_face model `tiny`), models/ and hf/ (HF_HOME).
struct Setup {
    dir: tempfile::TempDir,
    hub_cache: PathBuf,
    endpoint: String,
}

impl Setup {
    fn new(endpoint: &str, sha256: Option<&str>, file: &str) -> Self {
        Self::with_cache(endpoint, sha256, file, None)
    }

    /// `hub_cache`: set HF_HUB_CACHE there (else HF_HOME=<dir>/hf, so the cache is <dir>/hf/hub).
    fn with_cache(endpoint: &str, sha256: Option<&str>, file: &str, hub_cache: Option<PathBuf>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let pin = sha256.map(|s| format!("sha256 = \"{s}\"\n")).unwrap_or_default();
        std::fs::write(
            dir.path().join("models.toml"),
            format!(
                "[models.tiny]\nname = \"Tiny\"\nfamily = \"test\"\nfile = \"{FILE}\"\n{pin}system = \"native\"\n\
                 source = {{ kind = \"hugging_face\", repo = \"{REPO}\", file = \"{file}\" }}\n"
            ),
        )
        .unwrap();
        let hub_cache = hub_cache.unwrap_or_else(|| dir.path().join("hf").join("hub"));
        Setup {
            dir,
            hub_cache,
            endpoint: endpoint.to_string(),
        }
    }

    fn models(&self) -> PathBuf {
        self.dir.path().join("models")
    }

    fn repo_cache(&self) -> PathBuf {
        self.hub_cache.join("models--test-org--tiny-GGUF")
    }

    fn blob(&self, sha: &str) -> PathBuf {
        self.repo_cache().join("blobs").join(sha)
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut c = Command::new(BIN);
        c.arg("--models-config").arg(self.dir.path().join("models.toml")).args(args);
        for k in [
            "HF_TOKEN",
            "HUGGING_FACE_HUB_TOKEN",
            "HF_HUB_OFFLINE",
            "HF_HUB_CACHE",
            "HUGGINGFACE_HUB_CACHE",
            "HF_HOME",
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            c.env_remove(k);
        }
        if self.hub_cache == self.dir.path().join("hf").join("hub") {
            c.env("HF_HOME", self.dir.path().join("hf"));
        } else {
            c.env("HF_HUB_CACHE", &self.hub_cache);
        }
        c.env("HF_ENDPOINT", &self.endpoint)
            .env("HYST_MODELS_DIR", self.models())
            .env("HYST_DATA_DIR", self.dir.path().join("data"));
        c.output().unwrap()
    }

    fn fetch(&self, extra: &[&str]) -> Output {
        let mut args = vec!["models", "fetch", "tiny"];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn succeeded(o: &Output) -> String {
    assert!(o.status.success(), "failed: {}", stderr(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Exit 1 and exactly one `error:` line on stderr, the last one, containing every needle.
/// Lines before it may only be the fetch's own progress lines (`tiny: …`).
fn one_error_line(o: &Output, needles: &[&str]) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    let last = *lines.last().expect("no stderr");
    assert!(last.starts_with("error: "), "{err}");
    assert_eq!(lines.iter().filter(|l| l.contains("error")).count(), 1, "{err}");
    assert!(lines[..lines.len() - 1].iter().all(|l| l.starts_with("tiny: ")), "{err}");
    for n in needles {
        assert!(last.contains(n), "{n:?} not in {last}");
    }
    last.to_string()
}

#[cfg(unix)]
fn inode(p: &Path) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).unwrap();
    (m.dev(), m.ino(), m.nlink())
}

fn leftovers(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".lock") {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn download_verify_and_link_in_place() {
    let data = payload();
    let sha = sha256_hex(&data);
    let hub = Hub::start(data.clone());
    let s = Setup::new(&hub.endpoint(), Some(&sha), FILE);
    let o = s.fetch(&[]);
    let out = succeeded(&o);
    let dest = s.models().join(FILE);
    assert_eq!(out.trim(), format!("tiny\t{}", dest.display()));
    let log = stderr(&o);
    assert!(log.contains(&format!("downloading {REPO}/{FILE} (3.1 MB) from {}", hub.endpoint())), "{log}");
    assert!(log.contains("is a hard link to"), "{log}");
    assert!(log.contains("verified"), "{log}");

    // The models directory holds a hard link to the hub cache's blob: one copy on disk.
    let blob = s.blob(&sha);
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    #[cfg(unix)]
    {
        let (d1, i1, n1) = inode(&dest);
        let (d2, i2, _) = inode(&blob);
        assert_eq!((d1, i1), (d2, i2), "not the same file");
        assert_eq!(n1, 2, "blob + models-dir link");
    }
    assert!(!std::fs::symlink_metadata(&dest).unwrap().file_type().is_symlink());
    // The hub's layout: snapshot pointer (relative symlink) and ref, no partial download left.
    let pointer = s.repo_cache().join("snapshots").join(COMMIT).join(FILE);
    #[cfg(unix)]
    assert_eq!(std::fs::read_link(&pointer).unwrap(), Path::new("../../blobs").join(&sha));
    assert_eq!(std::fs::canonicalize(&pointer).unwrap(), std::fs::canonicalize(&blob).unwrap());
    assert_eq!(std::fs::read_to_string(s.repo_cache().join("refs").join("main")).unwrap(), COMMIT);
    assert_eq!(leftovers(&s.repo_cache().join("blobs")), vec![sha.clone()]);
    let seen = hub.seen();
    assert!(seen.iter().any(|r| r.method == "HEAD" && r.path.ends_with(FILE)), "{seen:?}");
    assert!(seen.iter().any(|r| r.method == "GET" && r.path.starts_with("/cdn/")), "{seen:?}");

    // `models list` hashes through the link.
    let list = succeeded(&s.run(&["models", "list"]));
    let row = list.lines().find(|l| l.starts_with("tiny ")).unwrap();
    assert!(row.contains(" yes ") && row.contains(" ok "), "{list}");

    // Fetching again: present, nothing downloaded.
    let n = hub.seen().len();
    let again = s.fetch(&[]);
    succeeded(&again);
    assert!(stderr(&again).contains("present, sha256 ok"), "{}", stderr(&again));
    assert_eq!(hub.seen().len(), n);

    // The models-dir link removed: linked again from the cache, still without the network.
    std::fs::remove_file(&dest).unwrap();
    let relink = s.fetch(&[]);
    succeeded(&relink);
    assert!(stderr(&relink).contains("is in the hub cache"), "{}", stderr(&relink));
    assert_eq!(hub.seen().len(), n);
    #[cfg(unix)]
    assert_eq!(inode(&dest).1, inode(&blob).1);
}

#[test]
fn a_cut_connection_resumes_on_the_next_run() {
    let data = payload();
    let sha = sha256_hex(&data);
    let hub = Hub::start(data.clone());
    let s = Setup::new(&hub.endpoint(), Some(&sha), FILE);
    let cut = 1_000_003;
    hub.cut_next_download_after(cut);
    let o = s.fetch(&["--retries", "0"]);
    one_error_line(&o, &[&format!("broke off at {cut} of {SIZE} bytes"), "run the same command again to resume"]);
    // Nothing placed; the partial download kept in the hub cache.
    assert!(!s.models().join(FILE).exists());
    let partial = s.blob(&sha).with_file_name(format!("{sha}.incomplete"));
    assert_eq!(std::fs::metadata(&partial).unwrap().len(), cut as u64);
    assert!(!s.blob(&sha).exists());

    let o = s.fetch(&[]);
    succeeded(&o);
    assert!(stderr(&o).contains(&format!("resuming the download of {REPO}/{FILE} at {cut} of {SIZE} bytes")), "{}", stderr(&o));
    let gets: Vec<Seen> = hub.seen().into_iter().filter(|r| r.method == "GET" && r.path.starts_with("/cdn/")).collect();
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert_eq!(gets[0].range, None);
    assert_eq!(gets[1].range.as_deref(), Some(format!("bytes={cut}-").as_str()));
    assert_eq!(std::fs::read(s.models().join(FILE)).unwrap(), data);
    assert!(!partial.exists());
}

#[test]
fn a_cut_connection_resumes_within_the_run() {
    let data = payload();
    let sha = sha256_hex(&data);
    let hub = Hub::start(data.clone());
    let s = Setup::new(&hub.endpoint(), Some(&sha), FILE);
    hub.cut_next_download_after(500_000);
    hub.cut_next_download_after(1_000_000);
    let o = s.fetch(&[]);
    succeeded(&o);
    let log = stderr(&o);
    assert!(log.contains(&format!("broke off at 500000 of {SIZE} bytes")) && log.contains("(retry 1 of 3)"), "{log}");
    assert!(log.contains(&format!("broke off at 1500000 of {SIZE} bytes")) && log.contains("(retry 2 of 3)"), "{log}");
    let ranges: Vec<Option<String>> = hub
        .seen()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path.starts_with("/cdn/"))
        .map(|r| r.range)
        .collect();
    assert_eq!(ranges, vec![None, Some("bytes=500000-".into()), Some("bytes=1500000-".into())]);
    assert_eq!(std::fs::read(s.models().join(FILE)).unwrap(), data);
}

#[test]
fn a_sha256_mismatch_removes_the_download() {
    let data = payload();
    let hub = Hub::start(data);
    let wrong = "0".repeat(64);
    let s = Setup::new(&hub.endpoint(), Some(&wrong), FILE);
    let o = s.fetch(&[]);
    one_error_line(&o, &["tiny: sha256 mismatch", REPO, &format!("expected {wrong}"), "deleted"]);
    // Nothing half-placed: no link, no blob, no partial download, no snapshot pointer.
    assert!(!s.models().join(FILE).exists());
    assert!(std::fs::symlink_metadata(s.models().join(FILE)).is_err());
    assert_eq!(leftovers(&s.repo_cache().join("blobs")), Vec::<String>::new());
    assert!(!s.repo_cache().join("snapshots").exists());
}

#[test]
fn an_unreachable_endpoint_or_a_missing_file_is_one_error_line() {
    // A port nobody listens on.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let endpoint = format!("http://127.0.0.1:{port}");
    let s = Setup::new(&endpoint, None, FILE);
    let o = s.fetch(&[]);
    let line = one_error_line(&o, &["tiny: cannot download", &format!("{REPO}/{FILE}"), "unreachable", &format!("HF_ENDPOINT={endpoint}")]);
    assert_eq!(stderr(&o).lines().count(), 1, "{line}");
    assert!(!s.models().join(FILE).exists());

    let hub = Hub::start(payload());
    let s = Setup::new(&hub.endpoint(), None, "no-such-file.gguf");
    let o = s.fetch(&[]);
    one_error_line(&o, &[&format!("{REPO}/no-such-file.gguf not found (HTTP 404"), &format!("HF_ENDPOINT={}", hub.endpoint())]);
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[cfg(unix)]
#[test]
fn a_dangling_link_is_missing_and_fetch_repairs_it() {
    let data = payload();
    let sha = sha256_hex(&data);
    let hub = Hub::start(data.clone());
    let s = Setup::new(&hub.endpoint(), Some(&sha), FILE);
    std::fs::create_dir_all(s.models()).unwrap();
    let dest = s.models().join(FILE);
    std::os::unix::fs::symlink(s.dir.path().join("deleted-blob"), &dest).unwrap();
    let list = succeeded(&s.run(&["models", "list", "--no-verify"]));
    let row = list.lines().find(|l| l.starts_with("tiny ")).unwrap();
    assert!(row.contains(" no "), "{list}");
    assert!(list.contains(&format!("tiny: {} is a dangling link to", dest.display())), "{list}");
    assert!(list.contains("fetch the missing ones with: hyst-tui --models-config"), "{list}");
    let msgs = s.dir.path().join("m.json");
    std::fs::write(&msgs, r#"[{"role":"user","content":"Hi"}]"#).unwrap();
    let o = s.run(&["score", "--model", "tiny", "--messages", msgs.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("model file not found: {} (a dangling link to", dest.display())), "{err}");
    assert!(err.contains("fetch it with: hyst-tui models fetch tiny)"), "{err}");

    let o = s.fetch(&[]);
    succeeded(&o);
    assert!(stderr(&o).contains("is a dangling link"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&dest).unwrap(), data);
}

/// A directory on another file system than `than`: a temp dir in /dev/shm (a tmpfs on Linux)
/// when that is another file system, else a tmpfs this test mounts (as root). Neither possible
/// is a failure that says so, never a silent pass.
#[cfg(target_os = "linux")]
struct OtherFs {
    dir: tempfile::TempDir,
    mounted: bool,
}

#[cfg(target_os = "linux")]
impl OtherFs {
    fn new(than: &Path) -> Self {
        let dev = inode(than).0;
        if let Ok(d) = tempfile::tempdir_in("/dev/shm") {
            if inode(d.path()).0 != dev {
                return OtherFs { dir: d, mounted: false };
            }
        }
        let d = tempfile::tempdir().unwrap();
        let o = Command::new("mount").args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"]).arg(d.path()).output();
        let why = match &o {
            Ok(o) if o.status.success() => {
                assert_ne!(inode(d.path()).0, dev, "the tmpfs mounted at {} is not another file system", d.path().display());
                return OtherFs { dir: d, mounted: true };
            }
            Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
            Err(e) => e.to_string(),
        };
        panic!(
            "this test needs a directory on another file system than {}: /dev/shm is not one and \
             mounting a tmpfs failed ({why}); run it as root or with a writable /dev/shm on a tmpfs",
            than.display()
        );
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(target_os = "linux")]
impl Drop for OtherFs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.dir.path()).status();
        }
    }
}

/// Where the hub cache is on another file system than the models directory, the models
/// directory gets a symlink to the blob.
#[cfg(target_os = "linux")]
#[test]
fn a_symlink_when_the_hub_cache_is_on_another_file_system() {
    let data = payload();
    let sha = sha256_hex(&data);
    let hub = Hub::start(data.clone());
    // The models directory is in the temp dir (Setup), the hub cache elsewhere.
    let cache_root = OtherFs::new(&std::env::temp_dir());
    let s = Setup::with_cache(&hub.endpoint(), Some(&sha), FILE, Some(cache_root.path().join("hub")));
    std::fs::create_dir_all(s.models()).unwrap();
    assert_ne!(inode(&s.models()).0, inode(cache_root.path()).0, "the models dir and the hub cache share a file system");
    let o = s.fetch(&[]);
    succeeded(&o);
    let log = stderr(&o);
    assert!(log.contains("is a symlink (no hard link:"), "{log}");
    let dest = s.models().join(FILE);
    assert_eq!(std::fs::read_link(&dest).unwrap(), std::fs::canonicalize(s.blob(&sha)).unwrap());
    assert_eq!(std::fs::read(&dest).unwrap(), data);
    let list = succeeded(&s.run(&["models", "list"]));
    assert!(list.lines().any(|l| l.starts_with("tiny ") && l.contains(" ok ")), "{list}");
}

/// A model loads through a hard link and through a symlink (the real SmolLM2 test model, fetched
/// by scripts/fetch-test-models.sh).
#[cfg(unix)]
#[test]
fn a_linked_model_loads() {
    let cfg = hyst_tui::config::ModelsConfig::bundled().unwrap();
    let e = cfg.get("smollm2-135m").unwrap();
    let real = e.path(&hyst_tui::config::models_dir());
    assert!(real.exists(), "test model missing at {}: run `bash scripts/fetch-test-models.sh`", real.display());
    // On the model's own file system, so that a hard link is always possible.
    let dir = tempfile::tempdir_in(real.parent().unwrap()).unwrap();
    let msgs = dir.path().join("m.json");
    std::fs::write(&msgs, r#"[{"role":"user","content":"Answer A or B."}]"#).unwrap();
    for kind in ["hard", "sym"] {
        let models = dir.path().join(kind);
        std::fs::create_dir_all(&models).unwrap();
        let link = models.join(&e.file);
        match kind {
            "hard" => std::fs::hard_link(&real, &link)
                .unwrap_or_else(|err| panic!("a hard link to {} in its own directory: {err}", real.display())),
            _ => std::os::unix::fs::symlink(&real, &link).unwrap(),
        }
        let o = Command::new(BIN)
            .args(["--threads", "2", "score", "--model", "smollm2-135m", "--letters", "A,B", "--json", "--messages"])
            .arg(&msgs)
            .env_remove("HYST_MODELS_CONFIG")
            .env("HYST_MODELS_DIR", &models)
            .env("HYST_DATA_DIR", dir.path().join("data"))
            .output()
            .unwrap();
        let out = succeeded(&o);
        assert!(out.contains("\"probs\""), "{kind}: {out}");
    }
}
