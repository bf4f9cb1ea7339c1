//! The `hyst-tui` binary: parses the command line (`cli`) and runs a command (`commands`).
//! Both modules live only in the binary, so no library module can depend on them.

mod cli;
mod commands;

use std::process::ExitCode;

use cli::{BenchCmd, Cli, Command, SteerCmd};
use std::io::Write as _;
use commands::Ctx;

fn main() -> ExitCode {
    wait_for_threads_passively();
    let parsed = cli::command().try_get_matches().and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    hyst_tui::logging::init(cli.global.log_file.as_deref());
    // A write past a file-size limit (`ulimit -f`) must fail with an error we can report and
    // recover from, not kill the process with SIGXFSZ.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore" has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    if prints_only(&cli) {
        // A listing piped into `head` ends quietly when the reader goes away, as other Unix
        // tools do, instead of panicking on the broken pipe.
        #[cfg(unix)]
        // SAFETY: restoring a signal's default disposition has no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
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
            // Not eprintln!: stderr may be a terminal that has hung up (SIGHUP).
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            tracing::error!("{msg}");
            if commands::interrupted() {
                ExitCode::from(commands::interrupted_exit_code())
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// llama.cpp's CPU threads meet at a barrier after every step of a decode, and OpenMP's default
/// is to spin there. On cores that other processes share (two batches at once, a test suite, a
/// login node) a spinning thread takes the core from the one it waits for: two concurrent scorers
/// took 8 to 14 times longer than with passive waiting (docs/measurements.md). The policy is read
/// from the environment when the OpenMP runtime loads, before `main`, so unless the user chose
/// one (`OMP_WAIT_POLICY=ACTIVE` keeps spinning) the binary starts itself again with `PASSIVE`:
/// same process id, arguments and streams. Scores do not depend on it.
fn wait_for_threads_passively() {
    #[cfg(unix)]
    if std::env::var_os("OMP_WAIT_POLICY").is_none() {
        use std::os::unix::process::CommandExt as _;
        if let Ok(exe) = std::env::current_exe() {
            let mut args = std::env::args_os();
            let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
            // exec only returns on failure; then run on with the default policy.
            let _ = std::process::Command::new(exe).arg0(arg0).args(args).env("OMP_WAIT_POLICY", "PASSIVE").exec();
        }
    }
}

/// Commands that only read and print (nothing to finish or to keep when stdout closes early).
/// Everything else keeps Rust's default of ignoring SIGPIPE, so a batch never dies half-way
/// through writing a file because its output pipe closed.
fn prints_only(cli: &Cli) -> bool {
    use cli::ModelsCmd;
    !cli.global.batch
        && matches!(
            &cli.command,
            Some(Command::Conditions | Command::Items(_) | Command::Prompts(_) | Command::Doctor(_) | Command::Status { .. } | Command::Completions { .. })
                | Some(Command::Models(ModelsCmd::List { .. } | ModelsCmd::Dir))
        )
}

/// `--help` and `--version` print as clap formats them; a usage error is one line (clap's message
/// and its list of valid values, without the usage block) and exit code 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    let mut parts: Vec<&str> = Vec::new();
    let mut in_usage = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") {
            in_usage = true;
            continue;
        }
        if line.is_empty() {
            in_usage = false;
            continue;
        }
        if in_usage || line.starts_with("For more information") {
            continue;
        }
        parts.push(line);
    }
    eprintln!("{} (see --help)", parts.join(" "));
    ExitCode::from(2)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if let Some(Command::Completions { shell }) = &cli.command {
        // Needs no models config: works before anything is set up.
        return commands::completions::run(*shell);
    }
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
        Some(Command::Bench(BenchCmd::Batch { items, workers, pack, curve, figure })) => {
            let curve = commands::bench::parse_curve(curve)?;
            let a = commands::bench::BatchBench { model: items.model.as_deref(), limit: items.limit, dataset: &items.dataset, max_workers: *workers, pack: *pack, curve, figure: figure.clone() };
            commands::bench::batch(&ctx, &a)
        }
        Some(Command::Bench(BenchCmd::Served { model, limit, dataset })) => commands::bench::served(&ctx, model, *limit, dataset),
        Some(Command::Bench(BenchCmd::Inside { model, limit, dataset })) => commands::bench::inside(&ctx, model, *limit, dataset),
        Some(Command::Bench(BenchCmd::Answers(a))) => commands::bench::answers(&ctx, a.model.as_deref(), a.limit, &a.dataset),
        Some(Command::Prompts(a)) => commands::prompts::run(&ctx, a),
        Some(Command::Lens(a)) => commands::steer::lens(&ctx, a),
        Some(Command::Steer(SteerCmd::Direction(a))) => commands::steer::direction(&ctx, a),
        Some(Command::Steer(SteerCmd::Sweep(a))) => commands::steer::sweep(&ctx, a),
        Some(Command::Conditions) => commands::conditions::run(&ctx),
        Some(Command::Items(a)) => commands::items::run(a),
        Some(Command::Batch(a)) => commands::batch::run(&ctx, a),
        Some(Command::Tables { from }) => commands::tables::run(&ctx, from),
        Some(Command::Compare { paper }) => commands::compare::run(&ctx, paper),
        Some(Command::Merge { dirs, out }) => commands::merge::run(&ctx, dirs, out),
        Some(Command::Snapshot(a)) => commands::snapshot::run(&ctx, a),
        Some(Command::Slurm(a)) => commands::slurm::run(&ctx, a),
        Some(Command::Status { dirs }) => commands::status::run(dirs),
        Some(Command::Completions { shell }) => commands::completions::run(*shell),
        None => commands::explorer::run(&ctx, &cli.global.tui, &cli.global.batch_args),
    }
}
