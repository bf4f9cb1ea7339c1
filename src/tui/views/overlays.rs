//! The help overlay and the model switcher.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, List, ListItem, ListState, Paragraph};
use ratatui::Frame;

use super::{block, pad};
use crate::tui::app::App;

/// Keys, per view (also the README's key list).
pub(crate) const HELP: &[(&str, &[(&str, &str)])] = &[
    (
        "Everywhere",
        &[
            ("1-6, Tab", "Items, Dialogue, Trace, Slot, Recovery, Tables"),
            ("?", "this help (any key closes it)"),
            ("m", "model switcher: Enter shows a model, c compares one"),
            ("q, Ctrl-C", "quit (immediately, even while scoring)"),
        ],
    ),
    (
        "Items",
        &[
            ("j/k, ↑/↓", "move (the selected item is scored first)"),
            ("g/G, PgUp/PgDn", "top / bottom / page"),
            ("Enter", "open the item's dialogue"),
            ("s / S", "cycle the sort column (compared models' gaps too) / reverse"),
            ("/", "filter on id and question (Enter keeps it, Esc clears it)"),
        ],
    ),
    (
        "Dialogue, Trace, Slot, Recovery",
        &[
            ("←/→, h/l, j/k", "previous / next step (ramp steps, then R0…R7)"),
            ("r", "jump between the ramp and the operations"),
            ("n/p, ]/[", "next / previous item"),
            ("e, PgUp/PgDn", "Dialogue: expand / collapse the question blocks; scroll"),
            ("a, E, u, S", "Dialogue: model's own words · what-if edit / undo / save"),
            ("Enter", "Recovery: show the operation's dialogue"),
        ],
    ),
    (
        "Tables",
        &[
            ("h/l, j/k, H/L", "file / scroll / pan"),
            ("[/], Enter", "Runs: previous / next run of the data directory; open it"),
            ("b / x", "run the hierarchy suite here in the background / stop it"),
        ],
    ),
    (
        "Model switcher (m)",
        &[
            ("j/k, Enter", "move / show this model (loads in the background)"),
            ("c", "compare this model with the shown one, or stop comparing it"),
        ],
    ),
];

fn popup(area: Rect, w: u16, h: u16) -> Rect {
    area.centered(Constraint::Length(w.min(area.width)), Constraint::Length(h.min(area.height)))
}

pub fn help(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let mut lines: Vec<Line> = Vec::new();
    for (section, keys) in HELP {
        lines.push(Line::from(Span::styled(*section, th.title())));
        for (k, what) in *keys {
            lines.push(Line::from(vec![Span::styled(format!("  {}", pad(k, 16)), th.bold()), Span::raw(*what)]));
        }
    }
    lines.push(Line::from(Span::styled("p(w) = p(advocated wrong) · ✓ correct · ✗ advocated wrong · ▶ predicted", th.dim())));
    let h = lines.len() as u16 + 2;
    let r = popup(area, 80, h);
    let room = r.height.saturating_sub(2) as usize;
    let max_scroll = lines.len().saturating_sub(room);
    let scroll = app.help_scroll().min(max_scroll);
    let title = if max_scroll > 0 { "Help · j/k scroll · other keys close" } else { "Help · any key closes" };
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).scroll((scroll as u16, 0)).block(block(app, title)), r);
}

pub fn models(f: &mut Frame, area: Rect, app: &App, sel: usize) {
    let th = app.theme();
    let shown = app.shown_models();
    let items: Vec<ListItem> = app
        .model_choices()
        .into_iter()
        .map(|m| {
            let lane = shown.iter().position(|k| *k == m.key);
            let (mark, mark_st) = match lane {
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
                Span::styled(pad(&m.key, 20), if lane == Some(0) { th.bold() } else { st }),
                Span::styled(format!(" {state} "), if m.present { th.correct() } else { th.dim() }),
                Span::styled(m.name.clone(), st),
            ];
            if matches!(lane, Some(i) if i > 0) {
                spans.push(Span::styled(" (compared)", th.dim()));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let h = items.len() as u16 + 2;
    let r = popup(area, 76, h);
    f.render_widget(Clear, r);
    let list = List::new(items)
        .block(block(app, "Model · Enter show · c compare · Esc close"))
        .highlight_style(th.selected());
    let mut st = ListState::default().with_selected(Some(sel));
    f.render_stateful_widget(list, r, &mut st);
}

/// The what-if editor (`E` in the Dialogue): the message of the step's final turn, typed over.
pub fn editor(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let e = app.editor();
    let w = (area.width * 4 / 5).max(30).min(area.width);
    let inner_w = w.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    let part = e.part.map(crate::tui::model::part_label).unwrap_or_default();
    lines.push(Line::from(Span::styled(format!("The message of the final turn of {part} (the question block follows it):"), th.dim())));
    let mut text_lines: Vec<String> = Vec::new();
    for para in e.text.split('\n') {
        let wrapped = super::wrap(para, inner_w.saturating_sub(1));
        if wrapped.is_empty() {
            text_lines.push(String::new());
        } else {
            text_lines.extend(wrapped);
        }
    }
    if text_lines.is_empty() {
        text_lines.push(String::new());
    }
    let last = text_lines.len() - 1;
    for (i, l) in text_lines.into_iter().enumerate() {
        let mut spans = vec![Span::styled(l, th.bold())];
        if i == last {
            spans.push(Span::styled("▏", th.accent()));
        }
        lines.push(Line::from(spans));
    }
    let room = area.height.saturating_sub(4) as usize;
    if lines.len() > room {
        let cut = lines.len() - room;
        lines.drain(1..=cut.min(lines.len() - 1));
    }
    let h = (lines.len() as u16 + 2).min(area.height);
    let r = popup(area, w, h);
    let title = "What-if · Enter score · Alt-Enter new line · Ctrl-U clear · Esc cancel";
    f.render_widget(Clear, r);
    f.render_widget(Paragraph::new(lines).block(block(app, title)), r);
}
