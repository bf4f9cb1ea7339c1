//! HTTP to a served model (ureq, blocking: each engine worker thread has one request in flight).
//!
//! Every request has a time limit. 429, 5xx and dropped or refused connections are retried with
//! exponential backoff (0.5 s, 1 s, 2 s, … at most 30 s), honouring a `Retry-After` of seconds;
//! after the last retry the error says what the server did, how often and for how long. The
//! API key goes only into the `Authorization` header and is cut out of every message.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::config::Endpoint;

/// Largest answer read (a whole-vocabulary distribution of a 256k-token model is ~20 MB).
const MAX_BODY: u64 = 256 << 20;

pub(crate) struct Client {
    agent: ureq::Agent,
    base: String,
    key: Option<String>,
    /// Where the key came from, named when the server refuses it.
    key_env: Option<String>,
    retries: u32,
    /// Stops the backoff between retries (a cancelled job, an interrupted batch).
    stop: Option<std::sync::Arc<dyn Fn() -> bool + Send + Sync>>,
}

/// Why a request failed, as one line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HttpError {
    /// The server answered with an error status that retrying does not fix (4xx but 429).
    Status { code: u16, url: String, message: String },
    /// It stayed unreachable or kept failing through every retry.
    GaveUp { url: String, last: String, attempts: u32, seconds: f64 },
    /// The answer is not what the API promises.
    Protocol { url: String, message: String },
    Cancelled,
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Status { code, url, message } => write!(f, "{url} answered {code}: {message}"),
            HttpError::GaveUp { url, last, attempts, seconds } => write!(
                f,
                "{url}: {last}, still after {attempts} attempts over {seconds:.0} s (is the server running?)"
            ),
            HttpError::Protocol { url, message } => write!(f, "{url}: unexpected answer: {message}"),
            HttpError::Cancelled => write!(f, "cancelled"),
        }
    }
}

impl Client {
    pub(crate) fn new(ep: &Endpoint) -> Result<Client, String> {
        let key = ep.api_key()?;
        let proxy = !crate::util::no_proxy_for(&ep.address()?);
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10).min(ep.timeout()))
            .timeout(ep.timeout())
            .user_agent(&format!("hyst-tui/{}", env!("CARGO_PKG_VERSION")))
            .try_proxy_from_env(proxy)
            .build();
        Ok(Client { agent, base: ep.address()?, key, key_env: ep.api_key_env.clone(), retries: ep.retries(), stop: None })
    }

    /// A client that makes `n` attempts after the first (the entry's `retries` otherwise).
    pub(crate) fn with_retries(mut self, n: u32) -> Client {
        self.retries = n;
        self
    }

    /// A client that stops retrying once `stop` says so.
    pub(crate) fn with_stop(mut self, stop: std::sync::Arc<dyn Fn() -> bool + Send + Sync>) -> Client {
        self.stop = Some(stop);
        self
    }

    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// The base URL's scheme and host (vLLM's `/tokenize` sits beside `/v1`, not under it).
    pub(crate) fn origin(&self) -> String {
        match self.base.strip_suffix("/v1") {
            Some(o) => o.to_string(),
            None => self.base.clone(),
        }
    }

    pub(crate) fn get(&self, path: &str) -> Result<Value, HttpError> {
        self.call("GET", &format!("{}{path}", self.base), None)
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> Result<Value, HttpError> {
        self.call("POST", &format!("{}{path}", self.base), Some(body))
    }

    /// GET a path of the server's origin (see [`Client::origin`]).
    pub(crate) fn get_origin(&self, path: &str) -> Result<Value, HttpError> {
        self.call("GET", &format!("{}{path}", self.origin()), None)
    }

    /// GET a plain-text path of the server's origin (vLLM's Prometheus `/metrics`).
    pub(crate) fn get_origin_text(&self, path: &str) -> Result<String, HttpError> {
        self.call_text("GET", &format!("{}{path}", self.origin()), None)
    }

    /// POST to a path of the server's origin (see [`Client::origin`]).
    pub(crate) fn post_origin(&self, path: &str, body: &Value) -> Result<Value, HttpError> {
        self.call("POST", &format!("{}{path}", self.origin()), Some(body))
    }

    /// Cuts the API key out of a text that came from the server.
    fn redact(&self, text: &str) -> String {
        // The key comes out of the whole text first (as sent, and JSON-escaped), so that no
        // cut below can leave a part of it.
        let mut t = text.to_string();
        if let Some(k) = self.key.as_deref().filter(|k| !k.is_empty()) {
            t = t.replace(k, "[api key]");
            let escaped = serde_json::to_string(k).unwrap_or_default();
            let escaped = escaped.trim_matches('"');
            if !escaped.is_empty() && escaped != k {
                t = t.replace(escaped, "[api key]");
            }
        }
        t.chars().filter(|c| !c.is_control()).take(300).collect()
    }

    fn call(&self, method: &str, url: &str, body: Option<&Value>) -> Result<Value, HttpError> {
        let text = self.call_text(method, url, body)?;
        serde_json::from_str(&text).map_err(|e| HttpError::Protocol { url: url.to_string(), message: format!("not JSON ({e}): {}", self.redact(&text)) })
    }

    /// One request, retried as the entry says; the answer's text.
    fn call_text(&self, method: &str, url: &str, body: Option<&Value>) -> Result<String, HttpError> {
        let t0 = Instant::now();
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut req = self.agent.request(method, url).set("Accept", "application/json");
            if let Some(k) = &self.key {
                req = req.set("Authorization", &format!("Bearer {k}"));
            }
            let result = match body {
                Some(b) => req.set("Content-Type", "application/json").send_string(&b.to_string()),
                None => req.call(),
            };
            let (last, wait) = match result {
                Ok(resp) => return self.read_text(url, resp),
                Err(ureq::Error::Status(code, resp)) => {
                    let retry_after = resp.header("retry-after").and_then(|v| v.trim().parse::<u64>().ok());
                    let text = resp.into_string().unwrap_or_default();
                    let mut message = self.redact(&error_message(&text));
                    if code == 401 || code == 403 {
                        message.push_str(&match &self.key_env {
                            Some(var) => format!(" (the key sent is the value of ${var}, the entry's api_key_env)"),
                            None => " (no key sent: the entry names no api_key_env)".to_string(),
                        });
                    }
                    if code != 429 && code < 500 {
                        return Err(HttpError::Status { code, url: url.to_string(), message });
                    }
                    (format!("answered {code} ({message})"), retry_after.map(|s| Duration::from_secs(s.min(120))))
                }
                Err(ureq::Error::Transport(t)) => (self.redact(&transport_message(&t)), None),
            };
            if attempt > self.retries {
                return Err(HttpError::GaveUp { url: url.to_string(), last, attempts: attempt, seconds: t0.elapsed().as_secs_f64() });
            }
            let backoff = Duration::from_millis(500u64 << (attempt - 1).min(6)).min(Duration::from_secs(30));
            let wait = wait.unwrap_or(backoff);
            tracing::info!("{url}: {last}; retry {attempt} of {} in {:.1} s", self.retries, wait.as_secs_f64());
            let until = Instant::now() + wait;
            while Instant::now() < until {
                if self.stop.as_ref().is_some_and(|s| s()) {
                    return Err(HttpError::Cancelled);
                }
                std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
            }
        }
    }

    fn read_text(&self, url: &str, resp: ureq::Response) -> Result<String, HttpError> {
        let mut text = String::new();
        resp.into_reader()
            .take(MAX_BODY)
            .read_to_string(&mut text)
            .map_err(|e| HttpError::Protocol { url: url.to_string(), message: format!("reading the answer: {e}") })?;
        Ok(text)
    }
}

/// The message of an error answer: OpenAI-style `{"error": {"message": …}}`, llama-server's
/// `{"error": {"message": …}}`, vLLM's `{"message": …}` / `{"detail": …}`, else the text.
fn error_message(text: &str) -> String {
    let v: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) => return text.trim().to_string(),
    };
    let pick = |v: &Value| v.as_str().map(str::to_string);
    v.pointer("/error/message")
        .and_then(pick)
        .or_else(|| v.get("error").and_then(pick))
        .or_else(|| v.get("message").and_then(pick))
        .or_else(|| v.get("detail").and_then(pick))
        .unwrap_or_else(|| text.trim().to_string())
}

fn transport_message(t: &ureq::Transport) -> String {
    use ureq::ErrorKind::*;
    let kind = match t.kind() {
        ConnectionFailed => "connection refused or failed",
        Dns => "host not found",
        Io => "connection dropped or timed out",
        ProxyConnect => "proxy connection failed",
        _ => "request failed",
    };
    match t.message() {
        Some(m) => format!("{kind} ({m})"),
        None => kind.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_of_the_common_servers() {
        assert_eq!(error_message(r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#), "Loading model");
        assert_eq!(error_message(r#"{"object":"error","message":"too many logprobs"}"#), "too many logprobs");
        assert_eq!(error_message(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_message("plain text\n"), "plain text");
        // Recorded from vLLM 0.32.0.
        let vllm = |name: &str| std::fs::read_to_string(format!("{}/tests/data/vllm-0.32.0/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(
            error_message(&vllm("error_logprobs_above_max")),
            "Requested sample logprobs of 101, which is greater than max allowed: 100 (parameter=logprobs, value=101)"
        );
        assert_eq!(error_message(&vllm("error_unknown_model")), "The model `nope` does not exist. Valid aliases: smollm2-f32.");
        assert_eq!(error_message(&vllm("error_wrong_key")), "Unauthorized");
    }

    #[test]
    fn the_key_is_cut_out_of_server_text() {
        let ep: Endpoint = toml::from_str("api = \"llama-server\"\nurl = \"http://127.0.0.1:9\"").unwrap();
        let mut c = Client::new(&ep).unwrap();
        c.key = Some("sk-verysecret".into());
        assert_eq!(c.redact("Incorrect API key provided: sk-verysecret."), "Incorrect API key provided: [api key].");
        // A key across the 300-character cut leaves no part of it.
        let long = format!("{}sk-verysecret and more", "x".repeat(295));
        let r = c.redact(&long);
        assert!(!r.contains("sk-") && !r.contains("verysecret"), "{r}");
    }

    #[test]
    fn a_server_that_is_not_there_is_given_up_on_after_the_retries() {
        // Port 9 (discard) on loopback: nothing listens in the test environment.
        let ep: Endpoint = toml::from_str("api = \"llama-server\"\nurl = \"http://127.0.0.1:9\"\nretries = 2\ntimeout_s = 5").unwrap();
        let c = Client::new(&ep).unwrap();
        match c.get("/props") {
            Err(HttpError::GaveUp { attempts, .. }) => assert_eq!(attempts, 3),
            other => panic!("{other:?}"),
        }
    }
}
