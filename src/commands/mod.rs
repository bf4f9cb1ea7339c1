//! The CLI's commands, one file (or folder) per subcommand, named after it; the work lives in the
//! library. This file holds what every command shares: the stop signals and [`Ctx`].

/// A line on stderr that never panics: after SIGHUP the terminal may be gone (`eprintln!` would
/// panic on the failed write and turn a clean stop into exit code 101).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod batch;
pub mod bench;
pub mod compare;
pub mod completions;
pub mod conditions;
pub mod doctor;
pub mod explorer;
pub mod items;
pub mod merge;
pub mod models;
pub mod prompts;
pub mod score;
pub mod slurm;
pub mod snapshot;
pub mod status;
pub mod steer;
pub mod tables;

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use anyhow::Result;

use crate::cli::GlobalOpts;
use hyst_tui::config::{ModelEntry, ModelsConfig};
use hyst_tui::dialogue::conditions::Registry;
use hyst_tui::dialogue::recipe::ExperimentSource;
use hyst_tui::engine::{self, Engine, EngineOptions};
use hyst_tui::prompts::PromptSet;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INTERRUPTED_NOTICE: AtomicBool = AtomicBool::new(false);
/// The signal that asked for the stop: SIGINT (Ctrl-C), SIGTERM (Slurm's time limit,
/// preemption, `scancel`, `kill`) or SIGHUP (a closed terminal); 0 = none.
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Installs the stop handlers. The first SIGINT, SIGTERM or SIGHUP asks loops to stop after the
/// work in flight (a batch: the prompts being scored; one line says so); a second one, more than half a second later, exits at
/// once. Exit codes follow the shell's 128 + signal: 130, 143, 129.
pub fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        let _ = STOP_SIGNAL.compare_exchange(0, libc::SIGINT, Ordering::SeqCst, Ordering::SeqCst);
        let now = monotonic_ms();
        let first = FIRST_SIGNAL_MS.compare_exchange(0, now.max(1), Ordering::SeqCst, Ordering::SeqCst);
        // A second signal (not the same one delivered twice to the process group) exits now.
        if INTERRUPTED.swap(true, Ordering::SeqCst) && first.is_err_and(|t| now.saturating_sub(t) > 500) {
            say!("\ninterrupted twice: exiting now");
            std::process::exit(exit_code_of(STOP_SIGNAL.load(Ordering::SeqCst)));
        }
        if !INTERRUPTED_NOTICE.swap(true, Ordering::SeqCst) {
            say!("\ninterrupt: stopping after the work in flight, keeping what is done (Ctrl-C again to quit at once)");
        }
    });
    #[cfg(unix)]
    install_termination();
}

/// SIGTERM and SIGHUP: the handler only records the signal (atomics, and one `write(2)` of a
/// fixed line: async-signal-safe); the loops see it through [`interrupted`].
#[cfg(unix)]
fn install_termination() {
    extern "C" fn on_signal(sig: libc::c_int) {
        // SAFETY: errno of the interrupted code is saved and restored around write(2).
        let errno = unsafe { *libc::__errno_location() };
        let now_ms = monotonic_ms();
        let _ = STOP_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        let first = FIRST_SIGNAL_MS.compare_exchange(0, now_ms.max(1), Ordering::SeqCst, Ordering::SeqCst);
        if INTERRUPTED.swap(true, Ordering::SeqCst) && first.is_err_and(|t| now_ms.saturating_sub(t) > 500) {
            let msg: &[u8] = b"\nsignalled twice: exiting now\n";
            // SAFETY: write(2) and _exit(2) are async-signal-safe.
            unsafe {
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(exit_code_of(STOP_SIGNAL.load(Ordering::SeqCst)));
            }
        }
        if !INTERRUPTED_NOTICE.swap(true, Ordering::SeqCst) {
            let msg: &[u8] = if sig == libc::SIGHUP {
                b"\nSIGHUP: stopping after the work in flight, keeping what is done\n"
            } else {
                b"\nSIGTERM: stopping after the work in flight, keeping what is done\n"
            };
            // SAFETY: write(2) is async-signal-safe; the buffer is static.
            unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
        }
        // SAFETY: see above.
        unsafe { *libc::__errno_location() = errno };
    }
    for sig in [libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs (sigaction, SA_RESTART) a handler that only touches atomics and calls
        // async-signal-safe functions.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// When the first stop signal came (ms on the monotonic clock; 0 = none yet), shared by
/// SIGINT, SIGTERM and SIGHUP so that any second signal counts as the second.
static FIRST_SIGNAL_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Milliseconds on the monotonic clock (clock_gettime: async-signal-safe).
fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes only `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64) * 1000 + (ts.tv_nsec as u64) / 1_000_000
}

/// The explorer leaves SIGHUP at its default (the process ends): a hung-up terminal cannot be
/// restored, and crossterm's event poll spins on it instead of failing.
pub fn default_sighup() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of one signal.
    unsafe {
        libc::signal(libc::SIGHUP, libc::SIG_DFL);
    }
}

/// 128 + the signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP), as shells report a signalled command.
fn exit_code_of(sig: i32) -> i32 {
    if sig > 0 {
        128 + sig
    } else {
        130
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The exit code of an interrupted command (see [`install_ctrlc`]).
pub fn interrupted_exit_code() -> u8 {
    exit_code_of(STOP_SIGNAL.load(Ordering::SeqCst)) as u8
}

/// What stopped the command, for its last line: `interrupted` (Ctrl-C) or `stopped by SIGTERM`.
pub fn stop_reason() -> &'static str {
    match STOP_SIGNAL.load(Ordering::SeqCst) {
        libc::SIGTERM => "stopped by SIGTERM",
        libc::SIGHUP => "stopped by SIGHUP",
        _ => "interrupted",
    }
}

/// What every command gets: the global options, the user's experiment files and the models
/// config.
pub struct Ctx {
    pub global: GlobalOpts,
    /// The files of `--experiment`, each once.
    pub experiments: Vec<ExperimentSource>,
    /// The conditions of a command that reads no stored run: the built-in ones and those of
    /// `experiments` (a command that reads a run adds the files its manifest records:
    /// `store::run_dir::runs_registry`).
    pub registry: &'static Registry,
    pub config: ModelsConfig,
}

impl Ctx {
    pub fn new(global: GlobalOpts) -> Result<Self> {
        let mut experiments: Vec<ExperimentSource> = Vec::new();
        for p in &global.experiments {
            let e = ExperimentSource::read(p)?;
            if !experiments.iter().any(|f| f.sha256 == e.sha256) {
                experiments.push(e);
            }
        }
        let registry = Registry::with_experiments(&experiments)?;
        let config = ModelsConfig::resolve(global.models_config.as_deref())?;
        Ok(Self { global, experiments, registry, config })
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
