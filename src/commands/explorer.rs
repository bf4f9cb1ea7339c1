//! The explorer (`hyst-tui` without a command): the CLI options become an `AppConfig` (which
//! `snapshot` builds the same way).

use anyhow::Result;

use super::{batch::request, command_line, Ctx};
use crate::cli::{BatchArgs, TuiArgs};
use hyst_tui::config::runs_dir;
use hyst_tui::logging::default_log_file;
use hyst_tui::store::shared::configured_path;
use hyst_tui::tui::{self, AppConfig};

pub(super) fn app_config(ctx: &Ctx, model: Option<String>, dataset: Option<String>, run: Option<std::path::PathBuf>, b: &BatchArgs) -> Result<AppConfig> {
    Ok(AppConfig {
        engine: ctx.engine_options(),
        prompts: ctx.prompts()?,
        model,
        dataset,
        run,
        runs_dir: Some(runs_dir()),
        score_store: configured_path(ctx.global.score_store.as_deref()),
        batch: request(b, ctx.global.score_store.as_deref(), ctx.global.allow_inexact_reuse),
        command_line: command_line(),
        experiments: ctx.experiments.clone(),
        ..AppConfig::new(ctx.config.clone())
    })
}

pub fn run(ctx: &Ctx, a: &TuiArgs, b: &BatchArgs) -> Result<()> {
    // Without --model, --dataset or --run: the newest run of the data directory, if it has
    // rows (the Tables view lists the others).
    let run = match (&a.model, &a.dataset, &a.run) {
        (None, None, None) => tui::newest_run(&runs_dir()),
        _ => a.run.clone(),
    };
    let newest_run = a.run.is_none() && run.is_some();
    let steering = super::score::steering_option(&a.steering)?;
    let steer_file = a.steering.steer.as_ref().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()));
    let cfg = AppConfig { newest_run, steering, steer_file, ..app_config(ctx, a.model.clone(), a.dataset.clone(), run, b)? };
    let log = ctx.global.log_file.clone().unwrap_or_else(default_log_file);
    super::default_sighup();
    tui::run(cfg, &log, super::interrupted)?;
    if super::interrupted() {
        anyhow::bail!("{}: the explorer closed (the terminal is restored; a batch it ran stopped after the prompts in flight)", super::stop_reason());
    }
    Ok(())
}
