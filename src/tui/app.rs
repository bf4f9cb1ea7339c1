//! The explorer's router. [`App`] owns the components — the item list, the step cursor, the
//! what-if editor ([`WhatIf`]), the table browser ([`Browser`]) — and the engine-facing
//! [`Engines`] (one engine and scheduler per shown model, the item scores, the link to the shared
//! score store, the generations), plus what is shown (view, overlay, the status line). Keys
//! become [`Action`]s in [`keymap`](super::keymap); [`App::apply`] hands each to the part it is
//! for; [`App::update`] lets the engines, the what-if editor and the browser take in what arrived.
//! Every part answers with [`Event`]s that [`App::route`] carries out: only the app writes the
//! status line, the overlay or another part's state. Views read the state through the
//! accessors at the end; nothing here draws.
//!
//! Models: the first engine is the shown model's (its scores fill every view); the others are the
//! compared models (`c` in the model switcher), each scored in its own engine under the same
//! scheduling rules, or — for a stored run's models — read from the run's rows without any
//! engine.

use std::collections::VecDeque;
use std::path::Path;
use std::time::{Duration, Instant};

mod queries;

use anyhow::{bail, Result};
use crossterm::event::KeyEvent;

use super::action::{Action, Target};
use super::browser::Browser;
use super::engine_slot::EngineState;
use super::event::Event;
use super::item_list::{ItemList, ItemSummary, SortKey};
use super::keymap::{self, KeyContext};
use super::engines::{Focus, EngineSetup, Engines};
use super::parts::Part;
use super::popups::Popups;
use super::recovery_rows::{RecoveryRows, RowsKey};
use super::screen::{Overlay, View};
use super::step_cursor::StepCursor;
use super::setup::AppConfig;
use super::source::{self, Source};
use super::stored_run::RowProblem;
use super::theme::Theme;
use super::whatif::{Cx, WhatIf};
use crate::batch::BatchRequest;
use crate::dialogue::Suite;
use crate::engine::inside::Steering;
use crate::engine::Engine;
use crate::dialogue::CurvePoint;
use crate::prompts::PromptSet;
use crate::protocol::ChatMessage;

/// The what-if component's view of the rest of the app. A macro, so that it borrows the
/// fields it names and the component itself can be borrowed mutably beside it.
macro_rules! cx {
    ($app:expr) => {
        Cx {
            items: &$app.items,
            engines: &$app.engines,
            prompts: &$app.cfg.prompts,
            steps: $app.cursor.steps(),
            part: $app.cursor.part(),
            overlay: $app.popups.overlay(),
            dataset_spec: &$app.source.spec,
        }
    };
}

/// What the schedulers read (a macro for the same reason as [`cx!`]).
macro_rules! focus {
    ($app:expr) => {
        Focus {
            items: &$app.items,
            steps: $app.cursor.steps(),
            prompts: &$app.cfg.prompts,
            prefetch: $app.cfg.options.prefetch,
            prefetch_window: $app.cfg.options.prefetch_window,
        }
    };
}

pub struct App {
    cfg: AppConfig,
    theme: Theme,
    source: Source,
    /// The engines, schedulers, scores and the shared store link.
    engines: Engines,
    items: ItemList,
    cursor: StepCursor,
    what_if: WhatIf,
    browser: Browser,
    view: View,
    popups: Popups,
    notice: Option<String>,
    quit: bool,
    /// The current item's recovery rows, computed when the scores, the item or the models
    /// change.
    rows: RecoveryRows,
    /// The Slot view shows the letter lens (`L`), with the steering what-if (`T`).
    lens_on: bool,
    steer_on: bool,
}

impl App {
    pub fn new(cfg: AppConfig) -> Result<App> {
        let opened = source::open(&cfg)?;
        let items = ItemList::new(opened.items);
        // The steered operations of the experiment files: their vectors read (and the stored
        // run's copies found) before any engine starts.
        let reg = opened.source.reg;
        let conds: Vec<&crate::dialogue::Condition> = reg.all().iter().collect();
        let mut notice = opened.notice;
        // A stored run opens without its vectors (its rows hold the scores); live scoring needs them.
        let steerings = match crate::batch::steered::load(reg, &conds, cfg.run.as_deref().unwrap_or(std::path::Path::new(""))) {
            Ok(s) => s,
            Err(e) if cfg.run.is_some() => {
                notice = Some(format!("{e:#}"));
                Default::default()
            }
            Err(e) => return Err(e),
        };
        let setup = EngineSetup { models: cfg.models.clone(), engine: cfg.engine.clone(), allow_inexact_reuse: cfg.batch.allow_inexact_reuse, steerings };
        let engines = Engines::new(setup, opened.model_key, items.current(), opened.scores, cfg.score_store.clone(), opened.stored_models);
        let mut app = App {
            cursor: StepCursor::new(opened.source.reg),
            theme: Theme { color: cfg.options.color },
            source: opened.source,
            engines,
            items,
            what_if: WhatIf::default(),
            browser: Browser::new(cfg.run.clone(), cfg.runs_dir.clone()),
            view: View::Items,
            popups: Popups::default(),
            notice,
            quit: false,
            rows: RecoveryRows::default(),
            lens_on: false,
            steer_on: false,
            cfg,
        };
        let events = app.engines.start(app.cfg.run.is_none());
        app.route(events);
        for k in app.cfg.compare.clone() {
            if let Err(e) = app.add_compared(&k) {
                bail!("--compare {k}: {e}");
            }
        }
        app.refresh_rows();
        Ok(app)
    }

    // -----------------------------------------------------------------------------------------
    // Keys, actions and events
    // -----------------------------------------------------------------------------------------

    /// A key: looked up in the keymap, then applied. Any key but quitting clears the notice.
    pub fn handle_key(&mut self, k: KeyEvent) {
        let cx = KeyContext { view: self.view, overlay: self.popups.overlay(), filter_mode: self.items.filter_mode() };
        let action = keymap::action_for(cx, k);
        if !self.cfg.options.frozen && action != Some(Action::Quit) {
            self.notice = None;
            self.what_if.forget_notice();
        }
        if let Some(a) = action {
            self.apply(a);
        }
    }

    /// Carries out an action: the app's own (views, overlays, the item list, the models), or
    /// the part's it is for.
    pub(crate) fn apply(&mut self, action: Action) {
        let events = self.act(action);
        self.route(events);
        self.refresh_rows();
    }

    fn act(&mut self, action: Action) -> Vec<Event> {
        use Action as A;
        match action.target() {
            Target::WhatIf => return self.what_if.update(action, &cx!(self)),
            Target::Tables => return self.browser.update(action),
            Target::Steps => {
                if self.cursor.update(action) {
                    self.what_if.deselect();
                }
                return Vec::new();
            }
            Target::Popups => {
                self.popups.update(action, &self.engines.model_choices(), self.engines.model_key());
                return Vec::new();
            }
            Target::App => {}
        }
        match action {
            A::Quit => self.quit = true,
            A::ShowView(v) => self.set_view(v),
            A::NextView => self.set_view(self.view.next()),
            A::PreviousView => self.set_view(self.view.previous()),
            A::LoadSelectedModel => {
                let Some(m) = self.popups.selected_model(self.engines.model_choices()) else { return Vec::new() };
                self.popups.open(Overlay::None);
                return self.engines.show(&m);
            }
            A::ToggleCompareSelected => {
                let Some(m) = self.popups.selected_model(self.engines.model_choices()) else { return Vec::new() };
                return self.engines.toggle_compare(&m, self.items.current());
            }
            A::MoveItem(m) => {
                self.items.move_cursor(m);
                return self.sync_focus();
            }
            A::CycleSort => {
                self.items.cycle_sort(self.engines.shown_models().len() - 1);
                self.refresh_items();
            }
            A::ReverseSort => {
                self.items.toggle_reverse();
                self.refresh_items();
            }
            A::EditFilter => self.items.edit_filter(),
            A::FilterType(c) => return self.edit_filter(|l| l.type_filter(c)),
            A::FilterBackspace => return self.edit_filter(ItemList::backspace_filter),
            A::KeepFilter => return self.edit_filter(ItemList::keep_filter),
            A::ClearFilter => return self.edit_filter(ItemList::clear_filter),
            A::Generate => return self.toggle_generation(),
            A::ToggleLens => {
                self.lens_on = !self.lens_on;
                return if self.lens_on { self.request_lenses() } else { Vec::new() };
            }
            A::ToggleSteering => {
                if self.cfg.steering.is_none() {
                    return vec![Event::Notice("no steering setting: start the explorer with --steer FILE (and --alpha, --steer-layers)".into())];
                }
                self.steer_on = !self.steer_on;
                self.lens_on |= self.steer_on;
                return self.request_lenses();
            }
            A::SaveSteering => return self.save_steering(),
            A::OpenSelectedRun => self.open_selected_run(),
            A::StartBatch => return self.start_batch(),
            _ => {}
        }
        Vec::new()
    }

    /// Carries out what the parts said, in order (what an event sets off goes after it).
    fn route(&mut self, events: Vec<Event>) {
        let mut queue: VecDeque<Event> = events.into();
        while let Some(e) = queue.pop_front() {
            match e {
                Event::Notice(n) => self.notice = Some(n),
                Event::ModelLoaded(key) => self.notice = Some(format!("model {key} loaded")),
                Event::ScoresChanged => {
                    if self.items.sort().by_score() {
                        self.resort_items();
                    }
                }
                Event::ShownEngineRestarted => self.what_if.engine_restarted(),
                Event::ModelsChanged => {
                    self.refresh_items();
                    queue.extend(self.schedule());
                }
                Event::CompareRemoved(left) => self.items.forget_compared(left),
                Event::Overlay(o) => self.popups.open(o),
                Event::ShowStep(part) => {
                    if self.cursor.show(part) {
                        self.what_if.deselect();
                    }
                    self.set_view(View::Dialogue);
                }
            }
        }
    }

    /// The what-if component's view of the rest (for the views).
    fn cx(&self) -> Cx<'_> {
        cx!(self)
    }

    fn schedule(&mut self) -> Vec<Event> {
        self.engines.schedule(&focus!(self))
    }

    fn edit_filter(&mut self, edit: impl FnOnce(&mut ItemList)) -> Vec<Event> {
        edit(&mut self.items);
        self.refresh_items();
        self.sync_focus()
    }

    /// After any move: a new current item starts a new generation in every model's engine, its parts
    /// requested first, the conversation shown from its end and no message selected.
    fn sync_focus(&mut self) -> Vec<Event> {
        if !self.engines.refocus(self.items.current()) {
            return Vec::new();
        }
        self.cursor.scroll_to_end();
        self.what_if.deselect();
        self.schedule()
    }

    /// Re-filters and re-sorts the item list; the items the filter shows again are looked up in
    /// the shared store again.
    fn refresh_items(&mut self) {
        self.resort_items();
        self.engines.list_changed();
    }

    /// Re-sorts the item list (score columns read the shown and compared models' scores).
    fn resort_items(&mut self) {
        let models = self.engines.shown_models();
        let scores = self.engines.scores();
        self.items.refresh(|_, e, sort| {
            let model = match sort {
                SortKey::CmpGap(k) => *models.get(k + 1)?,
                _ => models[0],
            };
            ItemSummary::of(scores, model, e).sort_value(sort)
        });
    }

    /// Recomputes the recovery rows if the scores, the item or the models changed.
    fn refresh_rows(&mut self) {
        let key = self.rows_key();
        if self.rows.key != key {
            self.rows = RecoveryRows::compute(key, self.engines.scores(), self.current_entry().map(|(_, e)| e));
        }
    }

    fn rows_key(&self) -> RowsKey {
        RowsKey { item: self.current(), models: self.engines.shown_models().iter().map(|m| m.to_string()).collect(), scores: self.engines.scores().revision() }
    }

    /// Processes arrived results, engine loads, the shared store, what-if scores and batch
    /// events; refreshes derived state. Call once per frame.
    pub fn update(&mut self) {
        let events = self.what_if.tick(&cx!(self));
        self.route(events);
        let events = self.engines.poll(&focus!(self));
        self.route(events);
        let events = self.browser.tick(self.view == View::Tables);
        self.route(events);
        let events = self.schedule();
        self.route(events);
        if self.lens_on && self.view == View::Slot && self.engines.idle() {
            let _ = self.request_lenses();
        }
        self.refresh_rows();
    }

    /// The contexts the lens panel shows for the current step: the step as shown, its clean
    /// counterpart, and with the steering what-if on, the step steered.
    pub(crate) fn lens_contexts(&self) -> Option<Vec<(Vec<ChatMessage>, Option<Steering>)>> {
        let item = self.current()?;
        let step = self.shown_messages(item, self.current_part())?;
        let clean = self.shown_messages(item, Part::curve(CurvePoint::CleanContext))?;
        // A steering operation's step is read out under its own steering.
        let own = self.engines.steering_of(self.current_part());
        let mut v = vec![(step.clone(), own), (clean, None)];
        if let (true, Some(s)) = (self.steer_on, &self.cfg.steering) {
            v.push((step, Some(s.clone())));
        }
        Some(v)
    }

    /// Asks the shown model for the lens of [`lens_contexts`](Self::lens_contexts).
    fn request_lenses(&mut self) -> Vec<Event> {
        let (Some(contexts), Some((_, e))) = (self.lens_contexts(), self.current_entry()) else { return Vec::new() };
        let letters = e.item.letters();
        self.engines.request_lenses(&contexts, &letters)
    }

    /// The lens state of one context of the shown model.
    pub(crate) fn lens(&self, msgs: &[ChatMessage], steering: Option<&Steering>) -> Option<&crate::tui::lenses::LensState> {
        self.engines.lens(msgs, steering)
    }
    pub(crate) fn lens_on(&self) -> bool {
        self.lens_on
    }
    /// `S` in the Slot view: the steering what-if on the current operation saved
    /// ([`lenses::save_steering`](crate::tui::lenses::save_steering)).
    fn save_steering(&mut self) -> Vec<Event> {
        let steering = self.cfg.steering.as_ref().zip(self.cfg.steer_file.as_deref()).filter(|_| self.steer_on);
        let said = crate::tui::lenses::save_steering(self.source.reg, self.current_part(), steering, self.engines.model_key());
        vec![Event::Notice(said)]
    }

    pub(crate) fn steering(&self) -> Option<&Steering> {
        self.cfg.steering.as_ref().filter(|_| self.steer_on)
    }

    // -----------------------------------------------------------------------------------------
    // The models, the runs and the batch
    // -----------------------------------------------------------------------------------------

    /// Compares `key` with the shown model: a stored run's model from its rows, any other from
    /// its own engine, loaded in the background.
    pub(crate) fn add_compared(&mut self, key: &str) -> Result<(), String> {
        let events = self.engines.add_compared(key, self.items.current())?;
        self.route(events);
        Ok(())
    }

    /// `a` in the Dialogue: the shown model's greedy continuation of the step's conversation
    /// as shown (its what-if version when it has one), kept for the session; `a` while it runs
    /// stops it.
    fn toggle_generation(&mut self) -> Vec<Event> {
        let Some(item) = self.current() else { return Vec::new() };
        match self.shown_messages(item, self.current_part()) {
            Some(msgs) => self.engines.toggle_generation(&msgs),
            None => vec![Event::Notice("this step's conversation waits for an earlier letter".into())],
        }
    }

    pub(crate) fn set_view(&mut self, v: View) {
        self.view = v;
        if v == View::Tables {
            self.browser.shown();
        }
    }

    /// Opens the run under the Runs pane's cursor as `--run DIR` would: its items and stored
    /// scores replace the current ones (no engine; `m` loads one), its tables are the Tables
    /// view's, and the Items view shows. A running batch goes on, and the runs list keeps its
    /// cursor.
    fn open_selected_run(&mut self) {
        let Some(dir) = self.browser.runs().selected_dir().map(Path::to_path_buf) else { return };
        let name = dir.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let cfg = AppConfig { run: Some(dir.clone()), model: None, compare: Vec::new(), newest_run: false, ..self.cfg.clone() };
        let mut next = match App::new(cfg) {
            Ok(a) => a,
            Err(e) => {
                self.notice = Some(format!("run {name}: {e:#}"));
                return;
            }
        };
        self.engines.shut_down();
        self.browser.carry_into(&mut next.browser);
        next.theme = self.theme;
        let items = next.item_count();
        let skipped = next.source.problems.len();
        let items = if items == 1 { "1 item".to_string() } else { format!("{items} items") };
        next.notice = Some(match skipped {
            0 => format!("opened run {name}: {items} ({}: its tables)", keymap::key_for(Action::ShowView(View::Tables))),
            k => format!("opened run {name}: {items}, {k} rows skipped (see the log)"),
        });
        *self = next;
    }

    /// Starts the hierarchy suite on the current dataset and model in a background thread.
    fn start_batch(&mut self) -> Vec<Event> {
        let model_key = self.model_key().to_string();
        let (cfg, shared, source) = (&self.cfg, self.engines.shared(), &self.source);
        self.browser.start_batch(&cfg.models, || {
            let score_store = Some(shared.path().map_or_else(|| "off".to_string(), |p| p.display().to_string()));
            let req = BatchRequest {
                models: vec![model_key.clone()],
                datasets: vec![source.spec.clone()],
                suites: vec![Suite::Hierarchy],
                score_store,
                experiments: source.reg.user_experiments().to_vec(),
                ..cfg.batch.clone()
            };
            let plan = crate::batch::plan(&cfg.models, &req, cfg.prompts.clone(), cfg.engine.clone(), cfg.command_line.clone())?;
            Ok((plan, format!("hierarchy · {} · {model_key}", source.label)))
        })
    }

    pub(crate) fn set_step(&mut self, k: usize) -> Result<()> {
        self.cursor.set_step(k)
    }

    pub(crate) fn select_item_id(&mut self, id: &str) -> Result<()> {
        if !self.items.select_id(id) {
            bail!("no item {id:?} in {}", self.source.label);
        }
        let events = self.sync_focus();
        self.route(events);
        Ok(())
    }

    /// Stops a running batch (it stops after the prompts in flight, keeping what it scored) and drops the engine without
    /// waiting for it.
    pub(crate) fn shutdown(&mut self) {
        self.browser.shutdown();
        self.engines.shut_down();
    }

    /// Something is in progress (the event loop polls more often).
    pub(crate) fn busy(&self) -> bool {
        self.engines.loading() || self.engines.busy() || self.browser.running() || self.what_if.busy()
    }

    // -----------------------------------------------------------------------------------------
    // Waiting (tests and screenshots)
    // -----------------------------------------------------------------------------------------

    /// Waits until every model has loaded (or failed). Returns false on timeout.
    pub fn wait_loaded(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if !self.engines.engines_loading() {
                return true;
            }
            if t0.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until every model is loaded, the shared store has been asked, and the current item
    /// (and the prefetch window) has nothing left to score in any model. Returns false on
    /// timeout.
    pub fn settle(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if self.engines.loading() {
                std::thread::sleep(Duration::from_millis(30));
            } else {
                let events = self.schedule();
                self.route(events);
                if self.engines.idle() && self.engines.reading_out() {
                    // Read-outs (the lens) answer on their own channel.
                    std::thread::sleep(Duration::from_millis(30));
                } else if self.engines.idle() {
                    // What the last results recorded goes to the shared store now.
                    let events = self.engines.flush();
                    self.route(events);
                    self.refresh_rows();
                    return true;
                }
                let events = self.engines.wait(Duration::from_millis(50), &focus!(self));
                self.route(events);
            }
            if t0.elapsed() > timeout {
                return false;
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // For tests and screenshots
    // -----------------------------------------------------------------------------------------

    pub fn quit_requested(&self) -> bool {
        self.quit
    }
    /// The shown model's engine, once loaded.
    pub fn engine_ready(&self) -> Option<&Engine> {
        self.engines.engine_ready()
    }
    /// Scoring requests of the current generation waiting for the shown model's engine.
    pub fn jobs_pending(&self) -> usize {
        self.engines.jobs_pending()
    }
    /// Jobs sent to any model's engine since the start (parts found in the shared store or in
    /// a stored run never are).
    pub fn jobs_submitted(&self) -> u64 {
        self.engines.jobs_submitted()
    }
    /// Scores taken from the shared score store since the start.
    pub fn store_hits(&self) -> usize {
        self.engines.shared().hits()
    }
    /// Scores computed here and appended to the shared score store since the start.
    pub fn store_appended(&self) -> usize {
        self.engines.shared().appended()
    }
    /// Compares `key` with the shown model (as `c` in the model switcher does).
    pub fn compare(&mut self, key: &str) -> Result<()> {
        self.add_compared(key).map_err(|e| anyhow::anyhow!("{key}: {e}"))?;
        self.refresh_rows();
        Ok(())
    }
    /// A what-if score is in flight, or `w` is still scoring the ramp under another option.
    pub fn whatif_pending(&self) -> bool {
        self.what_if.busy()
    }
    /// A generation (`a`) is in flight.
    pub fn generating(&self) -> bool {
        self.engines.generating()
    }
    /// Results that arrived for an item the user had already left, and were dropped.
    pub fn stale_results_dropped(&self) -> u64 {
        self.engines.stale_results_dropped()
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
    /// The text to open in `$EDITOR`, once asked for (the event loop suspends the terminal).
    pub(crate) fn take_external_edit(&mut self) -> Option<String> {
        self.what_if.take_external_edit()
    }
    /// What `$EDITOR` gave back: the editor's new text (Enter scores it), or why there is none.
    pub(crate) fn finish_external_edit(&mut self, r: Result<String, String>) {
        let events = self.what_if.finish_external_edit(r, &cx!(self));
        self.route(events);
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
        self.popups.overlay()
    }
    /// Timings, tokens/s and the spinner are hidden (the screen depends only on the data).
    pub(crate) fn frozen(&self) -> bool {
        self.cfg.options.frozen
    }
    pub(crate) fn prompts(&self) -> &PromptSet {
        &self.cfg.prompts
    }
    pub(crate) fn engine_state(&self) -> &EngineState {
        self.engines.engine_state()
    }
    /// The model whose scores are shown.
    pub(crate) fn model_key(&self) -> &str {
        self.engines.model_key()
    }
    /// The compared models (not the shown one).
    pub(crate) fn compared(&self) -> Vec<&str> {
        self.engines.shown_models().split_off(1)
    }
    pub(crate) fn dataset_label(&self) -> &str {
        &self.source.label
    }
    pub(crate) fn dataset_spec(&self) -> &str {
        &self.source.spec
    }
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }
    /// The stored run's rows that were skipped (and items left out), in file order.
    pub fn stored_run_problems(&self) -> &[RowProblem] {
        &self.source.problems
    }
    pub(crate) fn items(&self) -> &ItemList {
        &self.items
    }
    pub(crate) fn engines(&self) -> &Engines {
        &self.engines
    }
    pub(crate) fn cursor(&self) -> &StepCursor {
        &self.cursor
    }
    /// The conditions of the run or dataset shown.
    pub(crate) fn reg(&self) -> &'static crate::dialogue::conditions::Registry {
        self.source.reg
    }
    pub(crate) fn browser(&self) -> &Browser {
        &self.browser
    }
    pub(crate) fn help_scroll(&self) -> usize {
        self.popups.help_scroll()
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyModifiers};

    use super::*;
    use crate::config::ModelsConfig;
    use crate::tui::action::Motion;
    use crate::tui::parts;

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
        let keys: Vec<String> = app.engines().model_choices()[n..].iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["toy_a", "toy_b", "toy_c"]);
        // c on toy_c in the switcher: compared from its rows, no engine.
        app.apply(Action::OpenModels);
        app.apply(Action::MoveModelCursor(2));
        app.apply(Action::ToggleCompareSelected);
        assert_eq!(app.compared(), ["toy_c"]);
        assert!(app.notice().unwrap().contains("stored rows"), "{:?}", app.notice());
        app.update();
        assert!(app.engines().model_state(1).is_some_and(|s| matches!(s, EngineState::Off)));
        for part in parts::steps(app.reg()) {
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
        let keys: Vec<String> = app.engines().model_choices()[n..].iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["toy_a", "toy_b"]);
        app.apply(Action::MoveModelCursor(-1000));
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(-1));
        assert_eq!(app.overlay(), Overlay::Models { sel: 0 });
        app.apply(Action::MoveModelCursor(1000));
        assert_eq!(app.overlay(), Overlay::Models { sel: app.engines().model_choices().len() - 1 });
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
        let last = app.cursor().steps().len() - 1;
        app.apply(Action::MoveStep(Motion::By(3)));
        assert_eq!(app.current_part(), Part::Curve(3));
        app.apply(Action::ScrollDialogue(5));
        app.apply(Action::ScrollDialogue(5));
        app.apply(Action::ScrollDialogue(-5));
        assert_eq!(app.cursor().dialogue_scroll(), 5);
        app.apply(Action::MoveStep(Motion::By(-1)));
        assert_eq!((app.cursor().step(), app.cursor().dialogue_scroll()), (2, 0), "a step move scrolls back to the end");
        app.apply(Action::ToggleRampOps);
        assert_eq!(app.cursor().step(), 7);
        assert!(matches!(app.current_part(), Part::Op(_)));
        app.apply(Action::ToggleRampOps);
        assert_eq!(app.cursor().step(), 0);
        app.apply(Action::MoveStep(Motion::Last));
        assert_eq!(app.cursor().step(), last);
        app.apply(Action::MoveStep(Motion::By(5)));
        assert_eq!(app.cursor().step(), last);
        app.apply(Action::MoveStep(Motion::First));
        assert_eq!(app.cursor().step(), 0);
        assert!(app.set_step(last + 1).is_err());

        assert!(!app.cursor().expand_blocks());
        app.apply(Action::ToggleQuestionBlocks);
        assert!(app.cursor().expand_blocks());
    }

    #[test]
    fn the_table_browser() {
        let (dir, mut app) = stored_app();
        app.apply(Action::ShowView(View::Tables));
        let names: Vec<String> = app.browser().tables().files().iter().map(|p| p.file_name().unwrap().to_string_lossy().to_string()).collect();
        assert_eq!(names, ["summary.md", "table01_x.md", "aux_y.md"], "summary, paper tables, the rest");
        assert_eq!(app.browser().tables().dir(), Some(dir.path()));
        app.apply(Action::MoveTableFile(1));
        assert_eq!(app.browser().tables().selected(), 1);
        assert!(matches!(app.browser().tables().doc().map(|d| &d.blocks[0]), Some(crate::tui::markdown::Block::Table { .. })));
        app.apply(Action::ScrollTable(3));
        app.apply(Action::PanTable(8));
        assert_eq!((app.browser().tables().scroll(), app.browser().tables().hscroll()), (3, 8));
        app.apply(Action::ScrollTable(-15));
        app.apply(Action::PanTable(-20));
        assert_eq!((app.browser().tables().scroll(), app.browser().tables().hscroll()), (0, 0));
        app.apply(Action::ScrollTable(2));
        app.apply(Action::ScrollTableTop);
        assert_eq!(app.browser().tables().scroll(), 0);
        app.apply(Action::MoveTableFile(9));
        assert_eq!(app.browser().tables().selected(), 2);
        app.apply(Action::MoveTableFile(-9));
        assert_eq!(app.browser().tables().selected(), 0);
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

    /// A stored run whose manifest records one experiment file with operation `op` (short label
    /// `short`, history `history`), and rows of that operation for `toy_a` (R0's, renamed).
    fn run_with_experiment(runs: &std::path::Path, name: &str, op: &str, short: &str, history: &str) -> std::path::PathBuf {
        use crate::dialogue::recipe::ExperimentSource;
        use crate::store::{Manifest, RunConfig};
        let dir = runs.join(name);
        let mut rows = crate::tables::testutil::synthetic_rows(2);
        let extra: Vec<_> = rows
            .iter()
            .filter(|r| r.model_key == "toy_a" && r.condition == crate::dialogue::conditions::ids::ORDINARY_RESET)
            .map(|r| crate::store::ItemRow { condition: op.to_string(), condition_label: short.to_string(), ..r.clone() })
            .collect();
        rows.extend(extra);
        crate::store::write_item_rows(&dir, &rows).unwrap();
        let file = format!("[[operation]]\nname = \"{op}\"\nshort = \"{short}\"\nhistory = \"{history}\"\nmessage = \"Forget what I said.\"\nprefix = \"Answer from facts.\"\n");
        let config = RunConfig {
            models: vec!["toy_a".into(), "toy_b".into()],
            datasets: vec!["sample".into()],
            n: None,
            seed: 0,
            subset_csv: None,
            advocated_csv: None,
            suites: vec![Suite::Hierarchy],
            limit: None,
            shard: None,
            shard_by: Default::default(),
            shuffle_options: None,
            prompts_fingerprint: String::new(),
            scoring_settings: String::new(),
            provenance: String::new(),
            plan: None,
            experiments: vec![ExperimentSource::new(&format!("{name}.toml"), file)],
            seeds: Vec::new(),
            answers: vec![crate::protocol::AnswerFormat::Letters],
            open_prompts_fingerprint: None,
        };
        Manifest::new(config, "test".into(), 2).write(&dir).unwrap();
        dir
    }

    /// Two runs of different experiment files in one session: the first opened with `--run`,
    /// the second from the Runs pane, then the first again. Each shows its own experiment
    /// operation as a step, with its stored scores and no row skipped: the conditions are
    /// those of the run opened, not those of the first.
    #[test]
    fn each_opened_run_has_the_operations_of_its_own_experiments() {
        let runs = tempfile::tempdir().unwrap();
        let a = run_with_experiment(runs.path(), "run_a", "explicit_contradiction", "R8", "kept");
        let b = run_with_experiment(runs.path(), "run_b", "start_over", "X1", "none");
        let mut cfg = AppConfig::new(ModelsConfig::bundled().unwrap());
        cfg.run = Some(a.clone());
        cfg.runs_dir = Some(runs.path().to_path_buf());
        cfg.options.color = false;
        let mut app = App::new(cfg).unwrap();
        let ops = |app: &App| -> Vec<&'static str> {
            app.cursor().steps().iter().filter_map(|p| match p { Part::Op(k) => Some(*k), _ => None }).collect()
        };
        // The run's rows all load, its operation is a step with a score, and the Recovery view
        // lists it by its short label.
        let shows = |app: &mut App, (op, short): (&'static str, &str), (not, not_short): (&'static str, &str)| {
            assert!(app.stored_run_problems().is_empty(), "{op}: {:?}", app.stored_run_problems());
            assert!(ops(app).contains(&op) && !ops(app).contains(&not), "{op}: {:?}", ops(app));
            assert!(app.score_of("toy_a", 0, Part::Op(op)).is_some(), "{op} has its stored score");
            app.set_view(View::Recovery);
            let text = crate::tui::buffer_to_text(&crate::tui::render_to_buffer(app, 140, 50).unwrap());
            assert!(text.contains(&format!("{short} ")) && !text.contains(&format!("{not_short} ")), "{text}");
        };
        let open = |app: &mut App, dir: &std::path::Path| {
            for d in [-1, -1, 1, 1] {
                if app.browser().runs().selected_dir() != Some(dir) {
                    app.apply(Action::MoveRun(d));
                }
            }
            assert_eq!(app.browser().runs().selected_dir(), Some(dir));
            app.apply(Action::OpenSelectedRun);
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            assert!(app.notice().is_some_and(|n| n.starts_with(&format!("opened run {name}: 2 items ("))), "{:?}", app.notice());
        };
        let (r8, x1) = (("explicit_contradiction", "R8"), ("start_over", "X1"));
        shows(&mut app, r8, x1);
        open(&mut app, &b);
        shows(&mut app, x1, r8);
        open(&mut app, &a);
        shows(&mut app, r8, x1);
    }
}
