//! The engine side of the explorer's router: loading models into lanes (the shown model and
//! the compared ones), the model switcher's load and compare, submitting scoring, what-if and
//! generation jobs, taking in the engines' answers, the shared store's lookups, and waiting for
//! all of it (tests and screenshots). [`App::update`] runs once per frame.

use std::time::{Duration, Instant};

use super::{App, MAX_COMPARED};
use crate::tui::engine_slot::EngineSlot;
use crate::tui::generations::GenState;
use crate::tui::action::Action;
use crate::tui::jobs::Submit;
use crate::tui::keymap::key_for;
use crate::tui::scheduler::{self, Answer, Scheduler, Scope};
use crate::tui::shared_scores::Access;
use crate::config::models_dir;
use crate::dialogue::{Builder, DialogueItem};
use crate::engine::JobOutput;
use crate::protocol::ChatMessage;
use crate::tui::model::Part;
use crate::tui::screen::{Overlay, View};

/// One model's engine and scheduler.
pub(super) struct Lane {
    pub(super) engine: EngineSlot,
    pub(super) scheduler: Scheduler,
}

impl App {
    pub(super) fn load_selected_model(&mut self) {
        let Some(m) = self.selected_choice() else { return };
        self.overlay = Overlay::None;
        if let Some(i) = self.lane_of(&m.key).filter(|&i| i > 0) {
            self.remove_compared(i);
        }
        if !m.configured {
            // A stored run's model that models.toml does not have: show its stored scores.
            if m.key != self.model_key() {
                self.lanes[0].engine.show_stored(&m.key);
                self.lanes[0].scheduler.reset();
                self.after_models_changed();
                self.notice = Some(format!("showing the stored scores of {}", m.key));
            }
            return;
        }
        let Ok(entry) = self.cfg.models.get(&m.key) else { return };
        if !entry.path(&models_dir()).exists() {
            self.notice = Some(format!("{} is not present (hyst-tui models fetch {})", m.key, m.key));
            return;
        }
        if !self.lanes[0].engine.serves(&m.key) {
            self.start_engine(0, &m.key);
            self.after_models_changed();
            self.notice = Some(format!("loading model {}…", m.key));
        }
    }

    pub(super) fn toggle_compare_selected(&mut self) {
        let Some(m) = self.selected_choice() else { return };
        match self.lane_of(&m.key) {
            Some(0) => self.notice = Some(format!("{} is the shown model ({} switches to another)", m.key, key_for(Action::LoadSelectedModel))),
            Some(i) => {
                self.remove_compared(i);
                self.notice = Some(format!("{} is no longer compared", m.key));
            }
            None => {
                self.notice = Some(match self.add_compared(&m.key) {
                    Ok(()) if m.stored => format!("comparing with {} (its stored rows)", m.key),
                    Ok(()) => format!("comparing with {} (loading…)", m.key),
                    Err(e) => format!("{}: {e}", m.key),
                });
            }
        }
    }

    /// The lane of a model (0 = the shown one).
    pub(super) fn lane_of(&self, key: &str) -> Option<usize> {
        self.lanes.iter().position(|l| l.engine.model_key() == key)
    }

    /// Compares `key` with the shown model: a stored run's model from its rows, any other from
    /// its own engine, loaded in the background.
    pub(crate) fn add_compared(&mut self, key: &str) -> Result<(), String> {
        if self.lane_of(key) == Some(0) {
            return Err("it is the shown model".into());
        }
        if self.lane_of(key).is_some() {
            return Err("it is compared already".into());
        }
        if self.lanes.len() > MAX_COMPARED {
            return Err(format!("at most {MAX_COMPARED} models are compared ({} on one removes it)", key_for(Action::ToggleCompareSelected)));
        }
        let lane = Lane {
            engine: EngineSlot::new(key.to_string()),
            scheduler: Scheduler::new(self.items.current()),
        };
        if self.stored_models.iter().any(|m| m == key) {
            self.lanes.push(lane);
            self.shared.want(&self.cfg.models, key, &self.cfg.engine);
        } else {
            let entry = self.cfg.models.get(key).map_err(|e| e.to_string())?;
            if !entry.path(&models_dir()).exists() {
                return Err(format!("not present (hyst-tui models fetch {key})"));
            }
            self.lanes.push(lane);
            let i = self.lanes.len() - 1;
            self.start_engine(i, key);
        }
        self.after_models_changed();
        Ok(())
    }

    pub(super) fn remove_compared(&mut self, i: usize) {
        if i == 0 || i >= self.lanes.len() {
            return;
        }
        let mut lane = self.lanes.remove(i);
        lane.engine.shut_down();
        self.items.forget_compared(self.lanes.len() - 1);
        self.after_models_changed();
    }

    pub(super) fn after_models_changed(&mut self) {
        self.sweep_done = false;
        self.refresh_items();
        self.schedule();
    }

    /// `a` in the Dialogue: the shown model's greedy continuation of the step's conversation
    /// (kept for the session); `a` while it runs stops it.
    pub(super) fn toggle_generation(&mut self) {
        let Some(item) = self.current() else { return };
        let part = self.current_part();
        // The dialogue as shown: the step's what-if version when it has one.
        let Some(msgs) = self.shown_messages(item, part) else {
            self.notice = Some("this step's conversation waits for an earlier letter".into());
            return;
        };
        let model = self.model_key().to_string();
        match self.gens.get(&model, &msgs) {
            Some(GenState::Running) => {
                self.gens.cancel(&model, &msgs);
                self.notice = Some("generation stopped".into());
            }
            Some(GenState::Done(_)) => self.notice = Some("generated already (greedy: the same every time)".into()),
            _ => match self.lanes[0].engine.ready() {
                Some(e) => self.gens.start(e, &model, &msgs),
                None if self.lanes[0].engine.loading() => {
                    self.gens.queue(&model, &msgs);
                    self.notice = Some("generating once the model has loaded…".into());
                }
                None => self.notice = Some(format!("no model loaded to generate with ({} loads one)", key_for(Action::OpenModels))),
            },
        }
    }

    /// Asks the shown model's engine for the score of the current step's what-if edit (nothing
    /// when it is scored, being scored, or there is none).
    /// Scores the current item's what-if versions on the shown model: the current step's
    /// first, then every other step's (the Trace and the edits list show them all).
    pub(super) fn request_whatif(&mut self) {
        let Some(item) = self.current() else { return };
        let Some(letters) = self.entry(item).map(|e| e.item.letters()) else { return };
        let current = self.current_part();
        let mut versions: Vec<(Part, Vec<ChatMessage>)> =
            self.whatifs.edited_steps(item).into_iter().map(|(p, v)| (p, v.messages.clone())).collect();
        versions.sort_by_key(|(p, _)| *p != current);
        let model = self.model_key().to_string();
        let Some(e) = self.lanes[0].engine.ready() else { return };
        for (_, msgs) in versions {
            self.whatifs.request(e, &model, &msgs, letters.clone());
        }
    }

    /// Loads a model in lane `i` on a background thread; the UI stays usable meanwhile.
    pub(super) fn start_engine(&mut self, i: usize, key: &str) {
        let opts = self.cfg.engine.clone();
        let lane = &mut self.lanes[i];
        if lane.engine.start(&self.cfg.models, key, opts, self.cfg.batch.allow_inexact_reuse) {
            lane.scheduler.reset();
            if i == 0 {
                self.gens.forget_running();
                self.whatifs.forget_running();
                // The letters of another model would mix into the ramp being built.
                self.retarget = None;
            }
        }
        self.shared.want(&self.cfg.models, key, &self.cfg.engine);
        self.sweep_done = false;
    }

    /// After any move: a new current item starts a new generation in every lane (pending
    /// requests for the old one are cancelled, late results dropped) and its parts are
    /// requested first.
    pub(super) fn sync_focus(&mut self) {
        let current = self.items.current();
        let mut changed = false;
        for lane in &mut self.lanes {
            let engine = lane.engine.ready().map(|e| e as &dyn Submit);
            changed |= lane.scheduler.refocus(current, engine);
        }
        if changed {
            self.dialogue_scroll = 0;
            self.msg_cursor = None;
            self.schedule();
        }
    }

    /// Looks up in the shared store, then submits, what is ready to be scored, for every model
    /// (see [`Scheduler::schedule`]). Nothing is sent to a model's engine while the store or
    /// the model's identity is still being worked out.
    pub(super) fn schedule(&mut self) {
        let hits = self.shared.hits();
        for lane in &mut self.lanes {
            let model = lane.engine.model_key().to_string();
            let mut access = self.shared.access(&model);
            let (engine, lookup) = match &mut access {
                Access::Off => (lane.engine.ready(), None),
                Access::Wait => (None, None),
                Access::Ready(l) => (lane.engine.ready(), Some(l)),
            };
            if engine.is_none() && lookup.is_none() {
                continue;
            }
            let scope = Scope {
                engine: engine.map(|e| e as &dyn Submit),
                model: &model,
                builder: Builder::new(&self.cfg.prompts),
                items: &self.items,
                steps: &self.steps,
                prefetch: self.cfg.options.prefetch,
                prefetch_window: self.cfg.options.prefetch_window,
            };
            lane.scheduler.schedule(&scope, &mut self.scores, lookup);
        }
        if self.shared.hits() != hits && self.items.sort().by_score() {
            self.refresh_items_keep_sweep();
        }
    }

    /// Looks the ramps of the whole list up in the shared store, a slice per frame, for every
    /// model, until all are looked up (again after the store or the models change).
    pub(super) fn sweep_store(&mut self) {
        if self.shared.take_dirty() {
            self.sweep_done = false;
        }
        if self.sweep_done || !self.shared.enabled() {
            return;
        }
        let deadline = Instant::now() + Duration::from_millis(15);
        let hits = self.shared.hits();
        let mut done = true;
        for lane in &self.lanes {
            let model = lane.engine.model_key().to_string();
            match self.shared.access(&model) {
                Access::Ready(mut l) => {
                    let scope = Scope {
                        engine: None,
                        model: &model,
                        builder: Builder::new(&self.cfg.prompts),
                        items: &self.items,
                        steps: &self.steps,
                        prefetch: false,
                        prefetch_window: 0,
                    };
                    done &= scheduler::sweep_store(&scope, &mut self.scores, &mut l, deadline);
                }
                Access::Wait => done = false,
                Access::Off => {}
            }
        }
        self.sweep_done = done;
        if self.shared.hits() != hits && self.items.sort().by_score() {
            self.refresh_items_keep_sweep();
        }
    }

    /// Processes arrived results, engine loads, the shared store and batch events; refreshes
    /// derived state. Call once per frame.
    pub fn update(&mut self) {
        if let Some(e) = self.lanes[0].engine.ready() {
            self.gens.send_queued(e, self.lanes[0].engine.model_key());
        }
        self.gens.poll();
        self.whatifs.poll();
        self.update_whatif_notice();
        self.advance_retarget();
        self.request_whatif();
        for i in 0..self.lanes.len() {
            if let Some(key) = self.lanes[i].engine.poll() {
                self.notice = Some(format!("model {key} loaded"));
                self.lanes[i].scheduler.reset();
            }
            let results = self.lanes[i].scheduler.poll();
            self.absorb(i, results);
            self.lanes[i].engine.sample_rate();
        }
        if let Some(n) = self.shared.poll() {
            self.notice = Some(n);
        }
        self.sweep_store();
        if let Some(n) = self.shared.flush() {
            self.notice = Some(n);
        }
        self.poll_batch();
        if self.view == View::Tables {
            self.tables.refresh(false);
            self.runs.refresh(false);
        }
        self.schedule();
        self.refresh_rows();
    }

    /// Takes in lane `i`'s results; computed scores are also kept for the shared store.
    pub(super) fn absorb(&mut self, i: usize, results: Vec<Answer>) {
        if results.is_empty() {
            return;
        }
        let model = self.lanes[i].engine.model_key().to_string();
        let builder = Builder::new(&self.cfg.prompts);
        for (t, r) in results {
            let Some(e) = self.items.entry(t.item) else { continue };
            let id = &e.item.id;
            match r {
                Ok(JobOutput::Score(s)) => {
                    if self.shared.enabled() {
                        let d = DialogueItem::from(e);
                        if let Some(msgs) = self.scores.messages(&builder, &model, &d, t.part) {
                            let letters: String = d.item.letters().iter().collect();
                            self.shared.record(&model, &msgs, &letters, &s);
                        }
                    }
                    self.scores.insert(&model, id, t.part, *s)
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::warn!("scoring {id} {:?} with {model}: {err}", t.part);
                    self.scores.insert_error(&model, id, t.part, err.to_string());
                }
            }
        }
        if self.items.sort().by_score() {
            self.refresh_items_keep_sweep();
        }
        self.schedule();
    }

    /// Something still loads: a model, the shared store or a model's identity, or the list's
    /// lookups in the store.
    pub(super) fn loading(&self) -> bool {
        self.lanes.iter().any(|l| l.engine.loading()) || self.shared.pending() || (self.shared.enabled() && !self.sweep_done)
    }

    /// Waits until every model has loaded (or failed). Returns false on timeout.
    pub fn wait_loaded(&mut self, timeout: Duration) -> bool {
        let t0 = Instant::now();
        loop {
            self.update();
            if !self.lanes.iter().any(|l| l.engine.loading()) {
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
            if self.loading() {
                std::thread::sleep(Duration::from_millis(30));
            } else {
                self.schedule();
                if self.lanes.iter().all(|l| l.scheduler.pending() == 0) {
                    // What the last results recorded goes to the shared store now.
                    if let Some(n) = self.shared.flush() {
                        self.notice = Some(n);
                    }
                    self.refresh_rows();
                    return true;
                }
                let waiting: Vec<usize> = (0..self.lanes.len()).filter(|&i| self.lanes[i].scheduler.pending() > 0).collect();
                let each = Duration::from_millis((50 / waiting.len().max(1)) as u64);
                for i in waiting {
                    let r = self.lanes[i].scheduler.wait(each);
                    self.absorb(i, r);
                }
            }
            if t0.elapsed() > timeout {
                return false;
            }
        }
    }
}
