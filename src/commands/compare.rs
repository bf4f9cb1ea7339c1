//! `hyst-tui compare --paper DIR`: the run's side-by-side with the paper's printed cells.

use std::path::Path;

use anyhow::Result;

use super::Ctx;
use hyst_tui::batch;

/// `compare --paper DIR`: rewrites the run's side-by-side with the paper and prints its counts.
pub fn run(ctx: &Ctx, dir: &Path) -> Result<()> {
    let r = batch::rebuild_reproduction(dir, &ctx.experiments)?;
    if let Some(msg) = &r.skipped {
        say!("warning: {msg}");
    }
    let n = &r.counts;
    let produced = n.compared + n.other_pairs;
    println!(
        "{} printed cells of the paper compared with the run in {} ({} item rows): {} compared over \
         the paper's pairs, {} produced over other pairs, {} not run, {} not computed by hyst-tui. \
         Of the {produced} produced, {} equal the paper as printed; {} have a run 95% CI, {} of which \
         cover the paper's value. Written: {}.",
        n.cells,
        dir.display(),
        r.rows,
        n.compared,
        n.other_pairs,
        n.not_run,
        n.not_computed,
        n.as_printed,
        n.with_ci,
        n.ci_covers,
        r.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    );
    Ok(())
}
