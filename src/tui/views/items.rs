//! Items: one row per selected item — id, category, the start of the question, its clean and R0
//! p(advocated wrong), the gap (and each compared model's gap) and the wrong-following mark;
//! values fill in as the background scoring (or the shared score store) reaches each item.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{block, fmt_gap, fmt_p, option_of, trunc, width};
use crate::tui::app::App;
use crate::tui::keymap::{hints, Where};
use crate::tui::item_list::SortKey;
use crate::tui::parts::{ramp_parts, Part};

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let list = app.items();
    let [table_area, foot] = Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(area);
    let arrow = |k: SortKey| -> &'static str {
        if list.sort() != k {
            ""
        } else if list.reversed() == matches!(k, SortKey::Index | SortKey::Id) {
            "▼"
        } else {
            "▲"
        }
    };
    let h = |name: &str, k: SortKey| Cell::from(format!("{name}{}", arrow(k)));
    let compared = app.compared();
    // One dataset: its name is in the title, the column shows the category only.
    let several = list.entries().iter().any(|e| list.entries().first().is_some_and(|f| f.item.dataset != e.item.dataset));
    let cat_text = |e: &crate::data::Selected| {
        if several {
            format!("{} · {}", e.item.dataset, e.item.category)
        } else {
            e.item.category.clone()
        }
    };
    let cat_head = if several { "dataset · category" } else { "category" };
    let mut head = vec![
        h("#", SortKey::Index),
        h("id", SortKey::Id),
        Cell::from(cat_head),
        Cell::from("question"),
        h("clean p(w)", SortKey::Clean),
        h("R0 p(w)", SortKey::R0),
        h("gap", SortKey::Gap),
    ];
    for (k, m) in compared.iter().enumerate() {
        head.push(Cell::from(Span::styled(format!("{}{}", trunc(m, 6), arrow(SortKey::CmpGap(k))), th.model(k + 1))));
    }
    head.extend([Cell::from("R0"), h("WF", SortKey::Wf)]);
    let header = Row::new(head).style(th.header());
    let ramp = ramp_parts();
    let rows: Vec<Row> = list
        .visible()
        .iter()
        .filter_map(|&i| Some((i, list.entry(i)?)))
        .map(|(i, e)| {
            let sum = app.summary(i);
            let (clean, r0, pred, wf, gap) = (sum.clean_pw, sum.r0_pw, sum.r0_pred, sum.wf, sum.gap());
            let busy = ramp.iter().any(|&p| app.engines().in_flight(i, p));
            let err = ramp.iter().any(|&p| app.error(i, p).is_some());
            let mark = if err {
                Span::styled("!", th.error())
            } else if busy {
                Span::styled("…", th.warn())
            } else {
                Span::raw(" ")
            };
            let pred_cell = match pred {
                Some(l) => {
                    let st = if Some(true) == wf {
                        th.wrong()
                    } else if option_of(l) == Some(e.item.correct) {
                        th.correct()
                    } else {
                        th.plain()
                    };
                    Cell::from(Span::styled(l.to_string(), st))
                }
                None => Cell::from(""),
            };
            let wf_cell = match wf {
                Some(true) => Cell::from(Span::styled("✗W", th.wrong())),
                Some(false) => Cell::from(Span::styled("·", th.dim())),
                None => Cell::from(""),
            };
            let mut cells = vec![
                Cell::from(Line::from(vec![Span::raw(format!("{:>3}", e.subset_index.saturating_add(1))), mark])),
                Cell::from(e.item.id.clone()),
                Cell::from(Span::styled(cat_text(e), th.dim())),
                Cell::from(e.item.question.replace(['\n', '\r'], " ")),
                Cell::from(format!("{:>11}", fmt_p(clean))),
                Cell::from(format!("{:>7}", fmt_p(r0))),
                Cell::from(Span::styled(format!("{:>6}", fmt_gap(gap)), th.gap(sum.gap_verdict()))),
            ];
            for m in &compared {
                let cmp = app.summary_of_model(m, i);
                cells.push(Cell::from(Span::styled(format!("{:>7}", fmt_gap(cmp.gap())), th.gap(cmp.gap_verdict()))));
            }
            cells.extend([pred_cell, wf_cell]);
            Row::new(cells)
        })
        .collect();
    let id_w = list.entries().iter().map(|e| e.item.id.len()).max().unwrap_or(8).clamp(8, 28) as u16;
    let cat_w = list.entries().iter().map(|e| width(&cat_text(e))).max().unwrap_or(8).clamp(8, 18) as u16;
    let mut widths = vec![
        Constraint::Length(4),
        Constraint::Length(id_w),
        Constraint::Length(cat_w),
        Constraint::Fill(1),
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Length(6),
    ];
    widths.extend(compared.iter().map(|_| Constraint::Length(7)));
    widths.extend([Constraint::Length(2), Constraint::Length(3)]);
    let done = list.visible().iter().filter(|&&i| app.score(i, Part::curve(crate::dialogue::CurvePoint::StrongReset)).is_some()).count();
    let title = format!("Items · {} · {done}/{} scored", app.dataset_label(), list.visible().len());
    let table = Table::new(rows, widths)
        .header(header)
        .block(block(app, title))
        .column_spacing(1)
        .row_highlight_style(th.selected())
        .highlight_symbol("›");
    let mut state = TableState::default().with_selected(if list.visible().is_empty() { None } else { Some(list.selected_pos()) });
    f.render_stateful_widget(table, table_area, &mut state);

    let mut spans = Vec::new();
    if list.filter_mode() {
        spans.push(Span::styled(" filter: ", th.accent()));
        spans.push(Span::raw(list.filter().to_string()));
        spans.push(Span::styled("▏", th.accent()));
        spans.push(Span::styled(format!("  {}", hints(Where::Filter, " · ")), th.dim()));
    } else {
        let name = match list.sort() {
            SortKey::CmpGap(k) => format!("gap of {}", compared.get(k).copied().unwrap_or("?")),
            s => s.name().to_string(),
        };
        spans.push(Span::styled(format!(" sort {name}{}", if list.reversed() { " (rev)" } else { "" }), th.dim()));
        if !list.filter().is_empty() {
            spans.push(Span::styled(format!(" · filter \"{}\"", list.filter()), th.accent()));
        }
        spans.push(Span::styled(format!(" · {}", hints(Where::Items, " · ")), th.dim()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), foot);
}
