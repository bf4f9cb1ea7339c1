//! The Runs pane of the Tables view: every run directory under `<data dir>/runs` (a plain run,
//! or a `hyst-tui slurm` run's merged run), most recently written first, with where each stands
//! (`batch::status::run_status`: models, datasets, suites, items done of total, complete or
//! not). While the Tables view is shown the list is read again every two seconds; a run whose
//! manifest did not change keeps its last status (its run cache is not counted again).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::batch::slurm::{MERGED_DIR, SLURM_DIR, TASKS_FILE};
use crate::batch::status::{run_status, RunStatus};
use crate::store::run_dir::{ITEM_ROWS_JSONL, ITEM_ROWS_PARQUET, MANIFEST_FILE};

#[derive(Default)]
pub(crate) struct RunList {
    /// `<data dir>/runs`; `None`: no Runs pane (tests and screenshots of other views).
    dir: Option<PathBuf>,
    runs: Vec<Entry>,
    sel: usize,
    last_scan: Option<Instant>,
}

pub(crate) struct Entry {
    /// The directory's name under the runs directory (`…/merged` for a slurm run).
    pub(crate) name: String,
    pub(crate) status: RunStatus,
    /// The manifest's modification time the status was read at.
    stamp: Option<SystemTime>,
}

/// The run directories directly under `dir` (a slurm run: its merged run, once it has a
/// manifest), unsorted.
fn run_dirs(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.join(MANIFEST_FILE).is_file() {
            out.push((name, p));
        } else if p.join(SLURM_DIR).join(TASKS_FILE).is_file() && p.join(MERGED_DIR).join(MANIFEST_FILE).is_file() {
            out.push((format!("{name}/{MERGED_DIR}"), p.join(MERGED_DIR)));
        }
    }
    out
}

fn manifest_time(dir: &Path) -> Option<SystemTime> {
    std::fs::metadata(dir.join(MANIFEST_FILE)).and_then(|m| m.modified()).ok()
}

/// The most recently written run under `runs_dir` that has item rows to show, if any.
pub fn newest_run(runs_dir: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<(Option<SystemTime>, PathBuf)> = run_dirs(runs_dir)
        .into_iter()
        .map(|(_, p)| (manifest_time(&p), p))
        .filter(|(_, p)| {
            [ITEM_ROWS_JSONL, ITEM_ROWS_PARQUET].iter().any(|f| std::fs::metadata(p.join(f)).is_ok_and(|m| m.len() > 0))
        })
        .collect();
    dirs.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    dirs.into_iter().next().map(|(_, p)| p)
}

impl RunList {
    pub(crate) fn new(dir: Option<PathBuf>) -> RunList {
        let mut l = RunList { dir, ..RunList::default() };
        l.refresh(true);
        l
    }

    /// The runs, most recently written first.
    pub(crate) fn runs(&self) -> &[Entry] {
        &self.runs
    }
    pub(crate) fn selected(&self) -> usize {
        self.sel
    }
    pub(crate) fn selected_dir(&self) -> Option<&Path> {
        self.runs.get(self.sel).map(|e| e.status.dir.as_path())
    }

    pub(crate) fn move_cursor(&mut self, delta: isize) {
        let last = self.runs.len().saturating_sub(1);
        self.sel = self.sel.saturating_add_signed(delta).min(last);
    }

    /// Puts the cursor on the run in `dir`, if listed.
    pub(crate) fn select_dir(&mut self, dir: &Path) {
        if let Some(i) = self.runs.iter().position(|e| e.status.dir == dir) {
            self.sel = i;
        }
    }

    /// Reads the runs directory again (at most every two seconds unless forced); the cursor
    /// stays on the run it was on.
    pub(crate) fn refresh(&mut self, force: bool) {
        if !force && self.last_scan.is_some_and(|t| t.elapsed() < Duration::from_secs(2)) {
            return;
        }
        self.last_scan = Some(Instant::now());
        let Some(dir) = &self.dir else { return };
        let prev_sel = self.selected_dir().map(Path::to_path_buf);
        let mut old = std::mem::take(&mut self.runs);
        let mut runs = Vec::new();
        for (name, p) in run_dirs(dir) {
            let stamp = manifest_time(&p);
            if let Some(i) = old.iter().position(|e| e.status.dir == p && e.stamp == stamp && stamp.is_some()) {
                runs.push(old.swap_remove(i));
                continue;
            }
            match run_status(&p, "run") {
                Ok(status) => runs.push(Entry { name, status, stamp }),
                Err(e) => tracing::warn!("runs list: {}: {e:#}", p.display()),
            }
        }
        runs.sort_by(|a, b| b.stamp.cmp(&a.stamp).then_with(|| a.name.cmp(&b.name)));
        self.runs = runs;
        self.sel = self.sel.min(self.runs.len().saturating_sub(1));
        if let Some(p) = prev_sel {
            self.select_dir(&p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_newest_first_and_the_newest_with_rows() {
        let dir = tempfile::tempdir().unwrap();
        assert!(RunList::new(Some(dir.path().to_path_buf())).runs().is_empty());
        assert_eq!(newest_run(dir.path()), None);
        assert!(RunList::new(Some(dir.path().join("missing"))).runs().is_empty());
        // Not runs: a stray file and a directory without a manifest.
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        assert!(RunList::new(Some(dir.path().to_path_buf())).runs().is_empty());
    }
}
