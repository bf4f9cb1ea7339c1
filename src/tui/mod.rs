//! The terminal explorer.
//!
//! - [`app`]: state and behaviour (items, the step cursor, scores, the engine and its
//!   generational job queue, the background batch);
//! - [`views`]: drawing (Items, Dialogue, Trace, Slot, Recovery, Tables, help, model switcher);
//! - [`jobs`]: the generational queue between the UI thread and the engine worker;
//! - [`terminal`]: raw mode / alternate screen, panic hook, stderr kept off the screen;
//! - [`export`]: headless screenshots (`hyst-tui snapshot`) as SVG, HTML or text.
//!
//! The UI thread never waits for the engine: scoring requests go through [`Engine::submit`] and
//! results are picked up once per frame.

pub mod app;
pub mod export;
pub mod jobs;
pub mod markdown;
pub mod model;
pub mod terminal;
pub mod theme;
pub mod views;

#[cfg(test)]
mod tests;

use std::time::Duration;

use anyhow::{bail, Context, Result};
use crossterm::event::{self, Event, KeyEventKind};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

pub use app::{App, AppConfig, AppOptions, Overlay, View};
pub use export::{buffer_to_html, buffer_to_svg, buffer_to_text};

use crate::cli::{BatchArgs, SnapshotArgs, TuiArgs};
use crate::commands::Ctx;
use crate::engine::Engine;

impl App {
    /// Draws the whole screen into a frame.
    pub fn render(&self, f: &mut ratatui::Frame) {
        views::render(f, self)
    }
}

/// `hyst-tui` without a command: the explorer.
pub fn run(ctx: &Ctx, a: &TuiArgs, b: &BatchArgs) -> Result<()> {
    let cfg = AppConfig::from_ctx(ctx, a, b)?;
    // Load the items (and a stored run) before taking the terminal, so errors print plainly.
    let mut app = App::new(cfg)?;
    let log = ctx.global.log_file.clone().unwrap_or_else(crate::logging::default_log_file);
    let mut term = terminal::enter(&log).context("cannot set up the terminal")?;
    let res = event_loop(&mut term, &mut app);
    terminal::restore();
    // Stop a running batch after its item in flight; the engine is dropped, not joined, so
    // quitting never waits for a decode.
    app.shutdown();
    res
}

fn event_loop(term: &mut terminal::Term, app: &mut App) -> Result<()> {
    // For the end-to-end test of the panic hook (tests/tui_tmux.sh): panic after the first frame.
    let test_panic = std::env::var_os("HYST_TUI_TEST_PANIC").is_some();
    loop {
        app.update();
        term.draw(|f| app.render(f))?;
        if test_panic {
            panic!("test panic requested by HYST_TUI_TEST_PANIC");
        }
        if app.quit {
            return Ok(());
        }
        let timeout = if app.busy() { Duration::from_millis(100) } else { Duration::from_millis(400) };
        if event::poll(timeout)? {
            loop {
                match event::read()? {
                    Event::Key(k) if k.kind != KeyEventKind::Release => app.handle_key(k),
                    Event::Resize(..) => {}
                    _ => {}
                }
                if app.quit || !event::poll(Duration::ZERO)? {
                    break;
                }
            }
        }
    }
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u16, u16)> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .with_context(|| format!("--size {s}: expected WIDTHxHEIGHT, e.g. 120x40"))?;
    let (w, h): (u16, u16) = (w.trim().parse()?, h.trim().parse()?);
    if w < 40 || h < 10 || w > 1000 || h > 1000 {
        bail!("--size {s}: between 40x10 and 1000x1000");
    }
    Ok((w, h))
}

/// Renders the current screen of `app` into a `w`×`h` buffer.
pub fn render_to_buffer(app: &App, w: u16, h: u16) -> Result<ratatui::buffer::Buffer> {
    let mut term = Terminal::new(TestBackend::new(w, h))?;
    term.draw(|f| app.render(f))?;
    Ok(term.backend().buffer().clone())
}

/// `hyst-tui snapshot`: one view rendered headlessly after scoring the item through the engine.
pub fn snapshot_cmd(ctx: &Ctx, a: &SnapshotArgs) -> Result<()> {
    let (w, h) = parse_size(&a.size)?;
    let ext = a.out.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if !matches!(ext.as_str(), "svg" | "html" | "htm" | "txt") {
        bail!("--out {}: use a .svg, .html or .txt file", a.out.display());
    }
    let (view, overlay) = match a.view.to_ascii_lowercase().as_str() {
        "help" => (View::Dialogue, Overlay::Help),
        "models" => (View::Items, Overlay::Models { sel: 0 }),
        v => (
            View::parse(v).with_context(|| {
                format!("--view {v}: one of items, dialogue, trace, slot, recovery, tables, help, models")
            })?,
            Overlay::None,
        ),
    };
    let mut cfg = AppConfig::from_ctx(
        ctx,
        &TuiArgs {
            model: a.model.clone(),
            dataset: Some(a.dataset.clone()),
            run: a.run.clone(),
        },
        &BatchArgs::default(),
    )?;
    cfg.options.frozen = true;
    cfg.options.prefetch = view == View::Items;
    // The list shows about h - 5 rows: score those.
    cfg.options.prefetch_window = (h as usize).saturating_sub(5);
    let stored = cfg.run.is_some();
    let mut app = App::new(cfg)?;
    if let Some(id) = &a.item {
        app.select_item_id(id)?;
    }
    if let Some(k) = a.step {
        app.set_step(k)?;
    }
    app.set_view(view);
    if !stored && (view != View::Tables || overlay != Overlay::None) {
        if !app.settle(Duration::from_secs(3600)) {
            bail!("scoring did not finish");
        }
        if let app::EngineState::Failed { key, error } = &app.engine {
            bail!("model {key}: {error}");
        }
    }
    app.overlay = if let Overlay::Models { .. } = overlay {
        let cur = app.cfg.models.models.iter().position(|m| m.key == app.model_key).unwrap_or(0);
        Overlay::Models { sel: cur }
    } else {
        overlay
    };
    app.notice = None;
    let buf = render_to_buffer(&app, w, h)?;
    export::export(&buf, &a.out)?;
    println!("wrote {} ({}x{}, view {})", a.out.display(), w, h, a.view);
    Ok(())
}

/// Starts an engine for tests and tools that want to attach one to an [`App`] themselves.
pub fn start_engine(ctx: &Ctx, key: Option<&str>) -> Result<Engine> {
    crate::commands::open_engine(ctx, key)
}
