use std::process::ExitCode;

use clap::Parser;
use hyst_tui::cli::{BenchCmd, Cli, Command};
use hyst_tui::commands::{self, Ctx};

fn main() -> ExitCode {
    let cli = Cli::parse();
    hyst_tui::logging::init(cli.global.log_file.as_deref());
    commands::install_ctrlc();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One clear line: the error and its causes.
            let mut msg = e.to_string();
            for cause in e.chain().skip(1) {
                let c = cause.to_string();
                if !msg.contains(&c) {
                    msg.push_str(": ");
                    msg.push_str(&c);
                }
            }
            eprintln!("error: {msg}");
            tracing::error!("{msg}");
            if commands::interrupted() {
                ExitCode::from(130)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let ctx = Ctx::new(cli.global.clone())?;
    if cli.global.batch {
        if cli.command.is_some() {
            anyhow::bail!("--batch cannot be combined with a command");
        }
        return commands::batch::run(&ctx, &cli.global.batch_args);
    }
    match &cli.command {
        Some(Command::Models(m)) => commands::models::run(&ctx, m),
        Some(Command::Score(a)) => commands::score::run(&ctx, a),
        Some(Command::Doctor(a)) => commands::doctor::run(&ctx, a),
        Some(Command::Bench(BenchCmd::Engine { model, raw_tokens, items })) => {
            commands::bench::engine(&ctx, model.as_deref(), *raw_tokens, *items)
        }
        Some(Command::Bench(BenchCmd::Batch { model, limit })) => commands::bench::batch(&ctx, model.as_deref(), *limit),
        Some(Command::Prompts(a)) => commands::protocol::prompts_cmd(&ctx, a),
        Some(Command::Conditions) => commands::protocol::conditions_cmd(),
        Some(Command::Items(a)) => commands::protocol::items_cmd(a),
        Some(Command::Batch(a)) => commands::batch::run(&ctx, a),
        Some(Command::Tables { from }) => commands::batch::tables_from(from),
        Some(Command::Merge { dirs, out }) => commands::batch::merge(dirs, out),
        Some(Command::Snapshot(a)) => hyst_tui::tui::snapshot_cmd(&ctx, a),
        None => hyst_tui::tui::run(&ctx, &cli.global.tui, &cli.global.batch_args),
    }
}
