//! The hub client: HEAD and GET against the endpoint, with relative redirects, the token sent
//! to the endpoint's host only, resumable range requests and the hub's error answers.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use super::super::FetchOptions;
use super::{file_len, safe_name, HubEnv};
use crate::util::{no_proxy_for, origin};

/// What the endpoint says about one file.
#[derive(Debug)]
pub(super) struct Remote {
    pub(super) commit: String,
    pub(super) etag: String,
    pub(super) size: u64,
}

/// Why a request failed.
#[derive(Debug)]
pub(super) enum NetError {
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
pub(super) enum Broke {
    /// Worth resuming: a cut connection, a timeout, a 5xx.
    Retry(String),
    /// Resuming will not help.
    Fatal(String),
    Interrupted,
}

pub(super) struct Client<'e> {
    env: &'e HubEnv,
    /// Follows redirects (downloads may go to a CDN on another host; the token is only sent to
    /// the same host).
    agent: ureq::Agent,
    /// Follows none (metadata: only relative redirects are followed, by hand).
    head: ureq::Agent,
}

impl<'e> Client<'e> {
    pub(super) fn new(env: &'e HubEnv) -> Self {
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

    pub(super) fn request(&self, agent: &ureq::Agent, method: &str, url: &str) -> ureq::Request {
        let r = agent.request(method, url);
        match &self.env.token {
            Some(t) => r.set("Authorization", &format!("Bearer {t}")),
            None => r,
        }
    }

    pub(super) fn call(req: ureq::Request) -> Result<ureq::Response, NetError> {
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
    pub(super) fn metadata(&self, url: &str) -> Result<Remote, NetError> {
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
    pub(super) fn download(&self, url: &str, partial: &Path, size: u64, opts: &FetchOptions, key: &str, log: &mut dyn Write) -> Result<(), String> {
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

    pub(super) fn download_once(
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
