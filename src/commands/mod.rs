//! Implementations of the CLI commands (thin: the work lives in the library modules).

pub mod batch;
pub mod bench;
pub mod doctor;
pub mod explorer;
pub mod inspect;
pub mod models;
pub mod score;
pub mod slurm;

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use crate::cli::GlobalOpts;
use hyst_tui::config::{ModelEntry, ModelsConfig};
use hyst_tui::engine::{self, Engine, EngineOptions};
use hyst_tui::prompts::PromptSet;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INTERRUPTED_NOTICE: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler: the first Ctrl-C asks loops to stop after the item in flight;
/// a second one exits at once.
pub fn install_ctrlc() {
    static FIRST: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let _ = ctrlc::set_handler(|| {
        let first = *FIRST.get_or_init(std::time::Instant::now);
        // A second Ctrl-C (not the same signal delivered twice to the process group) exits now.
        if INTERRUPTED.swap(true, Ordering::SeqCst) && first.elapsed() > std::time::Duration::from_millis(500) {
            eprintln!("\ninterrupted twice: exiting now");
            std::process::exit(130);
        }
        if !INTERRUPTED_NOTICE.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupt: finishing the item in flight (Ctrl-C again to quit at once)");
        }
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// What every command gets: the global options and the models config.
pub struct Ctx {
    pub global: GlobalOpts,
    pub config: ModelsConfig,
}

impl Ctx {
    pub fn new(global: GlobalOpts) -> Result<Self> {
        let config = ModelsConfig::resolve(global.models_config.as_deref())?;
        Ok(Self { global, config })
    }

    pub fn engine_options(&self) -> EngineOptions {
        let mut o = EngineOptions::default();
        if let Some(t) = self.global.threads {
            o.threads = t.max(1);
        }
        o.cache = !self.global.no_cache;
        o.n_ctx = self.global.ctx;
        o.gpu_layers = self.global.gpu_layers;
        o
    }

    pub fn model(&self, key: Option<&str>) -> Result<&ModelEntry> {
        Ok(self.config.get(key.unwrap_or(&self.config.default_model))?)
    }

    /// The prompt set in use: `--prompts DIR` or the bundled one.
    pub fn prompts(&self) -> Result<PromptSet> {
        Ok(PromptSet::resolve(self.global.prompts.as_deref())?)
    }
}

/// Starts an engine on a model key (default model when `None`).
pub fn open_engine(ctx: &Ctx, key: Option<&str>) -> Result<Engine> {
    Ok(engine::open(&ctx.config, key, ctx.engine_options())?)
}

/// The command line as typed (recorded in manifests).
pub fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// `hyst-tui completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "hyst-tui", &mut out);
    let mut script = String::from_utf8(out)?;
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script spells the subcommand states of a hyphenated binary
        // two ways (the loop `hyst__tui__subcmd__models`, the case arms
        // `hyst__subcmd__tui__subcmd__models`), so nothing after the first word completes
        // (clap-rs/clap#6421). Spell the arms like the loop.
        script = script.replace("hyst__subcmd__tui__subcmd__", "hyst__tui__subcmd__");
    }
    use std::io::Write;
    std::io::stdout().write_all(script.as_bytes())?;
    Ok(())
}
