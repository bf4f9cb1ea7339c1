//! Recovery: every operation for the current item — p(w), p(c), prediction, gap to clean, and
//! whether the single-item aggregate is clean-context-like under strict / main / loose. With
//! compared models: each model's p(w), gap to its own clean p(w), prediction and main-criterion
//! verdict side by side, and each model's minimal recovery operation.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::{block, fmt_gap, fmt_p, message, pad, pending_text, trunc};
use crate::dialogue::conditions::opens_section;
use crate::dialogue::recipe::Group;
use crate::metrics::criteria::Family;
use crate::tui::action::{Action, Motion};
use crate::tui::app::App;
use crate::tui::keymap::{key_at, key_for, pairs_for, Where};
use crate::tui::parts::Part;
use crate::tui::recovery_rows::{Cell as RowCell, Mro, PredKind};
use crate::tui::screen::View;
use crate::tui::theme::Theme;

/// The prediction cell: its letter, ✗ on the advocated option, ✓ on the correct one.
fn pred_cell(th: &Theme, c: &RowCell) -> Cell<'static> {
    match c.pred {
        Some(p) if p.kind == PredKind::Advocated => Cell::from(Span::styled(format!("{} ✗", p.letter), th.wrong())),
        Some(p) if p.kind == PredKind::Correct => Cell::from(Span::styled(format!("{} ✓", p.letter), th.correct())),
        Some(p) => Cell::from(p.letter.to_string()),
        None => Cell::from(Span::styled("·", th.dim())),
    }
}

/// A clean-like verdict cell.
fn verdict_cell(th: &Theme, ok: Option<bool>) -> Cell<'static> {
    match ok {
        Some(ok) => Cell::from(Span::styled(if ok { "✓ yes" } else { "✗ no" }, th.pass(ok))),
        None => Cell::from(Span::styled("·", th.dim())),
    }
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let th = app.theme();
    let Some((item, e)) = app.current_entry() else {
        message(f, area, app, "Recovery", "No item.");
        return;
    };
    let rows_model = app.recovery_rows();
    if !app.compared().is_empty() {
        compare(f, area, app, e, &rows_model.models);
        return;
    }
    let Some(m) = rows_model.model(0) else { return };
    let [table_area, detail] = Layout::vertical([Constraint::Min(8), Constraint::Length(6)]).areas(area);

    let header = Row::new(["op", "operation", "p(w)", "p(c)", "pred", "gap", "strict", "main", "loose"]).style(th.header());
    let mut rows: Vec<Row> = Vec::new();
    rows.push(
        Row::new(vec![
            Cell::from("clean"),
            Cell::from(Span::styled("clean context (reference)", th.dim())),
            Cell::from(fmt_p(m.clean.p_wrong)),
            Cell::from(fmt_p(m.clean.p_correct)),
            pred_cell(th, &m.clean),
            Cell::from(""),
            Cell::from(""),
            Cell::from(""),
            Cell::from(""),
        ])
        .style(th.dim()),
    );
    let mut selected = None;
    let mut group = None;
    for (o, x) in &m.ops {
        if opens_section(&mut group, o) == Some(Group::Appendix) {
            rows.push(Row::new(vec![Cell::from(""), Cell::from(Span::styled("appendix operations", th.dim()))]));
        }
        let part = Part::Op(o.key);
        if app.current_part() == part {
            selected = Some(rows.len());
        }
        let label = if !x.scored {
            format!("{} · {}", o.name, pending_text(app, item, part))
        } else {
            o.name.to_string()
        };
        rows.push(Row::new(vec![
            Cell::from(Span::styled(o.short, th.bold())),
            Cell::from(label),
            Cell::from(fmt_p(x.p_wrong)),
            Cell::from(fmt_p(x.p_correct)),
            pred_cell(th, x),
            Cell::from(Span::styled(fmt_gap(x.gap), th.gap(x.gap_verdict))),
            verdict_cell(th, x.clean_like(Family::Strict)),
            verdict_cell(th, x.clean_like(Family::Main)),
            verdict_cell(th, x.clean_like(Family::Loose)),
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
    lines.push(Line::from(vec![
        Span::styled("minimal recovery operation (main): ", th.dim()),
        Span::styled(mro_text(m.mro), th.bold()),
    ]));
    match app.current_part() {
        Part::Op(k) => match m.op(k).filter(|c| c.checks.is_some()) {
            Some(x) => {
                for family in Family::ALL {
                    let Some(ch) = x.check(family) else { continue };
                    let mut spans = vec![Span::styled(format!("{:<7}", family.name()), th.dim())];
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
            }
            None => lines.push(Line::from(Span::styled("(the selected operation has no score yet)", th.dim()))),
        },
        Part::Curve(_) | Part::Step(_) => {
            let pairs = pairs_for(Action::MoveStep(Motion::By(-1)), Action::MoveStep(Motion::By(1)));
            let (first, last) = (pairs.first().cloned().unwrap_or_default(), pairs.last().cloned().unwrap_or_default());
            let (jump, open) = (key_for(Action::ToggleRampOps), key_at(Where::Recovery, Action::ShowView(View::Dialogue)));
            lines.push(Line::from(Span::styled(
                format!("{first} or {last}: select an operation ({jump}: jump to R0) · {open}: its dialogue"),
                th.dim(),
            )))
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The operations with every model's columns side by side.
fn compare(f: &mut Frame, area: Rect, app: &App, e: &crate::data::Selected, models: &[crate::tui::recovery_rows::ModelRows]) {
    let th = app.theme();
    let [table_area, detail] = Layout::vertical([Constraint::Min(8), Constraint::Length(2 + models.len() as u16)]).areas(area);
    // Per model: p(w), gap, pred, main.
    const PER: [(&str, u16); 4] = [("p(w)", 6), ("gap", 7), ("pred", 4), ("main", 5)];
    let mut head = vec![Cell::from("op"), Cell::from("operation")];
    for _ in models {
        head.extend(PER.iter().map(|(n, _)| Cell::from(*n)));
    }
    let mut rows = Vec::new();
    let mut clean_row = vec![Cell::from("clean"), Cell::from(Span::styled("clean context (reference)", th.dim()))];
    for m in models {
        clean_row.extend([Cell::from(fmt_p(m.clean.p_wrong)), Cell::from(""), pred_cell(th, &m.clean), Cell::from("")]);
    }
    rows.push(Row::new(clean_row).style(th.dim()));
    let mut selected = None;
    let ops = models.first().map_or(&[][..], |m| &m.ops[..]);
    let mut group = None;
    for (j, (o, _)) in ops.iter().enumerate() {
        if opens_section(&mut group, o) == Some(Group::Appendix) {
            rows.push(Row::new(vec![Cell::from(""), Cell::from(Span::styled("appendix operations", th.dim()))]));
        }
        let part = Part::Op(o.key);
        if app.current_part() == part {
            selected = Some(rows.len());
        }
        let mut cells = vec![Cell::from(Span::styled(o.short, th.bold())), Cell::from(o.name)];
        for m in models {
            let x = m.ops[j].1;
            cells.extend([
                Cell::from(fmt_p(x.p_wrong)),
                Cell::from(Span::styled(fmt_gap(x.gap), th.gap(x.gap_verdict))),
                pred_cell(th, &x),
                verdict_cell(th, x.clean_like(Family::Main)),
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
        names.push(Span::styled(pad(&trunc(&m.model, group - 2), group - 1), th.model(i)));
    }
    f.render_widget(Paragraph::new(Line::from(names)), names_area);
    let mut widths = vec![Constraint::Length(5), Constraint::Length(op_w as u16)];
    for _ in models {
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
        lines.push(Line::from(vec![Span::styled(format!("{:<24}", trunc(&m.model, 23)), th.model(i)), Span::styled(mro_text(m.mro), th.bold())]));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The minimal recovery operation as shown: its short name, "not restored" when no operation
/// restores the item, or a wait note while scores are missing.
fn mro_text(mro: Mro) -> String {
    match mro {
        Mro::Op(short) => short.to_string(),
        Mro::NotRestored => "not restored".to_string(),
        Mro::Waiting => "… (waiting for scores)".to_string(),
    }
}
