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
            ("e", "expand / collapse the question blocks (Dialogue)"),
            ("PgUp/PgDn", "scroll the conversation"),
            ("Enter", "Recovery: show the operation's dialogue"),
        ],
    ),
    (
        "Tables",
        &[
            ("h/l, j/k, H/L", "file / scroll / pan"),
            ("b", "run the hierarchy suite on this dataset in the background"),
            ("x", "stop the batch after the item in flight"),
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
