//! The engine-facing part of the explorer: one engine slot and scheduler per shown model (the
//! shown one first, then the compared ones — a stored run's models without an engine), the
//! item scores they fill, the link to the shared score store, the generations of
//! `a`, and the stored run's models. It loads and compares models, looks up and submits what is
//! to be scored, takes in the engines' and the store's answers, and returns [`Event`]s (a
//! notice, scores changed, a model loaded, the models changed) for the app to route; nothing
//! here writes what the screen shows.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::action::Action;
use super::engine_slot::{EngineSlot, EngineState};
use super::event::Event;
use super::generations::{GenState, Generations};
use super::lenses::{LensState, Lenses};
use crate::batch::steered::Steerings;
use crate::engine::inside::Steering;
use super::item_list::ItemList;
use super::jobs::Submit;
use super::keymap::key_for;
use super::parts::Part;
use super::scheduler::{self, Answer, Scheduler, Scope};
use super::item_scores::ItemScores;
use super::shared_scores::{Access, SharedLink};
use crate::config::{models_dir, ModelsConfig};
use crate::data::Selected;
use crate::dialogue::{Builder, DialogueItem};
use crate::engine::{Engine, EngineOptions, JobOutput};
use crate::prompts::PromptSet;
use crate::protocol::{ChatMessage, SlotScore};

/// At most this many models are compared with the shown one.
pub(crate) const MAX_COMPARED: usize = 3;

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

/// What the engines are loaded with.
pub(crate) struct EngineSetup {
    pub(crate) models: ModelsConfig,
    pub(crate) engine: EngineOptions,
    pub(crate) allow_inexact_reuse: bool,
    /// The steered operations of the experiment files (scored through the read-out probe).
    pub(crate) steerings: crate::batch::steered::Steerings,
}

/// What the schedulers read: the item list (the current item first, then the prefetch
/// window), the steps and the prompts.
pub(crate) struct Focus<'a> {
    pub(crate) items: &'a ItemList,
    pub(crate) steps: &'a [Part],
    pub(crate) prompts: &'a PromptSet,
    /// Score other items in the background, the first `prefetch_window` of the list (0 = all).
    pub(crate) prefetch: bool,
    pub(crate) prefetch_window: usize,
}

impl Focus<'_> {
    fn scope<'a>(&'a self, engine: Option<&'a dyn Submit>, model: &'a str, prefetch: bool, steerings: &'a Steerings) -> Scope<'a> {
        Scope {
            engine,
            steerings,
            model,
            builder: Builder::new(self.prompts),
            items: self.items,
            steps: self.steps,
            prefetch: prefetch && self.prefetch,
            prefetch_window: if prefetch { self.prefetch_window } else { 0 },
        }
    }
}

/// One model's engine and scheduler.
struct ModelEngine {
    engine: EngineSlot,
    scheduler: Scheduler,
}

pub(crate) struct Engines {
    setup: EngineSetup,
    /// The shown model first, then the compared ones.
    engines: Vec<ModelEngine>,
    scores: ItemScores,
    shared: SharedLink,
    /// Every list item's ramp has been looked up in the shared store (since it last changed).
    sweep_done: bool,
    /// The models of the stored run (empty without one).
    stored_models: Vec<String>,
    /// Greedy continuations asked for with `a` (per model and context).
    gens: Generations,
    lenses: Lenses,
}

impl Engines {
    /// The engines of the shown model `model_key` (nothing loaded yet), with the scores and models
    /// of a stored run, and the shared score store at `score_store`.
    pub(crate) fn new(setup: EngineSetup, model_key: String, focus: Option<usize>, scores: ItemScores, score_store: Option<PathBuf>, stored_models: Vec<String>) -> Engines {
        Engines {
            setup,
            engines: vec![ModelEngine { engine: EngineSlot::new(model_key), scheduler: Scheduler::new(focus) }],
            scores,
            shared: SharedLink::new(score_store),
            sweep_done: false,
            stored_models,
            gens: Generations::default(),
            lenses: Lenses::default(),
        }
    }

    /// Loads the shown model (without a stored run), or only asks the shared store about it.
    pub(crate) fn start(&mut self, load: bool) -> Vec<Event> {
        let key = self.model_key().to_string();
        if load {
            self.start_engine(0, &key)
        } else {
            self.shared.want(&self.setup.models, &key, &self.setup.engine);
            Vec::new()
        }
    }

    // -----------------------------------------------------------------------------------------
    // Models: the switcher's load and compare
    // -----------------------------------------------------------------------------------------

    /// The models the switcher offers: models.toml's, then the stored run's other models.
    pub(crate) fn model_choices(&self) -> Vec<ModelChoice> {
        let dir = models_dir();
        let mut v: Vec<ModelChoice> = self
            .setup
            .models
            .models
            .iter()
            .map(|m| {
                let stored = self.stored_models.contains(&m.key);
                ModelChoice { key: m.key.clone(), name: m.name.clone(), present: stored || m.path(&dir).exists(), stored, configured: true }
            })
            .collect();
        for k in &self.stored_models {
            if !v.iter().any(|c| &c.key == k) {
                v.push(ModelChoice { key: k.clone(), name: "(stored run)".into(), present: true, stored: true, configured: false });
            }
        }
        v
    }

    /// Enter in the switcher: shows model `m` (loading it in the background, or a stored run's
    /// model from its rows); a compared model stops being compared.
    pub(crate) fn show(&mut self, m: &ModelChoice) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(i) = self.engine_of(&m.key).filter(|&i| i > 0) {
            events.extend(self.remove_compared(i));
        }
        if !m.configured {
            // A stored run's model that models.toml does not have: show its stored scores.
            if m.key != self.model_key() {
                self.engines[0].engine.show_stored(&m.key);
                self.engines[0].scheduler.reset();
                events.extend(self.models_changed());
                events.push(Event::Notice(format!("showing the stored scores of {}", m.key)));
            }
            return events;
        }
        let Ok(entry) = self.setup.models.get(&m.key) else { return events };
        if !entry.path(&models_dir()).exists() {
            events.push(Event::Notice(format!("{} is not present (hyst-tui models fetch {})", m.key, m.key)));
            return events;
        }
        if !self.engines[0].engine.serves(&m.key) {
            events.extend(self.start_engine(0, &m.key));
            events.extend(self.models_changed());
            events.push(Event::Notice(format!("loading model {}…", m.key)));
        }
        events
    }

    /// `c` in the switcher: compares model `m` with the shown one, or stops comparing it.
    pub(crate) fn toggle_compare(&mut self, m: &ModelChoice, focus: Option<usize>) -> Vec<Event> {
        match self.engine_of(&m.key) {
            Some(0) => vec![Event::Notice(format!("{} is the shown model ({} switches to another)", m.key, key_for(Action::LoadSelectedModel)))],
            Some(i) => {
                let mut events = self.remove_compared(i);
                events.push(Event::Notice(format!("{} is no longer compared", m.key)));
                events
            }
            None => match self.add_compared(&m.key, focus) {
                Ok(mut events) => {
                    let how = if m.stored { "its stored rows" } else { "loading…" };
                    events.push(Event::Notice(format!("comparing with {} ({how})", m.key)));
                    events
                }
                Err(e) => vec![Event::Notice(format!("{}: {e}", m.key))],
            },
        }
    }

    /// The engine of a model (0 = the shown one).
    pub(crate) fn engine_of(&self, key: &str) -> Option<usize> {
        self.engines.iter().position(|l| l.engine.model_key() == key)
    }

    /// Compares `key` with the shown model: a stored run's model from its rows, any other from
    /// its own engine, loaded in the background.
    pub(crate) fn add_compared(&mut self, key: &str, focus: Option<usize>) -> Result<Vec<Event>, String> {
        if self.engine_of(key) == Some(0) {
            return Err("it is the shown model".into());
        }
        if self.engine_of(key).is_some() {
            return Err("it is compared already".into());
        }
        if self.engines.len() > MAX_COMPARED {
            return Err(format!("at most {MAX_COMPARED} models are compared ({} on one removes it)", key_for(Action::ToggleCompareSelected)));
        }
        let model_engine = ModelEngine { engine: EngineSlot::new(key.to_string()), scheduler: Scheduler::new(focus) };
        let mut events = Vec::new();
        if self.stored_models.iter().any(|m| m == key) {
            self.engines.push(model_engine);
            self.shared.want(&self.setup.models, key, &self.setup.engine);
        } else {
            let entry = self.setup.models.get(key).map_err(|e| e.to_string())?;
            if !entry.path(&models_dir()).exists() {
                return Err(format!("not present (hyst-tui models fetch {key})"));
            }
            self.engines.push(model_engine);
            let i = self.engines.len() - 1;
            events.extend(self.start_engine(i, key));
        }
        events.extend(self.models_changed());
        Ok(events)
    }

    fn remove_compared(&mut self, i: usize) -> Vec<Event> {
        if i == 0 || i >= self.engines.len() {
            return Vec::new();
        }
        let mut model_engine = self.engines.remove(i);
        model_engine.engine.shut_down();
        let mut events = vec![Event::CompareRemoved(self.engines.len() - 1)];
        events.extend(self.models_changed());
        events
    }

    fn models_changed(&mut self) -> Vec<Event> {
        self.sweep_done = false;
        vec![Event::ModelsChanged]
    }

    /// Loads a model in engine `i` on a background thread; the UI stays usable meanwhile.
    fn start_engine(&mut self, i: usize, key: &str) -> Vec<Event> {
        let mut events = Vec::new();
        let model_engine = &mut self.engines[i];
        if model_engine.engine.start(&self.setup.models, key, self.setup.engine.clone(), self.setup.allow_inexact_reuse) {
            model_engine.scheduler.reset();
            if i == 0 {
                self.gens.forget_running();
                self.lenses.forget_running();
                events.push(Event::ShownEngineRestarted);
            }
        }
        self.shared.want(&self.setup.models, key, &self.setup.engine);
        self.sweep_done = false;
        events
    }

    // -----------------------------------------------------------------------------------------
    // Scheduling and the answers
    // -----------------------------------------------------------------------------------------

    /// A new current item starts a new generation in every model's engine (pending requests for the old
    /// one are cancelled, late results dropped); true when it did.
    pub(crate) fn refocus(&mut self, current: Option<usize>) -> bool {
        let mut changed = false;
        for model_engine in &mut self.engines {
            let engine = model_engine.engine.ready().map(|e| e as &dyn Submit);
            changed |= model_engine.scheduler.refocus(current, engine);
        }
        changed
    }

    /// The list changed (a filter showed other items): its ramps are looked up in the store
    /// again.
    pub(crate) fn list_changed(&mut self) {
        self.sweep_done = false;
    }

    /// Looks up in the shared store, then submits, what is ready to be scored, for every model
    /// (see [`Scheduler::schedule`]). Nothing is sent to a model's engine while the store or
    /// the model's identity is still being worked out.
    pub(crate) fn schedule(&mut self, f: &Focus) -> Vec<Event> {
        let hits = self.shared.hits();
        for model_engine in &mut self.engines {
            let model = model_engine.engine.model_key().to_string();
            let mut access = self.shared.access(&model);
            let (engine, lookup) = match &mut access {
                Access::Off => (model_engine.engine.ready(), None),
                Access::Wait => (None, None),
                Access::Ready(l) => (model_engine.engine.ready(), Some(l)),
            };
            if engine.is_none() && lookup.is_none() {
                continue;
            }
            let scope = f.scope(engine.map(|e| e as &dyn Submit), &model, true, &self.setup.steerings);
            model_engine.scheduler.schedule(&scope, &mut self.scores, lookup);
        }
        self.found_in_store(hits)
    }

    /// Scores changed when the store gave any since `hits`.
    fn found_in_store(&self, hits: usize) -> Vec<Event> {
        if self.shared.hits() != hits {
            vec![Event::ScoresChanged]
        } else {
            Vec::new()
        }
    }

    /// Looks the ramps of the whole list up in the shared store, a slice per frame, for every
    /// model, until all are looked up (again after the store or the models change).
    fn sweep_store(&mut self, f: &Focus) -> Vec<Event> {
        if self.shared.take_dirty() {
            self.sweep_done = false;
        }
        if self.sweep_done || !self.shared.enabled() {
            return Vec::new();
        }
        let deadline = Instant::now() + Duration::from_millis(15);
        let hits = self.shared.hits();
        let mut done = true;
        for model_engine in &self.engines {
            let model = model_engine.engine.model_key().to_string();
            match self.shared.access(&model) {
                Access::Ready(mut l) => {
                    let scope = f.scope(None, &model, false, &self.setup.steerings);
                    done &= scheduler::sweep_store(&scope, &mut self.scores, &mut l, deadline);
                }
                Access::Wait => done = false,
                Access::Off => {}
            }
        }
        self.sweep_done = done;
        self.found_in_store(hits)
    }

    /// Takes in what has arrived: generations, engine loads, results, the shared store's
    /// answers; looks the list up in the store and writes what was computed to it. Once a
    /// frame (the app schedules after it).
    pub(crate) fn poll(&mut self, f: &Focus) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(e) = self.engines[0].engine.ready() {
            self.gens.send_queued(e, self.engines[0].engine.model_key());
        }
        self.gens.poll();
        self.lenses.poll();
        for i in 0..self.engines.len() {
            if let Some(key) = self.engines[i].engine.poll() {
                events.push(Event::ModelLoaded(key));
                self.engines[i].scheduler.reset();
            }
            let results = self.engines[i].scheduler.poll();
            events.extend(self.absorb(i, results, f));
            self.engines[i].engine.sample_rate();
        }
        if let Some(n) = self.shared.poll() {
            events.push(Event::Notice(n));
        }
        events.extend(self.sweep_store(f));
        events.extend(self.flush());
        events
    }

    /// Waits up to `timeout` for the results of the engines that still wait for some.
    pub(crate) fn wait(&mut self, timeout: Duration, f: &Focus) -> Vec<Event> {
        let waiting: Vec<usize> = (0..self.engines.len()).filter(|&i| self.engines[i].scheduler.pending() > 0).collect();
        let each = timeout / waiting.len().max(1) as u32;
        let mut events = Vec::new();
        for i in waiting {
            let r = self.engines[i].scheduler.wait(each);
            events.extend(self.absorb(i, r, f));
        }
        events
    }

    /// Writes what the last results recorded to the shared store.
    pub(crate) fn flush(&mut self) -> Vec<Event> {
        self.shared.flush().map(Event::Notice).into_iter().collect()
    }

    /// Takes in engine `i`'s results; computed scores are also kept for the shared store.
    fn absorb(&mut self, i: usize, results: Vec<Answer>, f: &Focus) -> Vec<Event> {
        if results.is_empty() {
            return Vec::new();
        }
        let model = self.engines[i].engine.model_key().to_string();
        let builder = Builder::new(f.prompts);
        for (t, r) in results {
            let Some(e) = f.items.entry(t.item) else { continue };
            let id = &e.item.id;
            match r {
                // A steered operation's score: never recorded in the shared store under its
                // unsteered context.
                Ok(JobOutput::Inspected(x)) => self.scores.insert(&model, id, t.part, x.score),
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
        vec![Event::ScoresChanged]
    }

    // -----------------------------------------------------------------------------------------
    // Generations (`a`)
    // -----------------------------------------------------------------------------------------

    /// The shown model's greedy continuation of `msgs` (the step's dialogue as shown); asked
    /// again while it runs, it stops.
    pub(crate) fn toggle_generation(&mut self, msgs: &[ChatMessage]) -> Vec<Event> {
        let model = self.model_key().to_string();
        let notice = match self.gens.get(&model, msgs) {
            Some(GenState::Running) => {
                self.gens.cancel(&model, msgs);
                "generation stopped".to_string()
            }
            Some(GenState::Done(_)) => "generated already (greedy: the same every time)".to_string(),
            _ => match self.engines[0].engine.ready() {
                Some(e) => {
                    self.gens.start(e, &model, msgs);
                    return Vec::new();
                }
                None if self.engines[0].engine.loading() => {
                    self.gens.queue(&model, msgs);
                    "generating once the model has loaded…".to_string()
                }
                None => format!("no model loaded to generate with ({} loads one)", key_for(Action::OpenModels)),
            },
        };
        vec![Event::Notice(notice)]
    }

    /// Asks the shown model's engine for the letter lens of each context (`(messages,
    /// steering)`) not asked yet; a notice when no engine is ready.
    pub(crate) fn request_lenses(&mut self, contexts: &[(Vec<ChatMessage>, Option<Steering>)], letters: &[char]) -> Vec<Event> {
        let model = self.model_key().to_string();
        match self.engines[0].engine.ready() {
            Some(e) => {
                for (msgs, steering) in contexts {
                    self.lenses.request(e, &model, msgs, letters, steering.as_ref());
                }
                Vec::new()
            }
            None if self.engines[0].engine.loading() => vec![Event::Notice("the lens needs the model: it is still loading (press again once it has)".into())],
            None => vec![Event::Notice(format!("the lens needs the model in-process ({} loads one)", key_for(Action::OpenModels)))],
        }
    }

    /// The shown model's lens of a context, asked for or done.
    pub(crate) fn lens(&self, msgs: &[ChatMessage], steering: Option<&Steering>) -> Option<&LensState> {
        self.lenses.get(self.model_key(), msgs, steering)
    }

    /// The shown model's continuation of `msgs`, asked for or done.
    pub(crate) fn generation(&self, msgs: &[ChatMessage]) -> Option<&GenState> {
        self.gens.get(self.model_key(), msgs)
    }

    // -----------------------------------------------------------------------------------------
    // What the others read
    // -----------------------------------------------------------------------------------------

    /// Stops every engine without waiting for it.
    pub(crate) fn shut_down(&mut self) {
        for model_engine in &mut self.engines {
            model_engine.engine.shut_down();
        }
    }

    /// Something still loads: a model, the shared store or a model's identity, or the list's
    /// lookups in the store.
    pub(crate) fn loading(&self) -> bool {
        self.engines_loading() || self.shared.pending() || (self.shared.enabled() && !self.sweep_done)
    }
    pub(crate) fn engines_loading(&self) -> bool {
        self.engines.iter().any(|l| l.engine.loading())
    }
    /// Some model has requests waiting, or a generation runs.
    pub(crate) fn busy(&self) -> bool {
        self.engines.iter().any(|l| l.scheduler.pending_all() > 0) || self.gens.busy() || self.lenses.busy()
    }
    /// Every engine's current generation is scored.
    pub(crate) fn idle(&self) -> bool {
        self.engines.iter().all(|l| l.scheduler.pending() == 0)
    }
    pub(crate) fn generating(&self) -> bool {
        self.gens.busy()
    }
    /// A lens read-out is in flight.
    pub(crate) fn reading_out(&self) -> bool {
        self.lenses.busy()
    }

    pub(crate) fn scores(&self) -> &ItemScores {
        &self.scores
    }
    /// The model whose scores are shown.
    /// The steering of a steering operation's step (`None` for any other step).
    pub(crate) fn steering_of(&self, part: Part) -> Option<Steering> {
        match part {
            Part::Op(k) => self.setup.steerings.get(k).map(|op| op.steering.clone()),
            _ => None,
        }
    }
    pub(crate) fn model_key(&self) -> &str {
        self.engines[0].engine.model_key()
    }
    /// The shown model, then the compared ones.
    pub(crate) fn shown_models(&self) -> Vec<&str> {
        self.engines.iter().map(|l| l.engine.model_key()).collect()
    }
    pub(crate) fn engine_ready(&self) -> Option<&Engine> {
        self.engines[0].engine.ready()
    }
    pub(crate) fn engine_state(&self) -> &EngineState {
        self.engines[0].engine.state()
    }
    /// The engine state of the `i`-th shown model (0 = the shown one).
    pub(crate) fn model_state(&self, i: usize) -> Option<&EngineState> {
        self.engines.get(i).map(|l| l.engine.state())
    }
    /// Requests of the `i`-th model still waiting (any generation).
    pub(crate) fn model_pending(&self, i: usize) -> usize {
        self.engines.get(i).map_or(0, |l| l.scheduler.pending_all())
    }
    /// Requests of the shown model's current generation still waiting.
    pub(crate) fn jobs_pending(&self) -> usize {
        self.engines[0].scheduler.pending()
    }
    pub(crate) fn jobs_submitted(&self) -> u64 {
        self.engines.iter().map(|l| l.scheduler.submitted()).sum()
    }
    pub(crate) fn stale_results_dropped(&self) -> u64 {
        self.engines.iter().map(|l| l.scheduler.stale_dropped()).sum()
    }
    pub(crate) fn in_flight(&self, item: usize, part: Part) -> bool {
        self.engines[0].scheduler.in_flight(item, part)
    }
    pub(crate) fn tokens_per_s(&self) -> Option<f64> {
        self.engines[0].engine.tokens_per_s()
    }
    pub(crate) fn reuse_note(&self) -> Option<&str> {
        self.engines[0].engine.reuse_note()
    }
    pub(crate) fn shared(&self) -> &SharedLink {
        &self.shared
    }

    /// A model's score of a part of `e`.
    pub(crate) fn score_of(&self, model: &str, e: &Selected, part: Part) -> Option<&SlotScore> {
        self.scores.get(model, &e.item.id, part)
    }
    /// The messages of a part of `e` for the shown model (None while an earlier letter is
    /// missing).
    pub(crate) fn messages(&self, prompts: &PromptSet, e: &Selected, part: Part) -> Option<Vec<ChatMessage>> {
        self.scores.messages(&Builder::new(prompts), self.model_key(), &DialogueItem::from(e), part)
    }
}
