//! Unit tests of the generation rule of the job queue, against a scripted engine that behaves
//! like the real one (jobs run in order; `cancel_pending` answers not-yet-started jobs with
//! `Cancelled`).

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::mpsc::Sender;

use super::jobs::{JobQueue, Submit};
use crate::engine::{EngineError, Job, JobOutput, JobResult};

#[derive(Default)]
struct Scripted {
    next: Cell<u64>,
    cancel_below: Cell<u64>,
    waiting: RefCell<VecDeque<(u64, Sender<JobResult>)>>,
    /// The job the "worker" has taken but not answered yet.
    running: RefCell<Option<(u64, Sender<JobResult>)>>,
}

impl Submit for Scripted {
    fn submit(&self, _job: Job, reply: Sender<JobResult>) -> u64 {
        let id = self.next.get() + 1;
        self.next.set(id);
        self.waiting.borrow_mut().push_back((id, reply));
        id
    }
    fn cancel_pending(&self) {
        self.cancel_below.set(self.next.get() + 1);
    }
}

impl Scripted {
    /// The worker takes the next job (a cancelled one is answered at once, like the engine).
    fn start_next(&self) -> Option<u64> {
        loop {
            let (id, tx) = self.waiting.borrow_mut().pop_front()?;
            if id < self.cancel_below.get() {
                let _ = tx.send(JobResult { id, output: Err(EngineError::Cancelled) });
                continue;
            }
            *self.running.borrow_mut() = Some((id, tx));
            return Some(id);
        }
    }
    fn finish_running(&self) {
        if let Some((id, tx)) = self.running.borrow_mut().take() {
            let _ = tx.send(JobResult { id, output: Ok(JobOutput::Done) });
        }
    }
    fn run_all(&self) {
        self.finish_running();
        while self.start_next().is_some() {
            self.finish_running();
        }
    }
}

fn job() -> Job {
    Job::ClearCache
}

#[test]
fn stale_result_is_dropped() {
    let e = Scripted::default();
    let mut q: JobQueue<&str> = JobQueue::new();
    q.submit(&e, "item-a", job());
    assert!(q.in_flight(&"item-a"));
    // The worker starts on item a; meanwhile the user moves to item b.
    e.start_next();
    let g = q.replace(Some(&e));
    assert_eq!(g, 2, "the queue starts at generation 1");
    assert!(!q.in_flight(&"item-a"), "a request of an old generation is not in flight any more");
    q.submit(&e, "item-b", job());
    // a's result arrives (it was already running): dropped, never handed out.
    e.finish_running();
    assert!(q.poll().is_empty());
    assert_eq!(q.stale_dropped, 1);
    e.run_all();
    let got: Vec<&str> = q.poll().into_iter().map(|(k, r)| {
        assert!(r.is_ok());
        k
    }).collect();
    assert_eq!(got, vec!["item-b"]);
    assert_eq!(q.pending(), 0);
    assert_eq!(q.pending_all(), 0);
}

#[test]
fn newer_request_replaces_pending_older_ones() {
    let e = Scripted::default();
    let mut q: JobQueue<(u32, u32)> = JobQueue::new();
    for step in 0..3 {
        q.submit(&e, (1, step), job());
    }
    assert_eq!(q.pending(), 3);
    q.replace(Some(&e));
    assert_eq!(q.pending(), 0);
    assert_eq!(q.pending_all(), 3);
    q.submit(&e, (2, 0), job());
    assert_eq!(q.pending(), 1);
    e.run_all();
    let got = q.poll();
    // The three older jobs never ran: the engine answered them `Cancelled`, and they were dropped.
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, (2, 0));
    assert!(matches!(got[0].1, Ok(JobOutput::Done)));
    assert_eq!(q.stale_dropped, 3);
    assert_eq!(q.pending_all(), 0);
}

#[test]
fn results_of_the_current_generation_arrive_in_order() {
    let e = Scripted::default();
    let mut q: JobQueue<u32> = JobQueue::new();
    for k in 0..4 {
        q.submit(&e, k, job());
    }
    e.run_all();
    let got: Vec<u32> = q.poll().into_iter().map(|x| x.0).collect();
    assert_eq!(got, vec![0, 1, 2, 3]);
    assert_eq!(q.stale_dropped, 0);
}

#[test]
fn reset_forgets_the_old_engine() {
    let old = Scripted::default();
    let mut q: JobQueue<u32> = JobQueue::new();
    q.submit(&old, 7, job());
    q.reset();
    // The old engine's answer goes to a channel nobody reads.
    old.run_all();
    assert!(q.poll().is_empty());
    assert_eq!(q.pending_all(), 0);
    let new = Scripted::default();
    q.submit(&new, 8, job());
    new.run_all();
    assert_eq!(q.poll().into_iter().map(|x| x.0).collect::<Vec<_>>(), vec![8]);
}

#[test]
fn every_view_is_a_screen_with_a_unique_name() {
    use super::{Screen, View};
    let all = Screen::all();
    for v in View::ALL {
        assert!(all.contains(&Screen::View(v)), "{v:?}");
    }
    let mut names: Vec<&str> = all.iter().map(|s| s.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert_eq!(Screen::View(View::Slot).aliases(), &["answer-slot"]);
}
