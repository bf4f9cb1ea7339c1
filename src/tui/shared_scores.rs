//! The explorer's side of the score store shared by every run (`store::shared`): a part whose
//! context the store already holds takes its score from there and never reaches the engine, and
//! every score the engine computes for the explorer is appended to it.
//!
//! The lookup needs only the model's identity (file sha256, prompt format, numeric provenance)
//! and the part's messages, not the loaded model: opening the store and working out each
//! model's identity (hashing an unpinned GGUF once) happen on background threads, so a batch's
//! values show while the model is still loading. Until a model's identity is known nothing is
//! sent to its engine (it might be in the store); a model whose identity cannot be known (not in
//! models.toml, file missing and no pinned sha256) is scored without the store.
//!
//! A part looked up without success is remembered (with its context key) so it is not hashed
//! again each frame; the store is re-read every two seconds, and a remembered part whose context
//! another process (a batch) has since appended is looked up again.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use super::parts::Part;
use crate::config::{models_dir, ModelsConfig};
use crate::protocol::{ChatMessage, SlotScore};
use crate::store::shared::{context_key, SharedScores};
use crate::store::ScoreRow;

/// What decides a model's scores besides the messages: its file, how prompts are formatted for
/// it, and the numeric provenance of this build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModelIdent {
    pub(crate) sha256: String,
    pub(crate) prompt_format: String,
    pub(crate) provenance: String,
}

enum Ident {
    Pending,
    Ready(ModelIdent),
    Unavailable,
}

enum StoreState {
    Off,
    Opening,
    Open(SharedScores),
    Failed(String),
}

enum Msg {
    Opened(Result<SharedScores, String>),
    Ident(String, Result<ModelIdent, String>),
}

/// Where a model stands with the store.
pub(crate) enum Access<'a> {
    /// No store (off, failed, or the model's identity cannot be known): the engine scores all.
    Off,
    /// The store or the model's identity is not known yet: send nothing to the engine.
    Wait,
    /// Look every part up before the engine.
    Ready(Lookup<'a>),
}

/// (model, item id, part) → the context key that was not in the store.
type Tried = HashMap<(String, String, Part), String>;

/// Lookups of one model's parts.
pub(crate) struct Lookup<'a> {
    store: &'a SharedScores,
    ident: &'a ModelIdent,
    model: &'a str,
    tried: &'a mut Tried,
    hits: &'a mut usize,
}

impl Lookup<'_> {
    /// The part was looked up and the store did not have it (and has not since).
    pub(crate) fn tried(&self, item_id: &str, part: Part) -> bool {
        self.tried.contains_key(&(self.model.to_string(), item_id.to_string(), part))
    }

    /// The stored score of a part's context, if the store has it.
    pub(crate) fn find(&mut self, item_id: &str, part: Part, messages: &[ChatMessage], letters: &str) -> Option<SlotScore> {
        if self.tried(item_id, part) {
            return None;
        }
        let id = self.ident;
        let ctx = context_key(&id.sha256, &id.prompt_format, messages, letters, &id.provenance);
        match self.store.get_context(&ctx) {
            Some(row) if row.letters == letters => {
                *self.hits += 1;
                Some(row.to_score())
            }
            _ => {
                self.tried.insert((self.model.to_string(), item_id.to_string(), part), ctx);
                None
            }
        }
    }
}

pub(crate) struct SharedLink {
    path: Option<PathBuf>,
    store: StoreState,
    idents: HashMap<String, Ident>,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    tried: Tried,
    /// Scores taken from the store this session.
    hits: usize,
    /// Scores this session appended.
    appended: usize,
    /// Computed scores waiting to be appended (once per frame).
    unsaved: Vec<ScoreRow>,
    last_refresh: Instant,
    /// Something changed that may let more parts be found (see [`take_dirty`](Self::take_dirty)).
    dirty: bool,
}

impl SharedLink {
    /// Opens the store at `path` (None = no store) on a background thread.
    pub(crate) fn new(path: Option<PathBuf>) -> SharedLink {
        let (tx, rx) = mpsc::channel();
        let store = match &path {
            None => StoreState::Off,
            Some(p) => {
                let (p, tx) = (p.clone(), tx.clone());
                let spawned = std::thread::Builder::new().name("hyst-store".into()).spawn(move || {
                    let r = SharedScores::open(&p).map_err(|e| e.to_string());
                    if let Ok(s) = &r {
                        if let Some(msg) = s.report.describe(&p) {
                            tracing::warn!("{msg}");
                        }
                    }
                    let _ = tx.send(Msg::Opened(r));
                });
                match spawned {
                    Ok(_) => StoreState::Opening,
                    Err(e) => StoreState::Failed(e.to_string()),
                }
            }
        };
        SharedLink {
            path,
            store,
            idents: HashMap::new(),
            tx,
            rx,
            tried: HashMap::new(),
            hits: 0,
            appended: 0,
            unsaved: Vec::new(),
            last_refresh: Instant::now(),
            dirty: true,
        }
    }

    /// The store's file (None = no store).
    pub(crate) fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }
    pub(crate) fn enabled(&self) -> bool {
        !matches!(self.store, StoreState::Off | StoreState::Failed(_))
    }
    pub(crate) fn error(&self) -> Option<&str> {
        match &self.store {
            StoreState::Failed(e) => Some(e),
            _ => None,
        }
    }
    /// Scores taken from the store this session.
    pub(crate) fn hits(&self) -> usize {
        self.hits
    }
    /// Scores this session appended to the store.
    pub(crate) fn appended(&self) -> usize {
        self.appended
    }
    /// The store is being opened or a model's identity worked out.
    pub(crate) fn pending(&self) -> bool {
        matches!(self.store, StoreState::Opening) || (self.enabled() && self.idents.values().any(|i| matches!(i, Ident::Pending)))
    }

    /// Starts working out `key`'s identity (once per model), when there is a store.
    pub(crate) fn want(&mut self, models: &ModelsConfig, key: &str, engine: &crate::engine::EngineOptions) {
        if !self.enabled() || self.idents.contains_key(key) {
            return;
        }
        let entry = match models.get(key) {
            Ok(e) => e.clone(),
            Err(_) => {
                self.idents.insert(key.into(), Ident::Unavailable);
                return;
            }
        };
        let gpu_layers = engine.gpu_layers_for(&entry);
        let (tx, k) = (self.tx.clone(), key.to_string());
        let opts = engine.clone();
        let spawned = std::thread::Builder::new().name("hyst-ident".into()).spawn(move || {
            let r = (|| -> anyhow::Result<ModelIdent> {
                let path = entry.path(&models_dir());
                if entry.endpoint.is_some() {
                    // A served model's identity is its server's: ask it.
                    let (sha256, provenance) = crate::engine::served::identity(&entry, &models_dir(), &opts)?;
                    return Ok(ModelIdent { sha256, prompt_format: entry.prompt_format(), provenance });
                }
                Ok(ModelIdent {
                    sha256: crate::batch::model_sha256(&entry, &path)?,
                    prompt_format: entry.prompt_format(),
                    provenance: crate::engine::provenance::provenance(gpu_layers),
                })
            })();
            let _ = tx.send(Msg::Ident(k, r.map_err(|e| format!("{e:#}"))));
        });
        let state = match spawned {
            Ok(_) => Ident::Pending,
            Err(e) => {
                tracing::warn!("model {key}: cannot work out its identity for the score store: {e}");
                Ident::Unavailable
            }
        };
        self.idents.insert(key.into(), state);
    }

    /// Takes in an opened store and worked-out identities, and every two seconds what other
    /// processes appended. Returns a notice when the store could not be opened.
    pub(crate) fn poll(&mut self) -> Option<String> {
        let mut notice = None;
        while let Ok(m) = self.rx.try_recv() {
            self.dirty = true;
            match m {
                Msg::Opened(Ok(s)) => self.store = StoreState::Open(s),
                Msg::Opened(Err(e)) => {
                    tracing::warn!("shared score store: {e}");
                    notice = Some(format!("score store: {e}"));
                    self.store = StoreState::Failed(e);
                }
                Msg::Ident(k, r) => {
                    let state = match r {
                        Ok(i) => Ident::Ready(i),
                        Err(e) => {
                            tracing::warn!("model {k}: no identity for the score store: {e}");
                            Ident::Unavailable
                        }
                    };
                    self.idents.insert(k, state);
                }
            }
        }
        if self.last_refresh.elapsed() >= Duration::from_secs(2) {
            self.last_refresh = Instant::now();
            self.refresh();
        }
        notice
    }

    /// Reads what other processes appended; parts tried before whose context is now there are
    /// looked up again.
    fn refresh(&mut self) {
        let StoreState::Open(s) = &mut self.store else { return };
        match s.refresh() {
            Ok(0) => {}
            Ok(_) => {
                let s = &*s;
                let before = self.tried.len();
                self.tried.retain(|_, ctx| s.get_context(ctx).is_none());
                if self.tried.len() < before {
                    self.dirty = true;
                }
            }
            Err(e) => tracing::warn!("shared score store: {e}"),
        }
    }

    /// Whether something changed since the last call that may let more parts be found.
    pub(crate) fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// How `model`'s parts are scored now.
    pub(crate) fn access<'a>(&'a mut self, model: &'a str) -> Access<'a> {
        let store = match &self.store {
            StoreState::Off | StoreState::Failed(_) => return Access::Off,
            StoreState::Opening => return Access::Wait,
            StoreState::Open(s) => s,
        };
        match self.idents.get(model) {
            None | Some(Ident::Pending) => Access::Wait,
            Some(Ident::Unavailable) => Access::Off,
            Some(Ident::Ready(ident)) => Access::Ready(Lookup {
                store,
                ident,
                model,
                tried: &mut self.tried,
                hits: &mut self.hits,
            }),
        }
    }

    /// Keeps a score the engine computed for `model` to append at the next [`flush`](Self::flush).
    pub(crate) fn record(&mut self, model: &str, messages: &[ChatMessage], letters: &str, s: &SlotScore) {
        if !matches!(self.store, StoreState::Open(_)) {
            return;
        }
        let Some(Ident::Ready(id)) = self.idents.get(model) else { return };
        let mut row = ScoreRow::from_score(model, &id.sha256, &id.provenance, s);
        row.context_key = context_key(&id.sha256, &id.prompt_format, messages, letters, &id.provenance);
        self.unsaved.push(row);
    }

    /// Appends the recorded scores in one write. Returns a notice when that failed.
    pub(crate) fn flush(&mut self) -> Option<String> {
        if self.unsaved.is_empty() {
            return None;
        }
        let rows = std::mem::take(&mut self.unsaved);
        let StoreState::Open(s) = &mut self.store else { return None };
        match s.append(&rows) {
            Ok(n) => {
                self.appended += n;
                None
            }
            Err(e) => {
                tracing::warn!("cannot append to the shared score store {}: {e}", s.path().display());
                Some(format!("score store: {e}"))
            }
        }
    }
}
