//! The explorer's router. [`App`] owns the parts that keep state — the engine slot, the
//! scheduler, the score store, the item list, the table browser and a batch task — plus the
//! cursor of what is shown (view, overlay, step, scrolls). Keys become [`Action`]s in
//! [`keymap`](super::keymap); [`App::apply`] carries them out; [`App::update`] takes in what the
//! engine and the batch thread have sent. Views read the state through the accessors at the end;
//! nothing here draws.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use crossterm::event::KeyEvent;

use super::action::{Action, Motion};
use super::batch_task::BatchTask;
use super::engine_slot::{EngineSlot, EngineState};
use super::item_list::{ItemList, ItemSummary};
use super::jobs::Submit;
use super::keymap::{self, KeyContext};
use super::model::{self, Part};
use super::scheduler::{Answer, Scheduler, Scope};
use super::score_store::ScoreStore;
use super::screen::{Overlay, View};
use super::stored_run::{self, RowProblem};
use super::table_browser::TableBrowser;
use super::theme::Theme;
use crate::batch::BatchRequest;
use crate::config::{models_dir, ModelsConfig};
use crate::data::{load_selection, DatasetSpec, Selected};
use crate::dialogue::{Builder, DialogueItem, Suite};
use crate::engine::{Engine, EngineOptions, JobOutput};
use crate::prompts::PromptSet;
use crate::protocol::{ChatMessage, SlotScore};

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

pub struct App {
    cfg: AppConfig,
    theme: Theme,
    dataset_label: String,
    dataset_spec: String,
    engine: EngineSlot,
    scheduler: Scheduler,
    scores: ScoreStore,
    items: ItemList,
    tables: TableBrowser,
    batch: Option<BatchTask>,
    view: View,
    overlay: Overlay,
    /// Every step the cursor visits ([`model::steps`]).
    steps: Vec<Part>,
    /// Index into `steps`.
    step: usize,
    expand_blocks: bool,
    help_scroll: usize,
    /// Transcript lines scrolled up from the bottom.
    dialogue_scroll: usize,
    notice: Option<String>,
    /// Rows of the stored run that were skipped, and items left out.
    stored_run_problems: Vec<RowProblem>,
    quit: bool,
}

impl App {
    pub fn new(cfg: AppConfig) -> Result<App> {
        let theme = Theme { color: cfg.options.color };
        let mut scores = ScoreStore::default();
        let (entries, dataset_label, dataset_spec, model_key, notice, problems);
        if let Some(dir) = &cfg.run {
            let run = stored_run::load_run(dir, cfg.model.as_deref())?;
            for (id, part, s) in run.scores {
                scores.insert(&run.model_key, &id, part, s);
            }
            for p in &run.problems {
                tracing::warn!("stored run: skipped {p}");
            }
            entries = run.items;
            dataset_label = run.dataset;
            dataset_spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
            model_key = run.model_key;
            notice = Some(match run.problems.first() {
                None => "browsing a stored run (m: load a model to score more)".to_string(),
                Some(p) => format!("{} (all {} in the log)", p.short(), run.problems.len()),
            });
            problems = run.problems;
        } else {
            let spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
            entries = load_selection(&spec, &cfg.batch.selection)?;
            if entries.is_empty() {
                bail!("dataset {spec}: no items");
            }
            dataset_label = DatasetSpec::parse(&spec)?.key();
            dataset_spec = spec;
            model_key = cfg.models.get(cfg.model.as_deref().unwrap_or(&cfg.models.default_model))?.key.clone();
            notice = None;
            problems = Vec::new();
        }
        let items = ItemList::new(entries);
        let mut app = App {
            theme,
            dataset_label,
            dataset_spec,
            engine: EngineSlot::new(model_key),
            scheduler: Scheduler::new(items.current()),
            scores,
            items,
            tables: TableBrowser::new(cfg.run.clone()),
            batch: None,
            view: View::Items,
            overlay: Overlay::None,
            steps: model::steps(),
            step: 0,
            expand_blocks: false,
            help_scroll: 0,
            dialogue_scroll: 0,
            notice,
            stored_run_problems: problems,
            quit: false,
            cfg,
        };
        if app.cfg.run.is_none() {
            let key = app.engine.model_key().to_string();
            app.start_engine(&key);
        }
        Ok(app)
    }

    // -----------------------------------------------------------------------------------------
    // Keys and actions
    // -----------------------------------------------------------------------------------------

    fn key_context(&self) -> KeyContext {
        KeyContext {
            view: self.view,
            overlay: self.overlay,
            filter_mode: self.items.filter_mode(),
        }
    }

    /// A key: looked up in the keymap, then applied. Any key but quitting clears the notice.
    pub fn handle_key(&mut self, k: KeyEvent) {
        let action = keymap::action_for(self.key_context(), k);
        if !self.cfg.options.frozen && action != Some(Action::Quit) {
            self.notice = None;
        }
        if let Some(a) = action {
            self.apply(a);
        }
    }

    /// Carries out an action.
    pub(crate) fn apply(&mut self, action: Action) {
        match action {
            Action::Quit => self.quit = true,
            Action::ShowView(v) => self.set_view(v),
            Action::NextView => self.set_view(self.view.next()),
            Action::PreviousView => self.set_view(self.view.previous()),
            Action::OpenHelp => {
                self.overlay = Overlay::Help;
                self.help_scroll = 0;
            }
            Action::ScrollHelp(d) => self.help_scroll = self.help_scroll.saturating_add_signed(d),
            Action::OpenModels => {
                let cur = self.cfg.models.models.iter().position(|m| m.key == self.engine.model_key()).unwrap_or(0);
                self.overlay = Overlay::Models { sel: cur };
            }
            Action::CloseOverlay => self.overlay = Overlay::None,
            Action::MoveModelCursor(d) => {
                if let Overlay::Models { sel } = self.overlay {
                    let last = self.cfg.models.models.len().saturating_sub(1);
                    self.overlay = Overlay::Models { sel: sel.saturating_add_signed(d).min(last) };
                }
            }
            Action::LoadSelectedModel => self.load_selected_model(),
            Action::MoveItem(m) => {
                self.items.move_cursor(m);
                self.sync_focus();
            }
            Action::CycleSort => {
                self.items.cycle_sort();
                self.refresh_items();
            }
            Action::ReverseSort => {
                self.items.toggle_reverse();
                self.refresh_items();
            }
            Action::EditFilter => self.items.edit_filter(),
            Action::FilterType(c) => self.edit_filter(|l| l.type_filter(c)),
            Action::FilterBackspace => self.edit_filter(ItemList::backspace_filter),
            Action::KeepFilter => self.edit_filter(ItemList::keep_filter),
            Action::ClearFilter => self.edit_filter(ItemList::clear_filter),
            Action::MoveStep(m) => self.move_step(m),
            // Jump between the ramp and the operations.
            Action::ToggleRampOps => self.step = if self.step < 7 { 7 } else { 0 },
            Action::ToggleQuestionBlocks => self.expand_blocks = !self.expand_blocks,
            Action::ScrollDialogue(d) => self.dialogue_scroll = self.dialogue_scroll.saturating_add_signed(d),
            Action::MoveTableFile(d) => self.tables.move_file(d),
            Action::ScrollTable(d) => self.tables.scroll_by(d),
            Action::ScrollTableTop => self.tables.scroll_to_top(),
            Action::PanTable(d) => self.tables.pan(d),
            Action::StartBatch => self.start_batch(),
            Action::StopBatch => {
                if self.batch.as_ref().is_some_and(BatchTask::request_stop) {
                    self.notice = Some("stopping the batch after the item in flight…".into());
                }
            }
        }
    }

    fn edit_filter(&mut self, edit: impl FnOnce(&mut ItemList)) {
        edit(&mut self.items);
        self.refresh_items();
        self.sync_focus();
    }

    fn move_step(&mut self, m: Motion) {
        let last = self.steps.len().saturating_sub(1);
        match m {
            Motion::By(d) => {
                self.step = self.step.saturating_add_signed(d).min(last);
                self.dialogue_scroll = 0;
            }
            // The jumps keep the conversation's scroll position (as they always have).
            Motion::First => self.step = 0,
            Motion::Last => self.step = last,
        }
    }

    fn load_selected_model(&mut self) {
        let Overlay::Models { sel } = self.overlay else { return };
        let Some(m) = self.cfg.models.models.get(sel).cloned() else { return };
        self.overlay = Overlay::None;
        if !m.path(&models_dir()).exists() {
            self.notice = Some(format!("{} is not present (hyst-tui models fetch {})", m.key, m.key));
            return;
        }
        if !self.engine.serves(&m.key) {
            self.start_engine(&m.key);
            self.notice = Some(format!("loading model {}…", m.key));
        }
    }

    pub(crate) fn set_view(&mut self, v: View) {
        self.view = v;
        if v == View::Tables {
            self.tables.refresh(true);
        }
    }

    pub(crate) fn set_step(&mut self, k: usize) -> Result<()> {
        if k >= self.steps.len() {
            bail!("--step {k}: steps are 0..{} (0-6 the ramp, 7.. the operations)", self.steps.len().saturating_sub(1));
        }
        self.step = k;
        Ok(())
    }

    pub(crate) fn select_item_id(&mut self, id: &str) -> Result<()> {
        if !self.items.select_id(id) {
            bail!("no item {id:?} in {}", self.dataset_label);
        }
        self.sync_focus();
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // The engine, scheduling and the batch
    // -----------------------------------------------------------------------------------------

    /// Loads a model on a background thread; the UI stays usable meanwhile.
    fn start_engine(&mut self, key: &str) {
        let opts = self.cfg.engine.clone();
        if self.engine.start(&self.cfg.models, key, opts) {
            self.scheduler.reset();
        }
    }

    /// Re-filters and re-sorts the item list (score columns read the current model's scores).
    fn refresh_items(&mut self) {
        let (scores, model) = (&self.scores, self.engine.model_key());
        self.items.refresh(|_, e| summary_of(scores, model, e));
    }

    /// After any move: a new current item starts a new generation (pending requests for the
    /// old one are cancelled, late results dropped) and its parts are requested first.
    fn sync_focus(&mut self) {
        let engine = self.engine.ready().map(|e| e as &dyn Submit);
        if self.scheduler.refocus(self.items.current(), engine) {
            self.dialogue_scroll = 0;
            self.schedule();
        }
    }

    /// Submits what is ready to be scored (see [`Scheduler::schedule`]).
    fn schedule(&mut self) {
        let Some(engine) = self.engine.ready() else { return };
        let scope = Scope {
            engine,
            model: self.engine.model_key(),
            builder: Builder::new(&self.cfg.prompts),
            items: &self.items,
            steps: &self.steps,
            prefetch: self.cfg.options.prefetch,
            prefetch_window: self.cfg.options.prefetch_window,
        };
        self.scheduler.schedule(&scope, &mut self.scores);
    }

    /// Processes arrived results, engine loads and batch events; refreshes derived state. Call
    /// once per frame.
    pub fn update(&mut self) {
        if let Some(key) = self.engine.poll() {
            self.notice = Some(format!("model {key} loaded"));
            self.scheduler.reset();
        }
        let results = self.scheduler.poll();
        self.absorb(results);
        self.engine.sample_rate();
        self.poll_batch();
        if self.view == View::Tables {
            self.tables.refresh(false);
        }
        self.schedule();
    }

    fn absorb(&mut self, results: Vec<Answer>) {
        if results.is_empty() {
            return;
        }
        let model = self.engine.model_key();
        for (t, r) in results {
            let Some(e) = self.items.entry(t.item) else { continue };
            let id = &e.item.id;
            match r {
                Ok(JobOutput::Score(s)) => self.scores.insert(model, id, t.part, *s),
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!("scoring {id} {:?}: {err}", t.part);
                    self.scores.insert_error(model, id, t.part, err.to_string());
                }
            }
        }
        if self.items.sort().by_score() {
            self.refresh_items();
        }
        self.schedule();
    }

    /// Waits until the model has loaded (or failed). Returns false on timeout.
    pub fn wait_loaded(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if !self.engine.loading() {
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
            if self.engine.loading() {
                std::thread::sleep(Duration::from_millis(30));
            } else {
                self.schedule();
                if self.scheduler.pending() == 0 {
                    return true;
                }
                let r = self.scheduler.wait(Duration::from_millis(50));
                self.absorb(r);
            }
            if t0.elapsed() > timeout {
                return false;
            }
        }
    }

    /// Starts the hierarchy suite on the current dataset and model in a background thread.
    fn start_batch(&mut self) {
        if self.batch.as_ref().is_some_and(BatchTask::running) {
            self.notice = Some("a batch is already running (x stops it)".into());
            return;
        }
        let model_key = self.engine.model_key().to_string();
        let req = BatchRequest {
            models: vec![model_key.clone()],
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
        let desc = format!("hierarchy · {} · {model_key}", self.dataset_label);
        let task = match BatchTask::start(self.cfg.models.clone(), plan, desc) {
            Ok(t) => t,
            Err(e) => {
                self.notice = Some(format!("batch: {e}"));
                return;
            }
        };
        let out = task.out().to_path_buf();
        self.batch = Some(task);
        self.notice = Some(format!("batch started: {}", out.display()));
        self.tables.show_run(out);
    }

    fn poll_batch(&mut self) {
        let Some(b) = &mut self.batch else { return };
        let Some(r) = b.poll() else { return };
        self.notice = Some(match r {
            Ok(s) => format!("batch finished: {s}"),
            Err(e) => format!("batch failed: {e}"),
        });
        self.tables.refresh(true);
    }

    /// Stops a running batch (it finishes the item in flight) and drops the engine without
    /// waiting for it.
    pub(crate) fn shutdown(&mut self) {
        if let Some(b) = &self.batch {
            b.request_stop();
        }
        self.engine.shut_down();
    }

    /// Something is in progress (the event loop polls more often).
    pub(crate) fn busy(&self) -> bool {
        self.engine.loading() || self.scheduler.pending_all() > 0 || self.batch.as_ref().is_some_and(BatchTask::running)
    }

    // -----------------------------------------------------------------------------------------
    // For tests and screenshots
    // -----------------------------------------------------------------------------------------

    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    pub fn engine_ready(&self) -> Option<&Engine> {
        self.engine.ready()
    }

    /// Scoring requests of the current generation waiting for the engine.
    pub fn jobs_pending(&self) -> usize {
        self.scheduler.pending()
    }

    /// Results that arrived for an item the user had already left, and were dropped.
    pub fn stale_results_dropped(&self) -> u64 {
        self.scheduler.stale_dropped()
    }

    /// Colour on or off (as `NO_COLOR` would).
    pub fn set_color(&mut self, on: bool) {
        self.theme.color = on;
    }

    /// Background scoring of the first `window` items of the list (0 = all), or none.
    pub fn set_prefetch(&mut self, on: bool, window: usize) {
        self.cfg.options.prefetch = on;
        self.cfg.options.prefetch_window = window;
    }

    pub(crate) fn clear_notice(&mut self) {
        self.notice = None;
    }

    // -----------------------------------------------------------------------------------------
    // What the views read
    // -----------------------------------------------------------------------------------------

    pub(crate) fn theme(&self) -> &Theme {
        &self.theme
    }
    pub fn view(&self) -> View {
        self.view
    }
    pub fn overlay(&self) -> Overlay {
        self.overlay
    }
    /// Timings, tokens/s and the spinner are hidden (the screen depends only on the data).
    pub(crate) fn frozen(&self) -> bool {
        self.cfg.options.frozen
    }
    pub(crate) fn models(&self) -> &ModelsConfig {
        &self.cfg.models
    }
    pub(crate) fn prompts(&self) -> &PromptSet {
        &self.cfg.prompts
    }
    pub(crate) fn engine_state(&self) -> &EngineState {
        self.engine.state()
    }
    /// The model whose scores are shown.
    pub(crate) fn model_key(&self) -> &str {
        self.engine.model_key()
    }
    pub(crate) fn tokens_per_s(&self) -> Option<f64> {
        self.engine.tokens_per_s()
    }
    /// Requests of any generation still waiting (older ones will be dropped).
    pub(crate) fn jobs_pending_all(&self) -> usize {
        self.scheduler.pending_all()
    }
    pub(crate) fn dataset_label(&self) -> &str {
        &self.dataset_label
    }
    pub(crate) fn dataset_spec(&self) -> &str {
        &self.dataset_spec
    }
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }
    /// The stored run's rows that were skipped (and items left out), in file order.
    pub fn stored_run_problems(&self) -> &[RowProblem] {
        &self.stored_run_problems
    }
    pub(crate) fn batch(&self) -> Option<&BatchTask> {
        self.batch.as_ref()
    }
    pub(crate) fn tables(&self) -> &TableBrowser {
        &self.tables
    }
    pub(crate) fn items(&self) -> &ItemList {
        &self.items
    }
    pub(crate) fn help_scroll(&self) -> usize {
        self.help_scroll
    }
    pub(crate) fn dialogue_scroll(&self) -> usize {
        self.dialogue_scroll
    }
    pub(crate) fn expand_blocks(&self) -> bool {
        self.expand_blocks
    }

    /// Number of items (visible or not).
    pub fn item_count(&self) -> usize {
        self.items.entries().len()
    }
    /// The shown items, filtered and sorted, as item indices.
    pub fn visible_items(&self) -> &[usize] {
        self.items.visible()
    }
    /// The selected item (an item index).
    pub fn current(&self) -> Option<usize> {
        self.items.current()
    }
    pub fn entry(&self, item: usize) -> Option<&Selected> {
        self.items.entry(item)
    }
    /// The selected item and its entry.
    pub(crate) fn current_entry(&self) -> Option<(usize, &Selected)> {
        let i = self.current()?;
        Some((i, self.entry(i)?))
    }

    /// Index of the cursor's step in [`steps`](Self::steps).
    pub(crate) fn step(&self) -> usize {
        self.step
    }
    pub(crate) fn steps(&self) -> &[Part] {
        &self.steps
    }
    pub fn current_part(&self) -> Part {
        self.steps.get(self.step).copied().unwrap_or(Part::Curve(0))
    }

    pub fn score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        let e = self.entry(item)?;
        self.scores.get(self.engine.model_key(), &e.item.id, part)
    }

    pub(crate) fn error(&self, item: usize, part: Part) -> Option<&str> {
        let e = self.entry(item)?;
        self.scores.error(self.engine.model_key(), &e.item.id, part)
    }

    pub(crate) fn in_flight(&self, item: usize, part: Part) -> bool {
        self.scheduler.in_flight(item, part)
    }

    pub(crate) fn dialogue_item(&self, item: usize) -> Option<DialogueItem> {
        self.entry(item).map(DialogueItem::from)
    }

    /// The messages of a part (None while an earlier letter is missing).
    pub(crate) fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        let d = self.dialogue_item(item)?;
        self.scores.messages(&Builder::new(&self.cfg.prompts), self.engine.model_key(), &d, part)
    }

    /// The values of the item list's row of `item`.
    pub(crate) fn summary(&self, item: usize) -> ItemSummary {
        self.entry(item).map(|e| summary_of(&self.scores, self.engine.model_key(), e)).unwrap_or_default()
    }
}

fn summary_of(scores: &ScoreStore, model: &str, e: &Selected) -> ItemSummary {
    let id = &e.item.id;
    ItemSummary::new(scores.get(model, id, Part::Curve(0)), scores.get(model, id, Part::Curve(5)), e.wrong)
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyModifiers};

    use super::*;

    /// An app over a stored run of synthetic rows (three items, no model), with a summary and
    /// two tables to browse.
    fn stored_app() -> (tempfile::TempDir, App) {
        let dir = tempfile::tempdir().unwrap();
        crate::store::write_item_rows(dir.path(), &crate::tables::testutil::synthetic_rows(3)).unwrap();
        std::fs::write(dir.path().join("summary.md"), "# Summary\n\ntext\n").unwrap();
        std::fs::create_dir(dir.path().join("tables")).unwrap();
        for name in ["table01_x.md", "aux_y.md"] {
            std::fs::write(dir.path().join("tables").join(name), "| a | b |\n|---|--:|\n| x | 1 |\n").unwrap();
        }
        let mut cfg = AppConfig::new(ModelsConfig::bundled().unwrap());
        cfg.run = Some(dir.path().to_path_buf());
        cfg.options.color = false;
        let app = App::new(cfg).unwrap();
        (dir, app)
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn views_and_overlays() {
        let (_dir, mut app) = stored_app();
        assert_eq!(app.view(), View::Items);
        app.apply(Action::NextView);
        assert_eq!(app.view(), View::Dialogue);
        app.apply(Action::PreviousView);
        app.apply(Action::PreviousView);
        assert_eq!(app.view(), View::Tables);
        app.apply(Action::ShowView(View::Trace));
        assert_eq!(app.view(), View::Trace);

        app.apply(Action::OpenHelp);
        assert_eq!(app.overlay(), Overlay::Help);
        app.apply(Action::ScrollHelp(2));
        app.apply(Action::ScrollHelp(-5));
        assert_eq!(app.help_scroll(), 0);
        app.apply(Action::CloseOverlay);
        assert_eq!(app.overlay(), Overlay::None);

        // The stored run's model is not in the config: the cursor starts on the first model.
        app.apply(Action::OpenModels);
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(-1));
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(1000));
        assert_eq!(app.overlay(), Overlay::Models { sel: app.models().models.len() - 1 });
        app.apply(Action::CloseOverlay);
        // Without the switcher open, its cursor and Enter do nothing.
        app.apply(Action::MoveModelCursor(1));
        app.apply(Action::LoadSelectedModel);
        assert_eq!(app.overlay(), Overlay::None);
        assert!(app.engine_ready().is_none() && !app.busy());

        assert!(!app.quit_requested());
        app.apply(Action::Quit);
        assert!(app.quit_requested());
    }

    #[test]
    fn item_moves_sort_and_filter() {
        let (_dir, mut app) = stored_app();
        assert_eq!(app.item_count(), 3);
        assert_eq!(app.current(), Some(0));
        app.apply(Action::MoveItem(Motion::By(1)));
        assert_eq!(app.current(), Some(1));
        app.apply(Action::MoveItem(Motion::Last));
        assert_eq!(app.current(), Some(2));
        app.apply(Action::MoveItem(Motion::By(-10)));
        assert_eq!(app.current(), Some(0));

        // Sorting by clean p(w), largest first, from the stored scores.
        app.apply(Action::CycleSort);
        let clean: Vec<f64> = app.visible_items().iter().map(|&i| app.summary(i).clean_pw.unwrap()).collect();
        assert!(clean.windows(2).all(|w| w[0] >= w[1]), "{clean:?}");
        assert_eq!(app.current(), Some(0), "sorting keeps the selected item");
        app.apply(Action::ReverseSort);
        let rev: Vec<f64> = app.visible_items().iter().map(|&i| app.summary(i).clean_pw.unwrap()).collect();
        assert!(rev.windows(2).all(|w| w[0] <= w[1]), "{rev:?}");

        app.apply(Action::EditFilter);
        assert!(app.items().filter_mode());
        for c in "00002".chars() {
            app.apply(Action::FilterType(c));
        }
        assert_eq!(app.visible_items(), &[2]);
        assert_eq!(app.current(), Some(2));
        app.apply(Action::FilterBackspace);
        app.apply(Action::FilterType('2'));
        app.apply(Action::KeepFilter);
        assert!(!app.items().filter_mode());
        assert_eq!((app.items().filter(), app.visible_items()), ("00002", &[2][..]));
        app.apply(Action::ClearFilter);
        assert_eq!(app.visible_items().len(), 3);
        assert_eq!(app.current(), Some(2), "clearing the filter keeps the selected item");
    }

    #[test]
    fn the_step_cursor() {
        let (_dir, mut app) = stored_app();
        let last = app.steps().len() - 1;
        app.apply(Action::MoveStep(Motion::By(3)));
        assert_eq!(app.current_part(), Part::Curve(3));
        app.apply(Action::ScrollDialogue(5));
        app.apply(Action::ScrollDialogue(5));
        app.apply(Action::ScrollDialogue(-5));
        assert_eq!(app.dialogue_scroll(), 5);
        app.apply(Action::MoveStep(Motion::By(-1)));
        assert_eq!((app.step(), app.dialogue_scroll()), (2, 0), "a step move scrolls back to the end");
        app.apply(Action::ToggleRampOps);
        assert_eq!(app.step(), 7);
        assert!(matches!(app.current_part(), Part::Op(_)));
        app.apply(Action::ToggleRampOps);
        assert_eq!(app.step(), 0);
        app.apply(Action::MoveStep(Motion::Last));
        assert_eq!(app.step(), last);
        app.apply(Action::MoveStep(Motion::By(5)));
        assert_eq!(app.step(), last);
        app.apply(Action::MoveStep(Motion::First));
        assert_eq!(app.step(), 0);
        assert!(app.set_step(last + 1).is_err());

        assert!(!app.expand_blocks());
        app.apply(Action::ToggleQuestionBlocks);
        assert!(app.expand_blocks());
    }

    #[test]
    fn the_table_browser() {
        let (dir, mut app) = stored_app();
        app.apply(Action::ShowView(View::Tables));
        let names: Vec<String> = app.tables().files().iter().map(|p| p.file_name().unwrap().to_string_lossy().to_string()).collect();
        assert_eq!(names, ["summary.md", "table01_x.md", "aux_y.md"], "summary, paper tables, the rest");
        assert_eq!(app.tables().dir(), Some(dir.path()));
        app.apply(Action::MoveTableFile(1));
        assert_eq!(app.tables().selected(), 1);
        assert!(matches!(app.tables().doc().map(|d| &d.blocks[0]), Some(crate::tui::markdown::Block::Table { .. })));
        app.apply(Action::ScrollTable(3));
        app.apply(Action::PanTable(8));
        assert_eq!((app.tables().scroll(), app.tables().hscroll()), (3, 8));
        app.apply(Action::ScrollTable(-15));
        app.apply(Action::PanTable(-20));
        assert_eq!((app.tables().scroll(), app.tables().hscroll()), (0, 0));
        app.apply(Action::ScrollTable(2));
        app.apply(Action::ScrollTableTop);
        assert_eq!(app.tables().scroll(), 0);
        app.apply(Action::MoveTableFile(9));
        assert_eq!(app.tables().selected(), 2);
        app.apply(Action::MoveTableFile(-9));
        assert_eq!(app.tables().selected(), 0);
        // No batch: stopping one says nothing.
        app.clear_notice();
        app.apply(Action::StopBatch);
        assert_eq!(app.notice(), None);
    }

    #[test]
    fn a_key_is_its_action_and_clears_the_notice() {
        let (_dir, mut app) = stored_app();
        assert!(app.notice().is_some_and(|n| n.contains("stored run")));
        app.handle_key(key(KeyCode::Char('z'))); // nothing in Items
        assert_eq!(app.notice(), None);
        assert_eq!((app.view(), app.current()), (View::Items, Some(0)));
        app.handle_key(key(KeyCode::Char('j')));
        assert_eq!(app.current(), Some(1));
        app.handle_key(key(KeyCode::Enter));
        assert_eq!(app.view(), View::Dialogue);
        app.handle_key(key(KeyCode::Char('l')));
        assert_eq!(app.current_part(), Part::Curve(1));
        app.handle_key(key(KeyCode::Char('?')));
        app.handle_key(key(KeyCode::Char('q'))); // closes the help, does not quit
        assert!(!app.quit_requested() && app.overlay() == Overlay::None);
        app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
        assert!(app.quit_requested());
    }
}
