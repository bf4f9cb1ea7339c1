//! Recovery-hierarchy heat map: pairs × the main operations (in scan order), colour = the
//! hysteresis gap mean p_X(w) − mean p_clean(w), a ring where the operation passes the main
//! clean-context-like criterion on the pair-level aggregates, and each pair's minimal recovery
//! operation (MRO) on the right.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::*;
use crate::dialogue::ops_text::ops_text;
use crate::metrics::criteria::{main_op, main_ops, Criterion};
use crate::tables::index::dataset_display;
use crate::tables::Ctx;

/// One cell: the gap and whether the operation passes `Criterion::MAIN`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cell {
    pub(crate) gap: f64,
    pub(crate) n: usize,
    pub(crate) passes: bool,
}

#[derive(Debug)]
pub(crate) struct HeatRow {
    pub(crate) model: String,
    pub(crate) dataset: String,
    /// One per main operation (`None`: the operation was not run for this pair).
    pub(crate) cells: Vec<Option<Cell>>,
    /// Short name of the minimal recovery operation under the main criterion.
    pub(crate) mro: Option<&'static str>,
}

#[derive(Debug)]
pub(crate) struct Heat {
    pub(crate) rows: Vec<HeatRow>,
}

pub(crate) const FILE: &str = "recovery_hierarchy_gap.svg";
pub(crate) const TITLE: &str = "Recovery hierarchy: hysteresis gap per pair and operation";

/// The hierarchy's pairs (shared with Tables 4, 16, 17), in pair order; `None` without any.
pub(crate) fn data(ctx: &Ctx) -> Option<Heat> {
    let h = ctx.hierarchy();
    let rows: Vec<HeatRow> = h
        .pairs
        .iter()
        .map(|hp| {
            let cells = main_ops()
                .iter()
                .map(|op| {
                    hp.ops.iter().find(|o| o.key == op.key).map(|o| Cell {
                        gap: o.x.p_wrong - o.clean.p_wrong,
                        n: o.n,
                        passes: Criterion::MAIN.passes(&o.clean, &o.x),
                    })
                })
                .collect();
            let mro = hp
                .mro(&Criterion::MAIN)
                .and_then(main_op)
                .map(|op| op.short);
            HeatRow {
                model: hp.p.model.clone(),
                dataset: hp.p.dataset.clone(),
                cells,
                mro,
            }
        })
        .collect();
    (!rows.is_empty()).then_some(Heat { rows })
}

const CELL_W: u32 = 74;
const CELL_H: u32 = 34;

/// Half-width of the colour scale: the largest |gap|, rounded up to 0.05 (at least 0.05).
pub(crate) fn scale(h: &Heat) -> f64 {
    let m = h
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .map(|c| c.gap.abs())
        .filter(|g| g.is_finite())
        .fold(0.0f64, f64::max);
    ((m * 20.0).ceil() / 20.0).max(0.05)
}

pub(crate) fn render(h: &Heat) -> Drawn<String> {
    let labels: Vec<String> = h
        .rows
        .iter()
        .map(|r| format!("{} · {}", r.model, dataset_display(&r.dataset)))
        .collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let label_w = (longest * 7 + 24).clamp(120, 340);
    let (m, n) = (main_ops().len(), h.rows.len());
    // ops, then the MRO column
    let w = (label_w + (m as u32 + 1) * CELL_W + 40).max(760);
    // the key (colour bar, ring, notes) goes below the cells, aligned with them
    let plot_h = n as u32 * CELL_H + 70;
    let entries = [(
        Swatch::Mark,
        "passes the main clean-context-like criterion".to_string(),
    )];
    let notes = [
        "Criterion::MAIN on the pair-level aggregates of clean and X (Table 22 thresholds: gap, accuracy, p(correct), entropy, max probability).".to_string(),
        "Clean = the clean probe; R0 = ordinary_strong_reset (else strong_reset); items present in clean, R0 and X.".into(),
        ops_text("MRO = the first operation in the order {main_first} … {main_last} that passes (Table 17); none if no operation does."),
    ];
    let (bx, by, bw, bh) = (14, 30, 240, 16);
    let key_h = legend_bottom(w - label_w, by + bh + 36, &entries, &notes) as u32;
    let hgt = TITLE_H + plot_h + key_h;
    let l = scale(h);
    canvas(w, hgt, TITLE, |body| {
        let (plot, below) = body.split_vertically(plot_h);
        let (_, key) = below.split_horizontally(label_w);
        let mut xs: Vec<f64> = (0..m).map(|i| i as f64 + 0.5).collect();
        xs.push(m as f64 + 0.55);
        let ys: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_w)
            .build_cartesian_2d(axis(0f64..(m as f64 + 1.1), xs), axis(0f64..n as f64, ys))
            .map_err(err)?;
        let x_label = |x: &f64| {
            let i = x.floor() as usize;
            if i < m {
                main_ops()[i].short.to_string()
            } else {
                "MRO".to_string()
            }
        };
        // row 0 (the first pair) at the top
        let y_label = |y: &f64| {
            let i = y.floor() as usize;
            labels
                .get(n.saturating_sub(1 + i))
                .cloned()
                .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("recovery operation (main criterion: ring = clean-context-like)")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .draw()
            .map_err(err)?;
        let centred =
            |c: &RGBColor| text_style(SMALL_SIZE, c).pos(Pos::new(HPos::Center, VPos::Center));
        for (ri, row) in h.rows.iter().enumerate() {
            let y0 = (n - 1 - ri) as f64;
            for (ci, cell) in row.cells.iter().enumerate() {
                let x0 = ci as f64;
                let centre = (x0 + 0.5, y0 + 0.5);
                let Some(cell) = cell else {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            "not run",
                            centre,
                            centred(&GREY),
                        )))
                        .map_err(err)?;
                    continue;
                };
                let t = cell.gap / l;
                let (a, b) = (0.03, 0.97);
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        vec![
                            (x0 + a, y0 + a),
                            (x0 + b, y0 + a),
                            (x0 + b, y0 + b),
                            (x0 + a, y0 + b),
                        ],
                        diverging(t).filled(),
                    )))
                    .map_err(err)?;
                let ink = if t.abs() > 0.6 { WHITE } else { INK };
                chart
                    .draw_series(std::iter::once(Text::new(
                        signed(cell.gap),
                        (x0 + 0.42, y0 + 0.5),
                        centred(&ink),
                    )))
                    .map_err(err)?;
                if cell.passes {
                    chart
                        .draw_series(std::iter::once(Circle::new(
                            (x0 + 0.84, y0 + 0.5),
                            MARK_RADIUS,
                            mark_style(),
                        )))
                        .map_err(err)?;
                }
            }
            chart
                .draw_series(std::iter::once(Text::new(
                    row.mro.unwrap_or("none").to_string(),
                    (m as f64 + 0.55, y0 + 0.5),
                    text_style(LABEL_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Center)),
                )))
                .map_err(err)?;
        }
        // colour bar: 41 steps from -l to +l
        let steps = 41;
        for k in 0..steps {
            let t = -1.0 + 2.0 * k as f64 / (steps - 1) as f64;
            let x = bx + k * bw / steps;
            let x1 = bx + (k + 1) * bw / steps;
            key.draw(&Rectangle::new(
                [(x, by), (x1, by + bh)],
                diverging(t).filled(),
            ))
            .map_err(err)?;
        }
        let small = text_style(SMALL_SIZE, &INK).pos(Pos::new(HPos::Center, VPos::Top));
        for (x, v) in [(bx, -l), (bx + bw / 2, 0.0), (bx + bw, l)] {
            key.draw_text(&signed(v), &small, (x, by + bh + 4))
                .map_err(err)?;
        }
        key.draw_text(
            "gap = mean p_X(w) − mean p_clean(w)",
            &text_style(SMALL_SIZE, &INK),
            (bx, by - 18),
        )
        .map_err(err)?;
        legend(&key, by + bh + 36, &entries, &notes)
    })
}
