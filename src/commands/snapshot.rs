//! `hyst-tui snapshot`: one explorer view rendered without a terminal (SVG, HTML or text).

use anyhow::Result;

use super::explorer::app_config;
use super::Ctx;
use crate::cli::SnapshotArgs;
use hyst_tui::tui::{self, SnapshotRequest};

pub fn run(ctx: &Ctx, a: &SnapshotArgs) -> Result<()> {
    let mut cfg = app_config(ctx, a.model.clone(), Some(a.dataset.clone()), a.run.clone(), &ctx.global.batch_args)?;
    if a.run.is_some() {
        // The snapshot of a given run shows that run only, whatever else the data directory holds.
        cfg.runs_dir = None;
    }
    let req = SnapshotRequest {
        screen: a.view.0,
        item: a.item.clone(),
        step: a.step,
        size: a.size,
        out: a.out.clone(),
        compare: a.compare.clone(),
    };
    tui::snapshot(cfg, &req)
}
