//! Logs go to a file (never to the terminal: bytes on stderr would tear a TUI screen or a progress
//! bar). llama.cpp's own logs are routed into `tracing` by the engine and land in the same file.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Default log file: `<data dir>/logs/hyst-tui.log`.
pub fn default_log_file() -> PathBuf {
    crate::config::data_dir().join("logs").join("hyst-tui.log")
}

/// Installs the file logger. Level from `HYST_LOG` (e.g. `debug`), default `info`.
/// Returns the path in use; failure to open the file disables logging rather than failing.
pub fn init(path: Option<&Path>) -> Option<PathBuf> {
    let path = path.map(Path::to_path_buf).unwrap_or_else(default_log_file);
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let filter = EnvFilter::try_from_env("HYST_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let ok = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .is_ok();
    ok.then_some(path)
}
