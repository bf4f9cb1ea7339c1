//! `hyst-tui tables --from DIR`: every table, figure, summary and reproduction file of a run,
//! rebuilt from its stored rows.

use std::path::Path;

use anyhow::Result;

use super::Ctx;
use hyst_tui::batch;

pub fn run(ctx: &Ctx, dir: &Path) -> Result<()> {
    let r = batch::rebuild_tables(dir, &ctx.experiments)?;
    if let Some(msg) = &r.skipped {
        say!("warning: {msg}");
    }
    let tables = r.files.iter().filter(|p| p.parent().is_some_and(|d| d.ends_with("tables"))).count();
    // Where they went: the run directory's tables/, and open/tables/ for open-answer rows.
    let mut dirs: Vec<String> = Vec::new();
    for f in &r.files {
        if let Some(d) = f.parent().filter(|d| d.ends_with("tables")) {
            let d = d.display().to_string();
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    if dirs.is_empty() {
        dirs.push(dir.join("tables").display().to_string());
    }
    println!(
        "{tables} table files rebuilt from {} item rows in {}; {} files in all (with figures/, summary.md, reproduction.md and .csv)",
        r.rows,
        dirs.join(" and "),
        r.files.len()
    );
    Ok(())
}
