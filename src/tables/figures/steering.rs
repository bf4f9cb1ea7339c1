//! The steering sweep's figure (`hyst-tui steer sweep`): left, the gap to the clean probe of
//! the steered condition against α with its 95% paired-bootstrap interval; right, the clean
//! probe's accuracy under the same steering. One curve per direction × layer range; the random
//! direction of the same length is grey.

use plotters::prelude::*;

use super::style::*;

/// One point of a curve.
#[derive(Clone, Debug)]
pub struct SweepPoint {
    pub alpha: f64,
    pub gap: f64,
    pub lo: f64,
    pub hi: f64,
    pub clean_accuracy: f64,
}

/// One curve: a direction at one layer range.
#[derive(Clone, Debug)]
pub struct SweepSeries {
    pub label: String,
    /// The random-direction control (drawn grey).
    pub control: bool,
    pub points: Vec<SweepPoint>,
}

const W: u32 = 1100;
const H: u32 = 480;

/// The figure as SVG text. `unsteered_gap` and `clean_accuracy` are drawn as reference lines.
pub fn render_steering_sweep(title: &str, series: &[SweepSeries], unsteered_gap: f64, clean_accuracy: f64) -> Result<String, String> {
    let alphas: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.alpha)).collect();
    let (amin, amax) = alphas.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if !amin.is_finite() {
        return Err("a sweep without points".into());
    }
    let pad = ((amax - amin) * 0.05).max(0.05);
    let x_range = (amin - pad)..(amax + pad);
    let x_ticks = {
        let mut t = alphas.clone();
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    };
    let (glo, ghi) = gap_range(series.iter().flat_map(|s| s.points.iter().flat_map(|p| [p.lo, p.hi])).chain([unsteered_gap]));
    let colour = |i: usize, s: &SweepSeries| if s.control { GREY } else { pair_color(i) };
    let entries: Vec<(Swatch, String)> = series.iter().enumerate().map(|(i, s)| (Swatch::Line(colour(i, s), CURVE_WIDTH), s.label.clone())).collect();
    let notes = vec![
        format!("Dotted: unsteered (gap {}, clean accuracy {}).", signed(unsteered_gap), num(clean_accuracy)),
        "Whiskers: 95% paired item bootstrap over the held-out items.".to_string(),
        "A steering that lowers the gap but also the clean accuracy is no repair.".to_string(),
    ];
    let h = H.max(TITLE_H + legend_bottom(LEGEND_W, 40, &entries, &notes) as u32);
    let fmt_a = |v: &f64| format!("{v}");
    let fmt_y = |v: &f64| format!("{v:.2}");
    canvas(W, h, title, |body| {
        let (plots, side) = body.split_horizontally(W - LEGEND_W);
        let (left, right) = plots.split_horizontally((W - LEGEND_W) / 2);
        let mut gap = ChartBuilder::on(&left)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(62)
            .build_cartesian_2d(axis(x_range.clone(), x_ticks.clone()), axis(glo..ghi, ticks(glo, ghi)))
            .map_err(err)?;
        gap.configure_mesh()
            .x_label_formatter(&fmt_a)
            .y_label_formatter(&fmt_y)
            .x_desc("steering strength α")
            .y_desc("gap to clean: p(w) steered − p(w) clean")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        gap.draw_series(DashedLineSeries::new([(x_range.start, unsteered_gap), (x_range.end, unsteered_gap)], 3, 4, INK.stroke_width(1)))
            .map_err(err)?;
        let mut acc = ChartBuilder::on(&right)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(62)
            .build_cartesian_2d(axis(x_range.clone(), x_ticks.clone()), axis(0f64..1f64, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]))
            .map_err(err)?;
        acc.configure_mesh()
            .x_label_formatter(&fmt_a)
            .y_label_formatter(&fmt_y)
            .x_desc("steering strength α")
            .y_desc("clean-probe accuracy under the same steering")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        acc.draw_series(DashedLineSeries::new([(x_range.start, clean_accuracy), (x_range.end, clean_accuracy)], 3, 4, INK.stroke_width(1)))
            .map_err(err)?;
        for (i, s) in series.iter().enumerate() {
            let c = colour(i, s);
            gap.draw_series(LineSeries::new(s.points.iter().map(|p| (p.alpha, p.gap)), c.stroke_width(CURVE_WIDTH))).map_err(err)?;
            // The control's whiskers a little to the right, so that both stay visible.
            let dx = if s.control { pad * 0.3 } else { 0.0 };
            for p in &s.points {
                if p.lo.is_finite() && p.hi.is_finite() {
                    gap.draw_series(std::iter::once(PathElement::new([(p.alpha + dx, p.lo), (p.alpha + dx, p.hi)], c.stroke_width(1)))).map_err(err)?;
                }
            }
            acc.draw_series(LineSeries::new(s.points.iter().map(|p| (p.alpha, p.clean_accuracy)), c.stroke_width(CURVE_WIDTH))).map_err(err)?;
        }
        legend(&side, 40, &entries, &notes)
    })
}
