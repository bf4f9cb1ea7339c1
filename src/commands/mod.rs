//! Implementations of the CLI commands (thin: the work lives in the library modules).

pub mod batch;
pub mod bench;
pub mod doctor;
pub mod models;
pub mod protocol;
pub mod score;

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use crate::cli::GlobalOpts;
use crate::config::{models_dir, ModelEntry, ModelsConfig};
use crate::engine::{Engine, EngineOptions};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

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

static INTERRUPTED_NOTICE: AtomicBool = AtomicBool::new(false);

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks the run as interrupted (tests and the TUI use this).
pub fn set_interrupted(v: bool) {
    INTERRUPTED.store(v, Ordering::SeqCst);
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
        o
    }

    pub fn model(&self, key: Option<&str>) -> Result<&ModelEntry> {
        Ok(self.config.get(key.unwrap_or(&self.config.default_model))?)
    }
}

/// Starts an engine on a model key (default model when `None`).
pub fn open_engine(ctx: &Ctx, key: Option<&str>) -> Result<Engine> {
    let entry = ctx.model(key)?;
    let path = entry.path(&models_dir());
    Engine::start(entry, &path, ctx.engine_options())
        .with_context(|| format!("model `{}`", entry.key))
}
