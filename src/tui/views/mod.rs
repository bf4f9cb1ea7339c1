//! Drawing: the tab bar, the status bar, each view and the overlays. Everything here reads the
//! [`App`] and draws; nothing changes state.

mod dialogue;
mod items;
mod lens;
mod overlays;
mod recovery;
mod slot;
mod tables;
mod trace;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::app::App;
use super::engine_slot::EngineState;
use super::action::Action;
use super::keymap::{hint_keys, hints, key_for, Where};
use super::screen::{Overlay, View};
use super::parts::Part;

/// Draws the whole screen.
pub fn render(f: &mut Frame, app: &App) {
    let area = f.area();
    if area.width < 40 || area.height < 10 {
        f.render_widget(
            Paragraph::new(format!("terminal too small ({}x{}); need 40x10 (80x24 recommended)", area.width, area.height)),
            area,
        );
        return;
    }
    let [top, main, bottom] = Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    tab_bar(f, top, app);
    status_bar(f, bottom, app);
    match app.view() {
        View::Items => items::render(f, main, app),
        View::Dialogue => dialogue::render(f, main, app),
        View::Trace => trace::render(f, main, app),
        View::Slot => slot::render(f, main, app),
        View::Recovery => recovery::render(f, main, app),
        View::Tables => tables::render(f, main, app),
    }
    match app.overlay() {
        Overlay::None => {}
        Overlay::Help => overlays::help(f, main, app),
        Overlay::Models { sel } => overlays::models(f, main, app, sel),
        Overlay::Editor => overlays::editor(f, main, app),
        Overlay::Edits { at } => overlays::edits(f, main, app, at),
    }
}

fn tab_bar(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let mut spans = vec![Span::styled(" hyst ", th.title())];
    let compact = area.width < 86;
    for (i, v) in View::ALL.iter().enumerate() {
        let label = if compact && *v != app.view() {
            format!(" {} {} ", i + 1, &v.name()[..v.name().len().min(4)])
        } else {
            format!(" {} {} ", i + 1, v.name())
        };
        let st = if *v == app.view() { th.selected().add_modifier(ratatui::style::Modifier::BOLD) } else { th.plain() };
        spans.push(Span::styled(label, st));
    }
    let used: usize = spans.iter().map(|s| s.width()).sum();
    let right = format!(" {} ", hints(Where::Global, "  "));
    let short = format!("  {}", hint_keys(Where::Global, " "));
    if used + width(&right) <= area.width as usize {
        spans.push(Span::raw(" ".repeat(area.width as usize - used - width(&right))));
        spans.push(Span::styled(right, th.dim()));
    } else if used + width(&short) + 1 <= area.width as usize {
        spans.push(Span::styled(short, th.dim()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn engine_text(app: &App) -> (String, Style) {
    let th = app.theme();
    match app.engine_state() {
        EngineState::Off => ("no model (stored run)".into(), th.dim()),
        EngineState::Loading { key } => (format!("{key} · loading model…"), th.warn()),
        EngineState::Failed { key, error } => (format!("{key} · failed: {error}"), th.error()),
        EngineState::Ready(e) => {
            let q = app.jobs_pending();
            let busy = e.stats.busy.load(std::sync::atomic::Ordering::Relaxed) || app.engines().model_pending(0) > 0;
            let mut s = format!("{} · ", app.model_key());
            if app.engines().shared().pending() {
                // Nothing goes to the engine before the shared store has been asked.
                s.push_str("reading the score store…");
            } else if busy && !app.frozen() {
                s.push_str(&format!("busy, queue {q}"));
            } else if q > 0 {
                s.push_str(&format!("queue {q}"));
            } else {
                s.push_str("idle");
            }
            if !app.frozen() {
                if let Some(r) = app.engines().tokens_per_s() {
                    s.push_str(&format!(" · {r:.0} tok/s"));
                }
            }
            (s, if busy { th.warn() } else { th.correct() })
        }
    }
}

fn status_bar(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let base = th.status();
    let (eng, est) = engine_text(app);
    let mut spans = vec![Span::styled(" ", base), Span::styled(eng, est.patch(base))];
    let n = app.visible_items().len();
    let pos = match app.current_entry() {
        Some((_, e)) => format!(" │ {} {}/{n}", e.item.id, app.items().selected_pos() + 1),
        None => format!(" │ 0/{n}"),
    };
    let compared = app.compared();
    if !compared.is_empty() {
        spans.push(Span::styled(" │ vs", base));
        for (i, k) in compared.iter().enumerate() {
            let state = match app.engines().model_state(i + 1) {
                Some(EngineState::Loading { .. }) => " (loading)",
                Some(EngineState::Failed { .. }) => " (failed)",
                _ if app.engines().model_pending(i + 1) > 0 && !app.frozen() => " (busy)",
                _ => "",
            };
            spans.push(Span::styled(format!(" {k}{state}"), base.patch(th.model(i + 1))));
        }
    }
    spans.push(Span::styled(format!(" │ {}", app.dataset_label()), base));
    spans.push(Span::styled(pos, base));
    if app.store_hits() > 0 {
        spans.push(Span::styled(format!(" │ {} from store", app.store_hits()), base));
    }
    if let Some(e) = app.engines().shared().error() {
        spans.push(Span::styled(format!(" │ store: {e}"), th.warn().patch(base)));
    }
    if let Some(n) = app.engines().reuse_note() {
        spans.push(Span::styled(format!(" │ {n}"), th.warn().patch(base)));
    }
    if let Some(b) = app.browser().batch() {
        let txt = if b.running() {
            if app.frozen() {
                format!(" │ batch {}/{}", b.done_items(), b.total())
            } else {
                format!(" │ batch {}/{} {}s", b.done_items(), b.total(), b.started().elapsed().as_secs())
            }
        } else {
            match b.outcome() {
                Some(Ok(_)) => " │ batch done".to_string(),
                _ => " │ batch stopped".to_string(),
            }
        };
        spans.push(Span::styled(txt, base));
    }
    let skipped = app.stored_run_problems().len();
    if skipped > 0 {
        let txt = format!(" │ {skipped} rows skipped");
        spans.push(Span::styled(txt, th.warn().patch(base)));
    }
    if let Some(n) = app.notice() {
        spans.push(Span::styled(format!(" │ {n}"), th.accent().patch(base)));
    }
    let used: usize = spans.iter().map(|s| s.width()).sum();
    if used < area.width as usize {
        spans.push(Span::styled(" ".repeat(area.width as usize - used), base));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the views
// ---------------------------------------------------------------------------------------------

/// The option index of a letter (`A` → 0), `None` for anything but A–Z (e.g. the `?` of a
/// prediction out of range).
pub(crate) fn option_of(letter: char) -> Option<usize> {
    letter.is_ascii_uppercase().then(|| (letter as u8 - b'A') as usize)
}

/// Display width of a string.
pub(crate) fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// `s` cut to `w` columns, with `…` when cut.
pub(crate) fn trunc(s: &str, w: usize) -> String {
    if width(s) <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = width(c.encode_utf8(&mut [0u8; 4]));
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

/// `s` padded with spaces (or cut) to exactly `w` columns.
pub(crate) fn pad(s: &str, w: usize) -> String {
    let t = trunc(s, w);
    let n = width(&t);
    format!("{t}{}", " ".repeat(w.saturating_sub(n)))
}

/// Word wrap to `w` columns (long words are split).
pub(crate) fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    for para in s.split('\n') {
        let mut line = String::new();
        let mut lw = 0;
        for word in para.split(' ') {
            let ww = width(word);
            if lw > 0 && lw + 1 + ww > w {
                out.push(std::mem::take(&mut line));
                lw = 0;
            }
            if ww > w {
                // hard split
                for c in word.chars() {
                    let cw = width(c.encode_utf8(&mut [0u8; 4]));
                    if lw + cw > w {
                        out.push(std::mem::take(&mut line));
                        lw = 0;
                    }
                    line.push(c);
                    lw += cw;
                }
                continue;
            }
            if lw > 0 {
                line.push(' ');
                lw += 1;
            }
            line.push_str(word);
            lw += ww;
        }
        out.push(line);
    }
    out
}

/// A horizontal bar of `p` ∈ [0, 1] over `w` cells, with eighth-block resolution.
pub(crate) fn bar(p: f64, w: usize) -> String {
    const EIGHTHS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    if !p.is_finite() || w == 0 {
        return " ".repeat(w);
    }
    let units = (p.clamp(0.0, 1.0) * (w * 8) as f64).round() as usize;
    let full = units / 8;
    let mut s = "█".repeat(full.min(w));
    if full < w {
        s.push_str(EIGHTHS[units % 8]);
        let used = full + usize::from(units % 8 > 0);
        s.push_str(&" ".repeat(w - used));
    }
    s
}

pub(crate) fn fmt_p(p: Option<f64>) -> String {
    match p {
        Some(x) if x.is_finite() => format!("{x:.3}"),
        _ => "  ·  ".into(),
    }
}

pub(crate) fn fmt_gap(g: Option<f64>) -> String {
    match g {
        Some(x) if x.is_finite() => format!("{x:+.3}"),
        _ => "   ·  ".into(),
    }
}

/// What to show where a part has no score yet.
pub fn pending_text(app: &App, item: usize, part: Part) -> String {
    if let Some(e) = app.error(item, part) {
        return format!("error: {e}");
    }
    match app.engine_state() {
        EngineState::Loading { .. } => "loading model…".into(),
        EngineState::Failed { error, .. } => format!("no model: {error}"),
        EngineState::Off => format!("not in the stored run ({}: load a model to score it)", key_for(Action::OpenModels)),
        EngineState::Ready(_) => {
            if app.engines().in_flight(item, part) {
                "scoring…".into()
            } else if app.messages(item, part).is_none() {
                "waiting for the earlier steps…".into()
            } else {
                "queued…".into()
            }
        }
    }
}

/// A bordered block with a title.
pub fn block<'a>(app: &App, title: impl AsRef<str>) -> Block<'a> {
    Block::bordered()
        .title(format!(" {} ", title.as_ref()))
        .border_style(app.theme().dim())
        .title_style(app.theme().title())
}

/// Centred message inside an area.
pub fn message(f: &mut Frame, area: Rect, app: &App, title: &str, text: &str) {
    let b = block(app, title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let lines: Vec<Line> = wrap(text, inner.width.saturating_sub(2) as usize)
        .into_iter()
        .map(|l| Line::from(format!(" {l}")))
        .collect();
    f.render_widget(Paragraph::new(lines).style(app.theme().dim()), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_text() {
        assert_eq!(bar(0.0, 4), "    ");
        assert_eq!(bar(1.0, 4), "████");
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(0.53, 4), "██▏ ");
        assert_eq!(width(&bar(0.37, 10)), 10);
        assert_eq!(trunc("abcdef", 4), "abc…");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(wrap("aa bb cc", 5), vec!["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh", 3), vec!["abc", "def", "gh"]);
    }
}
