//! What to ask the engine next, for one model (each compared model has its own scheduler and
//! engine, under the same rules). The current item's parts go first, each as soon as the
//! model's earlier letters it needs are known; when the current item has nothing in flight, the
//! ramps of the next items of the list are scored in the background. A part whose messages are
//! identical to an earlier part's (a twin) is never sent: it shares that part's score; nor is a
//! part whose context the shared score store holds: it takes the stored score. Requests go
//! through the generational [`JobQueue`]: moving to another item starts a new generation, so
//! pending requests for the old one are cancelled and late results dropped.

use std::time::{Duration, Instant};

use super::item_list::ItemList;
use super::jobs::{JobQueue, Submit};
use super::parts::{ramp_parts, Part};
use super::item_scores::ItemScores;
use super::shared_scores::Lookup;
use crate::dialogue::{Builder, DialogueItem};
use crate::engine::inside::InspectOptions;
use crate::engine::{EngineError, Job, JobOutput};

/// One request of the UI: a part of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ticket {
    pub(crate) item: usize,
    pub(crate) part: Part,
}

pub(crate) type Answer = (Ticket, Result<JobOutput, EngineError>);

/// Everything a round of scheduling reads.
pub(crate) struct Scope<'a> {
    /// None: only the shared store is asked (the engine is loading, or must wait for the store).
    pub(crate) engine: Option<&'a dyn Submit>,
    /// The steered operations (scored through the read-out probe, never shared with a twin or
    /// the shared store).
    pub(crate) steerings: &'a crate::batch::steered::Steerings,
    /// The model whose scores are looked up and stored.
    pub(crate) model: &'a str,
    pub(crate) builder: Builder<'a>,
    pub(crate) items: &'a ItemList,
    /// Every step, in cursor order (twins are looked for among the earlier ones).
    pub(crate) steps: &'a [Part],
    /// Score other items in the background once the current one is done.
    pub(crate) prefetch: bool,
    /// Prefetch only the first N items of the list (0 = all, from the one after the selection).
    pub(crate) prefetch_window: usize,
}

pub(crate) struct Scheduler {
    queue: JobQueue<Ticket>,
    /// The item the current generation is for.
    focus: Option<usize>,
    /// Jobs sent to the engine, ever.
    submitted: u64,
}

impl Scheduler {
    pub(crate) fn new(focus: Option<usize>) -> Scheduler {
        Scheduler { queue: JobQueue::new(), focus, submitted: 0 }
    }

    /// Jobs sent to the engine since the start.
    pub(crate) fn submitted(&self) -> u64 {
        self.submitted
    }

    /// For a new engine: nothing sent to the old one will be taken.
    pub(crate) fn reset(&mut self) {
        self.queue.reset();
    }

    /// After any move: a new current item starts a new generation (the engine's pending jobs
    /// are cancelled, late results dropped). Returns whether the focus changed.
    pub(crate) fn refocus(&mut self, current: Option<usize>, engine: Option<&dyn Submit>) -> bool {
        if current == self.focus {
            return false;
        }
        self.focus = current;
        self.queue.replace(engine);
        true
    }

    pub(crate) fn in_flight(&self, item: usize, part: Part) -> bool {
        self.queue.in_flight(&Ticket { item, part })
    }
    /// Requests of the current generation waiting for the engine.
    pub(crate) fn pending(&self) -> usize {
        self.queue.pending()
    }
    /// Requests of any generation still waiting (older ones will be dropped).
    pub(crate) fn pending_all(&self) -> usize {
        self.queue.pending_all()
    }
    /// Results that arrived for an old generation and were dropped.
    pub(crate) fn stale_dropped(&self) -> u64 {
        self.queue.stale_dropped
    }

    /// Results of the current generation that have arrived.
    pub(crate) fn poll(&mut self) -> Vec<Answer> {
        self.queue.poll()
    }
    /// Like [`poll`](Self::poll), waiting up to `timeout` for the first result.
    pub(crate) fn wait(&mut self, timeout: Duration) -> Vec<Answer> {
        self.queue.wait(timeout)
    }

    /// Submits every part that is ready, the current item first, then (when it has nothing in
    /// flight) the ramp of the next unfinished item of the list. With a `lookup`, a part the
    /// shared store holds takes the stored score instead.
    pub(crate) fn schedule(&mut self, s: &Scope, scores: &mut ItemScores, mut lookup: Option<&mut Lookup>) {
        if let Some(f) = self.focus {
            self.schedule_item(s, scores, lookup.as_deref_mut(), f, s.steps);
        }
        if s.engine.is_some() && s.prefetch && self.queue.pending() == 0 {
            let ramp = ramp_parts();
            for idx in prefetch_order(s) {
                let Some(e) = s.items.entry(idx) else { continue };
                if !ramp.iter().all(|&p| scores.settled(s.model, &e.item.id, p)) {
                    self.schedule_item(s, scores, lookup.as_deref_mut(), idx, &ramp);
                    if self.queue.pending() > 0 {
                        break;
                    }
                }
            }
        }
    }

    fn schedule_item(&mut self, s: &Scope, scores: &mut ItemScores, mut lookup: Option<&mut Lookup>, item: usize, parts: &[Part]) {
        let Some(e) = s.items.entry(item) else { return };
        let d = DialogueItem::from(e);
        let id = &d.item.id;
        let letters: Vec<char> = d.item.letters();
        let letters_s: String = letters.iter().collect();
        for &part in parts {
            if scores.settled(s.model, id, part) || self.in_flight(item, part) {
                continue;
            }
            let Some(msgs) = scores.messages(&s.builder, s.model, &d, part) else { continue };
            let steered = match part {
                Part::Op(k) => s.steerings.get(k),
                _ => None,
            };
            if let Some(op) = steered {
                if !op.scores(&d.item.dataset, id) {
                    scores.insert_error(s.model, id, part, "a training item of its direction (split.json): steering counts on held-out items only".into());
                    continue;
                }
                let Some(engine) = s.engine else { continue };
                let options = InspectOptions { steering: Some(op.steering.clone()), ..Default::default() };
                self.queue.submit(engine, Ticket { item, part }, Job::Inspect { messages: msgs, letters: letters.clone(), options });
                self.submitted += 1;
                continue;
            }
            if scores.is_steered(part) {
                scores.insert_error(s.model, id, part, "its control vector could not be read (see the notice at start)".into());
                continue;
            }
            if let Some(src) = scores.twin(&s.builder, s.model, &d, part, &msgs, s.steps) {
                scores.share(s.model, id, src, part);
                continue;
            }
            if let Some(found) = lookup.as_deref_mut().and_then(|l| l.find(id, part, &msgs, &letters_s)) {
                scores.insert(s.model, id, part, found);
                continue;
            }
            let Some(engine) = s.engine else { continue };
            let job = Job::Score { messages: msgs, letters: letters.clone() };
            self.queue.submit(engine, Ticket { item, part }, job);
            self.submitted += 1;
        }
    }
}

/// Looks the ramps of the listed items up in the shared store (no engine), in list order, until
/// `deadline`. Returns whether every item was reached.
pub(crate) fn sweep_store(s: &Scope, scores: &mut ItemScores, lookup: &mut Lookup, deadline: Instant) -> bool {
    let ramp = ramp_parts();
    for &idx in s.items.visible() {
        if Instant::now() >= deadline {
            return false;
        }
        let Some(e) = s.items.entry(idx) else { continue };
        let id = &e.item.id;
        if ramp.iter().all(|&p| scores.settled(s.model, id, p) || lookup.tried(id, p)) {
            continue;
        }
        let d = DialogueItem::from(e);
        let letters_s: String = d.item.letters().iter().collect();
        for &part in &ramp {
            if scores.settled(s.model, id, part) || lookup.tried(id, part) {
                continue;
            }
            let Some(msgs) = scores.messages(&s.builder, s.model, &d, part) else { continue };
            if let Some(found) = lookup.find(id, part, &msgs, &letters_s) {
                scores.insert(s.model, id, part, found);
            }
        }
    }
    true
}

/// The items to score in the background, in order: the first `prefetch_window` of the list, or
/// (window 0) every item from the one after the selection, wrapping around.
fn prefetch_order(s: &Scope) -> Vec<usize> {
    let v = s.items.visible();
    let n = v.len();
    if n == 0 {
        return vec![];
    }
    if s.prefetch_window > 0 {
        return v.iter().take(s.prefetch_window).copied().collect();
    }
    let sel = s.items.selected_pos();
    (1..=n).filter_map(|k| v.get((sel + k) % n).copied()).collect()
}
