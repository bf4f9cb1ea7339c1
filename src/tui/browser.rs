//! The Tables view's parts: the table browser (the run's Markdown tables), the Runs pane (the
//! runs of the data directory) and a hierarchy batch on its own thread (`b` starts it, `x` stops
//! it). Its updates return [`Event`]s; the app opens a run the Runs pane chose.

use std::path::PathBuf;

use super::action::Action;
use super::batch_task::BatchTask;
use super::event::Event;
use super::keymap::key_for;
use super::run_list::RunList;
use super::table_browser::TableBrowser;
use crate::batch::BatchPlan;
use crate::config::ModelsConfig;

pub(crate) struct Browser {
    tables: TableBrowser,
    runs: RunList,
    batch: Option<BatchTask>,
}

impl Browser {
    /// The tables of the run in `run` (none without), the runs of `runs_dir` (no Runs pane
    /// without).
    pub(crate) fn new(run: Option<PathBuf>, runs_dir: Option<PathBuf>) -> Browser {
        Browser { tables: TableBrowser::new(run), runs: RunList::new(runs_dir), batch: None }
    }

    /// The browser of another run (`Enter` in the Runs pane): its tables, this one's runs list
    /// (with its cursor) and running batch.
    pub(crate) fn carry_into(&mut self, next: &mut Browser) {
        next.batch = self.batch.take();
        next.runs = std::mem::take(&mut self.runs);
    }

    /// The Tables view shows: everything is read again, the Runs pane's cursor on the run shown.
    pub(crate) fn shown(&mut self) {
        self.tables.refresh(true);
        self.runs.refresh(true);
        if let Some(d) = self.tables.dir().map(|d| d.to_path_buf()) {
            self.runs.select_dir(&d);
        }
    }

    /// Carries out a table browser action.
    pub(crate) fn update(&mut self, action: Action) -> Vec<Event> {
        match action {
            Action::MoveTableFile(d) => self.tables.move_file(d),
            Action::ScrollTable(d) => self.tables.scroll_by(d),
            Action::ScrollTableTop => self.tables.scroll_to_top(),
            Action::PanTable(d) => self.tables.pan(d),
            Action::MoveRun(d) => self.runs.move_cursor(d),
            Action::StopBatch => {
                if self.batch.as_ref().is_some_and(BatchTask::request_stop) {
                    return vec![Event::Notice("stopping the batch after the prompts in flight…".into())];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    /// Starts the batch that `plan` makes (a description and the plan), unless one runs; its
    /// tables show as they are written.
    pub(crate) fn start_batch(&mut self, models: &ModelsConfig, plan: impl FnOnce() -> anyhow::Result<(BatchPlan, String)>) -> Vec<Event> {
        if self.batch.as_ref().is_some_and(BatchTask::running) {
            return vec![Event::Notice(format!("a batch is already running ({} stops it)", key_for(Action::StopBatch)))];
        }
        let (plan, desc) = match plan() {
            Ok(p) => p,
            Err(e) => return vec![Event::Notice(format!("batch: {e:#}"))],
        };
        let task = match BatchTask::start(models.clone(), plan, desc) {
            Ok(t) => t,
            Err(e) => return vec![Event::Notice(format!("batch: {e}"))],
        };
        let out = task.out().to_path_buf();
        self.batch = Some(task);
        self.tables.show_run(out.clone());
        vec![Event::Notice(format!("batch started: {}", out.display()))]
    }

    /// Takes in the batch's end; reads the tables and runs again while the Tables view shows.
    pub(crate) fn tick(&mut self, tables_shown: bool) -> Vec<Event> {
        let mut events = Vec::new();
        if let Some(r) = self.batch.as_mut().and_then(BatchTask::poll) {
            events.push(Event::Notice(match r {
                Ok(s) => format!("batch finished: {s}"),
                Err(e) => format!("batch failed: {e}"),
            }));
            self.tables.refresh(true);
        }
        if tables_shown {
            self.tables.refresh(false);
            self.runs.refresh(false);
        }
        events
    }

    /// Asks a running batch to stop after the prompts in flight.
    pub(crate) fn shutdown(&self) {
        if let Some(b) = &self.batch {
            b.request_stop();
        }
    }

    pub(crate) fn running(&self) -> bool {
        self.batch.as_ref().is_some_and(BatchTask::running)
    }
    pub(crate) fn tables(&self) -> &TableBrowser {
        &self.tables
    }
    pub(crate) fn runs(&self) -> &RunList {
        &self.runs
    }
    pub(crate) fn batch(&self) -> Option<&BatchTask> {
        self.batch.as_ref()
    }
}
