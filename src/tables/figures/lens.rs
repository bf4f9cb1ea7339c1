//! The letter lens across items (`hyst-tui lens`): per condition, the share of items whose
//! advocated letter leads the correct one in the lens after each layer.

use plotters::prelude::*;

use super::style::*;

const W: u32 = 1000;
const H: u32 = 480;

/// The figure as SVG text: one curve per `(label, share per layer)`; the clean context (the
/// first series) is drawn black.
pub fn render_lens_lead(title: &str, series: &[(String, Vec<f64>)], n_items: usize) -> Result<String, String> {
    let n_layer = series.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    if n_layer == 0 {
        return Err("a lens figure without layers".into());
    }
    let colour = |i: usize| if i == 0 { INK } else { pair_color(i - 1) };
    // Past the palette, curves repeat a colour: those are dashed.
    let dashed = |i: usize| i > 0 && color_repeats(i - 1);
    let swatch = |i: usize| if dashed(i) { Swatch::Dashed(colour(i)) } else { Swatch::Line(colour(i), CURVE_WIDTH) };
    let entries: Vec<(Swatch, String)> = series.iter().enumerate().map(|(i, (l, _))| (swatch(i), l.clone())).collect();
    let notes = vec![
        format!("{n_items} items. At each layer, the share of items whose lens puts the advocated wrong letter above the correct one."),
        "The lens applies the model's final norm and output rows to the residual stream after the layer: a read-out, not a mechanism.".to_string(),
    ];
    let h = H.max(TITLE_H + legend_bottom(LEGEND_W, 40, &entries, &notes) as u32);
    let last = (n_layer - 1) as f64;
    let step = [1usize, 2, 4, 5, 8, 10].into_iter().find(|s| n_layer / s <= 12).unwrap_or(16);
    let mut x_ticks: Vec<f64> = (0..n_layer).step_by(step).map(|l| l as f64).collect();
    if x_ticks.last().is_some_and(|&t| last - t >= step as f64 / 2.0) {
        x_ticks.push(last);
    }
    canvas(W, h, title, |body| {
        let (plot, side) = body.split_horizontally(W - LEGEND_W);
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(62)
            .build_cartesian_2d(axis(0f64..last.max(1.0), x_ticks), axis(0f64..1f64, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]))
            .map_err(err)?;
        let fmt_x = |v: &f64| format!("{v:.0}");
        let fmt_y = |v: &f64| format!("{v:.1}");
        chart
            .configure_mesh()
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&fmt_y)
            .x_desc("layer (the residual stream after it)")
            .y_desc("share of items: p(advocated) > p(correct)")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        for (i, (_, shares)) in series.iter().enumerate() {
            let width = if i == 0 { BOLD_WIDTH } else { CURVE_WIDTH };
            let points = shares.iter().enumerate().map(|(l, &s)| (l as f64, s));
            if dashed(i) {
                chart.draw_series(DashedLineSeries::new(points, 6, 4, colour(i).stroke_width(width))).map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new(points, colour(i).stroke_width(width))).map_err(err)?;
            }
        }
        legend(&side, 40, &entries, &notes)
    })
}
