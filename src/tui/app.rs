//! The explorer's router. [`App`] owns the parts that keep state — one lane (engine slot and
//! scheduler) per shown model, the score store, the link to the shared score store, the item
//! list, the table browser and a batch task — plus the cursor of what is shown (view, overlay,
//! step, scrolls). Keys become [`Action`]s in [`keymap`](super::keymap); [`App::apply`] carries
//! them out; [`App::update`] takes in what the engines, the shared store and the batch thread
//! have sent. Views read the state through the accessors at the end; nothing here draws.
//!
//! Models: the first lane is the shown model (its scores fill every view); the others are the
//! compared models (`c` in the model switcher), each scored in its own engine under the same
//! scheduling rules, or — for a stored run's models — read from the run's rows without any
//! engine.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use crossterm::event::KeyEvent;

mod orchestrator;
mod what_if;

use orchestrator::Lane;

use super::action::{Action, CursorMove, Motion};
use super::batch_task::BatchTask;
use super::engine_slot::{EngineSlot, EngineState};
use super::generations::{GenState, Generations};
use super::whatif::{Editor, Retarget, WhatIfs};
use super::item_list::{ItemList, ItemSummary, SortKey};
use super::keymap::{self, KeyContext};
use super::model::{self, Part};
use super::scheduler::Scheduler;
use super::score_store::ScoreStore;
use super::screen::{Overlay, View};
use super::shared_scores::SharedLink;
use super::recovery_rows::{RecoveryRows, RowsKey};
use super::run_list::RunList;
use super::stored_run::{self, RowProblem};
use super::table_browser::TableBrowser;
use super::theme::Theme;
use crate::batch::BatchRequest;
use crate::config::{models_dir, ModelsConfig};
use crate::data::{load_selection, DatasetSpec, Selected};
use crate::dialogue::{Builder, DialogueItem, Suite};
use crate::engine::{Engine, EngineOptions};
use crate::prompts::PromptSet;
use crate::protocol::{ChatMessage, SlotScore};

/// At most this many models are compared with the shown one.
pub(crate) const MAX_COMPARED: usize = 3;

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
    /// Models compared with it from the start (keys of models.toml or of the stored run).
    pub compare: Vec<String>,
    /// Dataset spec (default: `sample`).
    pub dataset: Option<String>,
    /// Browse this stored batch run instead of scoring.
    pub run: Option<PathBuf>,
    /// The directory whose runs the Tables view lists (Enter opens one); `None` = no Runs pane
    /// (what [`AppConfig::new`] chooses; the binary passes `config::runs_dir`).
    pub runs_dir: Option<PathBuf>,
    /// `run` was not asked for but is the newest run of `runs_dir` (`hyst-tui` without flags):
    /// if it cannot be read the explorer scores the default dataset instead.
    pub newest_run: bool,
    /// The score store shared with every run (`store::shared`): scores found there are never
    /// computed, and every score computed here is added to it. `None` = none (what
    /// [`AppConfig::new`] chooses; the binary passes `store::shared::configured_path`).
    pub score_store: Option<PathBuf>,
    /// The item selection, and the template of a batch started with `b` (its models, datasets
    /// and suites are replaced by the explorer's model, dataset and the hierarchy; its score
    /// store by the explorer's).
    pub batch: BatchRequest,
    /// The command line recorded in the manifest of a batch started with `b`.
    pub command_line: String,
    pub options: AppOptions,
}

impl AppConfig {
    /// The bundled prompts, default engine options and selection, the default model on `sample`,
    /// no shared score store, nothing compared.
    pub fn new(models: ModelsConfig) -> AppConfig {
        AppConfig {
            models,
            engine: EngineOptions::default(),
            prompts: PromptSet::bundled(),
            model: None,
            compare: Vec::new(),
            dataset: None,
            run: None,
            runs_dir: None,
            newest_run: false,
            score_store: None,
            batch: BatchRequest::default(),
            command_line: "hyst-tui (explorer)".into(),
            options: AppOptions::default(),
        }
    }
}

/// A model the switcher offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModelChoice {
    pub(crate) key: String,
    pub(crate) name: String,
    /// The model file is there (or the stored run has the model's rows).
    pub(crate) present: bool,
    /// The stored run has rows of this model.
    pub(crate) stored: bool,
    /// In models.toml.
    pub(crate) configured: bool,
}

pub struct App {
    cfg: AppConfig,
    theme: Theme,
    dataset_label: String,
    dataset_spec: String,
    /// The shown model first, then the compared ones.
    lanes: Vec<Lane>,
    scores: ScoreStore,
    shared: SharedLink,
    /// Every list item's ramp has been looked up in the shared store (since it last changed).
    sweep_done: bool,
    /// The models of the stored run (empty without one).
    stored_models: Vec<String>,
    items: ItemList,
    tables: TableBrowser,
    runs: RunList,
    /// Greedy continuations asked for with `a` (per model and context).
    gens: Generations,
    /// What-if edits and their scores; the editor's text while it is open.
    whatifs: WhatIfs,
    editor: Editor,
    /// The Dialogue's selected message (`J`/`K`; `None` = the final user message).
    msg_cursor: Option<usize>,
    /// Text waiting to be opened in `$EDITOR` (Ctrl-E in the editor; the event loop does it).
    external_edit: Option<String>,
    /// `w` in progress: the ramp being scored under another advocated option.
    retarget: Option<Retarget>,
    /// The step whose new what-if version the status line says is scoring: once it is scored
    /// the line says so.
    whatif_notice: Option<(usize, Part)>,
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
    /// The current item's recovery rows, computed when the scores, the item or the models
    /// change.
    rows: RecoveryRows,
}

impl App {
    pub fn new(cfg: AppConfig) -> Result<App> {
        let theme = Theme { color: cfg.options.color };
        let mut scores = ScoreStore::default();
        let (entries, dataset_label, dataset_spec, model_key, notice, problems, stored_models);
        if let Some(dir) = &cfg.run {
            let run = stored_run::load_run(dir, cfg.model.as_deref())?;
            for (model, id, part, s) in run.scores {
                scores.insert(&model, &id, part, s);
            }
            for p in &run.problems {
                tracing::warn!("stored run: skipped {p}");
            }
            entries = run.items;
            dataset_label = run.dataset;
            dataset_spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
            model_key = run.model_key;
            notice = Some(match run.problems.first() {
                None if run.being_written.is_some() => {
                    let (pid, total) = run.being_written.clone().unwrap_or_default();
                    format!(
                        "a batch (pid {pid}) is still writing this run: {}{} items shown; reopen it ({}: Runs, {}) for more",
                        entries.len(),
                        total.map(|t| format!(" of {t}")).unwrap_or_default(),
                        keymap::key_for(Action::ShowView(View::Tables)),
                        keymap::key_for(Action::OpenSelectedRun)
                    )
                }
                None if cfg.newest_run => format!(
                    "the newest run of the data directory ({}: every run; --dataset sample scores instead)",
                    keymap::key_for(Action::ShowView(View::Tables))
                ),
                None => format!("browsing a stored run ({}: load a model to score more)", keymap::key_for(Action::OpenModels)),
                Some(p) => format!("{} (all {} in the log)", p.short(), run.problems.len()),
            });
            problems = run.problems;
            stored_models = run.models;
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
            stored_models = Vec::new();
        }
        let items = ItemList::new(entries);
        let lane = Lane {
            engine: EngineSlot::new(model_key),
            scheduler: Scheduler::new(items.current()),
        };
        let mut app = App {
            theme,
            dataset_label,
            dataset_spec,
            lanes: vec![lane],
            scores,
            shared: SharedLink::new(cfg.score_store.clone()),
            sweep_done: false,
            stored_models,
            items,
            tables: TableBrowser::new(cfg.run.clone()),
            runs: RunList::new(cfg.runs_dir.clone()),
            gens: Generations::default(),
            whatifs: WhatIfs::default(),
            editor: Editor::default(),
            msg_cursor: None,
            external_edit: None,
            retarget: None,
            whatif_notice: None,
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
            rows: RecoveryRows::default(),
            cfg,
        };
        let key = app.model_key().to_string();
        if app.cfg.run.is_none() {
            app.start_engine(0, &key);
        } else {
            app.shared.want(&app.cfg.models, &key, &app.cfg.engine);
        }
        for k in app.cfg.compare.clone() {
            if let Err(e) = app.add_compared(&k) {
                bail!("--compare {k}: {e}");
            }
        }
        app.refresh_rows();
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
            self.whatif_notice = None;
        }
        if let Some(a) = action {
            self.apply(a);
        }
    }

    /// The current item's recovery rows: those computed when the scores, the item or the
    /// models last changed (computed here only if something changed since without a refresh).
    pub(crate) fn recovery_rows(&self) -> Cow<'_, RecoveryRows> {
        let key = self.rows_key();
        if self.rows.key == key {
            Cow::Borrowed(&self.rows)
        } else {
            Cow::Owned(RecoveryRows::compute(key, &self.scores, self.current().and_then(|i| self.entry(i))))
        }
    }

    fn rows_key(&self) -> RowsKey {
        RowsKey { item: self.current(), models: self.shown_models().iter().map(|m| m.to_string()).collect(), scores: self.scores.revision() }
    }

    /// Recomputes the recovery rows if the scores, the item or the models changed.
    fn refresh_rows(&mut self) {
        let key = self.rows_key();
        if self.rows.key != key {
            self.rows = RecoveryRows::compute(key, &self.scores, self.current().and_then(|i| self.entry(i)));
        }
    }

    /// Carries out an action.
    pub(crate) fn apply(&mut self, action: Action) {
        self.apply_action(action);
        self.refresh_rows();
    }

    fn apply_action(&mut self, action: Action) {
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
                let cur = self.model_choices().iter().position(|m| m.key == self.model_key()).unwrap_or(0);
                self.overlay = Overlay::Models { sel: cur };
            }
            Action::CloseOverlay => self.overlay = Overlay::None,
            Action::MoveModelCursor(d) => {
                if let Overlay::Models { sel } = self.overlay {
                    let last = self.model_choices().len().saturating_sub(1);
                    self.overlay = Overlay::Models { sel: sel.saturating_add_signed(d).min(last) };
                }
            }
            Action::LoadSelectedModel => self.load_selected_model(),
            Action::ToggleCompareSelected => self.toggle_compare_selected(),
            Action::MoveItem(m) => {
                self.items.move_cursor(m);
                self.sync_focus();
            }
            Action::CycleSort => {
                self.items.cycle_sort(self.lanes.len() - 1);
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
            Action::ToggleRampOps => {
                let first_op = self.steps.iter().position(|p| matches!(p, Part::Op(_))).unwrap_or(0);
                self.step = if self.step < first_op { first_op } else { 0 };
                self.msg_cursor = None;
            }
            Action::ToggleQuestionBlocks => self.expand_blocks = !self.expand_blocks,
            Action::ScrollDialogue(d) => self.dialogue_scroll = self.dialogue_scroll.saturating_add_signed(d),
            Action::MoveTableFile(d) => self.tables.move_file(d),
            Action::ScrollTable(d) => self.tables.scroll_by(d),
            Action::ScrollTableTop => self.tables.scroll_to_top(),
            Action::PanTable(d) => self.tables.pan(d),
            Action::Generate => self.toggle_generation(),
            Action::StartEdit => self.start_edit(),
            Action::EditType(c) => self.editor.insert(c),
            Action::EditBackspace => self.editor.backspace(),
            Action::EditDelete => self.editor.delete(),
            Action::EditNewline => self.editor.insert('\n'),
            Action::EditClear => self.editor.clear(),
            Action::EditCursor(m) => match m {
                CursorMove::Left => self.editor.left(),
                CursorMove::Right => self.editor.right(),
                CursorMove::Home => self.editor.home(),
                CursorMove::End => self.editor.end(),
                CursorMove::Up => self.editor.up(),
                CursorMove::Down => self.editor.down(),
            },
            Action::EditExternal => self.request_external_edit(),
            Action::MoveMessage(d) => self.move_message(d),
            Action::EditApply => self.apply_edit(),
            Action::EditCancel => {
                self.overlay = Overlay::None;
                self.editor = Editor::default();
            }
            Action::UndoEdit => self.undo_edit(),
            Action::SaveEdit => self.save_edit(),
            Action::AdvocateNextWrong => self.retarget(),
            Action::OpenEdits => self.open_edits(),
            Action::MoveEditsCursor(d) => self.move_edits_cursor(d),
            Action::ShowSelectedEdit => self.show_selected_edit(),
            Action::UndoSelectedEdit => self.undo_selected_edit(),
            Action::DeleteExchange => self.edit_exchange(false),
            Action::RepeatExchange => self.edit_exchange(true),
            Action::MoveRun(d) => self.runs.move_cursor(d),
            Action::OpenSelectedRun => self.open_selected_run(),
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
        // Another step has another dialogue: the message cursor starts over.
        self.msg_cursor = None;
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

    /// The models the switcher offers: models.toml's, then the stored run's other models.
    pub(crate) fn model_choices(&self) -> Vec<ModelChoice> {
        let dir = models_dir();
        let mut v: Vec<ModelChoice> = self
            .cfg
            .models
            .models
            .iter()
            .map(|m| {
                let stored = self.stored_models.contains(&m.key);
                ModelChoice {
                    key: m.key.clone(),
                    name: m.name.clone(),
                    present: stored || m.path(&dir).exists(),
                    stored,
                    configured: true,
                }
            })
            .collect();
        for k in &self.stored_models {
            if !v.iter().any(|c| &c.key == k) {
                v.push(ModelChoice {
                    key: k.clone(),
                    name: "(stored run)".into(),
                    present: true,
                    stored: true,
                    configured: false,
                });
            }
        }
        v
    }

    fn selected_choice(&self) -> Option<ModelChoice> {
        let Overlay::Models { sel } = self.overlay else { return None };
        self.model_choices().get(sel).cloned()
    }

    pub(crate) fn set_view(&mut self, v: View) {
        self.view = v;
        if v == View::Tables {
            self.tables.refresh(true);
            self.runs.refresh(true);
            if let Some(d) = self.tables.dir().map(|d| d.to_path_buf()) {
                self.runs.select_dir(&d);
            }
        }
    }

    /// The selected message of the Dialogue (`J`/`K`), if any.
    pub(crate) fn message_cursor(&self) -> Option<usize> {
        self.msg_cursor
    }

    pub(crate) fn editor(&self) -> &Editor {
        &self.editor
    }

    /// The shown model's greedy continuation of a step, asked for or done.
    pub(crate) fn generation(&self, item: usize, part: Part) -> Option<&GenState> {
        let msgs = self.shown_messages(item, part)?;
        self.gens.get(self.model_key(), &msgs)
    }

    /// Opens the run under the Runs pane's cursor as `--run DIR` would: its items and stored
    /// scores replace the current ones (no engine; `m` loads one), its tables are the Tables
    /// view's, and the Items view shows. A running batch goes on, and the runs list keeps its
    /// cursor.
    fn open_selected_run(&mut self) {
        let Some(dir) = self.runs.selected_dir().map(Path::to_path_buf) else { return };
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let cfg = AppConfig {
            run: Some(dir.clone()),
            model: None,
            compare: Vec::new(),
            ..self.cfg.clone()
        };
        let mut next = match App::new(AppConfig { newest_run: false, ..cfg }) {
            Ok(a) => a,
            Err(e) => {
                self.notice = Some(format!("run {name}: {e:#}"));
                return;
            }
        };
        for lane in &mut self.lanes {
            lane.engine.shut_down();
        }
        next.batch = self.batch.take();
        next.runs = std::mem::take(&mut self.runs);
        next.theme = self.theme;
        let items = next.item_count();
        let skipped = next.stored_run_problems.len();
        let items = if items == 1 { "1 item".to_string() } else { format!("{items} items") };
        next.notice = Some(match skipped {
            0 => format!("opened run {name}: {items} ({}: its tables)", keymap::key_for(Action::ShowView(View::Tables))),
            k => format!("opened run {name}: {items}, {k} rows skipped (see the log)"),
        });
        *self = next;
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
    // The engines, the shared store, scheduling and the batch
    // -----------------------------------------------------------------------------------------

    /// Re-filters and re-sorts the item list (score columns read the shown and compared
    /// models' scores).
    fn refresh_items(&mut self) {
        let models: Vec<&str> = self.lanes.iter().map(|l| l.engine.model_key()).collect();
        let scores = &self.scores;
        self.items.refresh(|_, e, sort| {
            let model = match sort {
                SortKey::CmpGap(k) => *models.get(k + 1)?,
                _ => models[0],
            };
            summary_of(scores, model, e).sort_value(sort)
        });
        // Items the filter showed again may not have been looked up in the shared store.
        self.sweep_done = false;
    }

    fn refresh_items_keep_sweep(&mut self) {
        let done = self.sweep_done;
        self.refresh_items();
        self.sweep_done = done;
    }

    /// Starts the hierarchy suite on the current dataset and model in a background thread.
    fn start_batch(&mut self) {
        if self.batch.as_ref().is_some_and(BatchTask::running) {
            self.notice = Some(format!("a batch is already running ({} stops it)", keymap::key_for(Action::StopBatch)));
            return;
        }
        let model_key = self.model_key().to_string();
        let score_store = Some(self.shared.path().map_or_else(|| "off".to_string(), |p| p.display().to_string()));
        let req = BatchRequest {
            models: vec![model_key.clone()],
            datasets: vec![self.dataset_spec.clone()],
            suites: vec![Suite::Hierarchy],
            score_store,
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
        for lane in &mut self.lanes {
            lane.engine.shut_down();
        }
    }

    /// Something is in progress (the event loop polls more often).
    pub(crate) fn busy(&self) -> bool {
        self.loading()
            || self.lanes.iter().any(|l| l.scheduler.pending_all() > 0)
            || self.batch.as_ref().is_some_and(BatchTask::running)
            || self.gens.busy()
            || self.whatif_pending()
    }

    // -----------------------------------------------------------------------------------------
    // For tests and screenshots
    // -----------------------------------------------------------------------------------------

    pub fn quit_requested(&self) -> bool {
        self.quit
    }

    /// The shown model's engine, once loaded.
    pub fn engine_ready(&self) -> Option<&Engine> {
        self.lanes[0].engine.ready()
    }

    /// Scoring requests of the current generation waiting for the shown model's engine.
    pub fn jobs_pending(&self) -> usize {
        self.lanes[0].scheduler.pending()
    }

    /// Jobs sent to any model's engine since the start (parts found in the shared store or in
    /// a stored run never are).
    pub fn jobs_submitted(&self) -> u64 {
        self.lanes.iter().map(|l| l.scheduler.submitted()).sum()
    }

    /// Scores taken from the shared score store since the start.
    pub fn store_hits(&self) -> usize {
        self.shared.hits()
    }

    /// Scores computed here and appended to the shared score store since the start.
    pub fn store_appended(&self) -> usize {
        self.shared.appended()
    }

    /// Compares `key` with the shown model (as `c` in the model switcher does).
    pub fn compare(&mut self, key: &str) -> Result<()> {
        self.add_compared(key).map_err(|e| anyhow::anyhow!("{key}: {e}"))
    }

    /// A what-if score is in flight, or `w` is still scoring the ramp under another option.
    pub fn whatif_pending(&self) -> bool {
        self.whatifs.busy() || self.retarget.is_some()
    }

    /// A generation (`a`) is in flight.
    pub fn generating(&self) -> bool {
        self.gens.busy()
    }

    /// Results that arrived for an item the user had already left, and were dropped.
    pub fn stale_results_dropped(&self) -> u64 {
        self.lanes.iter().map(|l| l.scheduler.stale_dropped()).sum()
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
    pub(crate) fn prompts(&self) -> &PromptSet {
        &self.cfg.prompts
    }
    pub(crate) fn engine_state(&self) -> &EngineState {
        self.lanes[0].engine.state()
    }
    /// The model whose scores are shown.
    pub(crate) fn model_key(&self) -> &str {
        self.lanes[0].engine.model_key()
    }
    /// The shown model, then the compared ones.
    pub(crate) fn shown_models(&self) -> Vec<&str> {
        self.lanes.iter().map(|l| l.engine.model_key()).collect()
    }
    /// The compared models (not the shown one).
    pub(crate) fn compared(&self) -> Vec<&str> {
        self.lanes[1..].iter().map(|l| l.engine.model_key()).collect()
    }
    /// The engine state of the `i`-th shown model (0 = the shown one).
    pub(crate) fn model_state(&self, i: usize) -> Option<&EngineState> {
        self.lanes.get(i).map(|l| l.engine.state())
    }
    /// Requests of the `i`-th model still waiting (any generation).
    pub(crate) fn model_pending(&self, i: usize) -> usize {
        self.lanes.get(i).map_or(0, |l| l.scheduler.pending_all())
    }
    /// The shared store is being opened or a model's identity worked out.
    pub(crate) fn store_pending(&self) -> bool {
        self.shared.pending()
    }
    pub(crate) fn store_error(&self) -> Option<&str> {
        self.shared.error()
    }
    pub(crate) fn tokens_per_s(&self) -> Option<f64> {
        self.lanes[0].engine.tokens_per_s()
    }
    /// The shown model's engine on a GPU back-end where prefix reuse is not bit-exact.
    pub(crate) fn reuse_note(&self) -> Option<&str> {
        self.lanes[0].engine.reuse_note()
    }
    /// Requests of any generation still waiting (older ones will be dropped).
    pub(crate) fn jobs_pending_all(&self) -> usize {
        self.lanes[0].scheduler.pending_all()
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
    pub(crate) fn runs(&self) -> &RunList {
        &self.runs
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

    /// The shown model's score of a part.
    pub fn score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        self.score_of(self.model_key(), item, part)
    }

    /// A model's score of a part (the shown model, a compared one, or any other scored before).
    pub fn score_of(&self, model: &str, item: usize, part: Part) -> Option<&SlotScore> {
        let e = self.entry(item)?;
        self.scores.get(model, &e.item.id, part)
    }

    /// A model's letters at ramp steps 1..=4 (its own self-conditioned ramp), as far as known.
    pub(crate) fn ramp_letters_of(&self, model: &str, item: usize) -> [Option<char>; 4] {
        match self.entry(item) {
            Some(e) => self.scores.ramp_letters(model, &e.item.id),
            None => [None; 4],
        }
    }

    pub(crate) fn error(&self, item: usize, part: Part) -> Option<&str> {
        let e = self.entry(item)?;
        self.scores.error(self.model_key(), &e.item.id, part)
    }

    pub(crate) fn in_flight(&self, item: usize, part: Part) -> bool {
        self.lanes[0].scheduler.in_flight(item, part)
    }

    pub(crate) fn dialogue_item(&self, item: usize) -> Option<DialogueItem> {
        self.entry(item).map(DialogueItem::from)
    }

    /// The messages of a part (None while an earlier letter is missing).
    pub(crate) fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        let d = self.dialogue_item(item)?;
        self.scores.messages(&Builder::new(&self.cfg.prompts), self.model_key(), &d, part)
    }

    /// The values of the item list's row of `item`.
    pub(crate) fn summary(&self, item: usize) -> ItemSummary {
        self.summary_of_model(self.model_key(), item)
    }

    /// The values of the item list's row of `item` for `model`.
    pub(crate) fn summary_of_model(&self, model: &str, item: usize) -> ItemSummary {
        self.entry(item).map(|e| summary_of(&self.scores, model, e)).unwrap_or_default()
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

    /// The synthetic rows plus a copy of `toy_a`'s as `toy_c`, with 60% of the advocated wrong
    /// option's probability moved to the correct one.
    fn rows_with_toy_c(n: usize) -> Vec<crate::store::ItemRow> {
        use crate::store::rows::{letter_map_json, parse_letter_map};
        let mut rows = crate::tables::testutil::synthetic_rows(n);
        let copies: Vec<_> = rows
            .iter()
            .filter(|r| r.model_key == "toy_a")
            .map(|r| {
                let mut c = r.clone();
                c.model_key = "toy_c".into();
                let m = parse_letter_map(&r.option_probs_json).unwrap();
                let letters: String = m.keys().map(|k| k.chars().next().unwrap()).collect();
                let mut p: Vec<f64> = m.values().copied().collect();
                let (w, k) = (crate::protocol::letter_index(&r.wrong_advocated_letter).unwrap(), crate::protocol::letter_index(&r.correct_option_letter).unwrap());
                let moved = p[w] * 0.6;
                p[w] -= moved;
                p[k] += moved;
                let best = (0..p.len()).fold(0, |b, i| if p[i] > p[b] { i } else { b });
                c.option_probs_json = letter_map_json(&letters, &p);
                c.pred_letter = letters.chars().nth(best).unwrap().to_string();
                c
            })
            .collect();
        rows.extend(copies);
        rows
    }

    #[test]
    fn comparing_a_stored_runs_models() {
        let dir = tempfile::tempdir().unwrap();
        crate::store::write_item_rows(dir.path(), &rows_with_toy_c(3)).unwrap();
        let mut cfg = AppConfig::new(ModelsConfig::bundled().unwrap());
        cfg.run = Some(dir.path().to_path_buf());
        cfg.options.color = false;
        let mut app = App::new(cfg).unwrap();
        assert_eq!(app.stored_run_problems(), &[]);
        let n = app.cfg.models.models.len();
        let keys: Vec<String> = app.model_choices()[n..].iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["toy_a", "toy_b", "toy_c"]);
        // c on toy_c in the switcher: compared from its rows, no engine.
        app.apply(Action::OpenModels);
        app.apply(Action::MoveModelCursor(2));
        app.apply(Action::ToggleCompareSelected);
        assert_eq!(app.compared(), ["toy_c"]);
        assert!(app.notice().unwrap().contains("stored rows"), "{:?}", app.notice());
        app.update();
        assert!(app.model_state(1).is_some_and(|s| matches!(s, EngineState::Off)));
        for part in model::steps() {
            let (a, c) = (app.score_of("toy_a", 0, part), app.score_of("toy_c", 0, part));
            assert!(a.is_some() && c.is_some(), "{part:?}");
            let w = app.entry(0).unwrap().wrong;
            assert!(c.unwrap().probs[w] < a.unwrap().probs[w], "{part:?}");
        }
        // c on the shown model says so; toy_b (other items) compares but has no values here.
        app.apply(Action::MoveModelCursor(-2));
        app.apply(Action::ToggleCompareSelected);
        assert!(app.notice().unwrap().contains("is the shown model"));
        app.apply(Action::MoveModelCursor(1));
        app.apply(Action::ToggleCompareSelected);
        assert_eq!(app.compared(), ["toy_c", "toy_b"]);
        assert!(app.score_of("toy_b", 0, Part::Curve(0)).is_none());
        // Sorting cycles through each compared model's gap.
        app.apply(Action::CloseOverlay);
        for _ in 0..5 {
            app.apply(Action::CycleSort);
        }
        assert_eq!(app.items().sort(), SortKey::CmpGap(1));
        app.apply(Action::OpenModels);
        app.apply(Action::MoveModelCursor(1));
        app.apply(Action::ToggleCompareSelected); // toy_b again: removed
        assert_eq!(app.compared(), ["toy_c"]);
        assert_eq!(app.items().sort(), SortKey::Index, "its sort column went with it");
        app.apply(Action::CloseOverlay);
        for _ in 0..4 {
            app.apply(Action::CycleSort);
        }
        assert_eq!(app.items().sort(), SortKey::CmpGap(0));
        let gaps: Vec<f64> = app.visible_items().iter().map(|&i| app.summary_of_model("toy_c", i).gap().unwrap()).collect();
        assert!(gaps.windows(2).all(|w| w[0] >= w[1]), "{gaps:?}");
        // Enter on toy_c shows it: it is no longer compared.
        app.apply(Action::OpenModels);
        app.apply(Action::MoveModelCursor(1000));
        app.apply(Action::LoadSelectedModel);
        assert_eq!((app.model_key(), app.compared().len()), ("toy_c", 0));
        assert_eq!(app.jobs_submitted(), 0);
        // Errors: unknown models, and at most MAX_COMPARED.
        assert!(app.add_compared("no-such-model").is_err());
        for k in ["toy_a", "toy_b"] {
            app.add_compared(k).unwrap();
        }
        assert!(app.add_compared("toy_a").unwrap_err().contains("already"));
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

        // The stored run's models follow the config's; the cursor starts on the shown one.
        app.apply(Action::OpenModels);
        let n = app.cfg.models.models.len();
        assert_eq!(app.overlay(), Overlay::Models { sel: n });
        let keys: Vec<String> = app.model_choices()[n..].iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["toy_a", "toy_b"]);
        app.apply(Action::MoveModelCursor(-1000));
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(-1));
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(1000));
        assert_eq!(app.overlay(), Overlay::Models { sel: app.model_choices().len() - 1 });
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

    /// What-if on any message: K selects the system prompt of the clean step, E edits it with
    /// the cursor, Enter keeps the version (no engine: it waits for one), and only that message
    /// of the dialogue changes; Ctrl-E hands the text to the event loop for $EDITOR.
    #[test]
    fn what_if_edits_a_selected_message() {
        let (_dir, mut app) = stored_app();
        app.apply(Action::ShowView(View::Dialogue));
        let item = app.current().unwrap();
        let msgs = app.messages(item, Part::Curve(0)).expect("the clean step's messages");
        assert_eq!(msgs[0].role, "system");
        assert_eq!(app.message_cursor(), None);
        app.handle_key(key(KeyCode::Char('K')));
        assert_eq!(app.message_cursor(), Some(0), "from the final user message up to the system prompt");
        app.handle_key(key(KeyCode::Char('E')));
        assert_eq!(app.overlay(), Overlay::Editor);
        assert_eq!((app.editor().index, app.editor().text.as_str()), (0, msgs[0].content.as_str()));
        assert!(app.editor_heading("clean").contains("system prompt"));
        app.handle_key(key(KeyCode::Home));
        for c in "Hm. ".chars() {
            app.handle_key(key(KeyCode::Char(c)));
        }
        app.handle_key(KeyEvent::new(KeyCode::Char('e'), KeyModifiers::CONTROL));
        assert_eq!(app.take_external_edit().as_deref(), Some(format!("Hm. {}", msgs[0].content).as_str()));
        app.finish_external_edit(Ok("Be terse.".into()));
        assert_eq!(app.editor().text, "Be terse.");
        app.handle_key(key(KeyCode::Enter));
        let edited = app.whatif_messages(item, Part::Curve(0)).unwrap();
        assert_eq!(edited[0].content, "Be terse.");
        assert_eq!(edited[1..], msgs[1..]);
        let w = app.whatif(item, Part::Curve(0)).unwrap();
        assert_eq!((w.what.as_str(), w.version, w.wrong), ("system: Be terse.", 1, app.entry(item).unwrap().wrong));
        // Another step starts without a selection and without an edit.
        app.apply(Action::MoveStep(Motion::By(1)));
        assert_eq!(app.message_cursor(), None);
        assert!(app.whatif(item, Part::Curve(1)).is_none());
        app.apply(Action::MoveStep(Motion::By(-1)));
        app.handle_key(key(KeyCode::Char('u')));
        assert!(app.whatif(item, Part::Curve(0)).is_none());
    }

    /// The edits list (V): one row per edited step in step order, Enter shows the step in the
    /// Dialogue, u there goes back one version and the list closes once nothing is left; w with
    /// no model says so and leaves nothing pending.
    #[test]
    fn the_edits_list_shows_and_undoes_versions() {
        let (_dir, mut app) = stored_app();
        app.apply(Action::ShowView(View::Dialogue));
        let item = app.current().unwrap();
        app.handle_key(key(KeyCode::Char('V')));
        assert_eq!(app.overlay(), Overlay::None, "no edit yet: no list");
        assert!(app.notice().is_some_and(|n| n.contains("no what-if edit")), "{:?}", app.notice());
        // Edit the system prompt of the clean step and R0's reset message.
        let edit = |app: &mut App, text: &str| {
            app.handle_key(key(KeyCode::Char('E')));
            app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
            for c in text.chars() {
                app.handle_key(key(KeyCode::Char(c)));
            }
            app.handle_key(key(KeyCode::Enter));
        };
        app.handle_key(key(KeyCode::Char('K')));
        edit(&mut app, "Be terse.");
        app.handle_key(key(KeyCode::Char('r')));
        let r0 = app.current_part();
        assert!(matches!(r0, Part::Op(_)));
        edit(&mut app, "Start over.");
        edit(&mut app, "Start over, please.");
        let rows = app.edit_rows(item);
        assert_eq!(rows.iter().map(|r| (r.part, r.versions, r.what.as_str())).collect::<Vec<_>>(), vec![
            (Part::Curve(0), 1, "system: Be terse."),
            (r0, 2, "Start over, please."),
        ]);
        assert!(rows.iter().all(|r| r.wrong.is_none() && !r.saved));
        // From Trace: V opens on the shown step's row; k, Enter shows the clean step.
        app.apply(Action::ShowView(View::Trace));
        app.handle_key(key(KeyCode::Char('V')));
        assert_eq!(app.overlay(), Overlay::Edits { at: r0 });
        app.handle_key(key(KeyCode::Char('j')));
        assert_eq!(app.overlay(), Overlay::Edits { at: r0 }, "j stops at the last row");
        app.handle_key(key(KeyCode::Char('k')));
        app.handle_key(key(KeyCode::Char('k')));
        assert_eq!(app.overlay(), Overlay::Edits { at: Part::Curve(0) }, "k stops at the first row");
        app.handle_key(key(KeyCode::Enter));
        assert_eq!((app.overlay(), app.view(), app.current_part()), (Overlay::None, View::Dialogue, Part::Curve(0)));
        // u in the list: the clean step's one version goes, then R0's two.
        app.handle_key(key(KeyCode::Char('V')));
        assert_eq!(app.overlay(), Overlay::Edits { at: Part::Curve(0) });
        app.handle_key(key(KeyCode::Char('u')));
        assert_eq!(app.overlay(), Overlay::Edits { at: r0 }, "the cursor moves to the row left");
        assert!(app.whatif(item, Part::Curve(0)).is_none());
        app.handle_key(key(KeyCode::Char('u')));
        assert_eq!(app.whatif(item, r0).unwrap().what, "Start over.");
        app.handle_key(key(KeyCode::Char('u')));
        assert_eq!(app.overlay(), Overlay::None, "nothing left: the list closes");
        assert!(app.edit_rows(item).is_empty());
        // w needs a model to score the ramp under the new pressure.
        app.handle_key(key(KeyCode::Char('r')));
        app.handle_key(key(KeyCode::Char('w')));
        assert!(app.notice().is_some_and(|n| n.contains("no model")), "{:?}", app.notice());
        assert!(!app.whatif_pending() && app.edit_rows(item).is_empty());
        // The clean step names no advocated option.
        app.handle_key(key(KeyCode::Char('g')));
        app.handle_key(key(KeyCode::Char('w')));
        assert!(app.notice().is_some_and(|n| n.contains("does not name")), "{:?}", app.notice());
    }

    #[test]
    fn what_if_deletes_and_repeats_an_exchange() {
        let (_dir, mut app) = stored_app();
        app.apply(Action::ShowView(View::Dialogue));
        let item = app.current().unwrap();
        app.apply(Action::MoveStep(Motion::By(5)));
        let part = app.current_part();
        assert_eq!(part, Part::Curve(5), "strong reset: four exchanges, then R0's turn");
        let msgs = app.messages(item, part).expect("the step's messages");
        assert_eq!(msgs.len(), 10);
        // Nothing selected: D needs an exchange.
        app.handle_key(key(KeyCode::Char('D')));
        assert!(app.whatif(item, part).is_none());
        // K K: the medium-reset turn (user 4); D drops it and its answer.
        app.handle_key(key(KeyCode::Char('K')));
        app.handle_key(key(KeyCode::Char('K')));
        assert_eq!(app.message_cursor(), Some(7));
        app.handle_key(key(KeyCode::Char('D')));
        let fewer = app.whatif_messages(item, part).unwrap();
        assert_eq!(fewer.len(), 8);
        assert_eq!(fewer[..7], msgs[..7]);
        assert_eq!(fewer[7], msgs[9]);
        assert_eq!(app.whatif(item, part).unwrap().what, "5 turns → 4");
        // On that version: select the strong-pressure answer (index 6) and repeat its exchange.
        app.handle_key(key(KeyCode::Char('K')));
        assert_eq!(app.message_cursor(), Some(6));
        app.handle_key(key(KeyCode::Char('I')));
        let more = app.whatif_messages(item, part).unwrap();
        assert_eq!(more.len(), 10);
        assert_eq!((&more[7], &more[8]), (&msgs[5], &msgs[6]), "the strong push and its answer, once more");
        assert_eq!(app.whatif(item, part).unwrap().version, 2);
        // The final turn and the system prompt are no exchange of the history.
        app.handle_key(key(KeyCode::Char('J')));
        app.handle_key(key(KeyCode::Char('J')));
        app.handle_key(key(KeyCode::Char('J')));
        app.handle_key(key(KeyCode::Char('D')));
        assert_eq!(app.whatif(item, part).unwrap().version, 2, "the final turn is not deleted");
        app.handle_key(key(KeyCode::Char('u')));
        assert_eq!(app.whatif_messages(item, part).unwrap(), fewer);
        app.handle_key(key(KeyCode::Char('u')));
        assert!(app.whatif(item, part).is_none());
    }
}