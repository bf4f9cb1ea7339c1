//! A batch run as a Slurm job array (`hyst-tui slurm`): one array task per by-model shard
//! (`batch --shard K/N --shard-by model`), each in its own directory under `DIR/tasks/`, and a
//! merge job that runs after the array succeeded and writes `DIR/merged`.
//!
//! The run directory of a Slurm run holds:
//! - `slurm/array.sbatch`, `slurm/merge.sbatch`: the scripts (their comments list each task's
//!   model and item ranges);
//! - with `--server-job FILE`: `slurm/server.sbatch` (a copy of FILE), which publishes its host in
//!   `slurm/server-host` for the tasks, and `slurm/stop-server.sbatch`, which cancels the server
//!   job once the array has ended;
//! - `slurm/tasks.json`: the split and the score store the tasks use;
//! - `slurm/jobs.json`: every submission (array job id, its tasks, the merge job id);
//! - `slurm/logs/`: the jobs' output;
//! - `tasks/task-001/` …: the tasks' run directories (a resubmitted or requeued task resumes
//!   its own); `merged/`: the merged run.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::ModelTask;
use crate::store::Manifest;

pub const SLURM_DIR: &str = "slurm";
pub const TASKS_FILE: &str = "tasks.json";
pub const JOBS_FILE: &str = "jobs.json";
pub const TASKS_DIR: &str = "tasks";
pub const MERGED_DIR: &str = "merged";
pub const ARRAY_SCRIPT: &str = "array.sbatch";
pub const MERGE_SCRIPT: &str = "merge.sbatch";
pub const SERVER_SCRIPT: &str = "server.sbatch";
pub const STOP_SERVER_SCRIPT: &str = "stop-server.sbatch";
/// Where the server job writes its host name (it finds the path in `$HYST_SERVER_HOST_FILE`).
pub const SERVER_HOST_FILE: &str = "server-host";
/// How long a task waits for the server job to publish its host.
const HOST_FILE_WAIT_S: u32 = 600;

/// The task split and store choice of a Slurm run (`slurm/tasks.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlurmSpec {
    pub tasks: usize,
    /// Per task (1-based order): model, items, estimated tokens, ranges (for people).
    pub split: Vec<TaskSummary>,
    /// The shared score store every task uses, or `None`: each task only its own cache.
    pub score_store: Option<String>,
    /// Why the store is what it is (printed and kept).
    pub store_note: String,
    /// The batch command line of a task, without its shard and directory.
    pub task_command: Vec<String>,
    /// The server job's script as given (`--server-job`; copied to `slurm/server.sbatch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_job: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskSummary {
    pub task: usize,
    pub model: String,
    pub items: usize,
    pub tokens_estimate: usize,
    pub ranges: Vec<String>,
}

impl TaskSummary {
    pub fn of(t: &ModelTask) -> TaskSummary {
        TaskSummary {
            task: t.task,
            model: t.model.clone(),
            items: t.items,
            tokens_estimate: t.tokens_estimate,
            ranges: t
                .ranges
                .iter()
                .map(|r| {
                    let ids = if r.first == r.last { r.first_id.clone() } else { format!("{} … {}", r.first_id, r.last_id) };
                    format!("{} items {}-{} of {} ({ids})", r.dataset, r.first, r.last, r.of)
                })
                .collect(),
        }
    }
}

/// One `sbatch` of the array (and its merge job).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Submission {
    pub array_job: Option<String>,
    pub tasks: Vec<usize>,
    pub merge_job: String,
    /// The server job the array's tasks score through (`--server-job`), and the job that
    /// cancels it once the array has ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_job: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stop_job: Option<String>,
    /// Seconds since the Unix epoch.
    pub at: u64,
}

/// A Slurm run directory as written by `hyst-tui slurm`.
pub struct SlurmRun {
    pub dir: PathBuf,
    pub spec: SlurmSpec,
    pub jobs: Vec<Submission>,
}

/// `DIR/tasks/task-007`: zero-padded to three digits (more for 1,000 tasks or more).
pub fn task_dir(dir: &Path, k: usize, n: usize) -> PathBuf {
    dir.join(TASKS_DIR).join(format!("task-{k:0w$}", w = task_width(n)))
}

fn task_width(n: usize) -> usize {
    n.to_string().len().max(3)
}

/// Quotes a word for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn quote_all(words: &[String]) -> String {
    words.iter().map(|w| shell_quote(w)).collect::<Vec<_>>().join(" ")
}

/// `#SBATCH` resources of both scripts.
#[derive(Clone, Debug, Default)]
pub struct Resources {
    pub job_name: String,
    pub partition: Option<String>,
    pub gres: Option<String>,
    pub time: Option<String>,
    pub mem: Option<String>,
    pub cpus_per_task: Option<u32>,
    /// More `sbatch` options, one per line (`--account=abc`).
    pub extra: Vec<String>,
}

impl Resources {
    fn lines(&self, gpu: bool) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(p) = &self.partition {
            v.push(format!("--partition={p}"));
        }
        if let (true, Some(g)) = (gpu, &self.gres) {
            v.push(format!("--gres={g}"));
        }
        if let Some(t) = &self.time {
            v.push(format!("--time={t}"));
        }
        if let Some(m) = &self.mem {
            v.push(format!("--mem={m}"));
        }
        if let Some(c) = self.cpus_per_task {
            v.push(format!("--cpus-per-task={c}"));
        }
        v.extend(self.extra.iter().cloned());
        v.into_iter().map(|x| format!("#SBATCH {x}")).collect()
    }
}

/// The array script: task `$SLURM_ARRAY_TASK_ID` runs its shard into its own directory.
pub fn array_script(dir: &Path, spec: &SlurmSpec, res: &Resources, models_dir: &Path, written_by: &str) -> String {
    let n = spec.tasks;
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!("# hyst-tui slurm: {n} tasks of the run in {}, one model each,\n", dir.display()));
    s.push_str("# balanced by the dry-run's token estimate (`hyst-tui slurm … --dry-run` prints the same split).\n");
    s.push_str(&format!("# written by: {written_by}\n"));
    for t in &spec.split {
        s.push_str(&format!("# task {}: {} — {} item{}, ~{} tokens: {}\n", t.task, t.model, t.items, if t.items == 1 { "" } else { "s" }, t.tokens_estimate, t.ranges.join("; ")));
    }
    s.push_str(&format!("# score store: {}\n", spec.store_note));
    s.push_str(&format!("#SBATCH --job-name={}\n", res.job_name));
    s.push_str(&format!("#SBATCH --array=1-{n}\n"));
    s.push_str(&format!("#SBATCH --output={}/task-%a.out\n", dir.join(SLURM_DIR).join("logs").display()));
    s.push_str("#SBATCH --open-mode=append\n#SBATCH --requeue\n");
    // SIGTERM to hyst-tui (`exec`ed by the batch shell, hence B:) five minutes before the time
    // limit: it stops after the prompts in flight, keeps everything scored and exits 143; submitting
    // again (`hyst-tui slurm … --submit`) resumes the task's own directory. Slurm sends SIGTERM
    // on preemption and `scancel` too.
    s.push_str("#SBATCH --signal=B:TERM@300\n");
    for l in res.lines(true) {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!("export HYST_MODELS_DIR={}\n", shell_quote(&models_dir.display().to_string())));
    s.push_str("task=${SLURM_ARRAY_TASK_ID:?submit this script with sbatch (it is a job array)}\n");
    s.push_str(&format!(
        "out={}/task-$(printf %0{}d \"$task\")\n",
        shell_quote(&dir.join(TASKS_DIR).display().to_string()),
        task_width(n)
    ));
    if spec.server_job.is_some() {
        // The array starts once the server job does (--dependency=after); the server job writes
        // its host name as soon as it runs, and the task's batch waits for the server to answer
        // (--wait-for-server) before scoring. A models.toml url names the host as ${HYST_SERVER_HOST}.
        let host_file = shell_quote(&dir.join(SLURM_DIR).join(SERVER_HOST_FILE).display().to_string());
        s.push_str(&format!(
            "for _ in $(seq 1 {HOST_FILE_WAIT_S}); do [ -s {host_file} ] && break; sleep 1; done\n\
             [ -s {host_file} ] || {{ echo \"error: the server job wrote no host name to {host_file} within {HOST_FILE_WAIT_S} s\" >&2; exit 1; }}\n\
             export HYST_SERVER_HOST=\"$(head -n1 {host_file} | tr -d '[:space:]')\"\n"
        ));
    }
    s.push_str(&format!(
        "exec {} --shard \"$task/{n}\" --shard-by model --out \"$out\" --log-file \"$out.log\"\n",
        quote_all(&spec.task_command)
    ));
    s
}

/// The merge script: the tasks' directories into `DIR/merged`.
pub fn merge_script(dir: &Path, exe: &str, res: &Resources) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s.push_str("# hyst-tui slurm: merges the tasks of the array (submitted with --dependency=afterok:<array job>).\n");
    s.push_str(&format!("#SBATCH --job-name={}-merge\n", res.job_name));
    s.push_str(&format!("#SBATCH --output={}/merge.out\n", dir.join(SLURM_DIR).join("logs").display()));
    s.push_str("#SBATCH --open-mode=append\n");
    for l in res.lines(false) {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str("set -euo pipefail\n");
    s.push_str(&format!(
        "exec {} merge {} --out {}\n",
        shell_quote(exe),
        shell_quote(&dir.join(TASKS_DIR).display().to_string()),
        shell_quote(&dir.join(MERGED_DIR).display().to_string())
    ));
    s
}

/// The script that cancels the server job (its id in `$HYST_SERVER_JOB`), submitted to run once
/// the array has ended in any state (--dependency=afterany), so the server does not hold its
/// GPUs until its time limit.
pub fn stop_server_script(dir: &Path, res: &Resources) -> String {
    let mut s = String::from("#!/bin/bash\n");
    s.push_str("# hyst-tui slurm: cancels the server job once the array has ended (submitted with --dependency=afterany:<array job>).\n");
    s.push_str(&format!("#SBATCH --job-name={}-stop-server\n", res.job_name));
    s.push_str(&format!("#SBATCH --output={}/stop-server.out\n", dir.join(SLURM_DIR).join("logs").display()));
    s.push_str("#SBATCH --open-mode=append\n");
    for l in res.lines(false) {
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str("scancel \"${HYST_SERVER_JOB:?set by hyst-tui slurm to the id of the server job}\"\n");
    s
}

/// Writes the scripts and `tasks.json` (keeping `jobs.json`); with a server job, its script (a
/// copy of the user's) and the one that stops it.
pub fn write(dir: &Path, spec: &SlurmSpec, array: &str, merge: &str, server: Option<(&str, &str)>) -> Result<()> {
    let s = dir.join(SLURM_DIR);
    std::fs::create_dir_all(s.join("logs")).with_context(|| format!("cannot create {}", s.display()))?;
    std::fs::create_dir_all(dir.join(TASKS_DIR)).with_context(|| format!("cannot create {}", dir.join(TASKS_DIR).display()))?;
    let mut scripts = vec![(ARRAY_SCRIPT, array), (MERGE_SCRIPT, merge)];
    if let Some((server, stop)) = server {
        scripts.extend([(SERVER_SCRIPT, server), (STOP_SERVER_SCRIPT, stop)]);
    }
    for (name, text) in scripts {
        let p = s.join(name);
        crate::store::write_atomic(&p, text.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755));
        }
    }
    let p = s.join(TASKS_FILE);
    crate::store::write_atomic(&p, serde_json::to_string_pretty(spec)?.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?;
    Ok(())
}

fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Runs a Slurm command; its stdout, or one line saying what went wrong.
fn slurm_cmd(program: &str, args: &[&str]) -> Result<String> {
    let out = match Command::new(program).args(args).output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!("{program} is not on PATH (no Slurm client here)"),
        Err(e) => bail!("cannot run {program}: {e}"),
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("{program} {}: {}", args.join(" "), err.trim().lines().last().unwrap_or("failed"));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Is `sbatch` on PATH?
pub fn have_sbatch() -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("sbatch").is_file()))
}

/// The job id of `sbatch --parsable` output (`123` or `123;cluster`).
fn parsable_id(s: &str) -> String {
    s.split(';').next().unwrap_or("").trim().to_string()
}

impl SlurmRun {
    /// The Slurm run in `dir`, if it is one.
    pub fn read(dir: &Path) -> Result<Option<SlurmRun>> {
        let p = dir.join(SLURM_DIR).join(TASKS_FILE);
        if !p.is_file() {
            return Ok(None);
        }
        let spec: SlurmSpec = serde_json::from_str(&std::fs::read_to_string(&p)?).with_context(|| format!("{}: not a hyst-tui slurm task file", p.display()))?;
        let j = dir.join(SLURM_DIR).join(JOBS_FILE);
        let jobs = if j.is_file() {
            serde_json::from_str(&std::fs::read_to_string(&j)?).with_context(|| format!("{}: not a hyst-tui jobs file", j.display()))?
        } else {
            Vec::new()
        };
        Ok(Some(SlurmRun { dir: dir.to_path_buf(), spec, jobs }))
    }

    fn task_complete(&self, k: usize) -> bool {
        Manifest::read(&task_dir(&self.dir, k, self.spec.tasks)).is_ok_and(|m| m.complete)
    }

    /// The latest job of task `k` (`123_4`), if it was submitted.
    pub(super) fn job_of(&self, k: usize) -> Option<String> {
        self.jobs.iter().rev().find(|s| s.tasks.contains(&k)).and_then(|s| s.array_job.as_ref()).map(|a| format!("{a}_{k}"))
    }

    /// Submits the tasks that are not complete as one array, and the merge job after it; when
    /// every task is complete, only the merge job. Refuses while a task of an earlier
    /// submission is still queued or running, and cancels an earlier merge job that is still
    /// waiting (its array did not succeed, so it would wait for ever).
    pub fn submit(&mut self) -> Result<(Submission, Vec<String>)> {
        let mut notes = Vec::new();
        let states = self.slurm_states();
        for k in 1..=self.spec.tasks {
            if let Some(job) = self.job_of(k) {
                if let Some(st) = states.get(&job) {
                    if ["PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"].contains(&st.as_str()) {
                        bail!("task {k} is still {} as job {job}: wait for it, or `scancel {job}`, then submit again", st.to_lowercase());
                    }
                }
            }
        }
        if let Some(prev) = self.jobs.last() {
            if states.get(&prev.merge_job).is_some_and(|s| s == "PENDING") {
                slurm_cmd("scancel", &[&prev.merge_job])?;
                notes.push(format!("cancelled the earlier merge job {} (it waited on an array that did not succeed)", prev.merge_job));
            }
        }
        let todo: Vec<usize> = (1..=self.spec.tasks).filter(|k| !self.task_complete(*k)).collect();
        let s = self.dir.join(SLURM_DIR);
        let mut server_job = None;
        let array_job = if todo.is_empty() {
            notes.push("every task is complete: only the merge job is submitted".into());
            None
        } else {
            let list = todo.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
            let script = s.join(ARRAY_SCRIPT).display().to_string();
            let mut args = vec!["--parsable".to_string(), format!("--array={list}")];
            if self.spec.server_job.is_some() {
                // A host an earlier server job published is stale: the tasks wait for the new one's.
                let host_file = s.join(SERVER_HOST_FILE);
                match std::fs::remove_file(&host_file) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => bail!("cannot remove {}: {e}", host_file.display()),
                    _ => {}
                }
                let export = format!("--export=ALL,HYST_SERVER_HOST_FILE={}", host_file.display());
                let id = parsable_id(&slurm_cmd("sbatch", &["--parsable", &export, &s.join(SERVER_SCRIPT).display().to_string()])?);
                args.push(format!("--dependency=after:{id}"));
                server_job = Some(id);
            }
            args.push(script);
            Some(parsable_id(&slurm_cmd("sbatch", &args.iter().map(String::as_str).collect::<Vec<_>>())?))
        };
        let server_stop_job = match (&server_job, &array_job) {
            (Some(server), Some(array)) => Some(parsable_id(&slurm_cmd(
                "sbatch",
                &["--parsable", &format!("--dependency=afterany:{array}"), &format!("--export=ALL,HYST_SERVER_JOB={server}"), &s.join(STOP_SERVER_SCRIPT).display().to_string()],
            )?)),
            _ => None,
        };
        let merge_script = s.join(MERGE_SCRIPT).display().to_string();
        let merge_job = match &array_job {
            Some(a) => parsable_id(&slurm_cmd("sbatch", &["--parsable", &format!("--dependency=afterok:{a}"), &merge_script])?),
            None => parsable_id(&slurm_cmd("sbatch", &["--parsable", &merge_script])?),
        };
        let sub = Submission {
            array_job,
            tasks: todo,
            merge_job,
            server_job,
            server_stop_job,
            at: now_secs(),
        };
        self.jobs.push(sub.clone());
        let p = s.join(JOBS_FILE);
        crate::store::write_atomic(&p, serde_json::to_string_pretty(&self.jobs)?.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?;
        Ok((sub, notes))
    }

    /// Job id (`123_4`, `125`) → state, for the jobs of the latest submissions, from `squeue`,
    /// else `sacct`; empty where neither answers.
    pub(super) fn slurm_states(&self) -> std::collections::HashMap<String, String> {
        let mut ids: Vec<String> = Vec::new();
        for s in &self.jobs {
            ids.extend(s.array_job.iter().cloned());
            ids.push(s.merge_job.clone());
            ids.extend(s.server_job.iter().cloned());
        }
        let mut out = std::collections::HashMap::new();
        for id in ids {
            if let Ok(text) = slurm_cmd("squeue", &["-h", "-r", "-t", "all", "-o", "%i|%T", "-j", &id]) {
                for l in text.lines() {
                    if let Some((j, st)) = l.split_once('|') {
                        out.insert(j.trim().to_string(), st.trim().to_string());
                    }
                }
            }
            if let Ok(text) = slurm_cmd("sacct", &["-n", "-X", "-P", "-o", "JobID,State", "-j", &id]) {
                for l in text.lines() {
                    if let Some((j, st)) = l.split_once('|') {
                        let st = st.split_whitespace().next().unwrap_or("").to_string();
                        out.entry(j.trim().to_string()).or_insert(st);
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("--models"), "--models");
        assert_eq!(shell_quote("jsonl:/a b/c.jsonl"), "'jsonl:/a b/c.jsonl'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn the_scripts_are_valid_shell_with_and_without_a_server_job() {
        let dir = tempfile::tempdir().unwrap();
        let res = Resources { job_name: "hyst-x".into(), time: Some("1:00:00".into()), ..Resources::default() };
        for server_job in [None, Some("/shared/it's server.sbatch".to_string())] {
            let spec = SlurmSpec {
                tasks: 2,
                split: vec![],
                score_store: None,
                store_note: "off".into(),
                task_command: vec!["/opt/hyst tui/hyst-tui".into(), "batch".into(), "--wait-for-server".into(), "3600".into()],
                server_job: server_job.clone(),
            };
            let array = array_script(dir.path(), &spec, &res, Path::new("/models"), "hyst-tui slurm --tasks 2");
            assert_eq!(array.contains("HYST_SERVER_HOST="), server_job.is_some(), "{array}");
            for (name, text) in [("array", array), ("merge", merge_script(dir.path(), "/opt/hyst tui/hyst-tui", &res)), ("stop", stop_server_script(dir.path(), &res))] {
                let f = dir.path().join(format!("{name}.sh"));
                std::fs::write(&f, &text).unwrap();
                let o = std::process::Command::new("bash").arg("-n").arg(&f).output().unwrap();
                assert!(o.status.success(), "{name}: {}\n{text}", String::from_utf8_lossy(&o.stderr));
            }
        }
    }

    #[test]
    fn task_directories_sort_in_task_order() {
        let d = Path::new("/r");
        assert_eq!(task_dir(d, 7, 8), Path::new("/r/tasks/task-007"));
        assert_eq!(task_dir(d, 7, 1200), Path::new("/r/tasks/task-0007"));
        assert_eq!(parsable_id("123;cluster\n"), "123");
    }
}
