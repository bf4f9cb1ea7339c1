//! The explorer (being written).
use crate::cli::{BatchArgs, SnapshotArgs, TuiArgs};
use crate::commands::Ctx;
pub fn run(_ctx: &Ctx, _a: &TuiArgs, _b: &BatchArgs) -> anyhow::Result<()> { anyhow::bail!("the explorer is not built yet") }
pub fn snapshot_cmd(_ctx: &Ctx, _a: &SnapshotArgs) -> anyhow::Result<()> { anyhow::bail!("snapshots are not built yet") }
