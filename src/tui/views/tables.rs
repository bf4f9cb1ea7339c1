//! Tables: the run's `summary.md`, `reproduction.md` and `tables/*.md`, drawn as paper-style tables (heavy top and
//! bottom rules, a light rule under the header, numbers right-aligned), refreshed from disk while
//! shown and when a batch ends, with the number of items the shown table is built from; `b`
//! starts a batch of the hierarchy suite.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph};
use ratatui::Frame;

use super::{bar, block, pad, trunc, width, wrap};
use crate::tui::app::App;
use crate::tui::action::Action;
use crate::tui::keymap::{hints, key_for, Where};
use crate::tui::markdown::{Align, Block};

const MAX_CELL: usize = 36;

fn numeric(s: &str) -> bool {
    let t = s.trim().trim_end_matches('%');
    !t.is_empty()
        && t.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | '−' | 'e' | '[' | ']' | ',' | ' ' | '(' | ')'))
        && t.chars().any(|c| c.is_ascii_digit())
}

fn table_lines(app: &App, header: &[String], align: &[Align], rows: &[Vec<String>]) -> Vec<Line<'static>> {
    let th = app.theme();
    let n = header.len().max(rows.iter().map(Vec::len).max().unwrap_or(0));
    let mut w = vec![0usize; n];
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        for (wi, c) in w.iter_mut().zip(r) {
            *wi = (*wi).max(width(c).min(MAX_CELL));
        }
    }
    let total: usize = w.iter().sum::<usize>() + 2 * n.saturating_sub(1);
    let fmt_row = |r: &[String], head: bool| -> Line<'static> {
        let mut spans = Vec::new();
        for (i, &wi) in w.iter().enumerate() {
            let c = r.get(i).map(String::as_str).unwrap_or("");
            let right = match align.get(i) {
                Some(Align::Right) => true,
                Some(Align::Center) => false,
                _ => !head && numeric(c) && i > 0,
            };
            let t = trunc(c, wi);
            let padded = if right { format!("{:>width$}", t, width = wi) } else { pad(&t, wi) };
            spans.push(Span::styled(padded, if head { th.bold() } else { th.plain() }));
            if i + 1 < n {
                spans.push(Span::raw("  "));
            }
        }
        Line::from(spans)
    };
    let mut out = vec![Line::from(Span::styled("━".repeat(total), th.dim()))];
    out.push(fmt_row(header, true));
    out.push(Line::from(Span::styled("─".repeat(total), th.dim())));
    for r in rows {
        out.push(fmt_row(r, false));
    }
    out.push(Line::from(Span::styled("━".repeat(total), th.dim())));
    out
}

/// Cuts `hs` columns from the left of a line (for wide tables).
fn hshift(line: Line<'static>, hs: usize) -> Line<'static> {
    if hs == 0 {
        return line;
    }
    let mut skip = hs;
    let mut spans = Vec::new();
    for s in line.spans {
        let text: String = s.content.to_string();
        let n = text.chars().count();
        if skip >= n {
            skip -= n;
            continue;
        }
        let rest: String = text.chars().skip(skip).collect();
        skip = 0;
        spans.push(Span::styled(rest, s.style));
    }
    Line::from(spans)
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let t = app.browser().tables();
    let [head, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(3)]).areas(area);

    // Run and batch line.
    let mut l1 = vec![Span::styled(" run ", th.dim())];
    match t.dir() {
        Some(d) => l1.push(Span::styled(d.display().to_string(), th.bold())),
        None => l1.push(Span::styled("none", th.dim())),
    }
    if let Some(p) = t.progress() {
        l1.push(Span::styled(format!(" · {p}"), th.dim()));
    }
    let mut l2 = vec![Span::raw(" ")];
    match app.browser().batch() {
        Some(b) if b.running() => {
            let done = b.done_items();
            let frac = if b.total() > 0 { done as f64 / b.total() as f64 } else { 0.0 };
            l2.push(Span::styled(format!("batch {} ", b.desc()), th.accent()));
            l2.push(Span::styled(bar(frac, 20), th.correct()));
            l2.push(Span::raw(format!(" {done}/{} items", b.total())));
            if !app.frozen() {
                l2.push(Span::styled(format!(" · {}s", b.started().elapsed().as_secs()), th.dim()));
            }
            l2.push(Span::styled(format!(" · {} stop · tables refresh as they are written", key_for(Action::StopBatch)), th.dim()));
        }
        Some(b) => {
            let (txt, st) = match b.outcome() {
                Some(Ok(s)) => (format!("batch finished: {s}"), th.correct()),
                Some(Err(e)) => (format!("batch failed: {e}"), th.error()),
                None => (String::new(), th.plain()),
            };
            l2.push(Span::styled(txt, st));
            l2.push(Span::styled(format!(" · {} run again", key_for(Action::StartBatch)), th.dim()));
        }
        None => l2.push(Span::styled(
            format!("{}: run the hierarchy suite on {} with {}", key_for(Action::StartBatch), app.dataset_spec(), app.model_key()),
            th.dim(),
        )),
    }
    f.render_widget(Paragraph::new(vec![Line::from(l1), Line::from(l2)]), head);

    let runs = app.browser().runs().runs();
    let body = if runs.is_empty() {
        body
    } else {
        let h = (runs.len() as u16 + 2).min((body.height / 3).max(3));
        let [ra, rest] = Layout::vertical([Constraint::Length(h), Constraint::Min(3)]).areas(body);
        runs_pane(f, ra, app);
        rest
    };
    if t.files().is_empty() {
        let msg = match t.dir() {
            None if !runs.is_empty() => format!(
                "No run loaded. {} and {} choose a run above, {} opens it; {} runs the hierarchy suite in the background.",
                key_for(Action::MoveRun(-1)),
                key_for(Action::MoveRun(1)),
                key_for(Action::OpenSelectedRun),
                key_for(Action::StartBatch)
            ),
            None => format!(
                "No run loaded. Press {} to run the hierarchy suite in the background (its tables show here when it finishes), or start with --run DIR to browse a stored run.",
                key_for(Action::StartBatch)
            ),
            Some(d) => format!("No tables in {} yet (they are written when the batch finishes).", d.display()),
        };
        super::message(f, body, app, "Tables", &msg);
        return;
    }
    let list_w = (body.width / 4).clamp(18, 34);
    let [la, ca] = Layout::horizontal([Constraint::Length(list_w), Constraint::Min(20)]).areas(body);
    let items: Vec<ListItem> = t
        .files()
        .iter()
        .map(|p| {
            let name = p.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            ListItem::new(trunc(&name, list_w.saturating_sub(3) as usize))
        })
        .collect();
    let list = List::new(items).block(block(app, "Files")).highlight_style(th.selected());
    let mut st = ListState::default().with_selected(Some(t.selected()));
    f.render_stateful_widget(list, la, &mut st);

    let name = t.files().get(t.selected()).and_then(|p| p.file_name()).map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let title = match t.items_text() {
        Some(n) => format!("{name} · {n} · {}", hints(Where::Tables, " · ")),
        None => format!("{name} · {}", hints(Where::Tables, " · ")),
    };
    let b = block(app, title);
    let inner = b.inner(ca);
    f.render_widget(b, ca);
    let Some(doc) = t.doc() else { return };
    let w = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    for blk in &doc.blocks {
        match blk {
            Block::Heading(level, text) => {
                let st = if *level == 1 { th.title() } else { th.bold() };
                for l in wrap(text, w) {
                    lines.push(Line::from(Span::styled(l, st)));
                }
            }
            Block::Text(text) => {
                for l in wrap(text, w) {
                    lines.push(Line::from(l));
                }
            }
            Block::Blank => lines.push(Line::from("")),
            Block::Table { header, align, rows } => {
                for l in table_lines(app, header, align, rows) {
                    lines.push(hshift(l, t.hscroll()));
                }
            }
        }
    }
    let scroll = t.scroll().min(lines.len().saturating_sub(1));
    let shown: Vec<Line> = lines.into_iter().skip(scroll).take(inner.height as usize).collect();
    f.render_widget(Paragraph::new(shown), inner);
}

/// The runs of the data directory, most recently written first; ● marks the one shown.
fn runs_pane(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let shown = app.browser().tables().dir();
    let l = app.browser().runs();
    let w = area.width.saturating_sub(2) as usize;
    let longest = l.runs().iter().map(|e| width(&e.name)).max().unwrap_or(0);
    let name_w = (longest + 2).min((w / 2).max(12));
    let items: Vec<ListItem> = l
        .runs()
        .iter()
        .map(|e| {
            let s = &e.status;
            let mark = if shown == Some(s.dir.as_path()) { "● " } else { "  " };
            let mut what = format!(
                "{} · {} · {} · {} items · {}",
                s.models.join("+"),
                s.datasets.join("+"),
                if s.suites.is_empty() { "-".to_string() } else { s.suites.join("+") },
                s.items(),
                s.state()
            );
            if !app.frozen() {
                what.push_str(&format!(" · {}", crate::batch::status::ago(s.last_progress)));
            }
            let st = if s.complete { th.plain() } else { th.warn() };
            ListItem::new(Line::from(vec![
                Span::styled(mark, th.correct()),
                Span::styled(pad(&trunc(&e.name, name_w.saturating_sub(2)), name_w), th.bold()),
                Span::styled(trunc(&what, w.saturating_sub(name_w + 2)), st),
            ]))
        })
        .collect();
    let title = format!("Runs ({}) · {}", l.runs().len(), hints(Where::Runs, " · "));
    let list = List::new(items).block(block(app, title)).highlight_style(th.selected());
    let mut st = ListState::default().with_selected(Some(l.selected()));
    f.render_stateful_widget(list, area, &mut st);
}
