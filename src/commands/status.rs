//! `hyst-tui status DIR...`: where runs stand (a Slurm job's too).

use std::path::PathBuf;

use anyhow::{bail, Result};

use hyst_tui::batch::status::{ago, statuses};

/// `hyst-tui status DIR...`: one line per run; an error (exit 1) unless all are complete.
pub fn run(dirs: &[PathBuf]) -> Result<()> {
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
