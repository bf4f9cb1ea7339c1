//! Trace: p(advocated wrong) and p(correct) along clean → weak → medium → strong → medium reset →
//! R0, the clean level as a reference line, and each recovery operation's p(w) beside it; with
//! what-if versions of the item (Dialogue: E, D/I, w), the what-if curve beside the original
//! (p of the option the versions advocate, each step's version where it has one). With
//! compared models: a p(w) chart and a p(c) chart with one curve per model (its own colour and
//! marker, named in the title), every model's ramp values, and each operation's p(w) per model.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};
use ratatui::Frame;

use super::{bar, block, fmt_p, message, pad, trunc};
use crate::data::Selected;
use crate::tui::app::App;
use crate::dialogue::recipe::Group;
use crate::dialogue::CURVE;
use crate::tui::parts::Part;
use crate::tui::theme::model_marker;
use crate::tui::whatif::WhatIfCurve;

/// The threshold the legend names: a recovery row is green when the main criterion's gap check
/// passes (the rows' verdicts, see `recovery_rows`).
const GREEN_GAP: f64 = crate::metrics::criteria::Criterion::MAIN.wrong_gap;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let Some((item, e)) = app.current_entry() else {
        message(f, area, app, "Trace", "No item.");
        return;
    };
    if !app.compared().is_empty() {
        compare(f, area, app, item, e);
        return;
    }
    let ops_w = (area.width / 3).clamp(28, 40);
    let [left, right] = Layout::horizontal([Constraint::Min(36), Constraint::Length(ops_w)]).areas(area);
    // Computed once a frame, drawn in the chart and the values table.
    let curve = app.whatif_curve(item);
    let rows = if curve.is_some() { 7 } else { 6 };
    let [chart_area, table_area] = Layout::vertical([Constraint::Min(8), Constraint::Length(rows)]).areas(left);
    chart(f, chart_area, app, item, e, curve.as_ref());
    numbers(f, table_area, app, item, e, curve.as_ref());
    ops(f, right, app, item, e);
}

/// x of ramp step `k` (0 = clean … 5 = R0) on a [0, 1] axis, placed under ratatui's x labels:
/// the first and last labels sit at the ends, label j of the n = 6 in between is centred at
/// (j + ½) / n of the width.
fn xpos(k: usize) -> f64 {
    match k {
        0 => 0.0,
        5 => 1.0,
        k => (k as f64 + 0.5) / 6.0,
    }
}

fn chart(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected, curve: Option<&WhatIfCurve>) {
    let th = app.theme();
    let mut pw: Vec<(f64, f64)> = Vec::new();
    let mut pc: Vec<(f64, f64)> = Vec::new();
    for k in 0..6 {
        if let Some(s) = app.score(item, Part::Curve(k)) {
            pw.extend(s.prob(e.wrong).map(|p| (xpos(k), p)));
            pc.extend(s.prob(e.item.correct).map(|p| (xpos(k), p)));
        }
    }
    let wif = curve.map(|c| c.wrong);
    let pwif: Vec<(f64, f64)> = match curve {
        Some(c) => (0..6).filter_map(|k| c.points[k].map(|p| (xpos(k), p))).collect(),
        None => Vec::new(),
    };
    let clean = app.score(item, Part::Curve(0)).and_then(|s| s.prob(e.wrong));
    let clean_line: Vec<(f64, f64)> = clean.map(|c| vec![(0.0, c), (1.0, c)]).unwrap_or_default();
    let cursor: Vec<(f64, f64)> = match app.current_part() {
        Part::Curve(k) if k < 6 => (0..=20).map(|i| (xpos(k), i as f64 / 20.0)).collect(),
        _ => vec![],
    };
    let color = th.color;
    let mut sets = vec![
        Dataset::default()
            .name("clean p(w)")
            .marker(if color { Marker::Braille } else { Marker::Dot })
            .graph_type(GraphType::Line)
            .style(th.dim())
            .data(&clean_line),
        Dataset::default()
            .name("p(correct)")
            .marker(if color { Marker::Braille } else { Marker::Dot })
            .graph_type(GraphType::Line)
            .style(th.correct())
            .data(&pc),
        Dataset::default()
            .name("p(adv. wrong)")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(th.wrong())
            .data(&pw),
    ];
    if !pwif.is_empty() {
        sets.push(Dataset::default().name("what-if p(w)").marker(Marker::Braille).graph_type(GraphType::Line).style(th.accent()).data(&pwif));
    }
    if !cursor.is_empty() {
        sets.insert(0, Dataset::default().marker(Marker::Braille).graph_type(GraphType::Scatter).style(th.dim()).data(&cursor));
    }
    let labels: Vec<Line> = CURVE[..6]
        .iter()
        .map(|p| Line::from(if area.width < 70 { p.tiny() } else { p.short() }))
        .collect();
    // The legend goes in the title, where it never covers a line.
    let (lw, lc) = (crate::protocol::letter(e.wrong), crate::protocol::letter(e.item.correct));
    let mut title = if area.width >= 90 {
        Line::from(vec![
            Span::styled(format!(" Trace · {} · ", e.item.id), th.title()),
            Span::styled(format!("━ p({lw}) advocated wrong"), th.wrong()),
            Span::raw("  "),
            Span::styled(format!("━ p({lc}) correct"), th.correct()),
            Span::raw("  "),
            Span::styled("┈ clean p(w) ", th.dim()),
        ])
    } else {
        Line::from(vec![
            Span::styled(" Trace ", th.title()),
            Span::styled(format!("━ p({lw}) wrong "), th.wrong()),
            Span::styled(format!("━ p({lc}) correct "), th.correct()),
            Span::styled("┈ clean ", th.dim()),
        ])
    };
    if let Some(ww) = wif {
        title.push_span(Span::styled(format!(" ━ what-if p({}) ", crate::protocol::letter(ww)), th.accent()));
    }
    let chart_block = ratatui::widgets::Block::bordered().title(title).border_style(th.dim());
    let chart = Chart::new(sets)
        .block(chart_block)
        .x_axis(Axis::default().bounds([0.0, 1.0]).labels(labels).style(th.dim()))
        .y_axis(Axis::default().bounds([0.0, 1.0]).labels(vec![Line::from("0"), Line::from("0.5"), Line::from("1")]).style(th.dim()))
        .legend_position(None);
    f.render_widget(chart, area);
}

/// p(the option a what-if version advocates) of a step's version, once scored.
fn whatif_p(app: &App, item: usize, part: Part) -> Option<f64> {
    let wi = app.whatif(item, part)?;
    app.whatif_score(item, part).and_then(|s| s.prob(wi.wrong))
}

fn numbers(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected, curve: Option<&WhatIfCurve>) {
    let th = app.theme();
    let b = block(app, "Ramp values");
    let inner = b.inner(area);
    f.render_widget(b, area);
    let cw = ((inner.width as usize).saturating_sub(7) / 7).clamp(5, 9);
    let mut head = vec![Span::styled(pad("", 7), th.dim())];
    let mut r_w = vec![Span::styled(pad("p(w)", 7), th.wrong())];
    let mut r_c = vec![Span::styled(pad("p(c)", 7), th.correct())];
    let mut r_p = vec![Span::styled(pad("pred", 7), th.dim())];
    // "w-if A": the what-if p of option A (the option the versions advocate).
    let mut r_x = vec![Span::styled(pad(&format!("w-if {}", curve.map_or('?', |c| crate::protocol::letter(c.wrong))), 7), th.accent())];
    for (k, point) in CURVE.iter().enumerate() {
        let cur = app.current_part() == Part::Curve(k);
        let hs = if cur { th.selected() } else { th.dim() };
        let name = if cw > point.short().len() { point.short() } else { point.tiny() };
        head.push(Span::styled(pad(&format!("{:>w$}", name, w = cw - 1), cw), hs));
        let s = app.score(item, Part::Curve(k));
        r_w.push(Span::raw(format!("{:>w$} ", fmt_p(s.and_then(|s| s.prob(e.wrong))), w = cw - 1)));
        r_c.push(Span::raw(format!("{:>w$} ", fmt_p(s.and_then(|s| s.prob(e.item.correct))), w = cw - 1)));
        let (txt, st) = match s {
            Some(s) if s.pred == e.wrong => (format!("{}✗", s.pred_letter()), th.wrong()),
            Some(s) if s.pred == e.item.correct => (format!("{}✓", s.pred_letter()), th.correct()),
            Some(s) => (s.pred_letter().to_string(), th.plain()),
            None => ("·".into(), th.dim()),
        };
        r_p.push(Span::styled(format!("{:>w$} ", txt, w = cw - 1), st));
        // The what-if row: only the steps with a version (the rest are the original's).
        let x = curve.filter(|c| c.edited[k]).map(|c| fmt_p(c.points[k]));
        r_x.push(Span::styled(format!("{:>w$} ", x.unwrap_or_default(), w = cw - 1), th.accent()));
    }
    let mut lines = vec![Line::from(head), Line::from(r_w), Line::from(r_c), Line::from(r_p)];
    if curve.is_some() {
        lines.push(Line::from(r_x));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn ops(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected) {
    let th = app.theme();
    let b = block(app, "Recovery p(w)");
    let inner = b.inner(area);
    f.render_widget(b, area);
    let w = inner.width as usize;
    let clean = app.score(item, Part::Curve(0)).and_then(|s| s.prob(e.wrong));
    // "R6' ▕bar┊  ▏0.123"
    let bar_w = w.saturating_sub(6 + 6).max(4);
    let mut lines = vec![Line::from(Span::styled(format!("{:<6}{}", "", "┊ = clean level"), th.dim()))];
    let row = |label: &str, p: Option<f64>, clean: Option<f64>, st: Style, cur: bool| -> Line<'static> {
        let mut cells: Vec<char> = bar(p.unwrap_or(f64::NAN), bar_w).chars().collect();
        if let Some(c) = clean {
            let pos = ((c.clamp(0.0, 1.0) * bar_w as f64).round() as usize).min(bar_w.saturating_sub(1));
            if let Some(cell) = cells.get_mut(pos).filter(|c| **c == ' ') {
                *cell = '┊';
            }
        }
        let lab_st = if cur { th.selected() } else { th.bold() };
        Line::from(vec![
            Span::styled(format!("{label:<5}"), lab_st),
            Span::raw(" "),
            Span::styled(cells.into_iter().collect::<String>(), st),
            Span::raw(format!(" {}", fmt_p(p))),
        ])
    };
    lines.push(row("clean", clean, clean, th.dim(), app.current_part() == Part::Curve(0)));
    let rows = app.recovery_rows();
    for (opens, o) in app.reg().explorer_sections() {
        let s = app.score(item, Part::Op(o.key));
        let p = s.and_then(|s| s.prob(e.wrong));
        let verdict = rows.model(0).and_then(|m| m.op(o.key)).map(|c| c.gap_verdict);
        let st = th.gap_check(verdict.unwrap_or_default());
        if opens == Some(Group::Appendix) {
            lines.push(Line::from(Span::styled("appendix", th.dim())));
        }
        lines.push(row(o.short, p, clean, st, app.current_part() == Part::Op(o.key)));
        // The operation's what-if version, on the option it advocates (against that option's
        // clean level).
        if let Some(wi) = app.whatif(item, Part::Op(o.key)) {
            let x = whatif_p(app, item, Part::Op(o.key));
            let c = app.score(item, Part::Curve(0)).and_then(|s| s.prob(wi.wrong));
            lines.push(row(&format!(" ↳{}", crate::protocol::letter(wi.wrong)), x, c, th.accent(), false));
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(format!("green: |gap| ≤ {GREEN_GAP}"), th.dim())));
    f.render_widget(Paragraph::new(lines), inner);
}

// ---------------------------------------------------------------------------------------------
// Compared models
// ---------------------------------------------------------------------------------------------

fn compare(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected) {
    let models: Vec<String> = app.engines().shown_models().iter().map(|m| m.to_string()).collect();
    let ops_w = (area.width / 3).clamp(28, 44);
    let [left, right] = Layout::horizontal([Constraint::Min(36), Constraint::Length(ops_w)]).areas(area);
    let table_h = (3 + 3 * models.len() as u16).min(left.height / 2);
    let [charts, table_area] = Layout::vertical([Constraint::Min(8), Constraint::Length(table_h)]).areas(left);
    let [top, bottom] = Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    let (lw, lc) = (crate::protocol::letter(e.wrong), crate::protocol::letter(e.item.correct));
    compare_chart(f, top, app, item, &models, e.wrong, &format!("p({lw}) advocated wrong"));
    compare_chart(f, bottom, app, item, &models, e.item.correct, &format!("p({lc}) correct"));
    compare_numbers(f, table_area, app, item, e, &models);
    compare_ops(f, right, app, item, e, &models);
}

/// One chart: option `opt`'s probability along the ramp, one curve per model.
fn compare_chart(f: &mut Frame, area: Rect, app: &App, item: usize, models: &[String], opt: usize, what: &str) {
    let th = app.theme();
    let data: Vec<Vec<(f64, f64)>> = models
        .iter()
        .map(|m| {
            (0..6)
                .filter_map(|k| app.score_of(m, item, Part::Curve(k)).and_then(|s| s.prob(opt)).map(|p| (xpos(k), p)))
                .collect()
        })
        .collect();
    let cursor: Vec<(f64, f64)> = match app.current_part() {
        Part::Curve(k) if k < 6 => (0..=20).map(|i| (xpos(k), i as f64 / 20.0)).collect(),
        _ => vec![],
    };
    let mut sets = Vec::new();
    if !cursor.is_empty() {
        sets.push(Dataset::default().marker(Marker::Braille).graph_type(GraphType::Scatter).style(th.dim()).data(&cursor));
    }
    // The shown model last, on top.
    for (i, d) in data.iter().enumerate().rev() {
        sets.push(Dataset::default().marker(model_marker(i).0).graph_type(GraphType::Line).style(th.model(i)).data(d));
    }
    let mut title = vec![Span::styled(format!(" {what} "), th.title())];
    let name_w = ((area.width as usize).saturating_sub(what.len() + 4) / models.len().max(1)).saturating_sub(4).clamp(3, 24);
    for (i, m) in models.iter().enumerate() {
        title.push(Span::styled(format!("{} {} ", model_marker(i).1, trunc(m, name_w)), th.model(i)));
    }
    let labels: Vec<Line> = CURVE[..6]
        .iter()
        .map(|p| Line::from(if area.width < 70 { p.tiny() } else { p.short() }))
        .collect();
    let chart = Chart::new(sets)
        .block(ratatui::widgets::Block::bordered().title(Line::from(title)).border_style(th.dim()))
        .x_axis(Axis::default().bounds([0.0, 1.0]).labels(labels).style(th.dim()))
        .y_axis(Axis::default().bounds([0.0, 1.0]).labels(vec![Line::from("0"), Line::from("1")]).style(th.dim()))
        .legend_position(None);
    f.render_widget(chart, area);
}

/// Every model's p(w), p(c) and letter at each ramp step.
fn compare_numbers(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected, models: &[String]) {
    let th = app.theme();
    let b = block(app, "Ramp values per model");
    let inner = b.inner(area);
    f.render_widget(b, area);
    let label_w = 16;
    let cw = ((inner.width as usize).saturating_sub(label_w) / 7).clamp(5, 9);
    let mut head = vec![Span::styled(pad("", label_w), th.dim())];
    for (k, point) in CURVE.iter().enumerate() {
        let hs = if app.current_part() == Part::Curve(k) { th.selected() } else { th.dim() };
        let name = if cw > point.short().len() { point.short() } else { point.tiny() };
        head.push(Span::styled(pad(&format!("{:>w$}", name, w = cw - 1), cw), hs));
    }
    let mut lines = vec![Line::from(head)];
    let mut rows: Vec<Line> = Vec::new();
    for (what, opt) in [("p(w)", Some(e.wrong)), ("p(c)", Some(e.item.correct)), ("pred", None)] {
        for (i, m) in models.iter().enumerate() {
            let mut spans = vec![Span::styled(pad(&format!("{what} {}", trunc(m, label_w - 6)), label_w), th.model(i))];
            for k in 0..CURVE.len() {
                let s = app.score_of(m, item, Part::Curve(k));
                let (txt, st) = match (opt, s) {
                    (Some(o), s) => (fmt_p(s.and_then(|s| s.prob(o))), th.plain()),
                    (None, Some(s)) if s.pred == e.wrong => (format!("{}✗", s.pred_letter()), th.wrong()),
                    (None, Some(s)) if s.pred == e.item.correct => (format!("{}✓", s.pred_letter()), th.correct()),
                    (None, Some(s)) => (s.pred_letter().to_string(), th.plain()),
                    (None, None) => ("·".into(), th.dim()),
                };
                spans.push(Span::styled(format!("{:>w$} ", txt, w = cw - 1), st));
            }
            rows.push(Line::from(spans));
        }
    }
    lines.extend(rows);
    f.render_widget(Paragraph::new(lines), inner);
}

/// Each operation's p(w) per model (green within [`GREEN_GAP`] of the model's own clean p(w)).
fn compare_ops(f: &mut Frame, area: Rect, app: &App, item: usize, e: &Selected, models: &[String]) {
    let th = app.theme();
    let b = block(app, "Recovery p(w) per model");
    let inner = b.inner(area);
    f.render_widget(b, area);
    let col = ((inner.width as usize).saturating_sub(6) / models.len().max(1)).clamp(6, 12);
    let mut head = vec![Span::raw(pad("", 6))];
    for (i, m) in models.iter().enumerate() {
        head.push(Span::styled(format!("{:>w$}", trunc(m, col - 1), w = col), th.model(i)));
    }
    let mut lines = vec![Line::from(head)];
    let verdicts = app.recovery_rows();
    let row = |label: &str, part: Part, lines: &mut Vec<Line>| {
        let lab_st = if app.current_part() == part { th.selected() } else { th.bold() };
        let mut spans = vec![Span::styled(pad(label, 6), lab_st)];
        for (i, m) in models.iter().enumerate() {
            let p = app.score_of(m, item, part).and_then(|s| s.prob(e.wrong));
            let st = match part {
                Part::Op(k) => th.gap_check(verdicts.model(i).and_then(|m| m.op(k)).map(|c| c.gap_verdict).unwrap_or_default()),
                _ => th.dim(),
            };
            spans.push(Span::styled(format!("{:>w$}", fmt_p(p), w = col), st));
        }
        lines.push(Line::from(spans));
    };
    row("clean", Part::Curve(0), &mut lines);
    for (opens, o) in app.reg().explorer_sections() {
        if opens == Some(Group::Appendix) {
            lines.push(Line::from(Span::styled("appendix", th.dim())));
        }
        row(o.short, Part::Op(o.key), &mut lines);
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled(format!("green: |gap| ≤ {GREEN_GAP} (own clean)"), th.dim())));
    f.render_widget(Paragraph::new(lines), inner);
}
