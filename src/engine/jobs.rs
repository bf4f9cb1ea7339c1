//! The engine's jobs and its worker loop: what callers ask ([`Job`]) and get back
//! ([`JobOutput`]), the counters the worker keeps ([`EngineStats`]), and the loop that runs an
//! in-process worker's jobs one at a time (a packing engine's loop is in `packed.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::session::{KvOp, Session};
use super::model::{end_of_turn, letter_variants, open_continuations, score_from_logits, token_text, Prompter};
use super::scoring::{log_normaliser, open_score, top_k_tokens};
use super::inside::{Inspection, InspectOptions, Insides};
use super::{EngineError, Prepared};
use crate::util::add_since;
use crate::protocol::{ChatMessage, LetterTokens, OpenOption, SlotScore, TopToken};

/// Work for the engine.
#[derive(Clone, Debug)]
pub enum Job {
    /// Measure the answer slot of a conversation over the given letters.
    Score {
        messages: Vec<ChatMessage>,
        letters: Vec<char>,
    },
    /// Measure the answer slot of a prompt already rendered and tokenized ([`Job::Prepare`]),
    /// on lane `lane` (0 unless the engine packs sequences, see [`EngineOptions::pack`]).
    ScorePrepared { prepared: Prepared, letters: Vec<char>, lane: usize },
    /// Measure several prepared prompts of lane `lane` (an item's branches): with forks to
    /// spare they are decoded together, each from the lane's longest shared prefix; else one
    /// after another on the lane. Scores in the prompts' order.
    ScoreGroup { prompts: Vec<Prepared>, letters: Vec<char>, lane: usize },
    /// Measure the answer slot of a prepared prompt over option *texts* (format `open`): each
    /// text scored token by token as the assistant's answer, continuing from the prompt's KV
    /// cells on lane `lane` (docs/protocol.md §14).
    ScoreOpen { prepared: Prepared, texts: Vec<String>, lane: usize },
    /// Render and tokenize only.
    Prepare { messages: Vec<ChatMessage> },
    /// Tokenize raw text (no BOS added) with or without special-token parsing.
    Tokenize { text: String, parse_special: bool },
    /// Text of token ids (special tokens rendered).
    Detokenize { tokens: Vec<i32> },
    /// The letter tokens for a letter.
    Letter { letter: char },
    /// The model's greedy continuation of a conversation at its answer slot: at each step the
    /// most probable token (the lowest id on a tie), up to `max_tokens` tokens or an
    /// end-of-generation token. The prompt goes through the prefix cache as a score's does; the
    /// generated tokens are taken out of the KV cache afterwards, so the next score finds the
    /// cache as this prompt's score would have left it.
    /// `stop` set: it stops before its next token with [`EngineError::Cancelled`] (as it does
    /// when [`Engine::cancel_pending`] is called after it was submitted).
    Generate { messages: Vec<ChatMessage>, max_tokens: usize, stop: Arc<AtomicBool> },
    /// Forget every cached prefix (the next score starts from an empty KV cache).
    ClearCache,
    /// Raw llama.cpp throughput: decode `n_tokens` tokens of `tokens` (repeated as needed) into an
    /// empty KV cache, in `n_batch`-sized calls, and time it. Clears the cache afterwards.
    RawDecode { tokens: Vec<i32>, n_tokens: usize },
    /// Start (true) or stop recording every KV operation and decode call ([`KvOp`]); stopping
    /// returns what was recorded ([`JobOutput::Trace`]).
    Record(bool),
    /// Replay recorded operations with nothing but llama.cpp calls, timed ([`JobOutput::Timed`]);
    /// the cache is empty before and after.
    Replay(Arc<Vec<KvOp>>),
    /// Score a conversation through the read-out probe (`inside/`): from scratch, optionally
    /// steered, with the letter lens and the residual stream if asked ([`JobOutput::Inspected`]).
    Inspect { messages: Vec<ChatMessage>, letters: Vec<char>, options: InspectOptions },
    /// The output row of a token as floats, a direction toward it ([`JobOutput::Floats`]).
    TokenRow { token: i32 },
    /// The model's layers and residual width, as the read-out sees them ([`JobOutput::Shape`]).
    Shape,
}

#[derive(Clone, Debug)]
pub enum JobOutput {
    Score(Box<SlotScore>),
    Scores(Vec<SlotScore>),
    Trace(Vec<KvOp>),
    Prepared(Prepared),
    Tokens(Vec<i32>),
    Pieces(Vec<String>),
    Letter(LetterTokens),
    Generated(Generation),
    Done,
    /// Seconds spent decoding.
    Timed(f64),
    Inspected(Box<Inspection>),
    Floats(Vec<f32>),
    Shape((usize, usize)),
}

impl Job {
    /// The job's name, for an error that names it.
    pub fn name(&self) -> &'static str {
        match self {
            Job::Score { .. } => "Score",
            Job::ScorePrepared { .. } => "ScorePrepared",
            Job::ScoreGroup { .. } => "ScoreGroup",
            Job::ScoreOpen { .. } => "ScoreOpen",
            Job::Prepare { .. } => "Prepare",
            Job::Tokenize { .. } => "Tokenize",
            Job::Detokenize { .. } => "Detokenize",
            Job::Letter { .. } => "Letter",
            Job::Generate { .. } => "Generate",
            Job::ClearCache => "ClearCache",
            Job::RawDecode { .. } => "RawDecode",
            Job::Record(_) => "Record",
            Job::Replay(_) => "Replay",
            Job::Inspect { .. } => "Inspect",
            Job::TokenRow { .. } => "TokenRow",
            Job::Shape => "Shape",
        }
    }
}

impl JobOutput {
    /// The answer's name, for an error that names it.
    pub fn name(&self) -> &'static str {
        match self {
            JobOutput::Score(_) => "Score",
            JobOutput::Scores(_) => "Scores",
            JobOutput::Trace(_) => "Trace",
            JobOutput::Prepared(_) => "Prepared",
            JobOutput::Tokens(_) => "Tokens",
            JobOutput::Pieces(_) => "Pieces",
            JobOutput::Letter(_) => "Letter",
            JobOutput::Generated(_) => "Generated",
            JobOutput::Done => "Done",
            JobOutput::Timed(_) => "Timed",
            JobOutput::Inspected(_) => "Inspected",
            JobOutput::Floats(_) => "Floats",
            JobOutput::Shape(_) => "Shape",
        }
    }
}

/// The value a kind of job answers with, taken out of its [`JobOutput`] variant by
/// [`Engine::ask`](super::Engine::ask). A worker that answers with another variant has a bug.
pub(crate) trait Answer: Sized {
    /// The variant that carries it.
    const VARIANT: &'static str;
    /// The value, or the output back when it is another variant.
    fn take(out: JobOutput) -> Result<Self, JobOutput>;
}

macro_rules! answers {
    ($($variant:ident => $t:ty),* $(,)?) => {$(
        impl Answer for $t {
            const VARIANT: &'static str = stringify!($variant);
            fn take(out: JobOutput) -> Result<Self, JobOutput> {
                match out {
                    JobOutput::$variant(x) => Ok(x),
                    other => Err(other),
                }
            }
        }
    )*};
}

answers!(
    Score => Box<SlotScore>,
    Scores => Vec<SlotScore>,
    Trace => Vec<KvOp>,
    Prepared => Prepared,
    Tokens => Vec<i32>,
    Pieces => Vec<String>,
    Letter => LetterTokens,
    Generated => Generation,
    Timed => f64,
    Inspected => Box<Inspection>,
    Floats => Vec<f32>,
    Shape => (usize, usize),
);

impl Answer for () {
    const VARIANT: &'static str = "Done";
    fn take(out: JobOutput) -> Result<Self, JobOutput> {
        match out {
            JobOutput::Done => Ok(()),
            other => Err(other),
        }
    }
}

/// A greedy continuation ([`Job::Generate`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generation {
    /// The generated tokens as text (special tokens rendered).
    pub text: String,
    pub tokens: Vec<i32>,
    /// It ended on an end-of-generation token (not counted in `tokens`), not at the limit.
    pub finished: bool,
}

#[derive(Debug)]
pub(crate) struct JobResult {
    pub id: u64,
    pub output: Result<JobOutput, EngineError>,
}

pub(super) enum Request {
    Job {
        id: u64,
        job: Job,
        reply: Sender<JobResult>,
    },
    Shutdown,
}

/// Counters shared with the worker (for status bars and benchmarks).
#[derive(Debug, Default)]
pub struct EngineStats {
    pub busy: AtomicBool,
    pub tokens_evaluated: AtomicU64,
    pub tokens_reused: AtomicU64,
    /// Microseconds spent in scoring jobs.
    pub busy_micros: AtomicU64,
    pub jobs_done: AtomicU64,
    /// Host memory held by KV snapshots now, and the most ever held.
    pub snapshot_bytes: AtomicU64,
    pub snapshot_peak_bytes: AtomicU64,
    /// Nanoseconds an in-process worker has spent in each of [`SCORING_PHASES`] since it
    /// started (`bench batch` splits its wall time with them).
    pub phase_nanos: [AtomicU64; SCORING_PHASES.len()],
    /// llama.cpp decode calls so far, the tokens in them (padding included), and the padding.
    pub decode_calls: AtomicU64,
    pub decode_tokens: AtomicU64,
    pub pad_tokens: AtomicU64,
}

/// The parts of scoring an in-process worker times, in [`EngineStats::phase_nanos`] order.
pub const SCORING_PHASES: [&str; 6] = ["template rendering", "tokenization", "KV snapshot save", "KV copy and restore", "llama.cpp decode", "logits → letters"];
/// The worker's loop over jobs (in-process and served alike): a job submitted before a
/// [`Engine::cancel_pending`] is answered `Cancelled` without running; counters are kept.
pub(super) fn job_loop(
    rx: Receiver<Request>,
    cancel_below: &AtomicU64,
    stats: &EngineStats,
    mut run: impl FnMut(u64, Job, &dyn Fn() -> bool) -> Result<JobOutput, EngineError>,
) {
    while let Ok(req) = rx.recv() {
        let (id, job, reply) = match req {
            Request::Shutdown => break,
            Request::Job { id, job, reply } => (id, job, reply),
        };
        if id < cancel_below.load(Ordering::SeqCst) {
            let _ = reply.send(JobResult {
                id,
                output: Err(EngineError::Cancelled),
            });
            continue;
        }
        stats.busy.store(true, Ordering::SeqCst);
        let t0 = std::time::Instant::now();
        // A generation stops between tokens once its job is cancelled.
        let cancelled = || id < cancel_below.load(Ordering::SeqCst);
        let output = run(id, job, &cancelled);
        stats.count(&output, t0);
        let _ = reply.send(JobResult { id, output });
    }
}

impl EngineStats {
    /// Counts the tokens of a job's scores.
    pub(crate) fn count_scores(&self, output: &Result<JobOutput, EngineError>) {
        let scores: &[SlotScore] = match output {
            Ok(JobOutput::Score(s)) => std::slice::from_ref(&**s),
            Ok(JobOutput::Scores(v)) => v,
            _ => &[],
        };
        for s in scores {
            self.tokens_evaluated.fetch_add(s.tokens_evaluated as u64, Ordering::Relaxed);
            self.tokens_reused.fetch_add(s.tokens_reused as u64, Ordering::Relaxed);
        }
    }

    /// Counts a finished job that started at `t0`: its scores' tokens, its time.
    pub(crate) fn count(&self, output: &Result<JobOutput, EngineError>, t0: std::time::Instant) {
        self.count_scores(output);
        self.busy_micros.fetch_add(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
        self.jobs_done.fetch_add(1, Ordering::Relaxed);
        self.busy.store(false, Ordering::SeqCst);
    }
}

pub(super) fn run_job(
    session: &mut Session,
    prompter: &mut Prompter,
    insides: &mut Insides,
    job: Job,
    top_k: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<JobOutput, EngineError> {
    match job {
        Job::Generate { messages, max_tokens, stop } => {
            let prepared = prompter.prepare(&messages)?;
            let stopped = || cancelled() || stop.load(Ordering::SeqCst);
            session.generate(prompter.model, &prepared.tokens, max_tokens, &stopped).map(JobOutput::Generated)
        }
        Job::Score { messages, letters } => {
            if letters.len() > 26 {
                return Err(EngineError::TooManyOptions { n: letters.len() });
            }
            let prepared = prompter.prepare(&messages)?;
            score_prepared(session, prompter, 0, prepared, &letters, top_k)
                .map(|s| JobOutput::Score(Box::new(s)))
        }
        Job::ScorePrepared { prepared, letters, lane } => {
            score_prepared(session, prompter, lane, prepared, &letters, top_k).map(|s| JobOutput::Score(Box::new(s)))
        }
        Job::ScoreGroup { prompts, letters, lane } => prompts
            .into_iter()
            .map(|p| score_prepared(session, prompter, lane, p, &letters, top_k))
            .collect::<Result<Vec<_>, _>>()
            .map(JobOutput::Scores),
        Job::ScoreOpen { prepared, texts, lane } => {
            score_open(session, prompter, lane, prepared, &texts, top_k).map(|s| JobOutput::Score(Box::new(s)))
        }
        Job::Prepare { messages } => prompter.prepare(&messages).map(JobOutput::Prepared),
        Job::Tokenize {
            text,
            parse_special,
        } => Ok(JobOutput::Tokens(
            prompter
                .tokenize(&text, parse_special)
                .iter()
                .map(|t| t.0)
                .collect(),
        )),
        Job::Detokenize { tokens } => Ok(JobOutput::Pieces(
            tokens
                .iter()
                .map(|&t| {
                    String::from_utf8_lossy(&prompter.model.vocab().token_to_piece(
                        llama_cpp_2::token::LlamaToken(t),
                        true,
                        None,
                    ))
                    .into_owned()
                })
                .collect(),
        )),
        Job::Letter { letter } => prompter.letter_tokens(letter).map(JobOutput::Letter),
        Job::ClearCache => {
            session.clear();
            Ok(JobOutput::Done)
        }
        Job::RawDecode { tokens, n_tokens } => session.raw_decode(&tokens, n_tokens).map(JobOutput::Timed),
        Job::Record(on) => {
            let trace = std::mem::replace(&mut session.trace, on.then(Vec::new));
            Ok(JobOutput::Trace(trace.unwrap_or_default()))
        }
        Job::Replay(ops) => session.replay(&ops).map(JobOutput::Timed),
        Job::Inspect { messages, letters, options } => insides
            .inspect(prompter, &messages, &letters, &options, top_k)
            .map(|i| JobOutput::Inspected(Box::new(i))),
        Job::TokenRow { token } => insides.token_row(token).map(JobOutput::Floats),
        Job::Shape => insides.shape().map(JobOutput::Shape),
    }
}

/// Scores one prepared prompt on lane `lane`.
pub(super) fn score_prepared(
    session: &mut Session,
    prompter: &mut Prompter,
    lane: usize,
    prepared: Prepared,
    letters: &[char],
    top_k: usize,
) -> Result<SlotScore, EngineError> {
    let variants = letter_variants(prompter, letters)?;
    let counts = session.evaluate(lane, &prepared.tokens)?;
    let t0 = std::time::Instant::now();
    let s = score_from_logits(prompter.model, session.read_logits(), &variants, top_k, &prepared, counts);
    add_since(&session.clocks.letters, t0);
    Ok(s)
}

/// Scores the option texts of an `open` slot after a prepared prompt on lane `lane`: for each
/// text, the prompt followed by the text is evaluated (reusing the cached prefix, which ends at
/// the prompt's last token at the latest) and the log-probability of each text token and of
/// the end-of-turn token after the text is read from the logits at the positions before them.
/// The top next tokens are those at the answer slot (the prompt's last position).
pub(super) fn score_open(
    session: &mut Session,
    prompter: &mut Prompter,
    lane: usize,
    prepared: Prepared,
    texts: &[String],
    top_k: usize,
) -> Result<SlotScore, EngineError> {
    let eot = end_of_turn(prompter.model)
        .ok_or_else(|| EngineError::BadInput("the model has no end-of-turn or end-of-sequence token: open answers cannot be scored".into()))?;
    let continuations = open_continuations(prompter, texts)?;
    let slot = prepared.tokens.len() - 1;
    let mut options = Vec::with_capacity(texts.len());
    let mut top_tokens: Vec<TopToken> = Vec::new();
    let (mut evaluated, mut reused) = (0, 0);
    for cont in &continuations {
        let mut tokens = prepared.tokens.clone();
        tokens.extend_from_slice(cont);
        let n = tokens.len();
        let (mut sum_logp, mut eot_logp) = (0.0, f64::NEG_INFINITY);
        let first = top_tokens.is_empty();
        let mut letters_time = std::time::Duration::ZERO;
        let counts = session.evaluate_positions(lane, &tokens, slot, &mut |pos, logits| {
            let t1 = std::time::Instant::now();
            let lz = log_normaliser(logits);
            let next = if pos + 1 < n { tokens[pos + 1] } else { eot.0 };
            let lp = f64::from(logits[next as usize]) - lz;
            if pos + 1 < n {
                sum_logp += lp;
            } else {
                eot_logp = lp;
            }
            if pos == slot && first {
                top_tokens = top_k_tokens(logits, top_k)
                    .into_iter()
                    .map(|id| TopToken {
                        id,
                        text: token_text(prompter.model, llama_cpp_2::token::LlamaToken(id)),
                        prob: (f64::from(logits[id as usize]) - lz).exp(),
                    })
                    .collect();
            }
            letters_time += t1.elapsed();
        })?;
        session.clocks.letters.set(session.clocks.letters.get() + letters_time.as_nanos() as u64);
        evaluated += counts.0;
        reused += counts.1;
        options.push(OpenOption { sum_logp, tokens: cont.len(), eot_logp });
    }
    let mut s = open_score(options, token_text(prompter.model, eot), top_tokens);
    s.prompt_tokens = prepared.tokens.len();
    s.tokens_evaluated = evaluated;
    s.tokens_reused = reused;
    s.prompt_hash = prepared.hash();
    s.rendered_prompt = prepared.text;
    Ok(s)
}
