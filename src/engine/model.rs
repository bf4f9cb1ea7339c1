//! The model: the llama.cpp backend, checking and loading a GGUF, and the [`Prompter`] that
//! renders a conversation with the model's chat template, tokenizes it and finds the letter
//! tokens; then scores from the logits. It runs on the engine's worker thread, which owns the
//! backend handle, the model and the context (a `LlamaContext` borrows the model and is not
//! `Sync`); the loops of that thread are in `jobs.rs` (one prompt per call) and `packed.rs`.
//!
//! Exactness (docs/protocol.md §4.5): llama.cpp is built with `GGML_CPU_REPACK=OFF`, flash
//! attention is disabled, and a decode call carries tokens of one sequence, or of several that
//! each have a KV stream of their own (`session/mod.rs`). Prompts are split at the longest common
//! prefix of the *token ids* of fully rendered prompts.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::util::add_since;
use super::scoring::score_letters;
use super::template::{apply_system_policy, ChatTemplate};
use super::{EngineError, EngineOptions, ModelInfo, Prepared};
use crate::config::{ModelEntry, TemplateSpec};
use crate::protocol::{ChatMessage, LetterTokens, SlotScore};

static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The process-wide llama.cpp backend (llama.cpp allows one). Its logs go to `tracing`
/// (and from there to the log file), never to the terminal.
pub(crate) fn backend() -> Result<&'static LlamaBackend, EngineError> {
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| EngineError::Backend(e.clone()))
}

/// Checks that `path` exists and starts like a GGUF file before llama.cpp sees it.
pub(crate) fn check_gguf_file(path: &Path) -> Result<u64, EngineError> {
    check_model_file(None, path)
}

/// [`check_gguf_file`] for the model `key`: a missing file's error names `models fetch KEY`.
pub(crate) fn check_model_file(key: Option<&str>, path: &Path) -> Result<u64, EngineError> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|_| EngineError::ModelMissing {
        path: path.display().to_string(),
        key: key.map(str::to_string),
        dangling: std::fs::read_link(path).ok().map(|t| t.display().to_string()),
    })?;
    let mut magic = [0u8; 4];
    let ok = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok();
    if !ok || &magic != b"GGUF" {
        return Err(EngineError::ModelLoad {
            path: path.display().to_string(),
            reason: "not a GGUF file (bad magic bytes)".into(),
        });
    }
    Ok(meta.len())
}

pub(crate) fn load_model(path: &Path, opts: &EngineOptions) -> Result<LlamaModel, EngineError> {
    check_gguf_file(path)?;
    let backend = backend()?;
    let layers = opts.gpu_layers.unwrap_or_else(super::default_gpu_layers);
    let params = LlamaModelParams::default().with_n_gpu_layers(layers);
    let on_gpu = super::provenance::on_gpu(layers);
    LlamaModel::load_from_file(backend, path, &params).map_err(|e| EngineError::ModelLoad {
        path: path.display().to_string(),
        reason: if on_gpu {
            format!(
                "llama.cpp could not load it ({e}) with {layers} layers offloaded: the model may not fit in the device's memory (try --gpu-layers with fewer layers), or the file may be truncated or corrupt (llama.cpp's reason is in the log file)"
            )
        } else {
            format!("llama.cpp could not load it ({e}); the file may be truncated or corrupt (see the log file)")
        },
    })
}

/// The GGUF's vocabulary, template and metadata without its weights (a served model's prompts).
pub(crate) fn load_vocab(path: &Path) -> Result<LlamaModel, EngineError> {
    check_gguf_file(path)?;
    let backend = backend()?;
    let params = LlamaModelParams::default().with_vocab_only(true);
    LlamaModel::load_from_file(backend, path, &params).map_err(|e| EngineError::ModelLoad {
        path: path.display().to_string(),
        reason: format!("llama.cpp could not read its vocabulary ({e}); the file may be truncated or corrupt"),
    })
}

pub(crate) fn token_text(model: &LlamaModel, t: LlamaToken) -> String {
    String::from_utf8_lossy(&model.vocab().token_to_piece(t, true, None)).into_owned()
}

fn vocab_text(model: &LlamaModel, t: LlamaToken) -> String {
    if t.0 < 0 {
        return String::new();
    }
    model
        .vocab()
        .text(t)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Prompt preparation for one model: chat template, system policy, tokenizer, letter tokens.
pub(crate) struct Prompter<'m> {
    pub model: &'m LlamaModel,
    pub template: ChatTemplate,
    pub entry: ModelEntry,
    letter_cache: HashMap<char, LetterTokens>,
    /// Nanoseconds spent rendering templates and tokenizing prompts, since the worker started.
    pub(crate) render_nanos: std::cell::Cell<u64>,
    pub(crate) tokenize_nanos: std::cell::Cell<u64>,
}

impl<'m> Prompter<'m> {
    pub(crate) fn new(model: &'m LlamaModel, entry: &ModelEntry) -> Result<Self, EngineError> {
        let vocab = model.vocab();
        let bos = vocab_text(model, vocab.bos());
        let eos = vocab_text(model, vocab.eos());
        let template = match &entry.template {
            TemplateSpec::Embedded => {
                let src = model
                    .meta_val_str("tokenizer.chat_template")
                    .map_err(|_| super::template::TemplateError::Missing)?;
                ChatTemplate::new(&src, &bos, &eos)?
            }
            TemplateSpec::Named { name } => ChatTemplate::named(name, &bos, &eos)?,
            TemplateSpec::Inline { jinja } => ChatTemplate::new(jinja, &bos, &eos)?,
        };
        Ok(Self {
            model,
            template,
            entry: entry.clone(),
            letter_cache: HashMap::new(),
            render_nanos: Default::default(),
            tokenize_nanos: Default::default(),
        })
    }

    pub(crate) fn tokenize(&self, text: &str, parse_special: bool) -> Vec<LlamaToken> {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, parse_special)
    }

    /// Renders and tokenizes a conversation; checks the BOS rule.
    pub(crate) fn prepare(&self, messages: &[ChatMessage]) -> Result<Prepared, EngineError> {
        if messages.is_empty() {
            return Err(EngineError::BadInput("the conversation has no messages".into()));
        }
        let msgs = apply_system_policy(messages, self.entry.system)?;
        let t0 = std::time::Instant::now();
        let text = self.template.render(&msgs)?;
        add_since(&self.render_nanos, t0);
        let t0 = std::time::Instant::now();
        let tokens = self.tokenize(&text, true);
        add_since(&self.tokenize_nanos, t0);
        if tokens.is_empty() {
            return Err(EngineError::BadInput("the rendered prompt is empty".into()));
        }
        let vocab = self.model.vocab();
        let bos = vocab.bos();
        let n_bos = tokens.iter().take_while(|&&t| t == bos).count();
        if bos.0 >= 0 && n_bos > 1 {
            return Err(EngineError::DoubleBos { count: n_bos });
        }
        if bos.0 >= 0 && vocab.should_add_bos() && n_bos == 0 {
            return Err(EngineError::MissingBos {
                bos: vocab_text(self.model, bos),
            });
        }
        Ok(Prepared {
            text,
            tokens: tokens.iter().map(|t| t.0).collect(),
        })
    }

    /// The single-token variants "L" and " L" of a letter (docs/protocol.md §4.2).
    pub(crate) fn letter_tokens(&mut self, letter: char) -> Result<LetterTokens, EngineError> {
        if let Some(v) = self.letter_cache.get(&letter) {
            return Ok(v.clone());
        }
        let mut ids = Vec::new();
        for s in [letter.to_string(), format!(" {letter}")] {
            let toks = self.tokenize(&s, false);
            if toks.len() == 1 {
                ids.push(toks[0].0);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Err(EngineError::NoLetterToken { letter });
        }
        let v = LetterTokens {
            letter,
            texts: ids
                .iter()
                .map(|&i| token_text(self.model, LlamaToken(i)))
                .collect(),
            ids,
        };
        self.letter_cache.insert(letter, v.clone());
        Ok(v)
    }

    pub(crate) fn info(&self, opts: &EngineOptions, n_ctx: u32, path: &Path) -> ModelInfo {
        let vocab = self.model.vocab();
        ModelInfo {
            key: self.entry.key.clone(),
            name: self.entry.name.clone(),
            path: path.display().to_string(),
            n_vocab: vocab.n_tokens(),
            n_ctx,
            n_ctx_train: self.model.n_ctx_train(),
            n_params: self.model.n_params(),
            size_bytes: self.model.size(),
            bos: vocab_text(self.model, vocab.bos()),
            eos: vocab_text(self.model, vocab.eos()),
            add_bos: vocab.should_add_bos(),
            template_source: self.template.source.clone(),
            threads: opts.threads,
            cache: opts.cache,
            slots: opts.slots,
            served: None,
            pack: opts.pack.max(1),
        }
    }
}

/// The letter tokens of `letters` (1 to 26 of them).
pub(crate) fn letter_variants(prompter: &mut Prompter, letters: &[char]) -> Result<Vec<LetterTokens>, EngineError> {
    if letters.is_empty() {
        return Err(EngineError::BadInput("no option letters to score".into()));
    }
    if letters.len() > 26 {
        return Err(EngineError::TooManyOptions { n: letters.len() });
    }
    letters.iter().map(|&l| prompter.letter_tokens(l)).collect()
}

/// The token that ends an assistant turn: the vocabulary's end-of-turn token, else its
/// end-of-sequence token (`None` when it has neither).
pub(crate) fn end_of_turn(model: &LlamaModel) -> Option<LlamaToken> {
    let v = model.vocab();
    [v.eot(), v.eos()].into_iter().find(|t| t.0 >= 0)
}

/// The option texts of an `open` slot as the tokens that continue the assistant turn: each
/// tokenized on its own, with no BOS and no special-token parsing (an option text is data).
pub(crate) fn open_continuations(prompter: &Prompter, texts: &[String]) -> Result<Vec<Vec<i32>>, EngineError> {
    if texts.is_empty() {
        return Err(EngineError::BadInput("no option texts to score".into()));
    }
    if texts.len() > 26 {
        return Err(EngineError::TooManyOptions { n: texts.len() });
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let ids: Vec<i32> = prompter.tokenize(t, false).iter().map(|t| t.0).collect();
            if ids.is_empty() {
                return Err(EngineError::BadInput(format!(
                    "option {} ({:?}) tokenizes to nothing: an empty option text cannot be scored as an open answer",
                    crate::protocol::letter(i),
                    t
                )));
            }
            Ok(ids)
        })
        .collect()
}

/// The score of `prepared` from the logits at its answer slot.
pub(crate) fn score_from_logits(
    model: &LlamaModel,
    logits: &[f32],
    variants: &[LetterTokens],
    top_k: usize,
    prepared: &Prepared,
    (evaluated, reused): (usize, usize),
) -> SlotScore {
    let mut s = score_letters(logits, variants, top_k, &|id| token_text(model, LlamaToken(id)));
    s.prompt_tokens = prepared.tokens.len();
    s.tokens_evaluated = evaluated;
    s.tokens_reused = reused;
    s.prompt_hash = prepared.hash();
    s.rendered_prompt = prepared.text.clone();
    s
}
