//! What to ask the engine next. The current item's parts go first, each as soon as the model's
//! earlier letters it needs are known; when the current item has nothing in flight, the ramps
//! of the next items of the list are scored in the background. A part whose messages are
//! identical to an earlier part's (a twin) is never sent: it shares that part's score.
//! Requests go through the generational [`JobQueue`]: moving to another item starts a new
//! generation, so pending requests for the old one are cancelled and late results dropped.

use std::time::Duration;

use super::item_list::ItemList;
use super::jobs::{JobQueue, Submit};
use super::model::{ramp_parts, Part};
use super::score_store::ScoreStore;
use crate::dialogue::{Builder, DialogueItem};
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
    pub(crate) engine: &'a dyn Submit,
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
}

impl Scheduler {
    pub(crate) fn new(focus: Option<usize>) -> Scheduler {
        Scheduler { queue: JobQueue::new(), focus }
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
    /// flight) the ramp of the next unfinished item of the list.
    pub(crate) fn schedule(&mut self, s: &Scope, scores: &mut ScoreStore) {
        if let Some(f) = self.focus {
            self.schedule_item(s, scores, f, s.steps);
        }
        if s.prefetch && self.queue.pending() == 0 {
            let ramp = ramp_parts();
            for idx in prefetch_order(s) {
                let Some(e) = s.items.entry(idx) else { continue };
                if !ramp.iter().all(|&p| scores.settled(s.model, &e.item.id, p)) {
                    self.schedule_item(s, scores, idx, &ramp);
                    if self.queue.pending() > 0 {
                        break;
                    }
                }
            }
        }
    }

    fn schedule_item(&mut self, s: &Scope, scores: &mut ScoreStore, item: usize, parts: &[Part]) {
        let Some(e) = s.items.entry(item) else { return };
        let d = DialogueItem::from(e);
        let id = &d.item.id;
        let letters: Vec<char> = d.item.letters();
        for &part in parts {
            if scores.settled(s.model, id, part) || self.in_flight(item, part) {
                continue;
            }
            let Some(msgs) = scores.messages(&s.builder, s.model, &d, part) else { continue };
            if let Some(src) = scores.twin(&s.builder, s.model, &d, part, &msgs, s.steps) {
                scores.share(s.model, id, src, part);
                continue;
            }
            let job = Job::Score { messages: msgs, letters: letters.clone() };
            self.queue.submit(s.engine, Ticket { item, part }, job);
        }
    }
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
