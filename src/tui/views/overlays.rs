//! The help overlay and the model switcher.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;

use super::{block, pad, width, wrap};
use crate::tui::app::App;
use crate::tui::keymap::{self, Where};

fn popup(area: Rect, w: u16, h: u16) -> Rect {
    area.centered(Constraint::Length(w.min(area.width)), Constraint::Length(h.min(area.height)))
}

/// The help: every entry of the key table by section (the keys, then the text, wrapped to
/// the popup).
pub fn help(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let sections = keymap::help_sections();
    let entries = || sections.iter().flat_map(|(_, es)| es.iter());
    let key_w = entries().map(|e| width(&e.plain_keys())).max().unwrap_or(0).min(24);
    let legend = "p(w) = p(advocated wrong) · ✓ correct · ✗ advocated wrong · ▶ predicted";
    let widest = entries().map(|e| 3 + key_w + width(&e.help_text())).chain([width(legend)]).max().unwrap_or(0);
    let w = (widest as u16 + 2).min(area.width);
    let text_w = (w as usize).saturating_sub(2 + 3 + key_w).max(10);
    let mut lines: Vec<Line> = Vec::new();
    for (section, entries) in &sections {
        lines.push(Line::from(Span::styled(*section, th.title())));
        for e in entries {
            for (i, l) in wrap(&e.help_text(), text_w).into_iter().enumerate() {
                let keys = if i == 0 { pad(&e.plain_keys(), key_w) } else { " ".repeat(key_w) };
                lines.push(Line::from(vec![Span::styled(format!("  {keys} "), th.bold()), Span::raw(l)]));
            }
        }
    }
    lines.push(Line::from(Span::styled(legend, th.dim())));
    let h = lines.len() as u16 + 2;
    let r = popup(area, w, h);
    let room = r.height.saturating_sub(2) as usize;
    let max_scroll = lines.len().saturating_sub(room);
    let scroll = app.help_scroll().min(max_scroll);
    let title = if max_scroll > 0 { format!("Help · {}", keymap::hints(Where::Help, " · ")) } else { "Help · any key closes".to_string() };
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)).block(block(app, title)), r);
}

pub fn models(f: &mut Frame, area: Rect, app: &App, sel: usize) {
    let th = app.theme();
    let shown = app.engines().shown_models();
    let items: Vec<ListItem> = app
        .engines()
        .model_choices()
        .into_iter()
        .map(|m| {
            let shown_at = shown.iter().position(|k| *k == m.key);
            let (mark, mark_st) = match shown_at {
                Some(0) => ("● ".to_string(), th.correct()),
                Some(i) => (format!("{i} "), th.model(i)),
                None => ("  ".to_string(), th.plain()),
            };
            let state = if m.stored {
                "stored "
            } else if m.present {
                "present"
            } else {
                "absent "
            };
            let st = if m.present { th.plain() } else { th.dim() };
            let mut spans = vec![
                Span::styled(mark, mark_st),
                Span::styled(pad(&m.key, 20), if shown_at == Some(0) { th.bold() } else { st }),
                Span::styled(format!(" {state} "), if m.present { th.correct() } else { th.dim() }),
                Span::styled(m.name.clone(), st),
            ];
            if matches!(shown_at, Some(i) if i > 0) {
                spans.push(Span::styled(" (compared)", th.dim()));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let h = items.len() as u16 + 2;
    let r = popup(area, 76, h);
    f.render_widget(Clear, r);
    let list = List::new(items)
        .block(block(app, format!("Model · {}", keymap::hints(Where::Models, " · "))))
        .highlight_style(th.selected());
    let mut st = ListState::default().with_selected(Some(sel));
    f.render_stateful_widget(list, r, &mut st);
}

/// The what-if editor (`E` in the Dialogue): the selected message (else the final turn's),
/// typed over at the cursor.
pub fn editor(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let e = app.editor();
    let w = (area.width * 4 / 5).max(30).min(area.width);
    let inner_w = w.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    let part = e.part.map(|p| crate::tui::parts::part_label(app.reg(), p)).unwrap_or_default();
    lines.push(Line::from(Span::styled(app.editor_heading(&part), th.dim())));
    // The cursor is a marker character in the text while it is wrapped, then drawn as ▏.
    const MARK: char = '\u{E000}';
    let mut marked = e.text.clone();
    marked.insert(e.cursor.min(marked.len()), MARK);
    let mut cursor_line = 0;
    for para in marked.split('\n') {
        let wrapped = super::wrap(para, inner_w.saturating_sub(1));
        for l in if wrapped.is_empty() { vec![String::new()] } else { wrapped } {
            let spans: Vec<Span> = match l.split_once(MARK) {
                Some((before, after)) => {
                    cursor_line = lines.len();
                    vec![Span::styled(before.to_string(), th.bold()), Span::styled("▏", th.accent()), Span::styled(after.to_string(), th.bold())]
                }
                None => vec![Span::styled(l, th.bold())],
            };
            lines.push(Line::from(spans));
        }
    }
    // Too long for the screen: the lines around the cursor (the heading stays).
    let room = area.height.saturating_sub(4).max(2) as usize;
    if lines.len() > room {
        let first = (cursor_line + 2).saturating_sub(room).clamp(1, lines.len() - (room - 1));
        let heading = lines.remove(0);
        lines = std::iter::once(heading).chain(lines.into_iter().skip(first - 1).take(room - 1)).collect();
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = popup(area, w, h);
    let title = format!("What-if · {}", keymap::hints(Where::Editor, " · "));
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).block(block(app, title)), r);
}

/// The list of the item's what-if edits (`V`): each edited step, its number of versions, the
/// option its current version advocates, p(that option) original → edited, what the text
/// edits changed and whether it was saved.
pub fn edits(f: &mut Frame, area: Rect, app: &App, at: crate::tui::parts::Part) {
    let th = app.theme();
    let Some((item, e)) = app.current_entry() else { return };
    let rows = app.edit_rows(item);
    let sel = rows.iter().position(|r| r.part == at).unwrap_or(0);
    let w = (area.width * 9 / 10).max(40).min(area.width);
    let label_w = 24;
    let items: Vec<ListItem> = rows
        .iter()
        .map(|r| {
            let wrong = r.wrong.unwrap_or(e.wrong);
            let l = crate::protocol::letter(wrong);
            let mut spans = vec![
                Span::styled(pad(&crate::tui::parts::part_label(app.reg(), r.part), label_w), th.bold()),
                Span::styled(format!(" v{:<2}", r.versions), th.dim()),
                Span::raw(format!(" p({l}) {} → ", super::fmt_p(r.p_orig))),
                Span::styled(super::fmt_p(r.p_edited), th.accent()),
            ];
            if let Some(o) = r.wrong {
                spans.push(Span::styled(format!("  advocates {} (not {})", crate::protocol::letter(o), crate::protocol::letter(e.wrong)), th.wrong()));
            }
            if !r.what.is_empty() {
                let room = (w as usize).saturating_sub(2 + label_w + 24 + if r.wrong.is_some() { 20 } else { 0 }).max(8);
                spans.push(Span::raw(format!("  “{}”", super::trunc(&r.what.replace('\n', "⏎"), room))));
            }
            if r.saved {
                spans.push(Span::styled("  saved", th.correct()));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let h = items.len() as u16 + 2;
    let r = popup(area, w, h);
    f.render_widget(Clear, r);
    let title = format!("What-if edits · {} · {}", e.item.id, keymap::hints(Where::Edits, " · "));
    let list = List::new(items).block(block(app, title)).highlight_style(th.selected());
    let mut st = ListState::default().with_selected(Some(sel));
    f.render_stateful_widget(list, r, &mut st);
}
