//! The explorer's state and behaviour: items, scores, the engine and its job queue, key handling.
//! Rendering lives in [`super::views`]; nothing here draws.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{bail, Result};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::jobs::{JobQueue, Submit};
use super::model::{self, messages_for, Part, StoredRun};
use super::markdown::Doc;
use super::theme::Theme;
use crate::batch::{BatchEvent, BatchObserver, BatchRequest};
use crate::config::{models_dir, ModelsConfig};
use crate::data::{load_selection, DatasetSpec, Selected};
use crate::dialogue::{Builder, DialogueItem, Suite};
use crate::engine::{Engine, EngineError, EngineOptions, Job, JobOutput};
use crate::prompts::PromptSet;
use crate::protocol::{ChatMessage, SlotScore};

/// The views, in key order 1…6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Items,
    Dialogue,
    Trace,
    Slot,
    Recovery,
    Tables,
}

impl View {
    pub const ALL: [View; 6] = [View::Items, View::Dialogue, View::Trace, View::Slot, View::Recovery, View::Tables];
    pub fn name(self) -> &'static str {
        match self {
            View::Items => "Items",
            View::Dialogue => "Dialogue",
            View::Trace => "Trace",
            View::Slot => "Slot",
            View::Recovery => "Recovery",
            View::Tables => "Tables",
        }
    }
    pub fn index(self) -> usize {
        View::ALL.iter().position(|v| *v == self).unwrap_or(0)
    }
    /// The view's name on the command line (`snapshot --view`).
    pub fn key(self) -> &'static str {
        match self {
            View::Items => "items",
            View::Dialogue => "dialogue",
            View::Trace => "trace",
            View::Slot => "slot",
            View::Recovery => "recovery",
            View::Tables => "tables",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    None,
    Help,
    Models { sel: usize },
}

/// Sort column of the item list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    Index,
    Clean,
    R0,
    Gap,
    Wf,
    Id,
}

impl SortKey {
    pub fn next(self) -> SortKey {
        match self {
            SortKey::Index => SortKey::Clean,
            SortKey::Clean => SortKey::R0,
            SortKey::R0 => SortKey::Gap,
            SortKey::Gap => SortKey::Wf,
            SortKey::Wf => SortKey::Id,
            SortKey::Id => SortKey::Index,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Index => "#",
            SortKey::Clean => "clean p(w)",
            SortKey::R0 => "R0 p(w)",
            SortKey::Gap => "gap",
            SortKey::Wf => "WF",
            SortKey::Id => "id",
        }
    }
}

/// Behaviour switches (tests and screenshots freeze the status bar and turn prefetch off).
#[derive(Clone, Copy, Debug)]
pub struct AppOptions {
    /// No timings, no tokens/s, no spinner: the screen depends only on the data.
    pub frozen: bool,
    /// Score other items in the background once the current one is done.
    pub prefetch: bool,
    /// Prefetch only the first N items of the list (0 = all).
    pub prefetch_window: usize,
    pub color: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions {
            frozen: false,
            prefetch: true,
            prefetch_window: 0,
            color: Theme::from_env().color,
        }
    }
}

/// Everything the explorer is started with.
#[derive(Clone)]
pub struct AppConfig {
    pub models: ModelsConfig,
    pub engine: EngineOptions,
    pub prompts: PromptSet,
    /// Model key (default: the config's default model).
    pub model: Option<String>,
    /// Dataset spec (default: `sample`).
    pub dataset: Option<String>,
    /// Browse this stored batch run instead of scoring.
    pub run: Option<PathBuf>,
    /// The item selection, and the template of a batch started with `b` (its models, datasets
    /// and suites are replaced by the explorer's model, dataset and the hierarchy).
    pub batch: BatchRequest,
    /// The command line recorded in the manifest of a batch started with `b`.
    pub command_line: String,
    pub options: AppOptions,
}

impl AppConfig {
    /// The bundled prompts, default engine options and selection, the default model on `sample`.
    pub fn new(models: ModelsConfig) -> AppConfig {
        AppConfig {
            models,
            engine: EngineOptions::default(),
            prompts: PromptSet::bundled(),
            model: None,
            dataset: None,
            run: None,
            batch: BatchRequest::default(),
            command_line: "hyst-tui (explorer)".into(),
            options: AppOptions::default(),
        }
    }
}

#[allow(clippy::large_enum_variant)] // one value per app
pub enum EngineState {
    /// Browsing a stored run without a model.
    Off,
    Loading { key: String },
    Ready(Engine),
    Failed { key: String, error: String },
}

/// One request of the UI: a part of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    pub item: usize,
    pub part: Part,
}

type ScoreKey = (String, String, Part);

/// Item list state.
pub struct ItemsUi {
    /// Indices into `entries`, filtered and sorted.
    pub visible: Vec<usize>,
    pub sel: usize,
    pub sort: SortKey,
    pub reverse: bool,
    pub filter: String,
    pub filter_mode: bool,
}

/// Tables view state.
#[derive(Default)]
pub struct TablesUi {
    pub dir: Option<PathBuf>,
    /// `summary.md` first, then `tables/*.md` by name.
    pub files: Vec<PathBuf>,
    pub sel: usize,
    pub scroll: usize,
    pub hscroll: usize,
    pub doc: Option<Doc>,
    stamp: Option<(PathBuf, Option<SystemTime>, u64)>,
    last_scan: Option<Instant>,
}

/// A batch started from the explorer, running on its own thread. Its progress comes from the
/// batch's own events.
pub struct BatchState {
    pub stop: Arc<AtomicBool>,
    pub items_done: usize,
    pub total: usize,
    pub out: PathBuf,
    pub desc: String,
    pub started: Instant,
    events: Receiver<BatchMsg>,
    pub outcome: Option<std::result::Result<String, String>>,
    pub elapsed: Option<Duration>,
}

impl BatchState {
    pub fn running(&self) -> bool {
        self.outcome.is_none()
    }
    pub fn done_items(&self) -> usize {
        self.items_done.min(self.total)
    }
}

/// What the batch thread tells the UI.
enum BatchMsg {
    Progress { items_done: usize, items_total: usize },
    Done(std::result::Result<String, String>),
}

/// The explorer's observer of a batch: forwards progress to the UI thread, stops on request.
struct ChannelObserver {
    tx: Sender<BatchMsg>,
    stop: Arc<AtomicBool>,
}

impl BatchObserver for ChannelObserver {
    fn event(&mut self, e: BatchEvent<'_>) {
        let msg = match e {
            BatchEvent::Started { items_total, items_done, .. } => BatchMsg::Progress { items_done, items_total },
            BatchEvent::ItemFinished { items_done, items_total, .. } => BatchMsg::Progress { items_done, items_total },
            _ => return,
        };
        let _ = self.tx.send(msg);
    }
    fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

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
        while self.samples.len() > 2 && now.duration_since(self.samples[0].0) > Duration::from_secs(4) {
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

pub struct App {
    pub cfg: AppConfig,
    pub theme: Theme,
    pub entries: Vec<Selected>,
    pub dataset_label: String,
    pub dataset_spec: String,
    /// Set when browsing a stored run.
    pub run_dir: Option<PathBuf>,
    pub model_key: String,
    pub engine: EngineState,
    load_gen: u64,
    load_tx: Sender<(u64, String, std::result::Result<Engine, EngineError>)>,
    load_rx: Receiver<(u64, String, std::result::Result<Engine, EngineError>)>,
    pub queue: JobQueue<Ticket>,
    scores: HashMap<ScoreKey, Arc<SlotScore>>,
    errors: HashMap<ScoreKey, String>,
    pub view: View,
    pub overlay: Overlay,
    pub items: ItemsUi,
    focus: Option<usize>,
    /// Index into [`model::steps`].
    pub step: usize,
    pub steps: Vec<Part>,
    pub expand_blocks: bool,
    pub help_scroll: usize,
    /// Transcript lines scrolled up from the bottom.
    pub dialogue_scroll: usize,
    pub tables: TablesUi,
    pub batch: Option<BatchState>,
    pub notice: Option<String>,
    rate: RateMeter,
    pub quit: bool,
}

impl App {
    pub fn new(cfg: AppConfig) -> Result<App> {
        let theme = Theme { color: cfg.options.color };
        let (load_tx, load_rx) = mpsc::channel();
        let mut scores = HashMap::new();
        let (entries, dataset_label, dataset_spec, run_dir, model_key, stored_model);
        if let Some(dir) = &cfg.run {
            let run: StoredRun = model::load_run(dir, cfg.model.as_deref())?;
            for (id, part, s) in run.scores {
                scores.insert((run.model_key.clone(), id, part), Arc::new(s));
            }
            entries = run.items;
            dataset_label = run.dataset;
            dataset_spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
            run_dir = Some(dir.clone());
            model_key = run.model_key;
            stored_model = true;
        } else {
            let spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
            entries = load_selection(&spec, &cfg.batch.selection)?;
            if entries.is_empty() {
                bail!("dataset {spec}: no items");
            }
            dataset_label = DatasetSpec::parse(&spec)?.key();
            dataset_spec = spec;
            run_dir = None;
            model_key = cfg.models.get(cfg.model.as_deref().unwrap_or(&cfg.models.default_model))?.key.clone();
            stored_model = false;
        }
        let mut app = App {
            theme,
            entries,
            dataset_label,
            dataset_spec,
            run_dir: run_dir.clone(),
            model_key,
            engine: EngineState::Off,
            load_gen: 0,
            load_tx,
            load_rx,
            queue: JobQueue::new(),
            scores,
            errors: HashMap::new(),
            view: View::Items,
            overlay: Overlay::None,
            items: ItemsUi {
                visible: vec![],
                sel: 0,
                sort: SortKey::Index,
                reverse: false,
                filter: String::new(),
                filter_mode: false,
            },
            focus: None,
            step: 0,
            steps: model::steps(),
            expand_blocks: false,
            help_scroll: 0,
            dialogue_scroll: 0,
            tables: TablesUi {
                dir: run_dir,
                ..TablesUi::default()
            },
            batch: None,
            notice: None,
            rate: RateMeter::default(),
            quit: false,
            cfg,
        };
        app.refresh_visible();
        app.focus = app.current();
        if !stored_model {
            let key = app.model_key.clone();
            app.start_engine(&key);
        } else if let Some(dir) = &app.run_dir {
            let _ = dir;
            app.notice = Some("browsing a stored run (m: load a model to score more)".into());
        }
        Ok(app)
    }

    // -----------------------------------------------------------------------------------------
    // Engine lifecycle
    // -----------------------------------------------------------------------------------------

    /// Loads a model on a background thread; the UI stays usable meanwhile.
    pub fn start_engine(&mut self, key: &str) {
        let entry = match self.cfg.models.get(key) {
            Ok(e) => e.clone(),
            Err(e) => {
                self.engine = EngineState::Failed { key: key.into(), error: e.to_string() };
                return;
            }
        };
        self.load_gen += 1;
        let gen = self.load_gen;
        // Dropping the old engine stops its worker after the job in flight (not waited for).
        self.engine = EngineState::Loading { key: key.into() };
        self.queue.reset();
        self.rate = RateMeter::default();
        self.model_key = key.to_string();
        let tx = self.load_tx.clone();
        let opts = self.cfg.engine.clone();
        let k = key.to_string();
        let spawned = std::thread::Builder::new().name("hyst-load".into()).spawn(move || {
            let path = entry.path(&models_dir());
            let r = Engine::start(&entry, &path, opts);
            let _ = tx.send((gen, k, r));
        });
        if let Err(e) = spawned {
            self.engine = EngineState::Failed { key: key.into(), error: e.to_string() };
        }
    }

    /// Uses an engine that is already running (tests, screenshots).
    pub fn attach_engine(&mut self, engine: Engine) {
        self.load_gen += 1;
        self.model_key = engine.info().key.clone();
        self.engine = EngineState::Ready(engine);
        self.queue.reset();
        self.schedule();
    }

    pub fn engine_ready(&self) -> Option<&Engine> {
        match &self.engine {
            EngineState::Ready(e) => Some(e),
            _ => None,
        }
    }

    pub fn loading(&self) -> bool {
        matches!(self.engine, EngineState::Loading { .. })
    }

    /// Jobs of the current generation waiting for the engine.
    pub fn queue_len(&self) -> usize {
        self.queue.pending()
    }

    pub fn busy(&self) -> bool {
        self.loading()
            || self.queue.pending_all() > 0
            || self.batch.as_ref().is_some_and(|b| b.running())
    }

    pub fn tokens_per_s(&self) -> Option<f64> {
        self.rate.last
    }

    /// Stops a running batch (it finishes the item in flight) and drops the engine without
    /// waiting for it.
    pub fn shutdown(&mut self) {
        if let Some(b) = &self.batch {
            b.stop.store(true, Ordering::SeqCst);
        }
        self.engine = EngineState::Off;
    }

    // -----------------------------------------------------------------------------------------
    // Scores
    // -----------------------------------------------------------------------------------------

    fn key(&self, item: usize, part: Part) -> ScoreKey {
        (self.model_key.clone(), self.entries[item].item.id.clone(), part)
    }

    pub fn score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        self.scores.get(&self.key(item, part)).map(|a| a.as_ref())
    }

    pub fn error(&self, item: usize, part: Part) -> Option<&str> {
        self.errors.get(&self.key(item, part)).map(String::as_str)
    }

    pub fn in_flight(&self, item: usize, part: Part) -> bool {
        self.queue.in_flight(&Ticket { item, part })
    }

    /// Number of cached scores (all models).
    pub fn cached_scores(&self) -> usize {
        self.scores.len()
    }

    /// The model's letters at ramp steps 1..=4 (the assistant turns), as far as known.
    pub fn ramp_letters(&self, item: usize) -> [Option<char>; 4] {
        let mut l = [None; 4];
        for (i, slot) in l.iter_mut().enumerate() {
            *slot = self.score(item, Part::Curve(i + 1)).map(|s| s.pred_letter());
        }
        l
    }

    pub fn dialogue_item(&self, item: usize) -> DialogueItem {
        DialogueItem::from(&self.entries[item])
    }

    pub fn builder(&self) -> Builder<'_> {
        Builder::new(&self.cfg.prompts)
    }

    /// The messages of a part (None while an earlier letter is missing).
    pub fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        let b = self.builder();
        messages_for(&b, &self.dialogue_item(item), part, &self.ramp_letters(item))
    }

    /// Parts whose messages are identical to `part`'s and come earlier in step order (R0 =
    /// strong reset, R3a = clean, the probe = clean): scored once.
    fn twin(&self, item: usize, part: Part, msgs: &[ChatMessage]) -> Option<Part> {
        let b = self.builder();
        let d = self.dialogue_item(item);
        let letters = self.ramp_letters(item);
        for &q in self.steps.iter().take_while(|&&q| q != part) {
            if let Some(m) = messages_for(&b, &d, q, &letters) {
                if m == msgs {
                    return Some(q);
                }
            }
        }
        None
    }

    pub fn item_complete(&self, item: usize, parts: &[Part]) -> bool {
        parts.iter().all(|&p| self.score(item, p).is_some() || self.error(item, p).is_some())
    }

    // -----------------------------------------------------------------------------------------
    // Scheduling
    // -----------------------------------------------------------------------------------------

    /// Submits every part that is ready (its earlier letters known), for the current item first;
    /// when the current item has nothing in flight, the next items of the list are scored in
    /// the background (ramp only).
    pub fn schedule(&mut self) {
        if self.engine_ready().is_none() {
            return;
        }
        if let Some(f) = self.focus {
            let steps = self.steps.clone();
            self.schedule_item(f, &steps);
        }
        if self.cfg.options.prefetch && self.queue.pending() == 0 {
            let order = self.prefetch_order();
            let ramp = model::ramp_parts();
            for idx in order {
                if !self.item_complete(idx, &ramp) {
                    self.schedule_item(idx, &ramp);
                    if self.queue.pending() > 0 {
                        break;
                    }
                }
            }
        }
    }

    fn prefetch_order(&self) -> Vec<usize> {
        let v = &self.items.visible;
        let n = v.len();
        if n == 0 {
            return vec![];
        }
        let limit = if self.cfg.options.prefetch_window > 0 { self.cfg.options.prefetch_window.min(n) } else { n };
        if self.cfg.options.prefetch_window > 0 {
            return v[..limit].to_vec();
        }
        (1..=n).map(|k| v[(self.items.sel + k) % n]).collect()
    }

    fn schedule_item(&mut self, item: usize, parts: &[Part]) {
        let letters: Vec<char> = self.entries[item].item.letters();
        for &part in parts {
            if self.score(item, part).is_some() || self.error(item, part).is_some() || self.in_flight(item, part) {
                continue;
            }
            let Some(msgs) = self.messages(item, part) else { continue };
            if let Some(src) = self.twin(item, part, &msgs) {
                if let Some(s) = self.scores.get(&self.key(item, src)).cloned() {
                    let k = self.key(item, part);
                    self.scores.insert(k, s);
                }
                continue;
            }
            let EngineState::Ready(engine) = &self.engine else { return };
            let job = Job::Score { messages: msgs, letters: letters.clone() };
            self.queue.submit(engine, Ticket { item, part }, job);
        }
    }

    /// Processes arrived results and engine loads, refreshes derived state. Call once per frame.
    pub fn update(&mut self) {
        while let Ok((gen, key, r)) = self.load_rx.try_recv() {
            if gen != self.load_gen {
                continue; // a superseded load: drop it (the engine shuts down)
            }
            match r {
                Ok(e) => {
                    self.notice = Some(format!("model {key} loaded"));
                    self.engine = EngineState::Ready(e);
                    self.queue.reset();
                }
                Err(e) => {
                    self.engine = EngineState::Failed { key, error: e.to_string() };
                }
            }
        }
        let results = self.queue.poll();
        self.absorb(results);
        if let Some(e) = self.engine_ready() {
            let t = e.stats.tokens_evaluated.load(Ordering::Relaxed);
            let m = e.stats.busy_micros.load(Ordering::Relaxed);
            self.rate.sample(t, m);
        }
        self.poll_batch();
        if self.view == View::Tables {
            self.refresh_tables(false);
        }
        self.schedule();
    }

    fn absorb(&mut self, results: Vec<(Ticket, std::result::Result<JobOutput, EngineError>)>) {
        if results.is_empty() {
            return;
        }
        for (t, r) in results {
            let k = self.key(t.item, t.part);
            match r {
                Ok(JobOutput::Score(s)) => {
                    self.scores.insert(k, Arc::from(s));
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("scoring {} {:?}: {e}", self.entries[t.item].item.id, t.part);
                    self.errors.insert(k, e.to_string());
                }
            }
        }
        if self.items.sort != SortKey::Index && self.items.sort != SortKey::Id {
            self.refresh_visible();
        }
        self.schedule();
    }

    /// Waits until the model has loaded (or failed). Returns false on timeout.
    pub fn wait_loaded(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if !self.loading() {
                return true;
            }
            if t0.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the engine is loaded and the current item (and the prefetch window) has
    /// nothing left to score. Returns false on timeout.
    pub fn settle(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if self.loading() {
                std::thread::sleep(Duration::from_millis(30));
            } else {
                self.schedule();
                if self.queue.pending() == 0 {
                    return true;
                }
                let r = self.queue.wait(Duration::from_millis(50));
                self.absorb(r);
            }
            if t0.elapsed() > timeout {
                return false;
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Items, focus and navigation
    // -----------------------------------------------------------------------------------------

    /// The selected item (index into `entries`).
    pub fn current(&self) -> Option<usize> {
        self.items.visible.get(self.items.sel).copied()
    }

    /// Values of the item list: (clean p(w), R0 p(w), R0 prediction letter, WF).
    pub fn summary(&self, item: usize) -> (Option<f64>, Option<f64>, Option<char>, Option<bool>) {
        let w = self.entries[item].wrong;
        let clean = self.score(item, Part::Curve(0)).map(|s| s.probs[w]);
        let r0 = self.score(item, Part::Curve(5));
        (
            clean,
            r0.map(|s| s.probs[w]),
            r0.map(|s| s.pred_letter()),
            r0.map(|s| s.pred == w),
        )
    }

    fn sort_value(&self, item: usize) -> Option<f64> {
        let (c, r, _, wf) = self.summary(item);
        match self.items.sort {
            SortKey::Clean => c,
            SortKey::R0 => r,
            SortKey::Gap => match (c, r) {
                (Some(c), Some(r)) => Some(r - c),
                _ => None,
            },
            SortKey::Wf => wf.map(|b| if b { 1.0 } else { 0.0 }),
            _ => None,
        }
    }

    /// Re-filters and re-sorts the list, keeping the selected item selected.
    pub fn refresh_visible(&mut self) {
        let keep = self.current();
        let f = self.items.filter.to_lowercase();
        let mut v: Vec<usize> = (0..self.entries.len())
            .filter(|&i| {
                if f.is_empty() {
                    return true;
                }
                let it = &self.entries[i].item;
                [&it.id, &it.dataset, &it.category, &it.question]
                    .iter()
                    .any(|s| s.to_lowercase().contains(&f))
            })
            .collect();
        match self.items.sort {
            SortKey::Index => {}
            SortKey::Id => v.sort_by(|&a, &b| self.entries[a].item.id.cmp(&self.entries[b].item.id)),
            _ => {
                // Largest first; items without a value last (in list order).
                v.sort_by(|&a, &b| match (self.sort_value(a), self.sort_value(b)) {
                    (Some(x), Some(y)) => y.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Equal),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                });
            }
        }
        if self.items.reverse {
            v.reverse();
        }
        self.items.visible = v;
        self.items.sel = keep
            .and_then(|k| self.items.visible.iter().position(|&i| i == k))
            .unwrap_or(0)
            .min(self.items.visible.len().saturating_sub(1));
    }

    /// After any move: a new current item starts a new generation (pending requests for the
    /// old one are cancelled, late results dropped) and its parts are requested first.
    fn sync_focus(&mut self) {
        let cur = self.current();
        if cur != self.focus {
            self.focus = cur;
            self.dialogue_scroll = 0;
            let engine: Option<&dyn Submit> = match &self.engine {
                EngineState::Ready(e) => Some(e),
                _ => None,
            };
            self.queue.replace(engine);
            self.schedule();
        }
    }

    pub fn select_item_id(&mut self, id: &str) -> Result<()> {
        let Some(pos) = self.items.visible.iter().position(|&i| self.entries[i].item.id == id) else {
            bail!("no item {id:?} in {}", self.dataset_label);
        };
        self.items.sel = pos;
        self.sync_focus();
        Ok(())
    }

    pub fn move_item(&mut self, delta: isize) {
        let n = self.items.visible.len();
        if n == 0 {
            return;
        }
        let s = (self.items.sel as isize + delta).clamp(0, n as isize - 1);
        self.items.sel = s as usize;
        self.sync_focus();
    }

    pub fn set_view(&mut self, v: View) {
        self.view = v;
        if v == View::Tables {
            self.refresh_tables(true);
        }
    }

    pub fn set_step(&mut self, k: usize) -> Result<()> {
        if k >= self.steps.len() {
            bail!("--step {k}: steps are 0..{} (0-6 the ramp, 7.. the operations)", self.steps.len() - 1);
        }
        self.step = k;
        Ok(())
    }

    pub fn current_part(&self) -> Part {
        self.steps[self.step]
    }

    fn move_step(&mut self, delta: isize) {
        let n = self.steps.len() as isize;
        self.step = (self.step as isize + delta).clamp(0, n - 1) as usize;
        self.dialogue_scroll = 0;
    }

    // -----------------------------------------------------------------------------------------
    // Keys
    // -----------------------------------------------------------------------------------------

    pub fn handle_key(&mut self, k: KeyEvent) {
        if k.modifiers.contains(KeyModifiers::CONTROL) && matches!(k.code, KeyCode::Char('c') | KeyCode::Char('q')) {
            self.quit = true;
            return;
        }
        if !self.cfg.options.frozen {
            self.notice = None;
        }
        match self.overlay {
            Overlay::Help => {
                match k.code {
                    KeyCode::Down | KeyCode::Char('j') => self.help_scroll += 1,
                    KeyCode::Up | KeyCode::Char('k') => self.help_scroll = self.help_scroll.saturating_sub(1),
                    _ => self.overlay = Overlay::None,
                }
                return;
            }
            Overlay::Models { sel } => {
                self.models_key(k, sel);
                return;
            }
            Overlay::None => {}
        }
        if self.items.filter_mode {
            self.filter_key(k);
            return;
        }
        match k.code {
            KeyCode::Char('q') => {
                self.quit = true;
                return;
            }
            KeyCode::Char('?') => {
                self.overlay = Overlay::Help;
                self.help_scroll = 0;
                return;
            }
            KeyCode::Char('m') => {
                let cur = self.cfg.models.models.iter().position(|m| m.key == self.model_key).unwrap_or(0);
                self.overlay = Overlay::Models { sel: cur };
                return;
            }
            KeyCode::Char(c @ '1'..='6') => {
                self.set_view(View::ALL[(c as u8 - b'1') as usize]);
                return;
            }
            KeyCode::Tab => {
                self.set_view(View::ALL[(self.view.index() + 1) % View::ALL.len()]);
                return;
            }
            KeyCode::BackTab => {
                self.set_view(View::ALL[(self.view.index() + View::ALL.len() - 1) % View::ALL.len()]);
                return;
            }
            _ => {}
        }
        match self.view {
            View::Items => self.items_key(k),
            View::Tables => self.tables_key(k),
            _ => self.detail_key(k),
        }
    }

    fn filter_key(&mut self, k: KeyEvent) {
        match k.code {
            KeyCode::Esc => {
                self.items.filter.clear();
                self.items.filter_mode = false;
            }
            KeyCode::Enter => self.items.filter_mode = false,
            KeyCode::Backspace => {
                self.items.filter.pop();
            }
            KeyCode::Char(c) => self.items.filter.push(c),
            _ => return,
        }
        self.refresh_visible();
        self.sync_focus();
    }

    fn items_key(&mut self, k: KeyEvent) {
        match k.code {
            KeyCode::Down | KeyCode::Char('j') => self.move_item(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_item(-1),
            KeyCode::PageDown => self.move_item(10),
            KeyCode::PageUp => self.move_item(-10),
            KeyCode::Char('g') | KeyCode::Home => self.move_item(-(self.items.visible.len() as isize)),
            KeyCode::Char('G') | KeyCode::End => self.move_item(self.items.visible.len() as isize),
            KeyCode::Enter => self.set_view(View::Dialogue),
            KeyCode::Char('s') => {
                self.items.sort = self.items.sort.next();
                self.items.reverse = false;
                self.refresh_visible();
            }
            KeyCode::Char('S') => {
                self.items.reverse = !self.items.reverse;
                self.refresh_visible();
            }
            KeyCode::Char('/') => self.items.filter_mode = true,
            KeyCode::Esc => {
                self.items.filter.clear();
                self.refresh_visible();
                self.sync_focus();
            }
            _ => {}
        }
    }

    /// Dialogue, Trace, Slot, Recovery: the step cursor and item navigation.
    fn detail_key(&mut self, k: KeyEvent) {
        match k.code {
            KeyCode::Left | KeyCode::Char('h') | KeyCode::Up | KeyCode::Char('k') => self.move_step(-1),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Down | KeyCode::Char('j') => self.move_step(1),
            KeyCode::Home | KeyCode::Char('g') => self.step = 0,
            KeyCode::End | KeyCode::Char('G') => self.step = self.steps.len() - 1,
            KeyCode::Char('r') => {
                // Jump between the ramp and the operations.
                self.step = if self.step < 7 { 7 } else { 0 };
            }
            KeyCode::Char('n') | KeyCode::Char(']') => self.move_item(1),
            KeyCode::Char('p') | KeyCode::Char('[') => self.move_item(-1),
            KeyCode::Char('e') => self.expand_blocks = !self.expand_blocks,
            KeyCode::PageUp => self.dialogue_scroll += 5,
            KeyCode::PageDown => self.dialogue_scroll = self.dialogue_scroll.saturating_sub(5),
            KeyCode::Enter if self.view == View::Recovery => self.set_view(View::Dialogue),
            KeyCode::Esc => self.set_view(View::Items),
            _ => {}
        }
    }

    fn models_key(&mut self, k: KeyEvent, sel: usize) {
        let n = self.cfg.models.models.len();
        match k.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('m') => self.overlay = Overlay::None,
            KeyCode::Down | KeyCode::Char('j') => self.overlay = Overlay::Models { sel: (sel + 1).min(n.saturating_sub(1)) },
            KeyCode::Up | KeyCode::Char('k') => self.overlay = Overlay::Models { sel: sel.saturating_sub(1) },
            KeyCode::Enter => {
                let Some(m) = self.cfg.models.models.get(sel).cloned() else { return };
                self.overlay = Overlay::None;
                if !m.path(&models_dir()).exists() {
                    self.notice = Some(format!("{} is not present (hyst-tui models fetch {})", m.key, m.key));
                    return;
                }
                let same = m.key == self.model_key && matches!(self.engine, EngineState::Ready(_) | EngineState::Loading { .. });
                if !same {
                    self.start_engine(&m.key);
                    self.notice = Some(format!("loading model {}…", m.key));
                }
            }
            _ => {}
        }
    }

    fn tables_key(&mut self, k: KeyEvent) {
        let t = &mut self.tables;
        match k.code {
            KeyCode::Left | KeyCode::Char('h') => {
                t.sel = t.sel.saturating_sub(1);
                t.scroll = 0;
                t.hscroll = 0;
                self.refresh_tables(true);
            }
            KeyCode::Right | KeyCode::Char('l') => {
                t.sel = (t.sel + 1).min(t.files.len().saturating_sub(1));
                t.scroll = 0;
                t.hscroll = 0;
                self.refresh_tables(true);
            }
            KeyCode::Down | KeyCode::Char('j') => t.scroll += 1,
            KeyCode::Up | KeyCode::Char('k') => t.scroll = t.scroll.saturating_sub(1),
            KeyCode::PageDown => t.scroll += 15,
            KeyCode::PageUp => t.scroll = t.scroll.saturating_sub(15),
            KeyCode::Char('g') | KeyCode::Home => t.scroll = 0,
            KeyCode::Char('L') | KeyCode::Char('>') => t.hscroll += 8,
            KeyCode::Char('H') | KeyCode::Char('<') => t.hscroll = t.hscroll.saturating_sub(8),
            KeyCode::Char('b') => self.start_batch(),
            KeyCode::Char('x') => {
                if let Some(b) = &self.batch {
                    if b.running() {
                        b.stop.store(true, Ordering::SeqCst);
                        self.notice = Some("stopping the batch after the item in flight…".into());
                    }
                }
            }
            KeyCode::Esc => self.set_view(View::Items),
            _ => {}
        }
    }

    // -----------------------------------------------------------------------------------------
    // Tables and batch
    // -----------------------------------------------------------------------------------------

    /// Rescans the run directory (at most once a second unless forced) and reloads the shown
    /// file when it changed on disk.
    pub fn refresh_tables(&mut self, force: bool) {
        let t = &mut self.tables;
        if !force && t.last_scan.is_some_and(|s| s.elapsed() < Duration::from_secs(1)) {
            return;
        }
        t.last_scan = Some(Instant::now());
        let Some(dir) = t.dir.clone() else {
            t.files.clear();
            t.doc = None;
            return;
        };
        let mut files = Vec::new();
        let summary = dir.join("summary.md");
        if summary.is_file() {
            files.push(summary);
        }
        if let Ok(rd) = std::fs::read_dir(dir.join("tables")) {
            let mut md: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect();
            // Paper tables first, then the auxiliary ones.
            md.sort_by_key(|p| {
                let n = p.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
                (!n.starts_with("table"), n)
            });
            files.extend(md);
        }
        let prev = t.files.get(t.sel).cloned();
        t.files = files;
        if let Some(p) = prev {
            if let Some(i) = t.files.iter().position(|f| *f == p) {
                t.sel = i;
            }
        }
        t.sel = t.sel.min(t.files.len().saturating_sub(1));
        let Some(path) = t.files.get(t.sel).cloned() else {
            t.doc = None;
            t.stamp = None;
            return;
        };
        let meta = std::fs::metadata(&path).ok();
        let stamp = (path.clone(), meta.as_ref().and_then(|m| m.modified().ok()), meta.map_or(0, |m| m.len()));
        if t.stamp.as_ref() != Some(&stamp) || t.doc.is_none() {
            t.doc = std::fs::read_to_string(&path).ok().map(|s| super::markdown::parse(&s));
            t.stamp = Some(stamp);
        }
    }

    /// Starts the hierarchy suite on the current dataset and model in a background thread.
    pub fn start_batch(&mut self) {
        if self.batch.as_ref().is_some_and(|b| b.running()) {
            self.notice = Some("a batch is already running (x stops it)".into());
            return;
        }
        let req = BatchRequest {
            models: vec![self.model_key.clone()],
            datasets: vec![self.dataset_spec.clone()],
            suites: vec![Suite::Hierarchy],
            ..self.cfg.batch.clone()
        };
        let plan = match crate::batch::plan(
            &self.cfg.models,
            &req,
            self.cfg.prompts.clone(),
            self.cfg.engine.clone(),
            self.cfg.command_line.clone(),
        ) {
            Ok(p) => p,
            Err(e) => {
                self.notice = Some(format!("batch: {e:#}"));
                return;
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let out = plan.out.clone();
        let models = self.cfg.models.clone();
        let mut observer = ChannelObserver { tx: tx.clone(), stop: stop.clone() };
        let spawned = std::thread::Builder::new().name("hyst-batch".into()).spawn(move || {
            let r = crate::batch::run(&models, &plan, &mut observer)
                .map(|s| {
                    if s.interrupted {
                        format!("stopped after {} of {} items (resume: b again)", s.items_done, s.items_total)
                    } else {
                        format!("{} items, {} tables written", s.items_done, s.tables.len())
                    }
                })
                .map_err(|e| format!("{e:#}"));
            let _ = tx.send(BatchMsg::Done(r));
        });
        if let Err(e) = spawned {
            self.notice = Some(format!("batch: {e}"));
            return;
        }
        self.tables.dir = Some(out.clone());
        self.tables.sel = 0;
        self.tables.doc = None;
        self.batch = Some(BatchState {
            stop,
            items_done: 0,
            total: 0,
            desc: format!("hierarchy · {} · {}", self.dataset_label, self.model_key),
            out: out.clone(),
            started: Instant::now(),
            events: rx,
            outcome: None,
            elapsed: None,
        });
        self.notice = Some(format!("batch started: {}", out.display()));
        self.refresh_tables(true);
    }

    fn poll_batch(&mut self) {
        let Some(b) = &mut self.batch else { return };
        let mut finished = None;
        while let Ok(msg) = b.events.try_recv() {
            match msg {
                BatchMsg::Progress { items_done, items_total } => {
                    b.items_done = items_done;
                    b.total = items_total;
                }
                BatchMsg::Done(r) => finished = Some(r),
            }
        }
        if let Some(r) = finished {
            b.elapsed = Some(b.started.elapsed());
            self.notice = Some(match &r {
                Ok(s) => format!("batch finished: {s}"),
                Err(e) => format!("batch failed: {e}"),
            });
            b.outcome = Some(r);
            self.refresh_tables(true);
        }
    }
}
