//! A batch started from the explorer (`b` in Tables), running [`crate::batch::run`] on its own
//! thread. Its progress comes from the batch's own [`BatchEvent`]s, forwarded over a channel by
//! an observer that also carries the stop request.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

use crate::batch::{BatchEvent, BatchObserver, BatchPlan};
use crate::config::ModelsConfig;
use crate::tui::action::Action;
use crate::tui::keymap::key_for;

/// What the batch thread tells the UI.
enum BatchMsg {
    Progress { items_done: usize, items_total: usize },
    Done(Result<String, String>),
}

/// The explorer's observer of a batch: forwards progress to the UI thread, stops on request.
struct ChannelObserver {
    tx: Sender<BatchMsg>,
    stop: Arc<AtomicBool>,
}

impl BatchObserver for ChannelObserver {
    fn event(&mut self, e: BatchEvent<'_>) {
        let msg = match e {
            BatchEvent::Started { items_total, items_done, .. } => BatchMsg::Progress { items_done, items_total },
            BatchEvent::ItemFinished { items_done, items_total, .. } => BatchMsg::Progress { items_done, items_total },
            _ => return,
        };
        let _ = self.tx.send(msg);
    }
    fn stop_check(&self) -> Option<crate::batch::StopCheck> {
        let stop = self.stop.clone();
        Some(Arc::new(move || stop.load(Ordering::SeqCst)))
    }
}

pub(crate) struct BatchTask {
    stop: Arc<AtomicBool>,
    items_done: usize,
    total: usize,
    /// Where it writes its rows and tables.
    out: PathBuf,
    /// "suite · dataset · model".
    desc: String,
    started: Instant,
    events: Receiver<BatchMsg>,
    /// `Ok(summary)` or `Err(error)` once the thread has finished.
    outcome: Option<Result<String, String>>,
}

impl BatchTask {
    /// Runs `plan` on a new thread. The error is the reason it could not start.
    pub(crate) fn start(models: ModelsConfig, plan: BatchPlan, desc: String) -> Result<BatchTask, String> {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let out = plan.out.clone();
        let mut observer = ChannelObserver { tx: tx.clone(), stop: stop.clone() };
        std::thread::Builder::new()
            .name("hyst-batch".into())
            .spawn(move || {
                let r = crate::batch::run(&models, &plan, &mut observer)
                    .map(|s| {
                        if s.interrupted {
                            let kept = match s.totals.kept_unfinished {
                                0 => String::new(),
                                n => format!(", {n} scores of unfinished items kept"),
                            };
                            format!("stopped after {} of {} items{kept} (resume: {} again)", s.items_done, s.items_total, key_for(Action::StartBatch))
                        } else {
                            format!("{} items, {} tables written", s.items_done, s.tables.len())
                        }
                    })
                    .map_err(|e| format!("{e:#}"));
                let _ = tx.send(BatchMsg::Done(r));
            })
            .map_err(|e| e.to_string())?;
        Ok(BatchTask {
            stop,
            items_done: 0,
            total: 0,
            out,
            desc,
            started: Instant::now(),
            events: rx,
            outcome: None,
        })
    }

    pub(crate) fn running(&self) -> bool {
        self.outcome.is_none()
    }
    pub(crate) fn done_items(&self) -> usize {
        self.items_done.min(self.total)
    }
    pub(crate) fn total(&self) -> usize {
        self.total
    }
    pub(crate) fn out(&self) -> &std::path::Path {
        &self.out
    }
    pub(crate) fn desc(&self) -> &str {
        &self.desc
    }
    pub(crate) fn started(&self) -> Instant {
        self.started
    }
    pub(crate) fn outcome(&self) -> Option<&Result<String, String>> {
        self.outcome.as_ref()
    }

    /// Asks the batch to stop after the prompts in flight. Returns whether it was running.
    pub(crate) fn request_stop(&self) -> bool {
        if self.running() {
            self.stop.store(true, Ordering::SeqCst);
        }
        self.running()
    }

    /// Takes the events that have arrived. Returns the outcome when the batch has just finished.
    pub(crate) fn poll(&mut self) -> Option<&Result<String, String>> {
        let mut finished = None;
        while let Ok(msg) = self.events.try_recv() {
            match msg {
                BatchMsg::Progress { items_done, items_total } => {
                    self.items_done = items_done;
                    self.total = items_total;
                }
                BatchMsg::Done(r) => finished = Some(r),
            }
        }
        let r = finished?;
        self.outcome = Some(r);
        self.outcome.as_ref()
    }
}
