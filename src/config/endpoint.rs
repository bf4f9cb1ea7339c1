//! A model served by another process: the `[models.KEY.endpoint]` table of models.toml.
//!
//! hyst-tui then sends each context to the server and reads the next token's log-probabilities
//! at the answer slot instead of running llama.cpp itself. Nothing secret is ever stored here:
//! `api_key_env` names the environment variable that holds the key, and the key is read from
//! the environment when a request is made.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The HTTP API a server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum ServedApi {
    /// llama.cpp's llama-server, native API (`/completion` with token ids, `n_probs`).
    #[serde(rename = "llama-server")]
    LlamaServer,
    /// OpenAI-compatible text completions (`/completions` with token ids, `logprobs = K`): vLLM,
    /// SGLang, llama-server's `/v1`.
    #[serde(rename = "completions")]
    Completions,
    /// OpenAI-compatible chat completions (`/chat/completions` with messages, `top_logprobs`):
    /// API models. The server applies its own chat template.
    #[serde(rename = "chat")]
    Chat,
}

impl ServedApi {
    pub fn name(self) -> &'static str {
        match self {
            ServedApi::LlamaServer => "llama-server",
            ServedApi::Completions => "completions",
            ServedApi::Chat => "chat",
        }
    }
    /// The top-K asked for when models.toml does not say.
    pub fn default_top_logprobs(self) -> u32 {
        match self {
            ServedApi::LlamaServer => 100,
            ServedApi::Completions | ServedApi::Chat => 20,
        }
    }
    /// hyst-tui renders the chat template and sends token ids.
    pub fn sends_tokens(self) -> bool {
        !matches!(self, ServedApi::Chat)
    }
}

/// How letter probabilities are obtained from the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LetterMode {
    /// From the top-K next-token log-probabilities: a letter token outside the top K gets an
    /// upper bound (recorded with the score), not a value.
    #[default]
    Bounded,
    /// Exact values for every letter token: llama-server returns the whole distribution
    /// (K = the vocabulary); the completions API asks vLLM's `prompt_logprobs` for each letter
    /// token outside the top K.
    Exact,
}

impl LetterMode {
    pub fn name(self) -> &'static str {
        match self {
            LetterMode::Bounded => "bounded",
            LetterMode::Exact => "exact",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub api: ServedApi,
    /// llama-server: the server's root (`http://host:8080`); completions / chat: the API base
    /// as OpenAI clients take it (`http://host:8000/v1`).
    pub url: String,
    /// The served model's name (the request's `model` field); llama-server ignores it.
    #[serde(default)]
    pub model: Option<String>,
    /// The environment variable holding the API key (sent as `Authorization: Bearer`).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// K of the top-K next-token log-probabilities (chat APIs allow at most 20).
    #[serde(default)]
    pub top_logprobs: Option<u32>,
    #[serde(default)]
    pub letters: LetterMode,
    /// A directory with a Hugging Face `tokenizer.json` and `tokenizer_config.json` (its
    /// `chat_template`, `bos_token`, `eos_token`): the template and tokenizer when the entry
    /// names no GGUF `file`. With neither, the server's own tokenize / apply-template endpoints.
    #[serde(default)]
    pub tokenizer_dir: Option<PathBuf>,
    /// Seconds one request may take (default 120).
    #[serde(default)]
    pub timeout_s: Option<u64>,
    /// Attempts after the first one on 429, 5xx and dropped connections (default 6).
    #[serde(default)]
    pub retries: Option<u32>,
    /// Requests in flight (`--concurrency` overrides; default: the server's slot count where it
    /// reports one, else 4).
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// llama-server only: let it reuse a cached prompt prefix (`cache_prompt`). Off by default:
    /// a suffix decoded after a cached prefix goes through other CPU kernels than the whole
    /// prompt, and the letters then drift (measured up to 0.05 in a log-probability on
    /// SmolLM2), so a score would depend on what the server scored before it.
    #[serde(default)]
    pub prompt_cache: bool,
}

pub(crate) const DEFAULT_TIMEOUT_S: u64 = 120;
pub(crate) const DEFAULT_RETRIES: u32 = 6;
/// The most top log-probabilities OpenAI-style chat APIs return.
pub(crate) const CHAT_MAX_TOP_LOGPROBS: u32 = 20;

impl Endpoint {
    pub fn top_k(&self) -> u32 {
        self.top_logprobs.unwrap_or_else(|| self.api.default_top_logprobs())
    }
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S))
    }
    pub fn retries(&self) -> u32 {
        self.retries.unwrap_or(DEFAULT_RETRIES)
    }
    /// The URL as written, without a trailing slash: what the scores' identity and provenance
    /// hold (a `${VAR}` in it stays unexpanded, so a server job that lands on another node is
    /// the same server).
    pub fn base(&self) -> &str {
        self.url.trim_end_matches('/')
    }

    /// The URL requests go to: [`Endpoint::base`] with every `${VAR}` replaced by that
    /// environment variable's value (e.g. `http://${HYST_SERVER_HOST}:8000/v1`, the host a
    /// Slurm server job published). An unset or empty variable is an error naming it.
    pub fn address(&self) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = self.base();
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| format!("endpoint `url` has an unclosed ${{: {:?}", self.url))?;
            let name = &after[..end];
            match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => out.push_str(v.trim()),
                _ => return Err(format!("endpoint `url` {} names the environment variable {name}, which is not set", self.base())),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The names of the `${VAR}` references in the URL.
    fn url_variables(&self) -> Vec<&str> {
        self.url.split("${").skip(1).map(|piece| piece.split('}').next().unwrap_or("")).collect()
    }

    /// The problems of this table, as a sentence; `None` when it is usable.
    pub(crate) fn problem(&self) -> Option<String> {
        let url = self.url.trim();
        let Some(rest) = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")) else {
            return Some(format!("endpoint `url` must start with http:// or https://, got {:?}", self.url));
        };
        let authority = rest.split('/').next().unwrap_or("");
        if authority.is_empty() {
            return Some(format!("endpoint `url` has no host: {:?}", self.url));
        }
        if authority.contains('@') {
            // Never echo the URL here: it holds credentials.
            return Some("endpoint `url` must not hold credentials (user:password@); put the key in an environment variable and name it in `api_key_env`".into());
        }
        if self.url.split("${").skip(1).any(|piece| !piece.contains('}')) || self.url_variables().iter().any(|v| !is_variable_name(v)) {
            return Some(format!("endpoint `url` may name environment variables only as ${{NAME}} (letters, digits, '_'), got {:?}", self.url));
        }
        if rest.contains('?') || rest.contains('#') {
            // Not echoed: a query may hold a key.
            return Some("endpoint `url` must be a base URL without a query or fragment (a key goes in an environment variable named by `api_key_env`)".into());
        }
        if let Some(var) = &self.api_key_env {
            if !is_variable_name(var) {
                // The value may be a key pasted by mistake: do not repeat it.
                return Some("`api_key_env` must name an environment variable (letters, digits, '_'; e.g. OPENAI_API_KEY), not hold the key itself".into());
            }
        }
        let k = self.top_k();
        if k == 0 {
            return Some("`top_logprobs` must be at least 1".into());
        }
        if self.api == ServedApi::Chat {
            if k > CHAT_MAX_TOP_LOGPROBS {
                return Some(format!("`top_logprobs` = {k}: chat APIs return at most {CHAT_MAX_TOP_LOGPROBS}"));
            }
            if self.letters == LetterMode::Exact {
                return Some("`letters = \"exact\"` needs token ids (api llama-server or completions): a chat API gives the top 20 only, so its letters are bounded".into());
            }
            if self.tokenizer_dir.is_some() {
                return Some("`tokenizer_dir` is for the token-id APIs: with api = \"chat\" the server applies its own template".into());
            }
        }
        if self.api == ServedApi::Completions && self.model.as_deref().is_none_or(str::is_empty) {
            return Some("api = \"completions\" needs `model` (the served model's name)".into());
        }
        if self.api == ServedApi::Chat && self.model.as_deref().is_none_or(str::is_empty) {
            return Some("api = \"chat\" needs `model` (the served model's name)".into());
        }
        if self.timeout_s == Some(0) {
            return Some("`timeout_s` must be at least 1".into());
        }
        if self.concurrency == Some(0) {
            return Some("`concurrency` must be at least 1".into());
        }
        None
    }

    /// The API key from the environment (`None` when no variable is named).
    pub(crate) fn api_key(&self) -> Result<Option<String>, String> {
        let Some(var) = &self.api_key_env else { return Ok(None) };
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
            _ => Err(format!("the API key variable {var} (api_key_env) is not set in the environment")),
        }
    }
}

/// An environment variable's name: letters, digits and '_', not starting with a digit.
fn is_variable_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !s.starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(toml_text: &str) -> Endpoint {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn defaults_and_problems() {
        let e = ep("api = \"llama-server\"\nurl = \"http://127.0.0.1:8080/\"");
        assert_eq!((e.top_k(), e.letters, e.base()), (100, LetterMode::Bounded, "http://127.0.0.1:8080"));
        assert_eq!(e.problem(), None);
        let chat = ep("api = \"chat\"\nurl = \"https://api.example.com/v1\"\nmodel = \"m\"\napi_key_env = \"EXAMPLE_KEY\"");
        assert_eq!((chat.top_k(), chat.problem()), (20, None));
        let cases = [
            ("api = \"chat\"\nurl = \"https://x/v1\"\nmodel = \"m\"\ntop_logprobs = 50", "at most 20"),
            ("api = \"chat\"\nurl = \"https://x/v1\"\nmodel = \"m\"\nletters = \"exact\"", "bounded"),
            ("api = \"completions\"\nurl = \"http://x:8000/v1\"", "needs `model`"),
            ("api = \"llama-server\"\nurl = \"ftp://x\"", "http://"),
            ("api = \"llama-server\"\nurl = \"http://u:secret@x\"", "credentials"),
            ("api = \"llama-server\"\nurl = \"http://x\"\napi_key_env = \"sk-abc123\"", "environment variable"),
            ("api = \"llama-server\"\nurl = \"http://x\"\ntop_logprobs = 0", "at least 1"),
        ];
        for (text, needle) in cases {
            let p = ep(text).problem().unwrap_or_default();
            assert!(p.contains(needle), "{text}: {p}");
            assert!(!p.contains("secret") && !p.contains("sk-abc123"), "a problem repeats a secret: {p}");
        }
    }

    #[test]
    fn a_url_may_name_environment_variables() {
        let e = ep("api = \"completions\"\nurl = \"http://${HYST_TEST_ENDPOINT_HOST_7}:8000/v1/\"\nmodel = \"m\"");
        assert_eq!(e.problem(), None);
        assert_eq!(e.base(), "http://${HYST_TEST_ENDPOINT_HOST_7}:8000/v1", "the identity keeps the URL as written");
        let err = e.address().unwrap_err();
        assert!(err.contains("HYST_TEST_ENDPOINT_HOST_7") && err.contains("not set"), "{err}");
        std::env::set_var("HYST_TEST_ENDPOINT_HOST_7", "gpu-node-17\n");
        assert_eq!(e.address().unwrap(), "http://gpu-node-17:8000/v1");
        std::env::remove_var("HYST_TEST_ENDPOINT_HOST_7");
        let plain = ep("api = \"llama-server\"\nurl = \"http://127.0.0.1:8080/\"");
        assert_eq!(plain.address().unwrap(), "http://127.0.0.1:8080");
        for bad in ["http://${HOST:8000/v1", "http://${}:8000/v1", "http://${1HOST}:8000", "http://${HOST-NAME}:8000"] {
            let p = ep(&format!("api = \"llama-server\"\nurl = \"{bad}\"")).problem().unwrap_or_default();
            assert!(p.contains("${NAME}"), "{bad}: {p}");
        }
    }

    #[test]
    fn the_key_comes_from_the_environment_only() {
        let e = ep("api = \"llama-server\"\nurl = \"http://x\"\napi_key_env = \"HYST_TEST_NOT_SET_ANYWHERE_9\"");
        let err = e.api_key().unwrap_err();
        assert!(err.contains("HYST_TEST_NOT_SET_ANYWHERE_9"), "{err}");
        let none = ep("api = \"llama-server\"\nurl = \"http://x\"");
        assert_eq!(none.api_key(), Ok(None));
    }
}
