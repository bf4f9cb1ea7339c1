//! `hyst-tui conditions`: every condition of the registry (the bundled ones and `--experiment`'s),
//! one line each.

use anyhow::Result;

use super::Ctx;

pub fn run(ctx: &Ctx) -> Result<()> {
    println!("{:<46} {:<16} {:<5} DESCRIPTION", "CONDITION", "SUITE", "LEVEL");
    for c in ctx.registry.all() {
        println!("{:<46} {:<16} {:<5} {}", c.key, c.suite.key(), c.level, c.description);
    }
    Ok(())
}
