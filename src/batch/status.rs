//! Where runs stand (`hyst-tui status`, the explorer's Tables view of a run still going): per
//! run directory, items done of total, contexts scored, last progress, complete or not; for a
//! `hyst-tui slurm` run directory, one line per task (also tasks not started yet) and the
//! merged run, with the Slurm state of each task's job where `squeue` / `sacct` answer.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Result};

use super::slurm::{task_dir, SlurmRun, MERGED_DIR, TASKS_DIR};
use crate::store::run_dir::MANIFEST_FILE;
use crate::store::Manifest;

/// One run directory (a plain run, a shard, a task, a merged run).
#[derive(Clone, Debug)]
pub struct RunStatus {
    /// `run`, `shard 1/4`, `task 2/8`, `merged`.
    pub label: String,
    pub dir: PathBuf,
    /// False for a task whose directory does not exist yet.
    pub started: bool,
    pub models: Vec<String>,
    pub datasets: Vec<String>,
    pub suites: Vec<String>,
    pub items_done: usize,
    pub items_total: usize,
    /// Records in the run's score cache (`cache/scores.jsonl`).
    pub contexts: usize,
    /// When the manifest was last written (after every item).
    pub last_progress: Option<SystemTime>,
    pub complete: bool,
    /// The Slurm job of a task (`123_2`) and its state, where known.
    pub job: Option<String>,
    pub slurm_state: Option<String>,
}

impl RunStatus {
    /// The progress column: `12/40 items`.
    pub fn items(&self) -> String {
        format!("{}/{}", self.items_done, self.items_total)
    }

    /// `complete`, `running` (progress in the last ten minutes), `stopped` or `not started`.
    pub fn state(&self) -> &'static str {
        if self.complete {
            "complete"
        } else if !self.started {
            "not started"
        } else if self.last_progress.and_then(|t| t.elapsed().ok()).is_some_and(|d| d.as_secs() < 600) {
            "in progress"
        } else {
            "stopped"
        }
    }
}

/// Lines of a score cache (each line one record), without parsing them.
fn count_records(path: &Path) -> usize {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else { return 0 };
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    while let Ok(k) = f.read(&mut buf) {
        if k == 0 {
            break;
        }
        n += buf[..k].iter().filter(|b| **b == b'\n').count();
    }
    n
}

/// The status of one run directory.
pub fn run_status(dir: &Path, label: &str) -> Result<RunStatus> {
    let m = Manifest::read(dir)?;
    let c = &m.config;
    let label = match (label, c.shard) {
        ("run", Some((k, n))) => format!("shard {k}/{n}"),
        _ => label.to_string(),
    };
    Ok(RunStatus {
        label,
        dir: dir.to_path_buf(),
        started: true,
        models: c.models.clone(),
        datasets: c.datasets.clone(),
        suites: c.suites.iter().map(|s| s.key().to_string()).collect(),
        items_done: if m.complete { m.items_total } else { m.items_done },
        items_total: m.items_total,
        contexts: count_records(&dir.join("cache").join("scores.jsonl")),
        last_progress: std::fs::metadata(dir.join(MANIFEST_FILE)).and_then(|x| x.modified()).ok(),
        complete: m.complete,
        job: None,
        slurm_state: None,
    })
}

/// One status per task of a Slurm run (tasks not started included) and its merged run.
fn slurm_statuses(run: &SlurmRun) -> Result<Vec<RunStatus>> {
    let n = run.spec.tasks;
    let states = run.slurm_states();
    let mut out = Vec::new();
    for t in &run.spec.split {
        let d = task_dir(&run.dir, t.task, n);
        let label = format!("task {}/{n}", t.task);
        let mut st = if d.join(MANIFEST_FILE).is_file() {
            run_status(&d, &label)?
        } else {
            not_started(label, d, vec![t.model.clone()], t.items)
        };
        st.job = run.job_of(t.task);
        st.slurm_state = st.job.as_ref().and_then(|j| states.get(j).cloned());
        out.push(st);
    }
    let d = run.dir.join(MERGED_DIR);
    let models: Vec<String> = out.iter().flat_map(|s| s.models.clone()).fold(Vec::new(), |mut v, m| {
        if !v.contains(&m) {
            v.push(m);
        }
        v
    });
    let mut st = if d.join(MANIFEST_FILE).is_file() {
        run_status(&d, "merged")?
    } else {
        not_started("merged".into(), d, models, run.spec.split.iter().map(|t| t.items).sum())
    };
    st.job = run.jobs.last().map(|s| s.merge_job.clone());
    st.slurm_state = st.job.as_ref().and_then(|j| states.get(j).cloned());
    out.push(st);
    Ok(out)
}

fn not_started(label: String, dir: PathBuf, models: Vec<String>, items: usize) -> RunStatus {
    RunStatus {
        label,
        dir,
        started: false,
        models,
        datasets: Vec::new(),
        suites: Vec::new(),
        items_done: 0,
        items_total: items,
        contexts: 0,
        last_progress: None,
        complete: false,
        job: None,
        slurm_state: None,
    }
}

/// The statuses a directory argument names: a slurm run directory (its tasks and merged run),
/// a run directory, or a parent of run directories.
pub fn statuses(dir: &Path) -> Result<Vec<RunStatus>> {
    if let Some(s) = SlurmRun::read(dir)? {
        return slurm_statuses(&s);
    }
    if dir.join(MANIFEST_FILE).is_file() {
        return Ok(vec![run_status(dir, "run")?]);
    }
    if !dir.is_dir() {
        bail!("{}: no such run directory", dir.display());
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST_FILE).is_file() || p.join(super::slurm::SLURM_DIR).join(super::slurm::TASKS_FILE).is_file())
        .collect();
    if dir.join(TASKS_DIR).is_dir() {
        subs.extend(std::fs::read_dir(dir.join(TASKS_DIR))?.flatten().map(|e| e.path()).filter(|p| p.join(MANIFEST_FILE).is_file()));
    }
    subs.sort();
    if subs.is_empty() {
        bail!("{}: not a run directory, and it holds none", dir.display());
    }
    let mut out = Vec::new();
    for s in subs {
        out.extend(statuses(&s)?);
    }
    Ok(out)
}

/// "3 s ago", "5 min ago", "2 h ago".
pub fn ago(t: Option<SystemTime>) -> String {
    let Some(d) = t.and_then(|t| t.elapsed().ok()) else { return "-".into() };
    let s = d.as_secs();
    if s < 90 {
        format!("{s} s ago")
    } else if s < 90 * 60 {
        format!("{} min ago", s / 60)
    } else {
        format!("{} h ago", s / 3600)
    }
}
