//! One model's engine (the shown model's, or a compared model's): loaded on a background thread
//! so the UI stays usable, each load a new generation (a load that was superseded while it ran
//! is dropped when it arrives), and a tokens/s meter over the engine's own counters.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::config::{models_dir, ModelsConfig};
use crate::engine::exactness::ReusePolicy;
use crate::engine::{Engine, EngineError, EngineOptions};

#[allow(clippy::large_enum_variant)] // one value per app
pub(crate) enum EngineState {
    /// Browsing a stored run without a model.
    Off,
    Loading { key: String },
    Ready(Engine),
    Failed { key: String, error: String },
}

/// A finished load: (generation, model key, the engine or why not, what the prefix-reuse check
/// on a GPU back-end found).
type Loaded = (u64, String, Result<Engine, EngineError>, Option<String>);

/// Tokens per busy second over a short window.
#[derive(Default)]
struct RateMeter {
    samples: VecDeque<(Instant, u64, u64)>,
    last: Option<f64>,
}

impl RateMeter {
    fn sample(&mut self, tokens: u64, busy_micros: u64) {
        let now = Instant::now();
        self.samples.push_back((now, tokens, busy_micros));
        while self.samples.len() > 2 && self.samples.front().is_some_and(|s| now.duration_since(s.0) > Duration::from_secs(4)) {
            self.samples.pop_front();
        }
        if let (Some(a), Some(b)) = (self.samples.front(), self.samples.back()) {
            let dt = b.1.saturating_sub(a.1) as f64;
            let busy = b.2.saturating_sub(a.2) as f64 / 1e6;
            if busy > 0.2 {
                self.last = Some(dt / busy);
            }
        }
    }
}

/// The engine, the model whose scores are shown, and the background loads.
pub(crate) struct EngineSlot {
    state: EngineState,
    /// The model being loaded or used (a stored run's model while browsing one).
    model_key: String,
    generation: u64,
    tx: Sender<Loaded>,
    rx: Receiver<Loaded>,
    rate: RateMeter,
    /// On a GPU back-end where prefix reuse is not bit-exact: what the engine does about it.
    reuse_note: Option<String>,
}

/// Starts an engine; on a GPU back-end with prefix reuse on, checks the reuse first and, where
/// it is not bit-exact, scores from scratch like a batch does (unless `allow_inexact`).
fn start_checked(entry: &crate::config::ModelEntry, path: &std::path::Path, opts: EngineOptions, allow_inexact: bool) -> (Result<Engine, EngineError>, Option<String>) {
    let gpu = crate::engine::provenance::on_gpu(opts.gpu_layers_for(entry));
    let e = match Engine::start(entry, path, opts.clone()) {
        Ok(e) => e,
        Err(err) => return (Err(err), None),
    };
    if !gpu || !opts.cache {
        return (Ok(e), None);
    }
    let policy = if allow_inexact { ReusePolicy::AllowInexact } else { ReusePolicy::FallBackToScratch };
    match crate::engine::exactness::reuse_check(&e) {
        Ok(c) => match c.decide(policy) {
            (true, note) => {
                e.shutdown();
                (Engine::start(entry, path, EngineOptions { cache: false, ..opts }), note)
            }
            (false, note) => (Ok(e), note),
        },
        Err(err) => (Err(err), None),
    }
}

impl EngineSlot {
    /// No engine yet; scores shown are `model_key`'s.
    pub(crate) fn new(model_key: String) -> EngineSlot {
        let (tx, rx) = mpsc::channel();
        EngineSlot {
            state: EngineState::Off,
            model_key,
            generation: 0,
            tx,
            rx,
            rate: RateMeter::default(),
            reuse_note: None,
        }
    }

    pub(crate) fn state(&self) -> &EngineState {
        &self.state
    }

    pub(crate) fn model_key(&self) -> &str {
        &self.model_key
    }

    pub(crate) fn ready(&self) -> Option<&Engine> {
        match &self.state {
            EngineState::Ready(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn loading(&self) -> bool {
        matches!(self.state, EngineState::Loading { .. })
    }

    /// `key` is loaded or loading already.
    pub(crate) fn serves(&self, key: &str) -> bool {
        key == self.model_key && matches!(self.state, EngineState::Ready(_) | EngineState::Loading { .. })
    }

    pub(crate) fn tokens_per_s(&self) -> Option<f64> {
        self.rate.last
    }

    /// What the prefix-reuse check of a GPU back-end found, when reuse is not exact there.
    pub(crate) fn reuse_note(&self) -> Option<&str> {
        self.reuse_note.as_deref()
    }

    /// Loads `key` on a background thread; the old engine is dropped (its worker stops after the
    /// job in flight, not waited for). Returns whether a load began (the model is now `key`, so
    /// requests made for the old engine must be forgotten); an unknown key only fails.
    pub(crate) fn start(&mut self, models: &ModelsConfig, key: &str, opts: EngineOptions, allow_inexact: bool) -> bool {
        let entry = match models.get(key) {
            Ok(e) => e.clone(),
            Err(e) => {
                self.state = EngineState::Failed { key: key.into(), error: e.to_string() };
                return false;
            }
        };
        self.generation += 1;
        let gen = self.generation;
        self.state = EngineState::Loading { key: key.into() };
        self.rate = RateMeter::default();
        self.reuse_note = None;
        self.model_key = key.to_string();
        let tx = self.tx.clone();
        let k = key.to_string();
        let spawned = std::thread::Builder::new().name("hyst-load".into()).spawn(move || {
            let path = entry.path(&models_dir());
            let (r, note) = start_checked(&entry, &path, opts, allow_inexact);
            let _ = tx.send((gen, k, r, note));
        });
        if let Err(e) = spawned {
            self.state = EngineState::Failed { key: key.into(), error: e.to_string() };
        }
        true
    }

    /// Takes a finished load of the current generation. Returns the key of a model that has
    /// just become ready.
    pub(crate) fn poll(&mut self) -> Option<String> {
        let mut loaded = None;
        while let Ok((gen, key, r, note)) = self.rx.try_recv() {
            if gen != self.generation {
                continue; // a superseded load: drop it (the engine shuts down)
            }
            match r {
                Ok(e) => {
                    self.state = EngineState::Ready(e);
                    self.reuse_note = note;
                    loaded = Some(key);
                }
                Err(e) => self.state = EngineState::Failed { key, error: e.to_string() },
            }
        }
        loaded
    }

    /// Samples the engine's counters for the tokens/s meter.
    pub(crate) fn sample_rate(&mut self) {
        if let EngineState::Ready(e) = &self.state {
            let t = e.stats.tokens_evaluated.load(Ordering::Relaxed);
            let m = e.stats.busy_micros.load(Ordering::Relaxed);
            self.rate.sample(t, m);
        }
    }

    /// Drops the engine without waiting for it.
    pub(crate) fn shut_down(&mut self) {
        self.state = EngineState::Off;
    }

    /// No engine: shows `key`'s stored scores (a load in progress is dropped when it arrives).
    pub(crate) fn show_stored(&mut self, key: &str) {
        self.generation += 1;
        self.state = EngineState::Off;
        self.rate = RateMeter::default();
        self.reuse_note = None;
        self.model_key = key.to_string();
    }
}
