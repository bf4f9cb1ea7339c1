//! Recovery: every operation for the current item — p(w), p(c), prediction, gap to clean, and
//! whether the single-item aggregate is clean-context-like under strict / main / loose. With
//! compared models: each model's p(w), gap to its own clean p(w), prediction and main-criterion
//! verdict side by side, and each model's minimal recovery operation.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{block, fmt_gap, fmt_p, message, pad, pending_text, trunc};
use crate::dialogue::DialogueItem;
use crate::metrics::criteria::Criterion;
use crate::tui::app::App;
use crate::dialogue::conditions::{explorer_sections, recovery_op};
use crate::dialogue::recipe::Group;
use crate::tui::model::{clean_like, criterion_check, item_mro, obs, Part};

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let Some((item, e)) = app.current_entry() else {
        message(f, area, app, "Recovery", "No item.");
        return;
    };
    let d = DialogueItem::from(e);
    if !app.compared().is_empty() {
        compare(f, area, app, item, e, &d);
        return;
    }
    let clean_s = app.score(item, Part::Curve(0));
    let clean_o = clean_s.map(|s| obs(s, &d));
    let [table_area, detail] = Layout::vertical([Constraint::Min(8), Constraint::Length(6)]).areas(area);

    let header = Row::new(["op", "operation", "p(w)", "p(c)", "pred", "gap", "strict", "main", "loose"]).style(th.header());
    let mut rows: Vec<Row> = Vec::new();
    let pred_cell = |s: Option<&crate::protocol::SlotScore>| -> Cell<'static> {
        match s {
            Some(s) if s.pred == e.wrong => Cell::from(Span::styled(format!("{} ✗", s.pred_letter()), th.wrong())),
            Some(s) if s.pred == e.item.correct => Cell::from(Span::styled(format!("{} ✓", s.pred_letter()), th.correct())),
            Some(s) => Cell::from(s.pred_letter().to_string()),
            None => Cell::from(Span::styled("·", th.dim())),
        }
    };
    rows.push(
        Row::new(vec![
            Cell::from("clean"),
            Cell::from(Span::styled("clean context (reference)", th.dim())),
            Cell::from(fmt_p(clean_s.and_then(|s| s.prob(e.wrong)))),
            Cell::from(fmt_p(clean_s.and_then(|s| s.prob(e.item.correct)))),
            pred_cell(clean_s),
            Cell::from(""),
            Cell::from(""),
            Cell::from(""),
            Cell::from(""),
        ])
        .style(th.dim()),
    );
    let mut selected = None;
    for (opens, o) in explorer_sections() {
        if opens == Some(Group::Appendix) {
            rows.push(Row::new(vec![Cell::from(""), Cell::from(Span::styled("appendix operations", th.dim()))]));
        }
        let part = Part::Op(o.key);
        if app.current_part() == part {
            selected = Some(rows.len());
        }
        let s = app.score(item, part);
        let x = s.map(|s| obs(s, &d));
        let gap = match (x, clean_o) {
            (Some(x), Some(c)) => Some(x.p_wrong - c.p_wrong),
            _ => None,
        };
        let flag = |c: &Criterion| -> Cell<'static> {
            match (x, clean_o) {
                (Some(x), Some(cl)) => {
                    let ok = clean_like(c, &cl, &x);
                    Cell::from(Span::styled(if ok { "✓ yes" } else { "✗ no" }, th.pass(ok)))
                }
                _ => Cell::from(Span::styled("·", th.dim())),
            }
        };
        let label = if s.is_none() {
            format!("{} · {}", o.name, pending_text(app, item, part))
        } else {
            o.name.to_string()
        };
        rows.push(Row::new(vec![
            Cell::from(Span::styled(o.short, th.bold())),
            Cell::from(label),
            Cell::from(fmt_p(x.map(|x| x.p_wrong))),
            Cell::from(fmt_p(x.map(|x| x.p_correct))),
            pred_cell(s),
            Cell::from(Span::styled(fmt_gap(gap), th.gap(gap.unwrap_or(f64::NAN)))),
            flag(&Criterion::STRICT),
            flag(&Criterion::MAIN),
            flag(&Criterion::LOOSE),
        ]));
    }
    let widths = [
        Constraint::Length(5),
        Constraint::Min(16),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(4),
        Constraint::Length(7),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(6),
    ];
    let title = format!("Recovery · {} · clean-like per item (single-item aggregates)", e.item.id);
    let table = Table::new(rows, widths)
        .header(header)
        .block(block(app, title))
        .column_spacing(1)
        .row_highlight_style(th.selected());
    let mut state = TableState::default().with_selected(selected);
    f.render_stateful_widget(table, table_area, &mut state);

    // Detail: minimal recovery operation and the checks of the selected operation.
    let b = block(app, "Criterion detail");
    let inner = b.inner(detail);
    f.render_widget(b, detail);
    let mut lines = Vec::new();
    let mro = clean_o.and_then(|cl| item_mro(&cl, |key| app.score(item, Part::Op(key)).map(|s| obs(s, &d))));
    let mro_txt = mro_text(mro);
    lines.push(Line::from(vec![
        Span::styled("minimal recovery operation (main): ", th.dim()),
        Span::styled(mro_txt, th.bold()),
    ]));
    match app.current_part() {
        Part::Op(k) => {
            let s = app.score(item, Part::Op(k));
            if let (Some(s), Some(cl)) = (s, clean_o) {
                let x = obs(s, &d);
                for (name, c) in [("strict", Criterion::STRICT), ("main", Criterion::MAIN), ("loose", Criterion::LOOSE)] {
                    let ch = criterion_check(&c, &cl, &x);
                    let mut spans = vec![Span::styled(format!("{name:<7}"), th.dim())];
                    for (lab, ok) in [
                        ("gap", ch.gap_ok),
                        ("acc", ch.accuracy_ok),
                        ("p(c)", ch.p_correct_ok),
                        ("H", ch.entropy_ok),
                        ("max p", ch.max_prob_ok),
                    ] {
                        spans.push(Span::styled(format!("{lab} {} ", if ok { "✓" } else { "✗" }), th.pass(ok)));
                    }
                    lines.push(Line::from(spans));
                }
            } else {
                lines.push(Line::from(Span::styled("(the selected operation has no score yet)", th.dim())));
            }
        }
        Part::Curve(_) | Part::Step(_) => lines.push(Line::from(Span::styled(
            "←/→ or j/k: select an operation (r: jump to R0) · Enter: its dialogue",
            th.dim(),
        ))),
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The operations with every model's columns side by side.
fn compare(f: &mut Frame, area: Rect, app: &App, item: usize, e: &crate::data::Selected, d: &DialogueItem) {
    let th = app.theme();
    let models: Vec<String> = app.shown_models().iter().map(|m| m.to_string()).collect();
    let [table_area, detail] = Layout::vertical([Constraint::Min(8), Constraint::Length(2 + models.len() as u16)]).areas(area);
    let clean: Vec<_> = models.iter().map(|m| app.score_of(m, item, Part::Curve(0)).map(|s| obs(s, d))).collect();
    // Per model: p(w), gap, pred, main.
    const PER: [(&str, u16); 4] = [("p(w)", 6), ("gap", 7), ("pred", 4), ("main", 5)];
    let mut head = vec![Cell::from("op"), Cell::from("operation")];
    for _ in &models {
        head.extend(PER.iter().map(|(n, _)| Cell::from(*n)));
    }
    let pred_cell = |s: Option<&crate::protocol::SlotScore>| -> Cell<'static> {
        match s {
            Some(s) if s.pred == e.wrong => Cell::from(Span::styled(format!("{} ✗", s.pred_letter()), th.wrong())),
            Some(s) if s.pred == e.item.correct => Cell::from(Span::styled(format!("{} ✓", s.pred_letter()), th.correct())),
            Some(s) => Cell::from(s.pred_letter().to_string()),
            None => Cell::from(Span::styled("·", th.dim())),
        }
    };
    let mut rows = Vec::new();
    let mut clean_row = vec![Cell::from("clean"), Cell::from(Span::styled("clean context (reference)", th.dim()))];
    for m in &models {
        let s = app.score_of(m, item, Part::Curve(0));
        clean_row.extend([Cell::from(fmt_p(s.and_then(|s| s.prob(e.wrong)))), Cell::from(""), pred_cell(s), Cell::from("")]);
    }
    rows.push(Row::new(clean_row).style(th.dim()));
    let mut selected = None;
    for (opens, o) in explorer_sections() {
        if opens == Some(Group::Appendix) {
            rows.push(Row::new(vec![Cell::from(""), Cell::from(Span::styled("appendix operations", th.dim()))]));
        }
        let part = Part::Op(o.key);
        if app.current_part() == part {
            selected = Some(rows.len());
        }
        let mut cells = vec![Cell::from(Span::styled(o.short, th.bold())), Cell::from(o.name)];
        for (i, m) in models.iter().enumerate() {
            let s = app.score_of(m, item, part);
            let x = s.map(|s| obs(s, d));
            let gap = match (x, clean[i]) {
                (Some(x), Some(c)) => Some(x.p_wrong - c.p_wrong),
                _ => None,
            };
            let main = match (x, clean[i]) {
                (Some(x), Some(c)) => {
                    let ok = clean_like(&Criterion::MAIN, &c, &x);
                    Cell::from(Span::styled(if ok { "✓ yes" } else { "✗ no" }, th.pass(ok)))
                }
                _ => Cell::from(Span::styled("·", th.dim())),
            };
            cells.extend([
                Cell::from(fmt_p(x.map(|x| x.p_wrong))),
                Cell::from(Span::styled(fmt_gap(gap), th.gap(gap.unwrap_or(f64::NAN)))),
                pred_cell(s),
                main,
            ]);
        }
        rows.push(Row::new(cells));
    }
    // Each model's four columns take `group` cells (with the spaces before them); the model's
    // name is written over them on the line above the table.
    let b = block(app, format!("Recovery · {} · clean-like under main per model (single-item aggregates)", e.item.id));
    let inner = b.inner(table_area);
    f.render_widget(b, table_area);
    let [names_area, tab_area] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    let group: usize = PER.iter().map(|(_, w)| *w as usize + 1).sum();
    let op_w = (inner.width as usize).saturating_sub(6 + group * models.len()).max(8);
    let mut names = vec![Span::raw(" ".repeat(5 + 1 + op_w))];
    for (i, m) in models.iter().enumerate() {
        names.push(Span::raw(" "));
        names.push(Span::styled(pad(&trunc(m, group - 2), group - 1), th.model(i)));
    }
    f.render_widget(Paragraph::new(Line::from(names)), names_area);
    let mut widths = vec![Constraint::Length(5), Constraint::Length(op_w as u16)];
    for _ in &models {
        widths.extend(PER.iter().map(|(_, w)| Constraint::Length(*w)));
    }
    let table = Table::new(rows, widths)
        .header(Row::new(head).style(th.header()))
        .column_spacing(1)
        .row_highlight_style(th.selected());
    let mut state = TableState::default().with_selected(selected);
    f.render_stateful_widget(table, tab_area, &mut state);

    let b = block(app, "Minimal recovery operation (main)");
    let inner = b.inner(detail);
    f.render_widget(b, detail);
    let mut lines = Vec::new();
    for (i, m) in models.iter().enumerate() {
        let mro = clean[i].and_then(|cl| item_mro(&cl, |key| app.score_of(m, item, Part::Op(key)).map(|s| obs(s, d))));
        let txt = mro_text(mro);
        lines.push(Line::from(vec![Span::styled(format!("{:<24}", trunc(m, 23)), th.model(i)), Span::styled(txt, th.bold())]));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The minimal recovery operation as shown: its short name, "not restored" when no operation
/// restores the item, or a wait note while scores are missing.
fn mro_text(mro: Option<Option<&str>>) -> String {
    match mro {
        Some(Some(key)) => recovery_op(key).map_or(key, |o| o.short).to_string(),
        Some(None) => "not restored".to_string(),
        None => "… (waiting for scores)".to_string(),
    }
}
