//! `hyst-tui slurm` (the job array of a batch run and its merge job) and `hyst-tui status`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::Ctx;
use crate::cli::{BatchArgs, SlurmArgs};
use hyst_tui::batch::slurm::{self, Resources, SlurmRun, SlurmSpec, TaskSummary};
use hyst_tui::batch::status::{ago, statuses};
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
fn task_command(ctx: &Ctx, a: &BatchArgs, plan: &hyst_tui::batch::BatchPlan, store: &str, cpus: Option<u32>) -> Result<Vec<String>> {
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
    push("--tables-every", "0".into());
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
            format!("{} on {} (flock works here: every task shares it; see the README for what is safe on a cluster)", p.display(), probe.fs),
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
    let spec = SlurmSpec {
        tasks: tasks.len(),
        split: tasks.iter().map(TaskSummary::of).collect(),
        task_command: task_command(ctx, &a.batch, &plan, store.as_deref().unwrap_or("off"), a.cpus_per_task)?,
        score_store: store,
        store_note,
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
    slurm::write(&dir, &spec, &array, &merge)?;
    let s = dir.join(slurm::SLURM_DIR);
    println!("scripts: {} and {}", s.join(slurm::ARRAY_SCRIPT).display(), s.join(slurm::MERGE_SCRIPT).display());
    let by_hand = format!(
        "jid=$(sbatch --parsable {}) && sbatch --dependency=afterok:$jid {}",
        s.join(slurm::ARRAY_SCRIPT).display(),
        s.join(slurm::MERGE_SCRIPT).display()
    );
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
    match &sub.array_job {
        Some(j) => println!(
            "submitted: array job {j} (tasks {}), merge job {} (after the array succeeds)",
            sub.tasks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(","),
            sub.merge_job
        ),
        None => println!("submitted: merge job {}", sub.merge_job),
    }
    println!("watch with: hyst-tui status {}", dir.display());
    Ok(())
}

/// `hyst-tui status DIR...`: one line per run; an error (exit 1) unless all are complete.
pub fn status(dirs: &[PathBuf]) -> Result<()> {
    let mut all = Vec::new();
    for d in dirs {
        all.extend(statuses(d)?);
    }
    println!(
        "{:<12} {:<28} {:>11} {:>9} {:<14} {:<11} {:<22} DIR",
        "RUN", "MODELS", "ITEMS", "CONTEXTS", "LAST PROGRESS", "STATE", "SLURM"
    );
    for s in &all {
        let slurm = match (&s.job, &s.slurm_state) {
            (Some(j), Some(st)) => format!("{j} {st}"),
            (Some(j), None) => format!("{j} -"),
            _ => "-".into(),
        };
        println!(
            "{:<12} {:<28} {:>11} {:>9} {:<14} {:<11} {:<22} {}",
            s.label,
            s.models.join(","),
            s.items(),
            s.contexts,
            ago(s.last_progress),
            s.state(),
            slurm,
            s.dir.display()
        );
    }
    let open = all.iter().filter(|s| !s.complete).count();
    if open > 0 {
        bail!("{open} of {} runs are not complete", all.len());
    }
    Ok(())
}
