//! The scoring engine: one worker thread owns llama.cpp (backend, model, context); callers send
//! jobs over a channel and receive results on a channel of their choice, so the same engine
//! serves a blocking batch loop ([`Engine::score`]) and a TUI event loop ([`Engine::submit`]).

pub(crate) mod prefix_reuse;
mod jobs;
pub mod exactness;
pub mod provenance;
pub mod served;
pub(crate) mod packed;
pub mod inside;
mod prepared;
pub(crate) mod scoring;
pub(crate) mod session;
pub(crate) mod template;
pub(crate) mod model;

pub use jobs::{EngineStats, Generation, Job, JobOutput, SCORING_PHASES};
pub use prepared::Prepared;
pub(crate) use jobs::JobResult;
use jobs::{job_loop, run_job, Answer, Request};
pub use session::{item_lanes, KvOp};
use session::Session;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use llama_cpp_2::model::LlamaModel;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub(crate) use template::TemplateError;
pub use template::RENDER_FUEL;

/// The least render fuel (see [`RENDER_FUEL`]) the chat template of `entry`, as loaded into the
/// engine that reported `info`, needs for `messages` (after the entry's system policy); an error
/// when they do not render within the budget. `doctor` reports it for a long dialogue.
pub fn render_fuel_needed(entry: &ModelEntry, info: &ModelInfo, messages: &[ChatMessage]) -> Result<u64, EngineError> {
    let msgs = template::apply_system_policy(messages, entry.system)?;
    Ok(template::fuel_needed(&info.template_source, &info.bos, &info.eos, &msgs)?)
}

use crate::config::{models_dir, ModelEntry, ModelsConfig};
use crate::protocol::{AnswerSlot, ChatMessage, LetterTokens, Scorer, SlotScore};

#[derive(Debug, Error, Clone)]
pub enum EngineError {
    /// The file is not there (or is a dangling link). `key` names the model when the caller
    /// knows it, so the message can give the exact `models fetch` command.
    #[error("model file not found: {path} ({}fetch it with: hyst-tui models fetch {})",
        .dangling.as_ref().map(|t| format!("a dangling link to {t}; ")).unwrap_or_default(),
        .key.as_deref().unwrap_or("KEY, or set HYST_MODELS_DIR"))]
    ModelMissing {
        path: String,
        key: Option<String>,
        dangling: Option<String>,
    },
    #[error("cannot load model {path}: {reason}")]
    ModelLoad { path: String, reason: String },
    #[error("llama.cpp: {0}")]
    Backend(String),
    #[error("{0}")]
    Template(String),
    #[error("the rendered prompt starts with {count} BOS tokens (the chat template adds one and something added another)")]
    DoubleBos { count: usize },
    #[error("the model expects a BOS token ({bos:?}) but the rendered prompt has none; use a template that emits bos_token")]
    MissingBos { bos: String },
    #[error("letter {letter:?} has no single-token encoding (neither \"{letter}\" nor \" {letter}\"); it cannot be scored")]
    NoLetterToken { letter: char },
    #[error("{n} options: at most 26 (letters A-Z) can be scored")]
    TooManyOptions { n: usize },
    #[error("prompt is {tokens} tokens but the context holds {n_ctx}; raise `context` in models.toml or shorten the input")]
    ContextOverflow { tokens: usize, n_ctx: u32 },
    #[error("KV cache full")]
    KvFull,
    #[error("{0}")]
    BadInput(String),
    /// A served model's server failed, stayed away or answered something unusable (one line;
    /// it never holds the API key).
    #[error("{0}")]
    Served(String),
    /// The read-out or steering (`inside/`) failed or was refused.
    #[error("{0}")]
    Inside(String),
    #[error("job cancelled")]
    Cancelled,
    #[error("the engine worker stopped unexpectedly")]
    WorkerGone,
    /// A bug in hyst-tui: the worker answered a job with the answer of another kind of job.
    #[error("internal error (a bug in hyst-tui): the engine answered a {job} job with {got} instead of {want}")]
    WrongAnswer { job: &'static str, got: &'static str, want: &'static str },
}

impl From<TemplateError> for EngineError {
    fn from(e: TemplateError) -> Self {
        EngineError::Template(e.to_string())
    }
}

/// How the engine runs.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub threads: usize,
    /// Reuse KV-cache prefixes (`false` = `--no-cache`: every prompt from scratch).
    pub cache: bool,
    /// Token sequences remembered for prefix reuse: the live KV sequence plus `slots - 1`
    /// host-memory snapshots of earlier ones.
    pub slots: u32,
    /// Context size override (tokens); `None` = the model entry's `context`.
    pub n_ctx: Option<u32>,
    /// How many top next tokens to report.
    pub top_k: usize,
    /// Layers to offload to a GPU (only with the `cuda`/`metal`/`vulkan` features): `--gpu-layers`;
    /// `None` = the model's `gpu_layers` in models.toml, else [`default_gpu_layers`].
    pub gpu_layers: Option<u32>,
    /// Host memory for KV snapshots, in bytes (`None`: an eighth of the available memory,
    /// at most 4 GiB). A model whose single snapshot exceeds it reuses prefixes from the live
    /// sequence only.
    pub snapshot_mem: Option<u64>,
    /// llama.cpp sequences decoded together (`--pack`): 1 decodes one prompt per call; more
    /// give each sequence a KV stream of its own, spread an item's branches over them and
    /// score [`item_lanes`] items at once (`session/mod.rs`).
    pub pack: u32,
}

/// Layers offloaded when neither `--gpu-layers` nor models.toml says: all (999) in a build with
/// a GPU back-end, none otherwise.
pub fn default_gpu_layers() -> u32 {
    if cfg!(any(feature = "cuda", feature = "metal", feature = "vulkan")) {
        999
    } else {
        0
    }
}

impl EngineOptions {
    /// The layers to offload for `entry`: `--gpu-layers`, else its models.toml `gpu_layers`,
    /// else [`default_gpu_layers`].
    pub fn gpu_layers_for(&self, entry: &ModelEntry) -> u32 {
        self.gpu_layers.or(entry.gpu_layers).unwrap_or_else(default_gpu_layers)
    }

    /// These options with the offload of `entry` resolved.
    pub fn for_model(&self, entry: &ModelEntry) -> EngineOptions {
        EngineOptions {
            gpu_layers: Some(self.gpu_layers_for(entry)),
            ..self.clone()
        }
    }

    /// The snapshot memory budget in bytes.
    pub fn snapshot_bytes(&self) -> usize {
        match self.snapshot_mem {
            Some(b) => b as usize,
            None => default_snapshot_budget() as usize,
        }
    }
}

/// An eighth of the memory available now (Linux: `MemAvailable` in /proc/meminfo; elsewhere
/// 8 GiB is assumed), at most 4 GiB.
pub(crate) fn default_snapshot_budget() -> u64 {
    const GIB: u64 = 1 << 30;
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(8 * GIB);
    (available / 8).min(4 * GIB)
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            cache: true,
            slots: 4,
            n_ctx: None,
            top_k: 10,
            gpu_layers: None,
            snapshot_mem: None,
            pack: 1,
        }
    }
}

/// What the engine knows about its model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelInfo {
    pub key: String,
    pub name: String,
    pub path: String,
    pub n_vocab: i32,
    pub n_ctx: u32,
    pub n_ctx_train: u32,
    pub n_params: u64,
    pub size_bytes: u64,
    pub bos: String,
    pub eos: String,
    pub add_bos: bool,
    pub template_source: String,
    pub threads: usize,
    pub cache: bool,
    pub slots: u32,
    /// A served model: its server and how it is scored (`None`: loaded in this process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<served::ServedInfo>,
    /// llama.cpp sequences decoded together ([`EngineOptions::pack`]).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub pack: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// Tokens each sequence of a packing engine holds when neither `--ctx` nor a smaller
/// models.toml `context` says: the KV cache takes `pack` times this (a protocol prompt is a
/// few hundred to two thousand tokens).
pub const PACKED_CTX: u32 = 4096;


/// Handle to the engine worker thread. A packing engine ([`EngineOptions::pack`]) has one
/// handle per lane ([`Engine::lanes`]): each sends its scores to its own lane.
pub struct Engine {
    tx: Sender<Request>,
    next_id: Arc<AtomicU64>,
    /// Jobs with an id below this are answered with `Cancelled` without running.
    cancel_below: Arc<AtomicU64>,
    pub stats: Arc<EngineStats>,
    info: ModelInfo,
    handle: Option<JoinHandle<()>>,
    /// The lane this handle scores on.
    lane: usize,
    /// The first handle: dropping it stops the worker.
    primary: bool,
}

impl Engine {
    /// Loads the model of `entry` from `path` on a new worker thread; returns when it is ready
    /// (or failed to load).
    pub fn start(entry: &ModelEntry, path: &Path, opts: EngineOptions) -> Result<Self, EngineError> {
        if entry.endpoint.is_some() {
            return Self::start_served(entry, path, opts, "hyst-served".into());
        }
        model::check_model_file(Some(&entry.key), path)?;
        let opts = opts.for_model(entry);
        Self::spawn(entry, path, opts, None, "hyst-engine".into())
    }

    /// `n` engines over one loaded model (the weights are loaded once): each has its own
    /// worker thread and llama.cpp context, with the same exactness rules, and `opts.threads`
    /// CPU threads are divided between them. A packing engine gives a handle per lane.
    pub(crate) fn start_workers(entry: &ModelEntry, path: &Path, opts: EngineOptions, n: usize) -> Result<Vec<Self>, EngineError> {
        let n = n.max(1);
        if entry.endpoint.is_some() {
            return Self::start_served_workers(entry, path, opts, Some(n));
        }
        if n == 1 {
            return Ok(Self::start(entry, path, opts)?.with_lanes());
        }
        model::check_model_file(Some(&entry.key), path)?;
        let opts = opts.for_model(entry);
        let model = Arc::new(model::load_model(path, &opts)?);
        let mut v = Vec::new();
        for i in 0..n {
            let mut o = opts.clone();
            o.threads = (opts.threads / n + usize::from(i < opts.threads % n)).max(1);
            v.extend(Self::spawn(entry, path, o, Some(model.clone()), format!("hyst-engine-{i}"))?.with_lanes());
        }
        Ok(v)
    }

    /// `n` engines on a served model (`None`: models.toml's `concurrency`, else the server's
    /// slot count where it reports one, else 4): each worker has one request in flight, and a
    /// worker takes one item's contexts one after another, so the server's prompt cache holds
    /// that item's shared prefix.
    pub(crate) fn start_served_workers(entry: &ModelEntry, path: &Path, opts: EngineOptions, n: Option<usize>) -> Result<Vec<Self>, EngineError> {
        let first = Self::start_served(entry, path, opts.clone(), "hyst-served-0".into())?;
        let n = n
            .or(entry.endpoint.as_ref().and_then(|e| e.concurrency))
            .or(first.info.served.as_ref().and_then(|s| s.slots))
            .unwrap_or(4)
            .max(1);
        let mut v = vec![first];
        for i in 1..n {
            v.push(Self::start_served(entry, path, opts.clone(), format!("hyst-served-{i}"))?);
        }
        Ok(v)
    }

    fn start_served(entry: &ModelEntry, path: &Path, opts: EngineOptions, name: String) -> Result<Self, EngineError> {
        if entry.has_file() && entry.endpoint.as_ref().is_some_and(|e| e.api.sends_tokens()) {
            model::check_model_file(Some(&entry.key), path)?;
        }
        let (entry, path) = (entry.clone(), path.to_path_buf());
        Self::spawn_with(name, move |rx, ready, cb, st| served::worker_main(entry, path, opts, rx, ready, cb, st))
    }

    fn spawn(entry: &ModelEntry, path: &Path, opts: EngineOptions, model: Option<Arc<LlamaModel>>, name: String) -> Result<Self, EngineError> {
        let entry = entry.clone();
        let path: PathBuf = path.to_path_buf();
        Self::spawn_with(name, move |rx, ready_tx, cb, st| {
            let model = match model {
                Some(m) => m,
                None => match model::load_model(&path, &opts) {
                    Ok(m) => Arc::new(m),
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                },
            };
            worker_main(&model, entry, path, opts, rx, ready_tx, cb, st)
        })
    }

    /// Starts a worker thread running `body` and waits for the [`ModelInfo`] it reports.
    fn spawn_with(
        name: String,
        body: impl FnOnce(Receiver<Request>, Sender<Result<ModelInfo, EngineError>>, Arc<AtomicU64>, Arc<EngineStats>) + Send + 'static,
    ) -> Result<Self, EngineError> {
        let (tx, rx) = mpsc::channel::<Request>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<ModelInfo, EngineError>>();
        let cancel_below = Arc::new(AtomicU64::new(0));
        let stats = Arc::new(EngineStats::default());
        let (cb, st) = (cancel_below.clone(), stats.clone());
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || body(rx, ready_tx, cb, st))
            .map_err(|e| EngineError::Backend(format!("cannot spawn the engine thread: {e}")))?;
        let info = ready_rx.recv().map_err(|_| EngineError::WorkerGone)??;
        Ok(Self {
            tx,
            next_id: Arc::new(AtomicU64::new(1)),
            cancel_below,
            stats,
            info,
            handle: Some(handle),
            lane: 0,
            primary: true,
        })
    }

    /// Handles for every lane of this engine (itself first): one item is scored on each at a
    /// time. An engine that does not pack has one lane.
    fn with_lanes(self) -> Vec<Engine> {
        let n = if self.info.served.is_some() { 1 } else { item_lanes(self.info.pack) };
        let mut v = Vec::with_capacity(n);
        for lane in 1..n {
            v.push(Engine {
                tx: self.tx.clone(),
                next_id: self.next_id.clone(),
                cancel_below: self.cancel_below.clone(),
                stats: self.stats.clone(),
                info: self.info.clone(),
                handle: None,
                lane,
                primary: false,
            });
        }
        v.insert(0, self);
        v
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Queues a job; its result arrives on `reply` tagged with the returned id.
    pub(crate) fn submit(&self, job: Job, reply: Sender<JobResult>) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(Request::Job { id, job, reply: reply.clone() }).is_err() {
            let _ = reply.send(JobResult {
                id,
                output: Err(EngineError::WorkerGone),
            });
        }
        id
    }

    /// Every job submitted before this call that has not started yet is answered with
    /// `Cancelled` instead of running.
    pub(crate) fn cancel_pending(&self) {
        let next = self.next_id.load(Ordering::SeqCst);
        self.cancel_below.fetch_max(next, Ordering::SeqCst);
    }

    /// Runs a job and waits for its result.
    pub fn run(&self, job: Job) -> Result<JobOutput, EngineError> {
        let (tx, rx) = mpsc::channel();
        self.submit(job, tx);
        rx.recv().map_err(|_| EngineError::WorkerGone)?.output
    }

    /// Runs a job and takes its answer out of the variant that kind of job answers with
    /// ([`Answer`]); another variant is a bug, reported as [`EngineError::WrongAnswer`].
    fn ask<T: Answer>(&self, job: Job) -> Result<T, EngineError> {
        let name = job.name();
        T::take(self.run(job)?).map_err(|other| EngineError::WrongAnswer { job: name, got: other.name(), want: T::VARIANT })
    }

    pub fn score(&self, messages: &[ChatMessage], letters: &[char]) -> Result<SlotScore, EngineError> {
        self.ask::<Box<SlotScore>>(Job::Score { messages: messages.to_vec(), letters: letters.to_vec() }).map(|s| *s)
    }

    /// Scores a prompt prepared by [`Engine::prepare`] (it is not rendered or tokenized again).
    pub fn score_prepared(&self, prepared: Prepared, letters: &[char]) -> Result<SlotScore, EngineError> {
        self.ask::<Box<SlotScore>>(Job::ScorePrepared { prepared, letters: letters.to_vec(), lane: self.lane }).map(|s| *s)
    }

    /// Scores a prepared prompt over option texts (format `open`, [`Job::ScoreOpen`]).
    pub fn score_open(&self, prepared: Prepared, texts: &[String]) -> Result<SlotScore, EngineError> {
        self.ask::<Box<SlotScore>>(Job::ScoreOpen { prepared, texts: texts.to_vec(), lane: self.lane }).map(|s| *s)
    }

    /// Scores a prepared prompt over the answer slot `slot`, letters or option texts.
    pub fn score_prepared_slot(&self, prepared: Prepared, slot: &AnswerSlot) -> Result<SlotScore, EngineError> {
        match slot {
            AnswerSlot::Letters(l) => self.score_prepared(prepared, l),
            AnswerSlot::Open(t) => self.score_open(prepared, t),
        }
    }

    /// Renders, tokenizes and scores a conversation over the answer slot `slot`.
    pub fn score_slot(&self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<SlotScore, EngineError> {
        match slot {
            AnswerSlot::Letters(l) => self.score(messages, l),
            AnswerSlot::Open(t) => self.score_open(self.prepare(messages)?, t),
        }
    }

    /// Scores prompts prepared by [`Engine::prepare`] that branch off the same history
    /// ([`Job::ScoreGroup`]); the scores come in the prompts' order.
    pub fn score_group(&self, prompts: Vec<Prepared>, letters: &[char]) -> Result<Vec<SlotScore>, EngineError> {
        self.ask(Job::ScoreGroup { prompts, letters: letters.to_vec(), lane: self.lane })
    }

    /// Starts (`true`) or stops recording the worker's KV operations; stopping returns them.
    pub fn record_kv(&self, on: bool) -> Result<Vec<KvOp>, EngineError> {
        self.ask(Job::Record(on))
    }

    /// Replays recorded KV operations with nothing but llama.cpp calls; returns the seconds.
    pub fn replay(&self, ops: Arc<Vec<KvOp>>) -> Result<f64, EngineError> {
        self.ask(Job::Replay(ops))
    }

    /// Raw llama.cpp throughput ([`Job::RawDecode`]): the seconds to decode `n_tokens` tokens.
    pub fn raw_decode(&self, tokens: Vec<i32>, n_tokens: usize) -> Result<f64, EngineError> {
        self.ask(Job::RawDecode { tokens, n_tokens })
    }

    pub fn prepare(&self, messages: &[ChatMessage]) -> Result<Prepared, EngineError> {
        self.ask(Job::Prepare { messages: messages.to_vec() })
    }

    pub fn tokenize(&self, text: &str, parse_special: bool) -> Result<Vec<i32>, EngineError> {
        self.ask(Job::Tokenize { text: text.to_string(), parse_special })
    }

    pub fn pieces(&self, tokens: &[i32]) -> Result<Vec<String>, EngineError> {
        self.ask(Job::Detokenize { tokens: tokens.to_vec() })
    }

    pub fn letter_tokens(&self, letter: char) -> Result<LetterTokens, EngineError> {
        self.ask(Job::Letter { letter })
    }

    /// The greedy continuation of `messages` at the answer slot ([`Job::Generate`]).
    pub fn generate(&self, messages: &[ChatMessage], max_tokens: usize) -> Result<Generation, EngineError> {
        self.ask(Job::Generate { messages: messages.to_vec(), max_tokens, stop: Arc::default() })
    }

    /// Scores a conversation through the read-out probe ([`inside`]): from scratch, steered if
    /// asked, with the letter lens and the residual stream if asked. A served model refuses.
    pub fn inspect(&self, messages: &[ChatMessage], letters: &[char], options: inside::InspectOptions) -> Result<inside::Inspection, EngineError> {
        self.ask::<Box<inside::Inspection>>(Job::Inspect { messages: messages.to_vec(), letters: letters.to_vec(), options }).map(|b| *b)
    }

    /// The model's number of layers and residual width (the read-out's; a served model refuses).
    pub fn shape(&self) -> Result<(usize, usize), EngineError> {
        self.ask(Job::Shape)
    }

    /// The output row of `token` as floats: a direction that raises that token's logit.
    pub fn token_row(&self, token: i32) -> Result<Vec<f32>, EngineError> {
        self.ask(Job::TokenRow { token })
    }

    pub fn clear_cache(&self) -> Result<(), EngineError> {
        self.ask(Job::ClearCache)
    }

    /// Stops the worker after its current job and waits for it (a lane's handle only lets go).
    pub fn shutdown(mut self) {
        if !self.primary {
            return;
        }
        let _ = self.tx.send(Request::Shutdown);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if !self.primary {
            return;
        }
        // Do not wait: a quitting UI must not block on a decode in flight.
        self.cancel_pending();
        let _ = self.tx.send(Request::Shutdown);
    }
}

impl Scorer for Engine {
    type Error = EngineError;
    fn score(&mut self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<SlotScore, EngineError> {
        Engine::score_slot(self, messages, slot)
    }
}

impl Scorer for &Engine {
    type Error = EngineError;
    fn score(&mut self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<SlotScore, EngineError> {
        Engine::score_slot(self, messages, slot)
    }
}

/// Starts an engine on the model `key` of `models` (its default model when `None`), loading the
/// file from the models directory.
pub fn open(models: &ModelsConfig, key: Option<&str>, opts: EngineOptions) -> Result<Engine, OpenError> {
    let entry = models.get(key.unwrap_or(&models.default_model))?;
    let path = entry.path(&models_dir());
    Engine::start(entry, &path, opts).map_err(|source| OpenError::Engine { key: entry.key.clone(), source })
}

/// Why [`open`] failed.
#[derive(Debug, Error)]
pub enum OpenError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("model `{key}`: {source}")]
    Engine {
        key: String,
        #[source]
        source: EngineError,
    },
}

#[allow(clippy::too_many_arguments)]
fn worker_main(
    model: &LlamaModel,
    entry: ModelEntry,
    path: PathBuf,
    opts: EngineOptions,
    rx: Receiver<Request>,
    ready: Sender<Result<ModelInfo, EngineError>>,
    cancel_below: Arc<AtomicU64>,
    stats: Arc<EngineStats>,
) {
    let mut prompter = match model::Prompter::new(model, &entry) {
        Ok(p) => p,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    // Packing holds `pack` sequences of this size each: without --ctx, at most PACKED_CTX.
    let n_ctx = opts.n_ctx.unwrap_or(if opts.pack > 1 { entry.context.min(PACKED_CTX) } else { entry.context });
    let mut session = match model::backend().and_then(|b| Session::new(model, b, &opts, n_ctx)) {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(prompter.info(&opts, session.n_ctx, &path)));
    let top_k = opts.top_k;
    let publish = |session: &Session, prompter: &model::Prompter| {
        let (bytes, peak) = session.snapshot_bytes();
        stats.snapshot_bytes.store(bytes as u64, Ordering::Relaxed);
        stats.snapshot_peak_bytes.fetch_max(peak as u64, Ordering::Relaxed);
        let c = &session.clocks;
        let phases = [&prompter.render_nanos, &prompter.tokenize_nanos, &c.save, &c.restore, &c.decode, &c.letters];
        for (at, p) in stats.phase_nanos.iter().zip(phases) {
            at.store(p.get(), Ordering::Relaxed);
        }
        stats.decode_calls.store(c.decode_calls.get(), Ordering::Relaxed);
        stats.decode_tokens.store(c.decode_tokens.get(), Ordering::Relaxed);
        stats.pad_tokens.store(c.pad_tokens.get(), Ordering::Relaxed);
    };
    let mut insides = inside::Insides::new(&path, &opts, n_ctx);
    if session.seqs() > 1 {
        packed::packed_loop(rx, &cancel_below, &stats, &mut session, &mut prompter, &mut insides, top_k, &publish);
        return;
    }
    job_loop(rx, &cancel_below, &stats, |_id, job, cancelled| {
        let output = run_job(&mut session, &mut prompter, &mut insides, job, top_k, cancelled);
        publish(&session, &prompter);
        output
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An engine whose worker answers every job with `Done`.
    fn answering_done() -> Engine {
        Engine::spawn_with("test-engine".into(), |rx, ready, _, _| {
            let info = serde_json::json!({
                "key": "k", "name": "n", "path": "p", "n_vocab": 1, "n_ctx": 1, "n_ctx_train": 1, "n_params": 1,
                "size_bytes": 1, "bos": "", "eos": "", "add_bos": false, "template_source": "", "threads": 1,
                "cache": true, "slots": 1
            });
            let _ = ready.send(Ok(serde_json::from_value(info).unwrap()));
            while let Ok(Request::Job { id, reply, .. }) = rx.recv() {
                let _ = reply.send(JobResult { id, output: Ok(JobOutput::Done) });
            }
        })
        .unwrap()
    }

    #[test]
    fn an_answer_of_the_wrong_kind_is_reported_as_a_bug() {
        let e = answering_done();
        let err = e.tokenize("x", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "internal error (a bug in hyst-tui): the engine answered a Tokenize job with Done instead of Tokens"
        );
        assert!(matches!(e.score(&[], &['A']), Err(EngineError::WrongAnswer { job: "Score", got: "Done", want: "Score" })));
        assert!(e.clear_cache().is_ok());
        e.shutdown();
    }
}
