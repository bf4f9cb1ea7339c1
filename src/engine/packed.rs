//! The worker loop of an engine that packs sequences ([`EngineOptions::pack`](super::EngineOptions)):
//! score jobs from every lane are gathered and decoded together, one llama.cpp call for all of
//! them (`session/mod.rs` says why the scores stay bit-identical to one prompt at a time).
//!
//! A lane's thread has at most one job in flight (it waits for each), so jobs of different
//! lanes can be taken in any order. After a score job arrives the loop keeps taking jobs until
//! every lane has one waiting or none arrived for [`GATHER`]; other jobs (rendering,
//! tokenizing) run at once meanwhile, so a lane preparing its next prompt is not held up.

use super::inside::Insides;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use super::session::{Session, Unit};
use super::model::{letter_variants, score_from_logits, Prompter};
use super::{EngineError, EngineStats, Job, JobOutput, JobResult, Prepared, Request};
use crate::protocol::{LetterTokens, SlotScore};

/// How long the loop waits for another lane's job before decoding what it has.
const GATHER: Duration = Duration::from_millis(3);

/// A score job waiting for its prompts to be decoded.
struct Waiting {
    id: u64,
    reply: Sender<JobResult>,
    lane: usize,
    /// A group (its prompts go to forks) or one prompt (on the lane itself).
    group: bool,
    prompts: Vec<Prepared>,
    variants: Vec<LetterTokens>,
    scores: Vec<Option<SlotScore>>,
}

impl Waiting {
    fn finished(&self) -> bool {
        self.scores.iter().all(Option::is_some)
    }

    fn output(self) -> (u64, Sender<JobResult>, Result<JobOutput, EngineError>) {
        let mut scores: Vec<SlotScore> = self.scores.into_iter().flatten().collect();
        let out = if self.group { JobOutput::Scores(scores) } else { JobOutput::Score(Box::new(scores.remove(0))) };
        (self.id, self.reply, Ok(out))
    }
}

/// Runs jobs until the engine shuts down.
pub(super) fn packed_loop(
    rx: Receiver<Request>,
    cancel_below: &AtomicU64,
    stats: &EngineStats,
    session: &mut Session,
    prompter: &mut Prompter,
    insides: &mut Insides,
    top_k: usize,
    publish: &dyn Fn(&Session, &Prompter),
) {
    let mut waiting: Vec<Waiting> = Vec::new();
    loop {
        // Take jobs: block while nothing waits, then gather.
        loop {
            let covered = (0..session.item_lanes).all(|l| waiting.iter().any(|w| w.lane == l));
            let req = if waiting.is_empty() {
                match rx.recv() {
                    Ok(r) => r,
                    Err(_) => return,
                }
            } else if covered {
                match rx.try_recv() {
                    Ok(r) => r,
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                match rx.recv_timeout(GATHER) {
                    Ok(r) => r,
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            let (id, job, reply) = match req {
                Request::Shutdown => return,
                Request::Job { id, job, reply } => (id, job, reply),
            };
            if id < cancel_below.load(Ordering::SeqCst) {
                let _ = reply.send(JobResult { id, output: Err(EngineError::Cancelled) });
                continue;
            }
            let (prompts, letters, lane, group) = match job {
                Job::ScorePrepared { prepared, letters, lane } => (vec![prepared], letters, lane, false),
                Job::ScoreGroup { prompts, letters, lane } => (prompts, letters, lane, true),
                other => {
                    // Anything else runs now, between decode calls.
                    stats.busy.store(true, Ordering::SeqCst);
                    let t0 = Instant::now();
                    let cancelled = || id < cancel_below.load(Ordering::SeqCst);
                    let output = super::run_job(session, prompter, insides, other, top_k, &cancelled);
                    publish(session, prompter);
                    stats.count(&output, t0);
                    let _ = reply.send(JobResult { id, output });
                    continue;
                }
            };
            let checked = letter_variants(prompter, &letters).and_then(|v| {
                if lane >= session.item_lanes {
                    return Err(EngineError::BadInput(format!("lane {lane} of an engine with {} lanes", session.item_lanes)));
                }
                prompts.iter().try_for_each(|p| session.check_fits(&p.tokens)).map(|_| v)
            });
            match checked {
                Err(e) => {
                    let _ = reply.send(JobResult { id, output: Err(e) });
                }
                Ok(_) if prompts.is_empty() => {
                    let _ = reply.send(JobResult { id, output: Ok(JobOutput::Scores(Vec::new())) });
                }
                Ok(variants) => {
                    let scores = vec![None; prompts.len()];
                    waiting.push(Waiting { id, reply, lane, group, prompts, variants, scores });
                }
            }
        }
        if waiting.is_empty() {
            continue;
        }
        stats.busy.store(true, Ordering::SeqCst);
        let t0 = Instant::now();
        let result = decode_call(session, prompter, &mut waiting, top_k);
        publish(session, prompter);
        stats.busy_micros.fetch_add(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
        stats.busy.store(false, Ordering::SeqCst);
        let mut still = Vec::new();
        for w in waiting.drain(..) {
            match &result {
                Err((e, failed)) if failed.contains(&w.id) => {
                    stats.jobs_done.fetch_add(1, Ordering::Relaxed);
                    let _ = w.reply.send(JobResult { id: w.id, output: Err(e.clone()) });
                }
                _ if w.finished() => {
                    let (id, reply, output) = w.output();
                    stats.count_scores(&output);
                    stats.jobs_done.fetch_add(1, Ordering::Relaxed);
                    let _ = reply.send(JobResult { id, output });
                }
                _ => still.push(w),
            }
        }
        waiting = still;
    }
}

/// One packed evaluation of what waits: each single prompt on its lane, a group's prompts on
/// free forks (the rest of a group waits for the next call). On an error, the ids of the jobs
/// that took part.
fn decode_call(session: &mut Session, prompter: &Prompter, waiting: &mut [Waiting], top_k: usize) -> Result<(), (EngineError, Vec<u64>)> {
    let mut forks = session.item_lanes..session.seqs();
    let mut lanes_used = vec![false; session.item_lanes];
    // (job, prompt) of each unit
    let mut of_unit: Vec<(usize, usize)> = Vec::new();
    let mut units: Vec<Unit> = Vec::new();
    for (j, w) in waiting.iter().enumerate() {
        for (k, p) in w.prompts.iter().enumerate() {
            if w.scores[k].is_some() {
                continue;
            }
            let seq = if w.group {
                match forks.next() {
                    Some(f) => f,
                    None => break,
                }
            } else if !lanes_used[w.lane] {
                lanes_used[w.lane] = true;
                w.lane
            } else {
                break;
            };
            units.push(Unit { seq, source: w.lane, tokens: &p.tokens });
            of_unit.push((j, k));
        }
    }
    let mut got: Vec<Option<SlotScore>> = vec![None; units.len()];
    let model = prompter.model;
    let r = session.evaluate_packed(&units, &mut |u, logits, evaluated, reused| {
        let (j, k) = of_unit[u];
        let w = &waiting[j];
        got[u] = Some(score_from_logits(model, logits, &w.variants, top_k, &w.prompts[k], (evaluated, reused)));
    });
    if let Err(e) = r {
        let mut ids: Vec<u64> = of_unit.iter().map(|&(j, _)| waiting[j].id).collect();
        ids.dedup();
        return Err((e, ids));
    }
    for (u, s) in got.into_iter().enumerate() {
        let (j, k) = of_unit[u];
        waiting[j].scores[k] = s;
    }
    Ok(())
}
