//! Scoring one model × dataset pair: its items handed out to the workers, each scored through
//! a [`CachedScorer`], and committed strictly in item order (scores appended to the stores,
//! the manifest rewritten, live tables), with the tables written from the rows at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, RwLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::item::{score_item, CachedScorer};
use super::{BatchEvent, BatchObserver, ContextCounts, Totals};
use crate::config::ModelEntry;
use crate::data::Selected;
use crate::dialogue::conditions::{Condition, Registry};
use crate::dialogue::{Builder, Control};
use crate::engine::{Engine, EngineError};
use crate::protocol::AnswerFormat;
use crate::store::shared::SharedScores;
use crate::store::{sort_rows, write_item_rows, ItemRow, Manifest, ScoreCache, ScoreRow};
use crate::tables::{write_tables, TableOptions};

/// The scoring of one model × dataset pair: what every worker needs.
pub(crate) struct PairJob<'a> {
    pub(super) model: &'a ModelEntry,
    pub(super) sha: &'a str,
    pub(super) provenance: &'a str,
    /// One builder per answer format scored, with its prompt set's fingerprint.
    pub(super) builders: &'a [(Builder<'a>, String)],
    pub(super) conds: Vec<&'static Condition>,
    pub(super) controls: Vec<Control>,
    pub(super) items: &'a [Selected],
    pub(super) cache: &'a RwLock<ScoreCache>,
    pub(super) shared: Option<&'a RwLock<SharedScores>>,
    pub(super) steerings: &'a super::steered::Steerings,
}

/// What scoring one item produced, waiting to be committed.
pub(super) struct ItemDone {
    pub(super) rows: Vec<ItemRow>,
    /// Scores the engine computed, and scores found in the shared store.
    pub(super) pending: Vec<ScoreRow>,
    pub(super) imported: Vec<ScoreRow>,
    pub(super) counts: ContextCounts,
}

/// The run's committed state: items are committed one at a time, in item order.
pub(super) struct Commit<'a> {
    pub(super) cache: &'a RwLock<ScoreCache>,
    pub(super) shared: Option<&'a RwLock<SharedScores>>,
    pub(super) rows: Vec<ItemRow>,
    pub(super) totals: Totals,
    pub(super) done: usize,
    pub(super) total: usize,
    pub(super) live: Option<LiveTables>,
    /// Rewritten after every item, so `hyst-tui status` sees the progress (its file time is the
    /// last progress).
    pub(super) manifest: Manifest,
    pub(super) out: &'a Path,
    /// Seconds spent in [`Commit::commit`].
    pub(super) commit_seconds: f64,
}

/// Writes a run's item rows and tables from the rows so far: the letters rows into the run
/// directory, the open-answer rows (docs/protocol.md §14) into its `open/` folder, each with
/// every table; a run with rows of both formats also gets the comparison of the two.
pub(super) fn write_outputs(out: &Path, rows: &[ItemRow], reg: &'static Registry, opts: &TableOptions) -> Result<Vec<PathBuf>> {
    write_by_format(out, rows, reg, opts, true)
}

/// [`write_outputs`] without the item rows (`tables --from`: the stored rows stay as they are).
pub(super) fn write_tables_by_format(out: &Path, rows: &[ItemRow], reg: &'static Registry, opts: &TableOptions) -> Result<Vec<PathBuf>> {
    write_by_format(out, rows, reg, opts, false)
}

fn write_by_format(out: &Path, rows: &[ItemRow], reg: &'static Registry, opts: &TableOptions, with_rows: bool) -> Result<Vec<PathBuf>> {
    let (open, letters): (Vec<ItemRow>, Vec<ItemRow>) = rows.iter().cloned().partition(|r| r.answer_format() == AnswerFormat::Open);
    let mut written = Vec::new();
    if !letters.is_empty() || open.is_empty() {
        if with_rows {
            write_item_rows(out, &letters)?;
        }
        written.extend(write_tables(&letters, reg, out, opts)?);
    }
    if !open.is_empty() {
        let dir = out.join(OPEN_DIR);
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        if with_rows {
            write_item_rows(&dir, &open)?;
        }
        written.extend(write_tables(&open, reg, &dir, opts)?);
    }
    if !open.is_empty() && !letters.is_empty() {
        written.extend(crate::tables::answer_formats::write(&letters, &open, reg, out)?);
    }
    Ok(written)
}

/// The folder of a run directory that holds its open-answer rows and tables.
pub const OPEN_DIR: &str = "open";

/// The folders of a run directory that hold item rows, in this order: the run directory itself
/// (letters; also asked when neither has rows, so that its error names the run) and `open/`.
pub(super) fn row_dirs(dir: &Path) -> Vec<PathBuf> {
    let has_rows = |d: &Path| d.join(crate::store::run_dir::ITEM_ROWS_JSONL).is_file();
    let open = dir.join(OPEN_DIR);
    let mut v = Vec::new();
    if has_rows(dir) || !has_rows(&open) {
        v.push(dir.to_path_buf());
    }
    if has_rows(&open) {
        v.push(open);
    }
    v
}

/// Tables of the finished items while a batch runs: at most every `every`, a copy of the rows
/// goes to a writer thread, which writes the newest copy it has (scoring never waits for it).
pub(super) struct LiveTables {
    tx: Option<mpsc::Sender<Vec<ItemRow>>>,
    handle: Option<std::thread::JoinHandle<()>>,
    every: Duration,
    last: Instant,
    /// The run's conditions (the rows' order).
    reg: &'static Registry,
}

impl LiveTables {
    /// `None` when `every` is zero (tables only at the end).
    pub(super) fn start(out: &Path, every: Duration, reg: &'static Registry, opts: TableOptions) -> Option<LiveTables> {
        if every.is_zero() {
            return None;
        }
        let (tx, rx) = mpsc::channel::<Vec<ItemRow>>();
        let out = out.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("hyst-live-tables".into())
            .spawn(move || {
                while let Ok(mut rows) = rx.recv() {
                    // Only the newest copy matters.
                    while let Ok(newer) = rx.try_recv() {
                        rows = newer;
                    }
                    if let Err(e) = write_outputs(&out, &rows, reg, &opts) {
                        tracing::warn!("live tables of {}: {e:#}", out.display());
                    }
                }
            })
            .ok()?;
        Some(LiveTables {
            tx: Some(tx),
            handle: Some(handle),
            every,
            last: Instant::now(),
            reg,
        })
    }

    fn maybe_write(&mut self, rows: &[ItemRow]) {
        if self.last.elapsed() < self.every {
            return;
        }
        self.last = Instant::now();
        let mut copy = rows.to_vec();
        sort_rows(&mut copy, self.reg);
        if let Some(tx) = &self.tx {
            let _ = tx.send(copy);
        }
    }

    /// Waits for a write in progress, so that the final tables are written last.
    pub(super) fn finish(mut self) {
        self.tx.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Commit<'_> {
    /// Appends scores to the run's cache (one append + fsync) and the engine's new ones to the
    /// shared store, counting them in the totals.
    fn store_scores(&mut self, pending: &[ScoreRow], imported: Vec<ScoreRow>) -> Result<()> {
        for x in pending {
            self.totals.tokens_evaluated += x.tokens_evaluated as u64;
            self.totals.tokens_reused += x.tokens_reused as u64;
        }
        let mut new_rows = imported;
        new_rows.extend(pending.iter().cloned());
        if new_rows.is_empty() {
            return Ok(());
        }
        {
            let mut c = self.cache.write().expect("cache lock");
            let p = c.path().display().to_string();
            c.append(&new_rows).map_err(|e| match e {
                crate::store::run_cache::CacheError::Io { source, .. } => anyhow::anyhow!("cannot append to the score cache {p}: {source}"),
                other => other.into(),
            })?;
        }
        if let (Some(s), false) = (self.shared, pending.is_empty()) {
            let mut s = s.write().expect("shared store lock");
            let p = s.path().display().to_string();
            s.append(pending).with_context(|| format!("cannot append to the shared score store {p}"))?;
        }
        Ok(())
    }

    /// Stores the scores of an item that will not be committed (the batch stopped, or the item
    /// or one before it failed), so that a resume asks the engine only for the rest.
    fn keep_unfinished(&mut self, kept: Kept) -> Result<()> {
        let t0 = Instant::now();
        self.totals.kept_unfinished += kept.pending.len() + kept.imported.len();
        self.store_scores(&kept.pending, kept.imported)?;
        self.commit_seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// Stores one item's new scores and its rows, rewrites the manifest and reports the item.
    fn commit(&mut self, item_id: &str, r: ItemDone, observer: &mut dyn BatchObserver) -> Result<()> {
        self.totals.add_item(&r.counts);
        let t0 = Instant::now();
        self.store_scores(&r.pending, r.imported)?;
        self.rows.extend(r.rows);
        self.done += 1;
        self.manifest.items_done = self.done;
        self.manifest.write(self.out)?;
        self.commit_seconds += t0.elapsed().as_secs_f64();
        if let Some(l) = &mut self.live {
            l.maybe_write(&self.rows);
        }
        observer.event(BatchEvent::ContextsScored { item: &r.counts, totals: &self.totals });
        observer.event(BatchEvent::ItemFinished {
            item_id,
            items_done: self.done,
            items_total: self.total,
        });
        Ok(())
    }
}

/// The scores of an item that was not finished: the engine's (`pending`) and those copied from
/// the shared store (`imported`).
struct Kept {
    pending: Vec<ScoreRow>,
    imported: Vec<ScoreRow>,
}

/// How scoring an item ended.
enum Outcome {
    Done(ItemDone),
    /// Abandoned because the batch is stopping.
    Stopped(Kept),
    Failed(anyhow::Error, Kept),
}

/// A worker's message to the coordinator.
enum WorkerMsg {
    Started(usize),
    Ended(usize, Outcome),
}

/// Scores one item. Once `abandon` says so, the item stops before the engine's next prompt
/// (the prompts in flight are finished) and what it scored is returned as [`Outcome::Stopped`].
fn score_one(job: &PairJob, engine: &Engine, s: &Selected, abandon: &(dyn Fn() -> bool + Sync)) -> Outcome {
    let mut scorer = CachedScorer::new(engine, job.cache, job.model, job.sha, job.provenance);
    scorer.shared = job.shared;
    scorer.steerings = Some(job.steerings);
    scorer.stop = Some(abandon);
    let mut r = Ok(Vec::new());
    for (b, fp) in job.builders {
        let conds = super::item::conditions_in_format(b, &job.conds);
        r = r.and_then(|mut rows: Vec<ItemRow>| {
            rows.extend(score_item(&mut scorer, b, s, job.model, &conds, &job.controls, fp)?);
            Ok(rows)
        });
    }
    let (pending, imported) = (std::mem::take(&mut scorer.pending), std::mem::take(&mut scorer.imported));
    match r {
        Ok(rows) => {
            let counts = ContextCounts::of(&rows, &scorer);
            Outcome::Done(ItemDone { rows, pending, imported, counts })
        }
        Err(EngineError::Cancelled) if abandon() => Outcome::Stopped(Kept { pending, imported }),
        Err(e) => Outcome::Failed(anyhow::Error::from(e).context(format!("item {}", s.item.id)), Kept { pending, imported }),
    }
}

/// Scores the items of one pair on the workers (one engine each, items handed out in order)
/// and commits them strictly in item order. A stop request abandons the items in flight once
/// the prompts the engines are scoring are done (a served engine stops retrying at once): their
/// scores are stored without rows, as are those of items finished after one that was not (a
/// resume asks the engine only for the rest). Returns whether the run was stopped.
pub(super) fn run_pair(job: &PairJob, engines: &[Engine], run: &mut Commit, observer: &mut dyn BatchObserver) -> Result<bool> {
    let next = AtomicUsize::new(0);
    // `stop`: take no more items; `abandon`: stop the items in flight too (set by a failed
    // commit; a stop request is seen by the workers themselves, before each prompt).
    let stop = AtomicBool::new(false);
    let abandon_flag = AtomicBool::new(false);
    let check = observer.stop_check();
    let stop_requested = || check.as_ref().is_some_and(|c| c());
    let abandon = || abandon_flag.load(Ordering::SeqCst) || stop_requested();
    let (tx, rx) = mpsc::channel::<WorkerMsg>();
    std::thread::scope(|scope| {
        for engine in engines {
            let (tx, next, stop, abandon) = (tx.clone(), &next, &stop, &abandon);
            scope.spawn(move || loop {
                if stop.load(Ordering::SeqCst) || abandon() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(s) = job.items.get(i) else { break };
                let _ = tx.send(WorkerMsg::Started(i));
                let r = score_one(job, engine, s, abandon);
                if matches!(r, Outcome::Failed(..)) {
                    stop.store(true, Ordering::SeqCst);
                }
                let _ = tx.send(WorkerMsg::Ended(i, r));
            });
        }
        drop(tx);
        let mut finished: BTreeMap<usize, ItemDone> = BTreeMap::new();
        let mut next_commit = 0usize;
        let mut failed: Option<(usize, anyhow::Error)> = None;
        let mut stopped = false;
        // The first error storing what unfinished items scored (reported if nothing else failed).
        let mut keep_error: Option<anyhow::Error> = None;
        loop {
            if !stopped && stop_requested() {
                stopped = true;
                stop.store(true, Ordering::SeqCst);
                for e in engines {
                    e.cancel_pending();
                }
            }
            let msg = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            match msg {
                WorkerMsg::Started(i) => {
                    let s = &job.items[i];
                    observer.event(BatchEvent::ItemStarted {
                        model: &job.model.key,
                        dataset: &s.item.dataset,
                        item_id: &s.item.id,
                    });
                }
                WorkerMsg::Ended(i, Outcome::Done(r)) => {
                    finished.insert(i, r);
                }
                WorkerMsg::Ended(_, Outcome::Stopped(kept)) => {
                    if let Err(e) = run.keep_unfinished(kept) {
                        keep_error.get_or_insert(e);
                    }
                }
                WorkerMsg::Ended(i, Outcome::Failed(e, kept)) => {
                    if let Err(e) = run.keep_unfinished(kept) {
                        keep_error.get_or_insert(e);
                    }
                    if failed.as_ref().is_none_or(|(j, _)| i < *j) {
                        failed = Some((i, e));
                    }
                }
            }
            // Commit in item order, never past a failed item.
            while let Some(r) = finished.remove(&next_commit) {
                if failed.as_ref().is_some_and(|(j, _)| *j <= next_commit) {
                    finished.insert(next_commit, r);
                    break;
                }
                if let Err(e) = run.commit(&job.items[next_commit].item.id, r, observer) {
                    // The run fails with this error: the workers abandon their items (what they
                    // scored is still kept where the disk allows) and a served engine stops
                    // retrying.
                    stop.store(true, Ordering::SeqCst);
                    abandon_flag.store(true, Ordering::SeqCst);
                    for e in engines {
                        e.cancel_pending();
                    }
                    failed = Some((next_commit, e));
                    break;
                }
                next_commit += 1;
            }
        }
        // Items finished after one that was not: their scores are kept, their rows are not.
        for r in std::mem::take(&mut finished).into_values() {
            if let Err(e) = run.keep_unfinished(Kept { pending: r.pending, imported: r.imported }) {
                keep_error.get_or_insert(e);
            }
        }
        if let Some((_, e)) = failed {
            return Err(e);
        }
        if let Some(e) = keep_error {
            return Err(e);
        }
        // Without a failure, items left uncommitted mean a stop (also one the workers saw before
        // the loop above asked).
        Ok(next_commit < job.items.len())
    })
}
