//! `hyst-tui merge`: shards' run directories joined into one, with its tables.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::{command_line, Ctx};
use hyst_tui::batch;

pub fn run(ctx: &Ctx, dirs: &[PathBuf], out: &Path) -> Result<()> {
    let m = batch::merge(dirs, out, &ctx.experiments, command_line())?;
    let shards: Vec<String> = m.shards.iter().map(|s| s.map_or("-".into(), |(k, n)| format!("{k}/{n}"))).collect();
    println!(
        "merged {} shards ({}; {} item rows, {} score records) into {}; {} table files",
        m.runs,
        shards.join(" "),
        m.rows,
        m.scores,
        out.display(),
        m.tables.len()
    );
    Ok(())
}
