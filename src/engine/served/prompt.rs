//! Who turns messages into the token ids a served model is sent, and who knows its letter tokens.
//!
//! - **gguf**: the entry names the GGUF (`file`): its vocabulary is loaded without the weights
//!   and the in-process prompter renders and tokenizes, so the served prompt is exactly the one
//!   the in-process path scores.
//! - **hf**: `tokenizer_dir` holds a Hugging Face `tokenizer.json` and `tokenizer_config.json`;
//!   the template (`chat_template`, or the entry's named / inline one) renders in the same
//!   minijinja sandbox and the `tokenizers` crate tokenizes.
//! - **server**: neither: the server renders with its own template and tokenizes (llama-server
//!   `/apply-template` + `/tokenize`, vLLM `/tokenize` with messages); a named or inline
//!   template of the entry is rendered here and only tokenized by the server.
//! - **chat**: a chat API takes messages; the server applies its template, there are no ids.

use std::collections::HashMap;

use super::api;
use super::http::Client;
use super::letters::chat_letter_tokens;
use crate::config::{Endpoint, ModelEntry, TemplateSpec};
use crate::engine::template::{apply_system_policy, ChatTemplate};
use crate::engine::model::Prompter;
use crate::engine::{EngineError, Prepared};
use crate::protocol::{ChatMessage, LetterTokens};

pub(crate) enum PromptSide<'m> {
    Gguf(Prompter<'m>),
    #[cfg(feature = "hf-tokenizer")]
    Hf(HfPrompter),
    Server { local_template: Option<ChatTemplate>, letters: HashMap<char, LetterTokens> },
    Chat,
}

fn served_err(e: super::http::HttpError) -> EngineError {
    super::served_error(e)
}

impl PromptSide<'_> {
    /// `gguf`, `hf`, `server` or `chat`, with what identifies the tokenizer.
    pub(crate) fn source(&self, entry: &ModelEntry) -> String {
        match self {
            PromptSide::Gguf(_) => format!("gguf {} (template and tokenizer of the GGUF, rendered here)", entry.file),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => format!("hf {} (tokenizer.json sha256 {}, rendered here)", h.dir, h.fingerprint),
            PromptSide::Server { local_template: Some(_), .. } => "server tokenizer (the entry's template rendered here)".into(),
            PromptSide::Server { .. } => "server (its template and tokenizer)".into(),
            PromptSide::Chat => "template applied by the server".into(),
        }
    }

    pub(crate) fn template_source(&self) -> String {
        match self {
            PromptSide::Gguf(p) => p.template.source.clone(),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => h.template.source.clone(),
            PromptSide::Server { local_template: Some(t), .. } => t.source.clone(),
            _ => String::new(),
        }
    }

    /// Renders and tokenizes (chat: no tokens; the prompt text is the messages as JSON, whose
    /// hash identifies the prompt).
    pub(crate) fn prepare(&mut self, client: &Client, ep: &Endpoint, entry: &ModelEntry, messages: &[ChatMessage]) -> Result<Prepared, EngineError> {
        if messages.is_empty() {
            return Err(EngineError::BadInput("the conversation has no messages".into()));
        }
        match self {
            PromptSide::Gguf(p) => p.prepare(messages),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => h.prepare(entry, messages),
            PromptSide::Server { local_template, .. } => {
                let msgs = apply_system_policy(messages, entry.system)?;
                let (text, tokens) = match local_template {
                    Some(t) => {
                        let text = t.render(&msgs)?;
                        let ids = api::server_tokenize(client, ep, &text, true).map_err(served_err)?;
                        (text, ids)
                    }
                    None => api::server_render(client, ep, &msgs).map_err(served_err)?,
                };
                if tokens.is_empty() {
                    return Err(EngineError::BadInput("the rendered prompt is empty".into()));
                }
                Ok(Prepared { text, tokens })
            }
            PromptSide::Chat => {
                let msgs = apply_system_policy(messages, entry.system)?;
                let text = serde_json::to_string(&msgs.iter().map(|m| (&m.role, &m.content)).collect::<Vec<_>>()).expect("messages serialise");
                Ok(Prepared { text, tokens: vec![] })
            }
        }
    }

    pub(crate) fn letter_tokens(&mut self, client: &Client, ep: &Endpoint, letter: char) -> Result<LetterTokens, EngineError> {
        match self {
            PromptSide::Gguf(p) => p.letter_tokens(letter),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => h.letter_tokens(letter),
            PromptSide::Server { letters, .. } => {
                if let Some(v) = letters.get(&letter) {
                    return Ok(v.clone());
                }
                let mut pairs = Vec::new();
                for s in [letter.to_string(), format!(" {letter}")] {
                    let ids = api::server_tokenize(client, ep, &s, false).map_err(served_err)?;
                    if ids.len() == 1 {
                        pairs.push((ids[0], s));
                    }
                }
                pairs.sort();
                pairs.dedup_by_key(|p| p.0);
                if pairs.is_empty() {
                    return Err(EngineError::NoLetterToken { letter });
                }
                let v = LetterTokens { letter, ids: pairs.iter().map(|p| p.0).collect(), texts: pairs.into_iter().map(|p| p.1).collect() };
                letters.insert(letter, v.clone());
                Ok(v)
            }
            PromptSide::Chat => Ok(chat_letter_tokens(letter)),
        }
    }

    pub(crate) fn tokenize(&mut self, client: &Client, ep: &Endpoint, text: &str, parse_special: bool) -> Result<Vec<i32>, EngineError> {
        match self {
            PromptSide::Gguf(p) => Ok(p.tokenize(text, parse_special).iter().map(|t| t.0).collect()),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => h.tokenize(text),
            PromptSide::Server { .. } => api::server_tokenize(client, ep, text, parse_special).map_err(served_err),
            PromptSide::Chat => Err(EngineError::BadInput("a chat API does not tokenize (the server applies its template)".into())),
        }
    }

    pub(crate) fn pieces(&mut self, client: &Client, ep: &Endpoint, tokens: &[i32]) -> Result<Vec<String>, EngineError> {
        match self {
            PromptSide::Gguf(p) => Ok(tokens
                .iter()
                .map(|&t| String::from_utf8_lossy(&p.model.vocab().token_to_piece(llama_cpp_2::token::LlamaToken(t), true, None)).into_owned())
                .collect()),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => Ok(tokens.iter().map(|&t| h.piece(t)).collect()),
            PromptSide::Server { .. } => api::server_pieces(client, ep, tokens).map_err(served_err),
            PromptSide::Chat => Err(EngineError::BadInput("a chat API has no token ids".into())),
        }
    }

    /// The vocabulary size, where known here.
    pub(crate) fn n_vocab(&self) -> Option<usize> {
        match self {
            PromptSide::Gguf(p) => Some(p.model.vocab().n_tokens() as usize),
            #[cfg(feature = "hf-tokenizer")]
            PromptSide::Hf(h) => Some(h.tokenizer.get_vocab_size(true)),
            _ => None,
        }
    }
}

/// A template and tokenizer from a Hugging Face tokenizer directory.
#[cfg(feature = "hf-tokenizer")]
pub(crate) struct HfPrompter {
    pub tokenizer: tokenizers::Tokenizer,
    pub template: ChatTemplate,
    pub dir: String,
    /// sha256 of tokenizer.json (first 16 hex digits).
    pub fingerprint: String,
    bos: Option<(i32, String)>,
    add_bos: bool,
    letters: HashMap<char, LetterTokens>,
}

#[cfg(feature = "hf-tokenizer")]
impl HfPrompter {
    pub(crate) fn load(dir: &std::path::Path, entry: &ModelEntry) -> Result<HfPrompter, EngineError> {
        let bad = |what: String| EngineError::ModelLoad { path: dir.display().to_string(), reason: what };
        let tok_path = dir.join("tokenizer.json");
        let bytes = std::fs::read(&tok_path).map_err(|e| bad(format!("cannot read tokenizer.json: {e}")))?;
        let tokenizer = tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| bad(format!("tokenizer.json: {e}")))?;
        let cfg_text = std::fs::read_to_string(dir.join("tokenizer_config.json")).map_err(|e| bad(format!("cannot read tokenizer_config.json: {e}")))?;
        let cfg: serde_json::Value = serde_json::from_str(&cfg_text).map_err(|e| bad(format!("tokenizer_config.json: {e}")))?;
        // bos_token / eos_token: a string, or an added-token object with `content`.
        let special = |k: &str| -> Option<String> {
            let v = cfg.get(k)?;
            v.as_str().map(str::to_string).or_else(|| v.get("content")?.as_str().map(str::to_string))
        };
        let bos = special("bos_token");
        let eos = special("eos_token").unwrap_or_default();
        let template = match &entry.template {
            TemplateSpec::Embedded => {
                // A string, or a list of named templates (take "default").
                let src = match cfg.get("chat_template") {
                    Some(serde_json::Value::String(s)) => s.clone(),
                    Some(serde_json::Value::Array(a)) => a
                        .iter()
                        .find(|t| t.get("name").and_then(|n| n.as_str()) == Some("default"))
                        .and_then(|t| t.get("template")?.as_str().map(str::to_string))
                        .ok_or_else(|| bad("tokenizer_config.json lists chat templates but none named \"default\"".into()))?,
                    _ => std::fs::read_to_string(dir.join("chat_template.jinja"))
                        .map_err(|_| bad("no chat_template in tokenizer_config.json (nor a chat_template.jinja beside it)".into()))?,
                };
                ChatTemplate::new(&src, bos.as_deref().unwrap_or(""), &eos)?
            }
            TemplateSpec::Named { name } => ChatTemplate::named(name, bos.as_deref().unwrap_or(""), &eos)?,
            TemplateSpec::Inline { jinja } => ChatTemplate::new(jinja, bos.as_deref().unwrap_or(""), &eos)?,
        };
        let bos = bos.and_then(|b| tokenizer.token_to_id(&b).map(|id| (id as i32, b)));
        let add_bos = cfg.get("add_bos_token").and_then(|v| v.as_bool()).unwrap_or(false);
        use sha2::Digest;
        let fingerprint = hex::encode(sha2::Sha256::digest(&bytes))[..16].to_string();
        Ok(HfPrompter { tokenizer, template, dir: dir.display().to_string(), fingerprint, bos, add_bos, letters: HashMap::new() })
    }

    fn tokenize(&self, text: &str) -> Result<Vec<i32>, EngineError> {
        let enc = self.tokenizer.encode(text, false).map_err(|e| EngineError::Backend(format!("tokenizer.json: {e}")))?;
        Ok(enc.get_ids().iter().map(|&i| i as i32).collect())
    }

    fn piece(&self, id: i32) -> String {
        self.tokenizer.decode(&[id as u32], false).unwrap_or_default()
    }

    fn prepare(&self, entry: &ModelEntry, messages: &[ChatMessage]) -> Result<Prepared, EngineError> {
        let msgs = apply_system_policy(messages, entry.system)?;
        let text = self.template.render(&msgs)?;
        let tokens = self.tokenize(&text)?;
        if tokens.is_empty() {
            return Err(EngineError::BadInput("the rendered prompt is empty".into()));
        }
        if let Some((bos, text)) = &self.bos {
            let n = tokens.iter().take_while(|t| *t == bos).count();
            if n > 1 {
                return Err(EngineError::DoubleBos { count: n });
            }
            if n == 0 && self.add_bos {
                return Err(EngineError::MissingBos { bos: text.clone() });
            }
        }
        Ok(Prepared { text, tokens })
    }

    fn letter_tokens(&mut self, letter: char) -> Result<LetterTokens, EngineError> {
        if let Some(v) = self.letters.get(&letter) {
            return Ok(v.clone());
        }
        let mut pairs = Vec::new();
        for s in [letter.to_string(), format!(" {letter}")] {
            let ids = self.tokenize(&s)?;
            if ids.len() == 1 {
                pairs.push((ids[0], self.piece(ids[0])));
            }
        }
        pairs.sort();
        pairs.dedup_by_key(|p| p.0);
        if pairs.is_empty() {
            return Err(EngineError::NoLetterToken { letter });
        }
        let v = LetterTokens { letter, ids: pairs.iter().map(|p| p.0).collect(), texts: pairs.into_iter().map(|p| p.1).collect() };
        self.letters.insert(letter, v.clone());
        Ok(v)
    }
}
