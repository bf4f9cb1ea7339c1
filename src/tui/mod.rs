//! The terminal explorer.
//!
//! - `app`: the router — owns the components and the engines, hands each action to the part it
//!   is for and routes the [`event`]s the parts answer with (only the app writes the status
//!   line, the overlay or another part's state);
//! - `action`, `keymap`: user intents, and the keys that ask for them in each context (labels,
//!   hints and the key names of messages made from the bindings);
//! - `engines`: the engine-facing part — one engine slot and scheduler per shown or compared
//!   model, the item scores, the shared store link, the generations (`a`); returns events;
//! - `engine_slot`: a model's engine, loaded in the background, with a tokens/s meter;
//!   `scheduler` over `jobs`: what to score next, through the generational job queue;
//!   `generations`: the model's greedy continuations at the answer slot, per context;
//! - components: `item_list` (filter, sort and selection of the items), `step_cursor` (the
//!   detail views' step, scroll and question blocks), `whatif` (what-if edits of any message
//!   of a step's dialogue, the editor, their scores, saving them as an experiment operation or
//!   a conversation file: all of it in that one module), `browser` (the table browser, the
//!   Runs pane, a batch on its own thread);
//! - `item_scores`: the scores and errors the session holds, in memory, by (model, item, part),
//!   ramp letters, twins;
//!   `shared_scores`: the score store shared with every run: lookups before the engine, and
//!   every computed score appended;
//! - `recovery_rows`: the current item's recovery rows (gaps, verdicts per criterion family,
//!   minimal recovery operation), computed from the metrics when the scores change;
//! - `run_list`: the runs of the data directory; `table_browser`: a run's Markdown tables;
//!   `batch_task`: a batch on its own thread;
//! - `parts`: the parts of an item (`Part`: ramp steps, operations, custom ramps' steps) and
//!   their messages; `stored_run`: a batch run's rows;
//! - `screen`: views, overlays and snapshot screens; `views`: drawing (views read the app and
//!   compute nothing the metrics define);
//! - `terminal`: raw mode / alternate screen, panic hook, stderr kept off the screen;
//! - `export`: headless screenshots (`hyst-tui snapshot`) as SVG, HTML or text.
//!
//! The UI thread never waits for the engine: scoring requests go through `Engine::submit` and
//! results are picked up once per frame.

mod action;
mod app;
mod batch_task;
mod browser;
mod engine_slot;
mod event;
mod export;
mod generations;
mod lenses;
mod item_list;
mod item_scores;
mod jobs;
mod keymap;
mod engines;
mod markdown;
pub mod parts;
mod scheduler;
mod screen;
mod setup;
mod shared_scores;
mod source;
mod step_cursor;
mod popups;
mod recovery_rows;
mod run_list;
mod stored_run;
mod table_browser;
mod terminal;
mod theme;
mod views;
mod whatif;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use crossterm::event::{self as term_event, Event, KeyEventKind};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

pub use app::App;
pub use setup::{AppConfig, AppOptions};
pub use export::buffer_to_text;
pub use run_list::newest_run;
pub use screen::{Overlay, Screen, View};

/// `hyst-tui` without a command: the explorer. Logs (and stray stderr bytes) go to `log_file`
/// while it owns the terminal. `stop` says when a signal (SIGTERM, SIGHUP) asks it to close:
/// it then quits as with `q`, restoring the terminal.
pub fn run(cfg: AppConfig, log_file: &Path, stop: fn() -> bool) -> Result<()> {
    // Load the items (and a stored run) before taking the terminal, so errors print plainly.
    let mut app = match App::new(cfg.clone()) {
        Ok(a) => a,
        Err(e) if cfg.newest_run => {
            tracing::warn!("the newest run cannot be shown ({e:#}); scoring the default dataset instead");
            App::new(AppConfig { run: None, newest_run: false, ..cfg })?
        }
        Err(e) => return Err(e),
    };
    let mut term = terminal::enter(log_file).context("cannot set up the terminal")?;
    let res = event_loop(&mut term, &mut app, stop);
    terminal::restore();
    // Stop a running batch after the prompts in flight; the engine is dropped, not joined, so
    // quitting never waits for a decode.
    app.shutdown();
    res
}

fn event_loop(term: &mut terminal::Term, app: &mut App, stop: fn() -> bool) -> Result<()> {
    // For the end-to-end test of the panic hook (tests/tui_tmux.sh): panic after the first frame.
    let test_panic = std::env::var_os("HYST_TUI_TEST_PANIC").is_some();
    loop {
        app.update();
        term.draw(|f| views::render(f, app))?;
        if test_panic {
            panic!("test panic requested by HYST_TUI_TEST_PANIC");
        }
        if app.quit_requested() || stop() {
            return Ok(());
        }
        let timeout = if app.busy() { Duration::from_millis(100) } else { Duration::from_millis(400) };
        if term_event::poll(timeout)? {
            loop {
                match term_event::read()? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => app.handle_key(k),
                    Event::Resize(..) => {}
                    _ => {}
                }
                if let Some(text) = app.take_external_edit() {
                    // Ctrl-E in the what-if editor: $EDITOR gets the terminal meanwhile.
                    let r = terminal::edit_externally(term, &text)?;
                    app.finish_external_edit(r);
                    break;
                }
                if app.quit_requested() || stop() || !term_event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
    }
}

/// A terminal size for headless rendering (`WIDTHxHEIGHT`, 40x10 to 1000x1000).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermSize {
    pub width: u16,
    pub height: u16,
}

impl FromStr for TermSize {
    type Err = String;
    fn from_str(s: &str) -> Result<TermSize, String> {
        let bad = || format!("{s:?}: expected WIDTHxHEIGHT between 40x10 and 1000x1000, e.g. 120x40");
        let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let (width, height): (u16, u16) = (w.trim().parse().map_err(|_| bad())?, h.trim().parse().map_err(|_| bad())?);
        if !(40..=1000).contains(&width) || !(10..=1000).contains(&height) {
            return Err(bad());
        }
        Ok(TermSize { width, height })
    }
}

/// A headless rendering of one screen.
#[derive(Clone, Debug)]
pub struct SnapshotRequest {
    pub screen: Screen,
    /// Item id (default: the first item).
    pub item: Option<String>,
    /// Dialogue step (0 = clean … 6 = clean probe, then the operations).
    pub step: Option<usize>,
    pub size: TermSize,
    /// `.svg`, `.html` or `.txt`.
    pub out: PathBuf,
    /// Models compared with the shown one (model keys, or a stored run's models).
    pub compare: Vec<String>,
}

/// Renders the current screen of `app` into a `w`×`h` buffer.
pub fn render_to_buffer(app: &App, w: u16, h: u16) -> Result<ratatui::buffer::Buffer> {
    let mut term = Terminal::new(TestBackend::new(w, h))?;
    term.draw(|f| views::render(f, app))?;
    Ok(term.backend().buffer().clone())
}

/// `hyst-tui snapshot`: one screen rendered headlessly after scoring the item through the engine
/// (or from the stored run of `cfg.run`, or the shared score store), with the compared models of
/// `req.compare`.
pub fn snapshot(mut cfg: AppConfig, req: &SnapshotRequest) -> Result<()> {
    let (w, h) = (req.size.width, req.size.height);
    let ext = req.out.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if !matches!(ext.as_str(), "svg" | "html" | "htm" | "txt") {
        bail!("--out {}: use a .svg, .html or .txt file", req.out.display());
    }
    let (view, overlay) = match req.screen {
        Screen::View(v) => (v, Overlay::None),
        Screen::Help => (View::Dialogue, Overlay::Help),
        Screen::Models => (View::Items, Overlay::Models { sel: 0 }),
    };
    cfg.options.frozen = true;
    cfg.options.prefetch = view == View::Items;
    // The list shows about h - 5 rows: score those.
    cfg.options.prefetch_window = (h as usize).saturating_sub(5);
    let stored = cfg.run.is_some();
    cfg.compare.extend(req.compare.iter().cloned());
    let mut app = App::new(cfg)?;
    if let Some(id) = &req.item {
        app.select_item_id(id)?;
    }
    if let Some(k) = req.step {
        app.set_step(k)?;
    }
    app.set_view(view);
    if stored || view != View::Tables || overlay != Overlay::None {
        if !app.settle(Duration::from_secs(3600)) {
            bail!("scoring did not finish");
        }
        if let engine_slot::EngineState::Failed { key, error } = app.engine_state() {
            bail!("model {key}: {error}");
        }
    }
    match overlay {
        Overlay::Help => app.apply(action::Action::OpenHelp),
        Overlay::Models { .. } => app.apply(action::Action::OpenModels),
        Overlay::None | Overlay::Editor | Overlay::Edits { .. } => {}
    }
    app.clear_notice();
    let buf = render_to_buffer(&app, w, h)?;
    export::export(&buf, &req.out)?;
    println!("wrote {} ({}x{}, view {})", req.out.display(), w, h, req.screen.name());
    Ok(())
}

#[cfg(test)]
mod size_tests {
    use super::TermSize;

    #[test]
    fn sizes_parse_within_bounds() {
        assert_eq!("120x40".parse::<TermSize>(), Ok(TermSize { width: 120, height: 40 }));
        assert_eq!("80X24".parse::<TermSize>().map(|s| s.width), Ok(80));
        for bad in ["39x10", "40x9", "1001x40", "120", "ax40", ""] {
            assert!(bad.parse::<TermSize>().is_err(), "{bad}");
        }
    }
}
