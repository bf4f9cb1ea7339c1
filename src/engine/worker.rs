//! The llama.cpp side of the engine. Everything here runs on the engine's one worker thread,
//! which owns the backend handle, the model and the context (a `LlamaContext` borrows the model
//! and is not `Sync`).
//!
//! Exactness (design.md "Engine facts"): llama.cpp is built with `GGML_CPU_REPACK=OFF`, flash
//! attention is disabled, and every decode call carries tokens of one sequence only. Prompts are
//! split at the longest common prefix of the *token ids* of fully rendered prompts.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::OnceLock;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use sha2::{Digest, Sha256};

use super::cache::PrefixCache;
use llama_cpp_2::context::session::{LlamaStateSeqFlags, SeqState};
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

fn token_text(model: &LlamaModel, t: LlamaToken) -> String {
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
        let text = self.template.render(&msgs)?;
        let tokens = self.tokenize(&text, true);
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
        }
    }
}

/// A llama.cpp context plus the bookkeeping of what its KV cache holds (see `cache.rs` for why
/// one live sequence plus host-memory snapshots keeps prefix reuse bit-exact).
pub(crate) struct Session<'m> {
    pub ctx: LlamaContext<'m>,
    pub cache: PrefixCache,
    snapshots: Vec<SeqState>,
    n_batch: usize,
    batch: LlamaBatch<'static>,
    use_cache: bool,
    /// A snapshot too large for the byte budget was skipped (logged once).
    warned_budget: bool,
    pub n_ctx: u32,
}

const SEQ: i32 = 0;

/// End of the decode chunk starting at `start` (of `n` tokens): at most `n_batch` tokens, and the
/// chunk after it is never shorter than `min_tail` (the previous chunk gives some up instead).
pub(crate) fn chunk_end(start: usize, n: usize, n_batch: usize, min_tail: usize) -> usize {
    let end = (start + n_batch).min(n);
    let rest = n - end;
    if rest > 0 && rest < min_tail {
        // Leave `min_tail` for the last chunk, as long as this one keeps at least `min_tail`.
        let shortened = n - min_tail;
        if shortened >= start + min_tail {
            return shortened;
        }
    }
    end
}

impl<'m> Session<'m> {
    pub(crate) fn new(model: &'m LlamaModel, opts: &EngineOptions, n_ctx: u32) -> Result<Self, EngineError> {
        let n_batch: u32 = 512;
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_batch)
            .with_n_ubatch(n_batch)
            .with_n_seq_max(1)
            .with_n_threads(opts.threads as i32)
            .with_n_threads_batch(opts.threads as i32)
            .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED);
        let ctx = model
            .new_context(backend()?, params)
            .map_err(|e| EngineError::Backend(format!("cannot create a llama.cpp context: {e}")))?;
        let max_snapshots = if opts.cache { opts.slots.saturating_sub(1) as usize } else { 0 };
        Ok(Self {
            n_ctx: ctx.n_ctx(),
            ctx,
            cache: PrefixCache::new(max_snapshots, opts.snapshot_bytes()),
            warned_budget: false,
            snapshots: Vec::new(),
            n_batch: n_batch as usize,
            batch: LlamaBatch::new(n_batch as usize, 1),
            use_cache: opts.cache,
        })
    }

    /// Decodes `tokens[from..]` at positions `from..`; logits for the last token only. Every
    /// call holds at most `n_batch` tokens of the one sequence.
    fn decode_range(&mut self, tokens: &[i32], from: usize) -> Result<(), EngineError> {
        let n = tokens.len();
        let mut start = from;
        while start < n {
            let end = chunk_end(start, n, self.n_batch, super::cache::MIN_TAIL);
            self.batch.clear();
            for (i, &t) in tokens[start..end].iter().enumerate() {
                let pos = start + i;
                self.batch
                    .add(LlamaToken(t), pos as i32, &[SEQ], pos + 1 == n)
                    .map_err(|e| EngineError::Backend(e.to_string()))?;
            }
            self.ctx.decode(&mut self.batch).map_err(|e| match e {
                llama_cpp_2::DecodeError::NoKvCacheSlot => EngineError::KvFull,
                other => EngineError::Backend(format!("llama.cpp decode failed: {other}")),
            })?;
            start = end;
        }
        Ok(())
    }

    fn backend_err(what: &str, e: impl std::fmt::Display) -> EngineError {
        EngineError::Backend(format!("{what}: {e}"))
    }

    /// Makes the KV cache hold `tokens` (reusing the longest cached prefix) and leaves the last
    /// token's logits ready; returns (evaluated, reused).
    pub(crate) fn evaluate(&mut self, tokens: &[i32]) -> Result<(usize, usize), EngineError> {
        let n = tokens.len();
        if n > self.n_ctx as usize {
            return Err(EngineError::ContextOverflow {
                tokens: n,
                n_ctx: self.n_ctx,
            });
        }
        let plan = if self.use_cache {
            self.cache.plan(tokens, super::cache::MIN_TAIL)
        } else {
            super::cache::Plan { save_live: false, restore: None, reuse: 0 }
        };
        let result = self.apply_and_decode(tokens, &plan);
        match result {
            Ok(()) => {
                self.cache.live = tokens.to_vec();
                Ok((n - plan.reuse, plan.reuse))
            }
            Err(e) => {
                // Unknown KV state: forget everything so the next prompt starts clean.
                self.clear();
                Err(match e {
                    EngineError::KvFull => EngineError::ContextOverflow { tokens: n, n_ctx: self.n_ctx },
                    e => e,
                })
            }
        }
    }

    fn apply_and_decode(&mut self, tokens: &[i32], plan: &super::cache::Plan) -> Result<(), EngineError> {
        // Snapshot indices shift when saving drops superseded ones: remember the tokens.
        let restore_tokens = plan.restore.map(|i| self.cache.snapshots[i].tokens.clone());
        if plan.save_live {
            let size = self.ctx.state_seq_get_size_ext(SEQ, LlamaStateSeqFlags::empty());
            if let Some(dropped) = self.cache.room_for(restore_tokens.as_deref(), size) {
                let state = self
                    .ctx
                    .state_seq_get(SEQ, LlamaStateSeqFlags::empty())
                    .map_err(|e| Self::backend_err("saving a KV snapshot", e))?;
                self.cache.push_snapshot(&dropped, size);
                for &i in dropped.iter().rev() {
                    self.snapshots.remove(i);
                }
                self.snapshots.push(state);
            } else if !self.cache.fits(size) && !self.warned_budget {
                self.warned_budget = true;
                tracing::info!(
                    "a KV snapshot takes {} bytes, over the snapshot memory budget of {} bytes: prefix reuse continues from the live sequence only",
                    size,
                    self.cache.max_bytes
                );
            }
        }
        if let Some(want) = restore_tokens {
            let i = self
                .cache
                .snapshots
                .iter()
                .position(|sn| sn.tokens == want)
                .ok_or_else(|| EngineError::Backend("internal: planned KV snapshot disappeared".into()))?;
            self.ctx.clear_kv_cache();
            self.ctx
                .state_seq_set(&self.snapshots[i], SEQ)
                .map_err(|e| Self::backend_err("restoring a KV snapshot", e))?;
            self.cache.touch(i);
            self.cache.live = self.cache.snapshots[i].tokens.clone();
        }
        if plan.reuse == 0 {
            self.ctx.clear_kv_cache();
        } else {
            self.ctx
                .kv_cache_seq_rm(SEQ, Some(plan.reuse as u32), None)
                .map_err(|e| Self::backend_err("KV cache removal failed", e))?;
        }
        self.cache.live.truncate(plan.reuse);
        self.decode_range(tokens, plan.reuse)
    }

    pub(crate) fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        self.cache.clear();
        self.snapshots.clear();
    }

    /// Decodes `n` tokens (cycling through `tokens`) from an empty cache; returns seconds.
    pub(crate) fn raw_decode(&mut self, tokens: &[i32], n: usize) -> Result<f64, EngineError> {
        if tokens.is_empty() || n == 0 || n > self.n_ctx as usize {
            return Err(EngineError::BadInput(format!(
                "raw decode needs 1..={} tokens",
                self.n_ctx
            )));
        }
        let seq: Vec<i32> = tokens.iter().copied().cycle().take(n).collect();
        self.clear();
        let t0 = std::time::Instant::now();
        let r = self.decode_range(&seq, 0);
        let secs = t0.elapsed().as_secs_f64();
        self.clear();
        r.map(|_| secs)
    }

    /// Greedy generation after `tokens` (see [`Job::Generate`](super::Job::Generate)): the
    /// prompt is evaluated as for a score, then one token at a time is chosen (argmax of the
    /// logits, the lowest id on a tie) and decoded after it. Afterwards the generated tokens are
    /// removed from the KV cache, which then holds `tokens` again, as `cache.live` says.
    pub(crate) fn generate(
        &mut self,
        prompter: &Prompter,
        tokens: &[i32],
        max_tokens: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<super::Generation, EngineError> {
        self.evaluate(tokens)?;
        let n = tokens.len();
        let mut out = Vec::new();
        let steps = self.greedy_steps(prompter, n, max_tokens, cancelled, &mut out);
        if !out.is_empty() {
            // Only generated positions (n..) go; the prompt's cells are not touched.
            if let Err(e) = self.ctx.kv_cache_seq_rm(SEQ, Some(n as u32), None) {
                self.clear();
                return Err(Self::backend_err("removing the generated tokens from the KV cache", e));
            }
        }
        if matches!(steps, Err(ref e) if !matches!(e, EngineError::Cancelled)) {
            // A failed decode leaves the KV cache in a state nothing records: start clean.
            self.clear();
        }
        let finished = steps?;
        let mut bytes = Vec::new();
        for &t in &out {
            bytes.extend(prompter.model.vocab().token_to_piece(LlamaToken(t), true, None));
        }
        Ok(super::Generation { text: String::from_utf8_lossy(&bytes).into_owned(), tokens: out, finished })
    }

    /// The loop of [`generate`](Self::generate): pushes the chosen tokens to `out`; true when
    /// it stopped on an end-of-generation token.
    fn greedy_steps(
        &mut self,
        prompter: &Prompter,
        n: usize,
        max_tokens: usize,
        cancelled: &dyn Fn() -> bool,
        out: &mut Vec<i32>,
    ) -> Result<bool, EngineError> {
        let vocab = prompter.model.vocab();
        let mut logits_at = self.batch.n_tokens() - 1;
        while out.len() < max_tokens {
            if cancelled() {
                return Err(EngineError::Cancelled);
            }
            let logits = self.ctx.get_logits_ith(logits_at);
            let best = (0..logits.len()).fold(0, |b, i| if logits[i] > logits[b] { i } else { b }) as i32;
            if vocab.is_eog(LlamaToken(best)) {
                return Ok(true);
            }
            out.push(best);
            let pos = n + out.len() - 1;
            if out.len() == max_tokens || pos + 1 >= self.n_ctx as usize {
                break;
            }
            self.batch.clear();
            self.batch
                .add(LlamaToken(best), pos as i32, &[SEQ], true)
                .map_err(|e| EngineError::Backend(e.to_string()))?;
            self.ctx.decode(&mut self.batch).map_err(|e| match e {
                llama_cpp_2::DecodeError::NoKvCacheSlot => EngineError::KvFull,
                other => EngineError::Backend(format!("llama.cpp decode failed: {other}")),
            })?;
            logits_at = 0;
        }
        Ok(false)
    }

    pub(crate) fn last_logits(&self) -> &[f32] {
        self.ctx.get_logits_ith(self.batch.n_tokens() - 1)
    }
}

/// Scores one prepared prompt.
pub(crate) fn score_prepared(
    session: &mut Session,
    prompter: &mut Prompter,
    prepared: Prepared,
    letters: &[char],
    top_k: usize,
) -> Result<SlotScore, EngineError> {
    if letters.is_empty() {
        return Err(EngineError::BadInput("no option letters to score".into()));
    }
    if letters.len() > 26 {
        return Err(EngineError::TooManyOptions { n: letters.len() });
    }
    let variants = letters
        .iter()
        .map(|&l| prompter.letter_tokens(l))
        .collect::<Result<Vec<_>, _>>()?;
    let (evaluated, reused) = session.evaluate(&prepared.tokens)?;
    let model = prompter.model;
    let mut s = score_letters(session.last_logits(), &variants, top_k, &|id| {
        token_text(model, LlamaToken(id))
    });
    s.prompt_tokens = prepared.tokens.len();
    s.tokens_evaluated = evaluated;
    s.tokens_reused = reused;
    s.prompt_hash = hash_tokens(&prepared.tokens);
    s.rendered_prompt = prepared.text;
    Ok(s)
}

pub(crate) fn hash_tokens(tokens: &[i32]) -> String {
    let mut h = Sha256::new();
    for t in tokens {
        h.update(t.to_le_bytes());
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::chunk_end;

    fn chunks(from: usize, n: usize) -> Vec<usize> {
        let mut v = vec![];
        let mut s = from;
        while s < n {
            let e = chunk_end(s, n, 512, 32);
            v.push(e - s);
            s = e;
        }
        v
    }

    #[test]
    fn no_decode_chunk_is_smaller_than_the_minimum_tail() {
        assert_eq!(chunks(0, 513), vec![481, 32]);
        assert_eq!(chunks(0, 1024), vec![512, 512]);
        assert_eq!(chunks(0, 1030), vec![512, 486, 32]);
        assert_eq!(chunks(100, 140), vec![40]);
        assert_eq!(chunks(0, 10), vec![10]);
        for n in 1..1600 {
            let c = chunks(0, n);
            assert_eq!(c.iter().sum::<usize>(), n);
            assert!(c.iter().all(|&x| x <= 512));
            if n >= 32 {
                assert!(c.iter().all(|&x| x >= 32), "{n}: {c:?}");
            }
        }
    }
}
