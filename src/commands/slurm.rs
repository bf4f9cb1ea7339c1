//! `hyst-tui slurm`: the job array of a batch run and its merge job (`status` reads where they
//! stand).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::Ctx;
use crate::cli::{BatchArgs, SlurmArgs};
use hyst_tui::batch::slurm::{self, Resources, SlurmRun, SlurmSpec, TaskSummary};
use hyst_tui::data::DatasetSpec;

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn abs_text(p: &Path) -> String {
    absolute(p).display().to_string()
}

/// A dataset spec with its file made absolute (the jobs may start elsewhere).
fn absolute_spec(spec: &str) -> Result<String> {
    let parsed = DatasetSpec::parse(spec)?;
    Ok(match spec.split_once(':') {
        Some((kind, path)) if !matches!(parsed, DatasetSpec::Sample | DatasetSpec::Long) => format!("{kind}:{}", abs_text(Path::new(path))),
        _ => spec.to_string(),
    })
}

/// The `hyst-tui … batch …` words of a task (without shard, directory and log file).
fn task_command(ctx: &Ctx, a: &BatchArgs, plan: &hyst_tui::batch::BatchPlan, store: &str, cpus: Option<u32>, wait_for_server: Option<u64>) -> Result<Vec<String>> {
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "hyst-tui".into());
    let g = &ctx.global;
    // The global options, then `batch` and the run's options.
    let mut global: Vec<String> = vec![exe];
    let mut push = |k: &str, v: String| global.extend([k.to_string(), v]);
    if let Some(p) = &g.models_config {
        push("--models-config", abs_text(p));
    }
    if let Some(t) = g.threads.or(cpus.map(|c| c as usize)) {
        push("--threads", t.to_string());
    }
    if let Some(c) = g.ctx {
        push("--ctx", c.to_string());
    }
    if let Some(n) = g.gpu_layers {
        push("--gpu-layers", n.to_string());
    }
    if let Some(p) = &g.prompts {
        push("--prompts", abs_text(p));
    }
    for e in &g.experiments {
        push("--experiment", abs_text(e));
    }
    push("--score-store", store.to_string());
    if g.no_cache {
        global.push("--no-cache".into());
    }
    if g.allow_inexact_reuse {
        global.push("--allow-inexact-reuse".into());
    }
    let mut batch: Vec<String> = vec!["batch".into()];
    let mut push = |k: &str, v: String| batch.extend([k.to_string(), v]);
    let cfg = &plan.config;
    match &a.plan {
        Some(p) if p == "paper" => push("--plan", "paper".into()),
        Some(p) => push("--plan", abs_text(Path::new(p))),
        None => {
            push("--models", cfg.models.join(","));
            push("--suites", cfg.suites.iter().map(|s| s.key()).collect::<Vec<_>>().join(","));
        }
    }
    if a.plan.is_none() || !a.datasets.is_empty() {
        let specs = if a.plan.is_some() { &a.datasets } else { &cfg.datasets };
        push("--datasets", specs.iter().map(|s| absolute_spec(s)).collect::<Result<Vec<_>>>()?.join(","));
    }
    if let Some(n) = a.selection.n {
        push("--n", n.to_string());
    }
    if a.seeds.is_empty() {
        push("--seed", a.selection.seed.to_string());
    } else {
        push("--seeds", a.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","));
    }
    if let (Some(s), Some(adv)) = (&a.selection.subset, &a.selection.advocated) {
        push("--subset", abs_text(s));
        push("--advocated", abs_text(adv));
    }
    if let Some(s) = a.selection.shuffle_options {
        push("--shuffle-options", s.to_string());
    }
    if let Some(l) = a.limit {
        push("--limit", l.to_string());
    }
    if let Some(x) = a.workers {
        push("--workers", x.to_string());
    }
    if let Some(x) = a.concurrency {
        push("--concurrency", x.to_string());
    }
    if let Some(x) = a.snapshot_mem {
        push("--snapshot-mem", x.to_string());
    }
    if let Some(x) = a.pack {
        push("--pack", x.to_string());
    }
    if let Some(x) = wait_for_server {
        push("--wait-for-server", x.to_string());
    }
    push("--tables-every", "0".into());
    if a.lens {
        batch.push("--lens".into());
    }
    global.extend(batch);
    Ok(global)
}

/// The store the tasks share, and a line saying why.
fn choose_store(shared: Option<&Path>) -> (Option<String>, String) {
    let Some(p) = shared else {
        return (None, "off (--score-store off): each task scores what its own cache lacks".into());
    };
    let p = absolute(p);
    let probe = hyst_tui::store::fslock::probe(p.parent().unwrap_or(Path::new("/")));
    match &probe.error {
        None => (
            Some(p.display().to_string()),
            format!("{} on {} (flock works here: every task shares it; docs/guide/cluster.md says what is safe on a cluster)", p.display(), probe.fs),
        ),
        Some(e) => (
            None,
            format!(
                "{}'s file system ({}) has no file locks ({e}): each task keeps its scores in its own cache, and the merge gathers them in merged/cache",
                p.display(),
                probe.fs
            ),
        ),
    }
}

pub fn run(ctx: &Ctx, a: &SlurmArgs) -> Result<()> {
    if a.batch.shard.is_some() {
        bail!("hyst-tui slurm makes the shards itself (one per task): drop --shard");
    }
    let mut b = a.batch.clone();
    b.datasets = b.datasets.iter().map(|s| absolute_spec(s)).collect::<Result<_>>()?;
    b.out = None;
    let plan = super::batch::plan(ctx, &b)?;
    let dir = match &a.batch.out {
        Some(o) => absolute(o),
        None => {
            let mut name = plan.out.file_name().unwrap_or_default().to_os_string();
            name.push("-slurm");
            plan.out.with_file_name(name)
        }
    };
    // The tasks find the models where this node does (the models directory is shared).
    hyst_tui::batch::check_model_files(&ctx.config, &plan.config.models)?;
    let tasks = hyst_tui::batch::model_tasks(&plan, a.tasks as usize)?;
    let (store, store_note) = choose_store(plan.shared_store.as_deref());
    let server = a.server_job.as_deref().map(|f| server_script(ctx, f, &plan.config.models)).transpose()?;
    let wait = a.batch.wait_for_server.or(server.as_ref().map(|_| DEFAULT_SERVER_WAIT_S));
    let spec = SlurmSpec {
        tasks: tasks.len(),
        split: tasks.iter().map(TaskSummary::of).collect(),
        task_command: task_command(ctx, &a.batch, &plan, store.as_deref().unwrap_or("off"), a.cpus_per_task, wait)?,
        score_store: store,
        store_note,
        server_job: a.server_job.as_deref().map(abs_text),
    };
    if a.batch.dry_run && a.batch.json {
        println!("{}", serde_json::json!({ "dir": dir, "tasks": tasks, "score_store": spec.score_store, "store_note": spec.store_note }));
        return Ok(());
    }
    println!("slurm run directory: {} (tasks in {}/, merged run in {}/)", dir.display(), slurm::TASKS_DIR, slurm::MERGED_DIR);
    println!("{:<5} {:<20} {:>6} {:>14}  RANGES", "TASK", "MODEL", "ITEMS", "TOKENS (est.)");
    for t in &spec.split {
        println!("{:<5} {:<20} {:>6} {:>14}  {}", t.task, t.model, t.items, t.tokens_estimate, t.ranges.join("; "));
    }
    println!("score store: {}", spec.store_note);
    println!("models: {}", hyst_tui::config::models_dir().display());
    if a.batch.dry_run {
        return Ok(());
    }
    let res = Resources {
        job_name: format!("hyst-{}", dir.file_name().map(|n| n.to_string_lossy().chars().take(40).collect::<String>()).unwrap_or_default()),
        partition: a.partition.clone(),
        gres: a.gres.clone(),
        time: a.time.clone(),
        mem: a.mem.clone(),
        cpus_per_task: a.cpus_per_task,
        extra: a.sbatch_arg.clone(),
    };
    let array = slurm::array_script(&dir, &spec, &res, &absolute(&hyst_tui::config::models_dir()), &super::command_line());
    let merge = slurm::merge_script(&dir, &spec.task_command[0], &res);
    let stop = slurm::stop_server_script(&dir, &res);
    slurm::write(&dir, &spec, &array, &merge, server.as_deref().map(|text| (text, stop.as_str())))?;
    let s = dir.join(slurm::SLURM_DIR);
    println!("scripts: {} and {}", s.join(slurm::ARRAY_SCRIPT).display(), s.join(slurm::MERGE_SCRIPT).display());
    let (array_path, merge_path) = (s.join(slurm::ARRAY_SCRIPT), s.join(slurm::MERGE_SCRIPT));
    let by_hand = if server.is_some() {
        println!("server job: {} (its host in {})", s.join(slurm::SERVER_SCRIPT).display(), s.join(slurm::SERVER_HOST_FILE).display());
        format!(
            "sid=$(sbatch --parsable --export=ALL,HYST_SERVER_HOST_FILE={} {}) && jid=$(sbatch --parsable --dependency=after:$sid {}) && sbatch --dependency=afterok:$jid {} && sbatch --dependency=afterany:$jid --export=ALL,HYST_SERVER_JOB=$sid {}",
            s.join(slurm::SERVER_HOST_FILE).display(),
            s.join(slurm::SERVER_SCRIPT).display(),
            array_path.display(),
            merge_path.display(),
            s.join(slurm::STOP_SERVER_SCRIPT).display()
        )
    } else {
        format!("jid=$(sbatch --parsable {}) && sbatch --dependency=afterok:$jid {}", array_path.display(), merge_path.display())
    };
    if !a.submit {
        println!("submit with: {by_hand}   (or rerun with --submit)");
        println!("watch with: hyst-tui status {}", dir.display());
        return Ok(());
    }
    if !slurm::have_sbatch() {
        bail!("--submit: sbatch is not on PATH (no Slurm here); the scripts are written, submit them on the cluster with: {by_hand}");
    }
    let mut run = SlurmRun::read(&dir)?.expect("just written");
    let (sub, notes) = run.submit()?;
    for n in notes {
        println!("{n}");
    }
    let tasks = sub.tasks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
    match (&sub.array_job, &sub.server_job, &sub.server_stop_job) {
        (Some(j), Some(server), Some(stop)) => println!(
            "submitted: server job {server}, array job {j} (tasks {tasks}, once the server job runs), merge job {} (after the array succeeds), stop-server job {stop} (after the array ends)",
            sub.merge_job
        ),
        (Some(j), _, _) => println!("submitted: array job {j} (tasks {tasks}), merge job {} (after the array succeeds)", sub.merge_job),
        (None, _, _) => println!("submitted: merge job {}", sub.merge_job),
    }
    println!("watch with: hyst-tui status {}", dir.display());
    Ok(())
}

/// How long a task waits for the server by default when the run has a server job.
const DEFAULT_SERVER_WAIT_S: u64 = 3600;

/// The `--server-job` script, read and checked: it must publish its host where the tasks look
/// for it, and the run must have a served model to score through it.
fn server_script(ctx: &Ctx, file: &Path, models: &[String]) -> Result<String> {
    let text = std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("--server-job {}: {e}", file.display()))?;
    if !text.contains("HYST_SERVER_HOST_FILE") {
        bail!(
            "--server-job {}: the script never writes its host name to \"$HYST_SERVER_HOST_FILE\" (e.g. `hostname > \"$HYST_SERVER_HOST_FILE\"` before starting the server), so the tasks could not find it",
            file.display()
        );
    }
    let mut served = Vec::new();
    for key in models {
        if let Some(ep) = &ctx.config.get(key)?.endpoint {
            served.push((key, ep.base().to_string()));
        }
    }
    if served.is_empty() {
        bail!("--server-job: no model of the run has an `endpoint` in models.toml (the tasks would not use the server)");
    }
    for (key, url) in served.iter().filter(|(_, url)| !url.contains("${HYST_SERVER_HOST}")) {
        println!("note: {key}'s url {url} does not name ${{HYST_SERVER_HOST}}: its tasks go to that address, not to the host the server job publishes");
    }
    Ok(text)
}
