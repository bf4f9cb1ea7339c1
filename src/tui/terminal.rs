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
/// The log file stderr points at while the explorer owns the terminal (again after `$EDITOR`).
static LOG: OnceLock<std::path::PathBuf> = OnceLock::new();

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
    let _ = LOG.set(log.to_path_buf());
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

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
pub(crate) fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs `command` (a program and its arguments, split at spaces) on a temporary file holding
/// `text`, and returns what the file holds afterwards (one final newline, which editors add,
/// dropped). The file is removed in every case.
pub(crate) fn run_editor(command: &str, text: &str) -> Result<String, String> {
    let mut words = command.split_whitespace();
    let program = words.next().ok_or("no editor command")?;
    let path = std::env::temp_dir().join(format!("hyst-tui-whatif-{}-{:?}.txt", std::process::id(), std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let status = std::process::Command::new(program).args(words).arg(&path).status();
    let back = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    match status {
        Err(e) => Err(format!("cannot run {command:?}: {e}")),
        Ok(s) if !s.success() => Err(format!("{command:?} exited with {s}; the text is unchanged")),
        Ok(_) => {
            let t = back.map_err(|e| format!("cannot read the edited text back: {e}"))?;
            Ok(t.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&t).to_string())
        }
    }
}

/// `$EDITOR` on `text` while the explorer gives the terminal back: the terminal is restored
/// (cooked mode, main screen, stderr), the editor runs, and the explorer takes the terminal
/// again whatever the editor did. The inner result is the editor's; the outer error means the
/// terminal could not be taken back (the caller ends the explorer, which restores it).
pub(crate) fn edit_externally(term: &mut Term, text: &str) -> io::Result<Result<String, String>> {
    restore();
    let r = run_editor(&editor_command(), text);
    if let Some(log) = LOG.get() {
        stderr_redirect::redirect(log);
    }
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    execute!(io::stdout(), EnterAlternateScreen, Hide)?;
    term.clear()?;
    Ok(r)
}

#[cfg(all(test, unix))]
mod tests {
    use super::run_editor;

    #[test]
    fn an_editor_edits_a_temporary_file() {
        assert_eq!(run_editor("sed -i s/old/new/", "the old text").as_deref(), Ok("the new text"));
        // A failing or missing editor leaves the text alone and says why.
        assert!(run_editor("false", "x").unwrap_err().contains("exited"));
        assert!(run_editor("no-such-editor-hyst", "x").unwrap_err().contains("cannot run"));
        assert!(run_editor("  ", "x").is_err());
    }
}
