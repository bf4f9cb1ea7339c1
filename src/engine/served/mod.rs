//! Served models: an engine whose worker thread sends each context to a server (llama-server,
//! vLLM, SGLang, an OpenAI-style API) and reads the answer slot from the next-token
//! log-probabilities it returns, instead of running llama.cpp itself. It answers the same
//! [`Job`]s as the in-process worker, so the batch, the explorer, `score`, `doctor` and `bench`
//! use a served model through the same [`Engine`](super::Engine) handle.
//!
//! Identity: a served score's model identity is a hash of the API, URL, served model name and
//! what the server reports of its weights and build; its provenance names these, the letter
//! mode and K and who renders the prompt. So served and in-process scores never share a key,
//! and two servers are never merged silently.

pub(crate) mod api;
pub(crate) mod http;
pub(crate) mod letters;
pub(crate) mod prompt;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use self::api::{Prompt, ServerFacts};
use self::http::{Client, HttpError};
use self::letters::{score_next_tokens, NextTokens};
use self::prompt::PromptSide;
use super::{EngineError, EngineOptions, EngineStats, Generation, Job, JobOutput, ModelInfo, Prepared, Request};
use crate::config::{Endpoint, LetterMode, ModelEntry, ServedApi};
use crate::protocol::{ChatMessage, SlotScore, SERVED_PROVENANCE_PREFIX};

/// What a served engine knows of its server (in [`ModelInfo::served`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServedInfo {
    /// `llama-server`, `completions` or `chat`.
    pub api: String,
    /// The endpoint URL (models.toml holds no credentials in it).
    pub url: String,
    pub model: Option<String>,
    /// What the server reports of its weights and build.
    pub reported: BTreeMap<String, String>,
    /// Who renders and tokenizes the prompt.
    pub prompt_source: String,
    /// K of the top-K log-probabilities asked for (the vocabulary in exact mode on llama-server).
    pub top_k: usize,
    /// `bounded` or `exact`.
    pub letters: String,
    /// Requests the server handles at once, where it says (llama-server's slots).
    pub slots: Option<usize>,
    /// The numeric provenance of its scores (part of every score key).
    pub provenance: String,
    /// The model identity used in score keys in place of a GGUF's sha256.
    pub model_sha256: String,
}

/// The provenance string of a served score.
fn provenance_of(ep: &Endpoint, facts: &ServerFacts, letters: LetterMode, k: usize, prompt_source: &str) -> String {
    let model = ep.model.as_deref().map(|m| format!(" model {m}")).unwrap_or_default();
    let how = match (letters, ep.api) {
        (LetterMode::Exact, ServedApi::LlamaServer) => "exact (whole distribution)".to_string(),
        (LetterMode::Exact, _) => format!("exact (top-{k}, prompt_logprobs for the rest)"),
        (LetterMode::Bounded, _) => format!("bounded (top-{k})"),
    };
    let cache = if ep.api == ServedApi::LlamaServer && ep.prompt_cache { "; server prompt cache on" } else { "" };
    format!(
        "{SERVED_PROVENANCE_PREFIX}{} {}{model}; server: {}; letters {how}; prompt: {prompt_source}{cache}",
        ep.api.name(),
        ep.base(),
        facts.identity()
    )
}

fn identity_hash(ep: &Endpoint, facts: &ServerFacts) -> String {
    let mut h = Sha256::new();
    for part in [ep.api.name(), ep.base(), ep.model.as_deref().unwrap_or(""), &facts.identity()] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    format!("served-{}", hex::encode(h.finalize()))
}

pub(crate) fn served_error(e: HttpError) -> EngineError {
    match e {
        HttpError::Cancelled => EngineError::Cancelled,
        e => EngineError::Served(e.to_string()),
    }
}

/// The engine worker of a served model: connects, reads the server's identity, loads the
/// prompt side, reports the [`ModelInfo`] on `ready`, then answers jobs until shut down.
#[allow(clippy::too_many_arguments)]
pub(super) fn worker_main(
    entry: ModelEntry,
    path: PathBuf,
    opts: EngineOptions,
    rx: Receiver<Request>,
    ready: Sender<Result<ModelInfo, EngineError>>,
    cancel_below: Arc<AtomicU64>,
    stats: Arc<EngineStats>,
) {
    let Some(ep) = entry.endpoint.clone() else {
        let _ = ready.send(Err(EngineError::BadInput("internal: not a served model".into())));
        return;
    };
    let current = Arc::new(AtomicU64::new(0));
    let (cur, cb) = (current.clone(), cancel_below.clone());
    let client = match Client::new(&ep) {
        Ok(c) => c.with_stop(Arc::new(move || cur.load(Ordering::SeqCst) < cb.load(Ordering::SeqCst))),
        Err(e) => {
            let _ = ready.send(Err(EngineError::Served(e)));
            return;
        }
    };
    let facts = match api::server_facts(&client, &ep) {
        Ok(f) => f,
        Err(e) => {
            let _ = ready.send(Err(served_error(e)));
            return;
        }
    };
    // The GGUF's vocabulary (no weights), when the entry names one for its prompts.
    let vocab = if entry.has_file() && ep.api.sends_tokens() {
        match super::model::load_vocab(&path) {
            Ok(m) => Some(m),
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        }
    } else {
        None
    };
    let side = match open_prompt_side(&entry, &ep, vocab.as_ref(), &facts) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let mut worker = Worker { entry, ep, client, facts, side, top_k_shown: opts.top_k };
    let info = match worker.info(&opts, &path) {
        Ok(i) => i,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(info));
    super::job_loop(rx, &cancel_below, &stats, |id, job, cancelled| {
        current.store(id, Ordering::SeqCst);
        worker.run(job, cancelled)
    });
}

fn open_prompt_side<'m>(
    entry: &ModelEntry,
    ep: &Endpoint,
    vocab: Option<&'m llama_cpp_2::model::LlamaModel>,
    facts: &ServerFacts,
) -> Result<PromptSide<'m>, EngineError> {
    if !ep.api.sends_tokens() {
        return Ok(PromptSide::Chat);
    }
    if let Some(m) = vocab {
        return Ok(PromptSide::Gguf(super::model::Prompter::new(m, entry)?));
    }
    if let Some(dir) = &ep.tokenizer_dir {
        #[cfg(feature = "hf-tokenizer")]
        return Ok(PromptSide::Hf(prompt::HfPrompter::load(dir, entry)?));
        #[cfg(not(feature = "hf-tokenizer"))]
        return Err(EngineError::BadInput(format!("`tokenizer_dir` {} needs the hf-tokenizer feature of hyst-tui", dir.display())));
    }
    use crate::config::TemplateSpec;
    let (bos, eos) = (facts.bos.clone().unwrap_or_default(), facts.eos.clone().unwrap_or_default());
    let local_template = match &entry.template {
        TemplateSpec::Embedded => None,
        TemplateSpec::Named { name } => Some(super::template::ChatTemplate::named(name, &bos, &eos)?),
        TemplateSpec::Inline { jinja } => Some(super::template::ChatTemplate::new(jinja, &bos, &eos)?),
    };
    Ok(PromptSide::Server { local_template, letters: Default::default() })
}

struct Worker<'m> {
    entry: ModelEntry,
    ep: Endpoint,
    client: Client,
    facts: ServerFacts,
    side: PromptSide<'m>,
    /// Top tokens kept with each score (`EngineOptions::top_k`).
    top_k_shown: usize,
}

impl Worker<'_> {
    fn letter_mode(&self) -> LetterMode {
        self.ep.letters
    }

    /// K asked of the server: in exact mode on llama-server the whole vocabulary.
    fn request_k(&self) -> Result<usize, EngineError> {
        match (self.ep.letters, self.ep.api) {
            (LetterMode::Exact, ServedApi::LlamaServer) => self
                .facts
                .n_vocab
                .or_else(|| self.side.n_vocab())
                .ok_or_else(|| EngineError::Served("exact letters need the vocabulary size, which the server does not report".into())),
            _ => Ok(self.ep.top_k() as usize),
        }
    }

    fn info(&self, opts: &EngineOptions, path: &Path) -> Result<ModelInfo, EngineError> {
        let k = self.request_k()?;
        let prompt_source = self.side.source(&self.entry);
        let served = ServedInfo {
            api: self.ep.api.name().into(),
            url: self.ep.base().into(),
            model: self.ep.model.clone(),
            reported: self.facts.reported.clone(),
            prompt_source: prompt_source.clone(),
            top_k: k,
            letters: self.letter_mode().name().into(),
            slots: self.facts.slots,
            provenance: provenance_of(&self.ep, &self.facts, self.letter_mode(), k, &prompt_source),
            model_sha256: identity_hash(&self.ep, &self.facts),
        };
        let n_vocab = self.facts.n_vocab.or_else(|| self.side.n_vocab()).unwrap_or(0);
        Ok(ModelInfo {
            key: self.entry.key.clone(),
            name: self.entry.name.clone(),
            path: if self.entry.has_file() { path.display().to_string() } else { String::new() },
            n_vocab: n_vocab as i32,
            n_ctx: opts.n_ctx.or(self.facts.n_ctx).unwrap_or(self.entry.context),
            n_ctx_train: self.facts.n_ctx_train.unwrap_or(0),
            n_params: self.facts.n_params.unwrap_or(0),
            size_bytes: self.facts.size.unwrap_or(0),
            bos: self.facts.bos.clone().unwrap_or_default(),
            eos: self.facts.eos.clone().unwrap_or_default(),
            add_bos: false,
            template_source: self.side.template_source(),
            threads: 0,
            cache: true,
            slots: self.facts.slots.unwrap_or(0) as u32,
            served: Some(served),
            pack: 1,
        })
    }

    fn run(&mut self, job: Job, cancelled: &dyn Fn() -> bool) -> Result<JobOutput, EngineError> {
        let (client, ep, entry) = (&self.client, &self.ep, &self.entry);
        match job {
            Job::Score { messages, letters } => {
                let prepared = self.side.prepare(client, ep, entry, &messages)?;
                self.score(prepared, &letters).map(|s| JobOutput::Score(Box::new(s)))
            }
            Job::ScorePrepared { prepared, letters, .. } => self.score(prepared, &letters).map(|s| JobOutput::Score(Box::new(s))),
            // One request after another: the server batches requests of its own.
            Job::ScoreGroup { prompts, letters, .. } => {
                prompts.into_iter().map(|p| self.score(p, &letters)).collect::<Result<Vec<_>, _>>().map(JobOutput::Scores)
            }
            Job::Prepare { messages } => self.side.prepare(client, ep, entry, &messages).map(JobOutput::Prepared),
            Job::Tokenize { text, parse_special } => self.side.tokenize(client, ep, &text, parse_special).map(JobOutput::Tokens),
            Job::Detokenize { tokens } => self.side.pieces(client, ep, &tokens).map(JobOutput::Pieces),
            Job::Letter { letter } => self.side.letter_tokens(client, ep, letter).map(JobOutput::Letter),
            Job::Generate { messages, max_tokens, stop } => {
                if cancelled() || stop.load(Ordering::SeqCst) {
                    return Err(EngineError::Cancelled);
                }
                let prepared = self.side.prepare(client, ep, entry, &messages)?;
                let msgs;
                let prompt = if ep.api.sends_tokens() {
                    Prompt::Tokens(&prepared.tokens)
                } else {
                    msgs = chat_messages(&prepared)?;
                    Prompt::Messages(&msgs)
                };
                let (text, tokens, finished) = api::generate(client, ep, prompt, max_tokens).map_err(served_error)?;
                Ok(JobOutput::Generated(Generation { text, tokens, finished }))
            }
            // The server's prompt cache is the server's: nothing here to forget.
            Job::ClearCache => Ok(JobOutput::Done),
            Job::RawDecode { .. } | Job::Replay(_) => {
                Err(EngineError::BadInput("raw llama.cpp decoding is measured in-process only (this model is served)".into()))
            }
            Job::Record(_) => Ok(JobOutput::Trace(Vec::new())),
            Job::ScoreOpen { .. } => Err(EngineError::Served(format!(
                "{} is served: open answers are scored from the log-probability of every token of each option text, which hyst-tui does not yet ask a server for (use the GGUF in-process, or --answers letters)",
                entry.key
            ))),
            Job::Inspect { .. } | Job::TokenRow { .. } | Job::Shape => Err(EngineError::Inside(format!(
                "{} is served: the letter lens and steering need the model's layers, which a server does not expose (use the GGUF in-process)",
                entry.key
            ))),
        }
    }

    /// Scores one prepared prompt at the answer slot.
    fn score(&mut self, prepared: Prepared, letters: &[char]) -> Result<SlotScore, EngineError> {
        if letters.is_empty() {
            return Err(EngineError::BadInput("no option letters to score".into()));
        }
        if letters.len() > 26 {
            return Err(EngineError::TooManyOptions { n: letters.len() });
        }
        let variants = letters.iter().map(|&l| self.side.letter_tokens(&self.client, &self.ep, l)).collect::<Result<Vec<_>, _>>()?;
        let k = self.request_k()?;
        let (client, ep) = (&self.client, &self.ep);
        let msgs;
        let prompt = if ep.api.sends_tokens() {
            if let Some(n_ctx) = self.facts.n_ctx {
                if prepared.tokens.len() >= n_ctx as usize {
                    return Err(EngineError::ContextOverflow { tokens: prepared.tokens.len(), n_ctx });
                }
            }
            Prompt::Tokens(&prepared.tokens)
        } else {
            msgs = chat_messages(&prepared)?;
            Prompt::Messages(&msgs)
        };
        let (mut next, usage): (NextTokens, _) = api::next_tokens(client, ep, prompt, k).map_err(served_error)?;
        if ep.api.sends_tokens() {
            if let Some(n) = usage.prompt_tokens.filter(|&n| n != prepared.tokens.len()) {
                return Err(EngineError::Served(format!(
                    "{}: the server counted {n} prompt tokens for the {} sent (it must score exactly the tokens hyst-tui rendered)",
                    ep.base(),
                    prepared.tokens.len()
                )));
            }
        }
        match (self.ep.letters, self.ep.api) {
            (LetterMode::Exact, ServedApi::LlamaServer) => next.complete = next.candidates.len() >= k,
            (LetterMode::Exact, ServedApi::Completions) => {
                // Fill in the texts of id-only candidates and ask for each unseen letter token.
                for v in &variants {
                    for &id in &v.ids {
                        if !next.candidates.iter().any(|c| c.id == Some(id)) {
                            let lp = api::prompt_logprob(client, ep, &prepared.tokens, id).map_err(served_error)?;
                            next.extra.push((id, lp));
                        }
                    }
                }
            }
            _ => {}
        }
        self.fill_texts(&mut next);
        let mut s = score_next_tokens(&next, &variants, self.top_k_shown);
        let prompt_tokens = if self.ep.api.sends_tokens() { prepared.tokens.len() } else { usage.prompt_tokens.unwrap_or(0) };
        let cached = usage.cached_tokens.unwrap_or(0).min(prompt_tokens);
        s.prompt_tokens = prompt_tokens;
        s.tokens_evaluated = prompt_tokens - cached;
        s.tokens_reused = cached;
        s.prompt_hash = prepared.hash();
        s.rendered_prompt = prepared.text;
        Ok(s)
    }

    /// vLLM's token-id keys come without text: take it from the prompt side.
    fn fill_texts(&mut self, next: &mut NextTokens) {
        let missing: Vec<i32> = next.candidates.iter().filter(|c| c.text.is_empty()).filter_map(|c| c.id).collect();
        if missing.is_empty() {
            return;
        }
        if let Ok(pieces) = self.side.pieces(&self.client, &self.ep, &missing) {
            for (id, piece) in missing.iter().zip(pieces) {
                if let Some(c) = next.candidates.iter_mut().find(|c| c.id == Some(*id)) {
                    c.text = piece;
                }
            }
        }
    }
}

/// The messages of a chat API's prepared prompt (written by `PromptSide::prepare`).
fn chat_messages(p: &Prepared) -> Result<Vec<ChatMessage>, EngineError> {
    let pairs: Vec<(String, String)> =
        serde_json::from_str(&p.text).map_err(|e| EngineError::BadInput(format!("internal: a chat prompt is its messages as JSON ({e})")))?;
    Ok(pairs.into_iter().map(|(role, content)| ChatMessage { role, content }).collect())
}

/// Reads a served model's identity without starting an engine (the explorer's score store
/// link): (model identity, provenance).
pub fn identity(entry: &ModelEntry, models_dir: &Path, opts: &EngineOptions) -> Result<(String, String), EngineError> {
    let e = super::Engine::start(entry, &entry.path(models_dir), EngineOptions { top_k: opts.top_k, ..opts.clone() })?;
    let s = e.info().served.clone().ok_or_else(|| EngineError::BadInput("not a served model".into()))?;
    e.shutdown();
    Ok((s.model_sha256, s.provenance))
}

/// The server's own rendering and tokenization of `messages` (llama-server `/apply-template` +
/// `/tokenize`, vLLM `/tokenize` with messages), for `doctor` to compare with the prompt
/// hyst-tui sends. An error where the server has no such endpoints.
pub fn server_rendering(entry: &ModelEntry, messages: &[ChatMessage]) -> Result<(String, Vec<i32>), EngineError> {
    let ep = entry.endpoint.as_ref().ok_or_else(|| EngineError::BadInput("not a served model".into()))?;
    let client = Client::new(ep).map_err(EngineError::Served)?;
    let msgs = super::template::apply_system_policy(messages, entry.system)?;
    api::server_render(&client, ep, &msgs).map_err(served_error)
}

/// Waits until the server of a served entry answers (a Slurm task started beside its server
/// job, `batch --wait-for-server`): asks what [`api::server_facts`] asks (llama-server `/props`,
/// else the API's `/models`), once every 2 s, until it answers, `limit` has passed, or `stop`
/// says so. Returns how long it waited. A server that answers with an error that waiting
/// cannot cure (a wrong key, an unknown model name) ends the wait at once with that error.
pub fn wait_until_answers(entry: &ModelEntry, limit: std::time::Duration, stop: &dyn Fn() -> bool) -> Result<std::time::Duration, EngineError> {
    use std::time::{Duration, Instant};
    let ep = entry.endpoint.as_ref().ok_or_else(|| EngineError::BadInput("not a served model".into()))?;
    let client = Client::new(ep).map_err(EngineError::Served)?.with_retries(0);
    let t0 = Instant::now();
    loop {
        let last = match api::server_facts(&client, ep) {
            Ok(_) => return Ok(t0.elapsed()),
            // 429 and 5xx (a server still loading its model answers 503) are worth waiting for.
            Err(HttpError::Status { code, .. }) if code == 429 || code >= 500 => format!("answered {code}"),
            Err(e @ (HttpError::Status { .. } | HttpError::Protocol { .. })) => return Err(served_error(e)),
            Err(HttpError::GaveUp { last, .. }) => last,
            Err(HttpError::Cancelled) => return Err(EngineError::Served("cancelled".into())),
        };
        if t0.elapsed() >= limit {
            return Err(EngineError::Served(format!(
                "{}: no answer within {} s of waiting for the server (last: {last})",
                client.base(),
                limit.as_secs()
            )));
        }
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if stop() {
                return Err(EngineError::Served(format!("{}: stopped while waiting for the server", client.base())));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
