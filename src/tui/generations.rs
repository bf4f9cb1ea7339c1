//! What the model would say: greedy continuations at the answer slot (`Job::Generate`), asked
//! for with `a` in the Dialogue view, run on the shown model's engine thread like a score, and
//! kept per context (model and messages) for the session. `a` again while one runs stops it
//! before its next token; moving to another item cancels it too (the engine's pending jobs are
//! cancelled then), and the context can be asked again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use crate::engine::{EngineError, Generation, Job, JobOutput, JobResult};
use crate::protocol::ChatMessage;

use super::jobs::Submit;

/// Tokens generated at most for one context.
pub(crate) const GENERATE_TOKENS: usize = 24;

#[derive(Clone, Debug)]
pub(crate) enum GenState {
    Running,
    Done(Generation),
    Failed(String),
}

pub(crate) struct Generations {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    states: HashMap<String, GenState>,
    /// Job id → (context key, its stop flag).
    running: HashMap<u64, (String, Arc<AtomicBool>)>,
    /// Asked for while the model was still loading: (model, messages), sent once it is ready.
    queued: Vec<(String, Vec<ChatMessage>)>,
}

impl Default for Generations {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Generations { tx, rx, states: HashMap::new(), running: HashMap::new(), queued: Vec::new() }
    }
}

/// The key of a context: the model and the exact messages (also the what-if scores' key).
pub(crate) fn key(model: &str, messages: &[ChatMessage]) -> String {
    let mut k = String::from(model);
    for m in messages {
        k.push('\u{1}');
        k.push_str(&m.role);
        k.push('\u{2}');
        k.push_str(&m.content);
    }
    k
}

impl Generations {
    pub(crate) fn get(&self, model: &str, messages: &[ChatMessage]) -> Option<&GenState> {
        self.states.get(&key(model, messages))
    }

    /// Starts the generation of a context on `engine`.
    pub(crate) fn start(&mut self, engine: &dyn Submit, model: &str, messages: &[ChatMessage]) {
        let k = key(model, messages);
        let stop = Arc::new(AtomicBool::new(false));
        let job = Job::Generate { messages: messages.to_vec(), max_tokens: GENERATE_TOKENS, stop: stop.clone() };
        let id = engine.submit(job, self.tx.clone());
        self.running.insert(id, (k.clone(), stop));
        self.states.insert(k, GenState::Running);
    }

    /// Asks for a generation before the model is ready: it is sent by [`send_queued`].
    pub(crate) fn queue(&mut self, model: &str, messages: &[ChatMessage]) {
        self.states.insert(key(model, messages), GenState::Running);
        self.queued.push((model.to_string(), messages.to_vec()));
    }

    /// Sends what was asked for while `model` was loading to its engine, now ready.
    pub(crate) fn send_queued(&mut self, engine: &dyn Submit, model: &str) {
        let (now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.queued).into_iter().partition(|(m, _)| m == model);
        self.queued = later;
        for (m, msgs) in now {
            if matches!(self.states.get(&key(&m, &msgs)), Some(GenState::Running)) {
                self.start(engine, &m, &msgs);
            }
        }
    }

    /// Stops the running generation of a context (its entry goes at once). False if none runs.
    pub(crate) fn cancel(&mut self, model: &str, messages: &[ChatMessage]) -> bool {
        let k = key(model, messages);
        if !matches!(self.states.get(&k), Some(GenState::Running)) {
            return false;
        }
        for (ck, stop) in self.running.values() {
            if *ck == k {
                stop.store(true, Ordering::SeqCst);
            }
        }
        self.states.remove(&k);
        self.queued.retain(|(m, msgs)| key(m, msgs) != k);
        true
    }

    /// Takes in finished generations; true when any arrived.
    pub(crate) fn poll(&mut self) -> bool {
        let mut any = false;
        while let Ok(r) = self.rx.try_recv() {
            let Some((k, stop)) = self.running.remove(&r.id) else { continue };
            any = true;
            if stop.load(Ordering::SeqCst) {
                continue;
            }
            match r.output {
                Ok(JobOutput::Generated(g)) => {
                    self.states.insert(k, GenState::Done(g));
                }
                Err(EngineError::Cancelled) => {
                    self.states.remove(&k);
                }
                Err(e) => {
                    self.states.insert(k, GenState::Failed(e.to_string()));
                }
                Ok(_) => {
                    self.states.insert(k, GenState::Failed("unexpected engine answer".into()));
                }
            }
        }
        any
    }

    /// A generation is in flight (or waits for the model).
    pub(crate) fn busy(&self) -> bool {
        !self.running.is_empty() || !self.queued.is_empty()
    }

    /// The engine went away (another model): what ran will not answer.
    pub(crate) fn forget_running(&mut self) {
        for (k, _) in self.running.values() {
            if matches!(self.states.get(k), Some(GenState::Running)) {
                self.states.remove(k);
            }
        }
        self.running.clear();
        for (m, msgs) in std::mem::take(&mut self.queued) {
            self.states.remove(&key(&m, &msgs));
        }
    }
}
