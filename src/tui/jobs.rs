//! Generational job queue between the UI thread and the engine worker.
//!
//! Every request the UI sends carries the *generation* it was made for. Moving to another item
//! (or another model) starts a new generation: pending jobs of the old one are cancelled at the
//! engine (`cancel_pending`), and any result of an old generation that still arrives (the job
//! that was already running) is dropped on receipt — by construction, [`JobQueue::poll`] never
//! hands out a value whose generation is not the current one (atuin's `Generational<T>`).

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::engine::{Engine, EngineError, Job, JobOutput, JobResult};

/// What the queue needs from an engine (the real [`Engine`]; tests use a scripted one).
pub(crate) trait Submit {
    fn submit(&self, job: Job, reply: Sender<JobResult>) -> u64;
    fn cancel_pending(&self);
}

impl Submit for Engine {
    fn submit(&self, job: Job, reply: Sender<JobResult>) -> u64 {
        Engine::submit(self, job, reply)
    }
    fn cancel_pending(&self) {
        Engine::cancel_pending(self)
    }
}

/// A value tagged with the generation of the request it answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Generational<T> {
    pub(crate) generation: u64,
    pub(crate) value: T,
}

/// Requests in flight, keyed by engine job id, and the current generation.
pub(crate) struct JobQueue<K> {
    generation: u64,
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    inflight: HashMap<u64, Generational<K>>,
    /// Results that arrived for an old generation and were dropped.
    pub(crate) stale_dropped: u64,
}

impl<K: Clone + PartialEq> Default for JobQueue<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Clone + PartialEq> JobQueue<K> {
    pub(crate) fn new() -> Self {
        let (tx, rx) = mpsc::channel();
        Self {
            generation: 1,
            tx,
            rx,
            inflight: HashMap::new(),
            stale_dropped: 0,
        }
    }

    /// Starts a new generation: the engine's not-yet-started jobs are cancelled, and results of
    /// earlier generations will be dropped when they arrive. Returns the new generation.
    pub(crate) fn replace(&mut self, engine: Option<&dyn Submit>) -> u64 {
        self.generation += 1;
        if let Some(e) = engine {
            e.cancel_pending();
        }
        self.generation
    }

    /// For a new engine: a fresh reply channel (job ids restart with a new engine, so nothing
    /// the old one still sends can be mistaken for an answer) and a new generation.
    pub(crate) fn reset(&mut self) {
        let (tx, rx) = mpsc::channel();
        self.tx = tx;
        self.rx = rx;
        self.inflight.clear();
        self.generation += 1;
    }

    /// Sends a job for `key` in the current generation.
    pub(crate) fn submit(&mut self, engine: &dyn Submit, key: K, job: Job) -> u64 {
        let id = engine.submit(job, self.tx.clone());
        self.inflight.insert(
            id,
            Generational {
                generation: self.generation,
                value: key,
            },
        );
        id
    }

    /// Whether a request for `key` of the current generation is waiting for its result.
    pub(crate) fn in_flight(&self, key: &K) -> bool {
        self.inflight
            .values()
            .any(|g| g.generation == self.generation && g.value == *key)
    }

    /// Requests of the current generation still waiting.
    pub(crate) fn pending(&self) -> usize {
        self.inflight
            .values()
            .filter(|g| g.generation == self.generation)
            .count()
    }

    /// Requests of any generation still waiting (older ones will be dropped).
    pub(crate) fn pending_all(&self) -> usize {
        self.inflight.len()
    }

    fn accept(&mut self, r: JobResult) -> Option<(K, Result<JobOutput, EngineError>)> {
        let g = self.inflight.remove(&r.id)?;
        if g.generation != self.generation || matches!(r.output, Err(EngineError::Cancelled)) {
            self.stale_dropped += 1;
            return None;
        }
        Some((g.value, r.output))
    }

    /// Every result that has arrived, current generation only.
    pub(crate) fn poll(&mut self) -> Vec<(K, Result<JobOutput, EngineError>)> {
        let mut out = Vec::new();
        while let Ok(r) = self.rx.try_recv() {
            if let Some(x) = self.accept(r) {
                out.push(x);
            }
        }
        out
    }

    /// Like [`poll`](Self::poll), but waits up to `timeout` for the first result.
    pub(crate) fn wait(&mut self, timeout: Duration) -> Vec<(K, Result<JobOutput, EngineError>)> {
        let mut out = Vec::new();
        match self.rx.recv_timeout(timeout) {
            Ok(r) => {
                if let Some(x) = self.accept(r) {
                    out.push(x);
                }
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => return out,
        }
        out.extend(self.poll());
        out
    }
}
