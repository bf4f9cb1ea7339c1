//! Terminal ownership: raw mode + alternate screen on entry, restored on exit and by a panic hook
//! (bottom's pattern) before the panic is printed. While the explorer owns the terminal, file
//! descriptor 2 points at the log file, so no stray stderr byte (a C library, a progress line)
//! can tear the screen; the panic hook points it back first.

use std::io::{self, Stdout};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
use std::thread::ThreadId;

use crossterm::cursor::{Hide, Show};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static UI_THREAD: OnceLock<ThreadId> = OnceLock::new();
static HOOK: Once = Once::new();

pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

#[cfg(unix)]
mod stderr_redirect {
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicI32, Ordering};

    static SAVED: AtomicI32 = AtomicI32::new(-1);

    /// Points fd 2 at `log` (append); the original is kept for [`restore`].
    pub(crate) fn redirect(log: &Path) {
        if SAVED.load(Ordering::SeqCst) >= 0 {
            return;
        }
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let Ok(file) = std::fs::OpenOptions::new().create(true).append(true).open(log) else {
            return;
        };
        // SAFETY: plain fd calls on descriptors we own; failures leave stderr as it was.
        unsafe {
            let saved = libc::dup(2);
            if saved < 0 {
                return;
            }
            if libc::dup2(file.as_raw_fd(), 2) < 0 {
                libc::close(saved);
                return;
            }
            SAVED.store(saved, Ordering::SeqCst);
        }
    }

    pub(crate) fn restore() {
        let saved = SAVED.swap(-1, Ordering::SeqCst);
        if saved >= 0 {
            // SAFETY: `saved` is the descriptor dup'ed in `redirect`.
            unsafe {
                libc::dup2(saved, 2);
                libc::close(saved);
            }
        }
    }
}

#[cfg(not(unix))]
mod stderr_redirect {
    pub(crate) fn redirect(_log: &std::path::Path) {}
    pub(crate) fn restore() {}
}

/// Installs (once) the hook that restores the terminal before a panic of the UI thread is
/// printed. Panics of other threads (engine loader, batch) only go to the log.
pub(crate) fn install_panic_hook() {
    HOOK.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let on_ui = UI_THREAD.get().is_some_and(|t| *t == std::thread::current().id());
            if on_ui || !ACTIVE.load(Ordering::SeqCst) {
                restore();
            } else {
                tracing::error!("panic in thread {:?}: {info}", std::thread::current().name());
            }
            prev(info);
        }));
    });
}

/// Takes over the terminal: raw mode, alternate screen, hidden cursor, stderr to `log`.
pub(crate) fn enter(log: &Path) -> io::Result<Term> {
    let _ = UI_THREAD.set(std::thread::current().id());
    install_panic_hook();
    stderr_redirect::redirect(log);
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    if let Err(e) = execute!(out, EnterAlternateScreen, Hide) {
        restore();
        return Err(e);
    }
    match Terminal::new(CrosstermBackend::new(io::stdout())) {
        Ok(t) => Ok(t),
        Err(e) => {
            restore();
            Err(e)
        }
    }
}

/// Gives the terminal back (idempotent): leave the alternate screen, cooked mode, cursor shown,
/// stderr restored.
pub(crate) fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
    }
    stderr_redirect::restore();
}
