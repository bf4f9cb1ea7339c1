//! What every figure shares: fixed sizes, fonts and colours, the SVG canvas, the legend panel,
//! axis ranges and the diverging colour scale.
//!
//! Series convention (the tests count series by it): data curves are polylines of stroke width
//! [`CURVE_WIDTH`] or more, CI bands and heat-map cells are polygons, criterion marks are
//! circles; axes, ticks and reference lines are width 1 and legend swatches are rectangles.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

/// One font family for every text (the SVG names it; no font file is read, so the output does
/// not depend on the machine's fonts).
pub(super) const FONT: &str = "sans-serif";
pub(super) const TITLE_SIZE: u32 = 19;
pub(super) const LABEL_SIZE: u32 = 14;
pub(super) const SMALL_SIZE: u32 = 12;
/// Stroke width of data curves (axes and ticks are 1).
pub(super) const CURVE_WIDTH: u32 = 2;
/// Stroke width of a pooled / emphasised curve.
pub(super) const BOLD_WIDTH: u32 = 3;
/// Opacity of CI bands.
pub(super) const BAND_ALPHA: f64 = 0.18;
/// Width of the legend panel on the right of a chart.
pub(super) const LEGEND_W: u32 = 250;

/// p(advocated wrong).
pub(super) const WRONG: RGBColor = RGBColor(214, 39, 40);
/// p(correct).
pub(super) const CORRECT: RGBColor = RGBColor(31, 119, 180);
pub(super) const INK: RGBColor = RGBColor(0, 0, 0);
pub(super) const GREY: RGBColor = RGBColor(110, 110, 110);
pub(super) const LIGHT: RGBColor = RGBColor(225, 225, 225);

/// Colours of the pairs (the tab10 cycle without red, which is p(wrong)).
pub(super) const PALETTE: [RGBColor; 9] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(super) fn pair_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Whether series `i` repeats an earlier series' [`pair_color`] (draw it dashed to tell them apart).
pub(super) fn color_repeats(i: usize) -> bool {
    i >= PALETTE.len()
}

/// A drawing error as text (drawing into a string cannot fail on I/O; a layout error is
/// reported instead of a figure).
pub(super) type Drawn<T> = Result<T, String>;

pub(super) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws on a white `w × h` canvas with a title and returns the SVG text.
pub(super) fn canvas(
    w: u32,
    h: u32,
    title: &str,
    draw: impl FnOnce(&Area) -> Drawn<()>,
) -> Drawn<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = root
            .titled(title, (FONT, TITLE_SIZE).into_font().color(&INK))
            .map_err(err)?;
        draw(&body)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

pub(super) fn text_style(size: u32, color: &RGBColor) -> TextStyle<'static> {
    (FONT, size).into_font().color(color)
}

/// An f64 axis whose ticks (and grid lines) are exactly `keys`; the chart's label formatter
/// names them (plotters' own `with_key_points` loses the f64 formatter bound).
pub(super) struct Axis {
    inner: RangedCoordf64,
    keys: Vec<f64>,
}

pub(super) fn axis(range: Range<f64>, keys: Vec<f64>) -> Axis {
    Axis {
        inner: range.into(),
        keys,
    }
}

impl Ranged for Axis {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;
    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(v, limit)
    }
    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }
    fn axis_pixel_range(&self, limit: (i32, i32)) -> Range<i32> {
        self.inner.axis_pixel_range(limit)
    }
}

/// Swatch of a legend entry.
pub(super) enum Swatch {
    /// A data curve.
    Line(RGBColor, u32),
    /// A dashed data curve.
    Dashed(RGBColor),
    /// A CI band.
    Band(RGBColor),
    /// A criterion mark (drawn as in the heat map).
    Mark,
}

/// Characters per legend line in a panel `w` pixels wide.
fn legend_chars(w: u32) -> usize {
    ((w as usize).saturating_sub(30) / 7).max(16)
}

/// The y (pixels) below a legend drawn from `y` in a panel `w` pixels wide: what [`legend`]
/// needs, so a figure can make room for it.
pub(super) fn legend_bottom(
    w: u32,
    mut y: i32,
    entries: &[(Swatch, String)],
    notes: &[String],
) -> i32 {
    let chars = legend_chars(w);
    for (_, text) in entries {
        y += 17 * wrap(text, chars.saturating_sub(6)).len().max(1) as i32 + 8;
    }
    y += 10;
    for n in notes {
        y += 15 * wrap(n, chars).len() as i32 + 5;
    }
    y
}

/// Draws the legend panel from `y` pixels down: one swatch and label per entry, then the notes
/// (wrapped) below; [`legend_bottom`] gives its extent.
pub(super) fn legend(
    area: &Area,
    mut y: i32,
    entries: &[(Swatch, String)],
    notes: &[String],
) -> Drawn<()> {
    let (w, _) = area.dim_in_pixel();
    let chars = legend_chars(w);
    let label = text_style(LABEL_SIZE, &INK);
    for (swatch, text) in entries {
        match swatch {
            Swatch::Line(c, width) => {
                let t = *width as i32;
                area.draw(&Rectangle::new(
                    [(10, y + 7 - t / 2), (34, y + 7 - t / 2 + t)],
                    c.filled(),
                ))
                .map_err(err)?;
            }
            Swatch::Dashed(c) => {
                for x in [10, 20, 30] {
                    area.draw(&Rectangle::new([(x, y + 6), (x + 5, y + 8)], c.filled())).map_err(err)?;
                }
            }
            Swatch::Band(c) => {
                area.draw(&Rectangle::new(
                    [(10, y), (34, y + 14)],
                    c.mix(BAND_ALPHA).filled(),
                ))
                .map_err(err)?;
            }
            Swatch::Mark => mark(area, (22, y + 7))?,
        }
        let lines = wrap(text, chars.saturating_sub(6));
        for (k, l) in lines.iter().enumerate() {
            area.draw_text(l, &label, (42, y + k as i32 * 17))
                .map_err(err)?;
        }
        y += 17 * lines.len().max(1) as i32 + 8;
    }
    y += 10;
    let small = text_style(SMALL_SIZE, &GREY);
    for n in notes {
        for l in wrap(n, chars) {
            area.draw_text(&l, &small, (10, y)).map_err(err)?;
            y += 15;
        }
        y += 5;
    }
    Ok(())
}

/// Title band of [`canvas`] (pixels above the body), with a margin.
pub(super) const TITLE_H: u32 = 40;

/// Radius of the criterion mark (a black ring: one circle element).
pub(super) const MARK_RADIUS: u32 = 6;

pub(super) fn mark_style() -> ShapeStyle {
    INK.stroke_width(2)
}

/// The criterion mark centred at `c` (pixels of `area`).
pub(super) fn mark(area: &Area, c: (i32, i32)) -> Drawn<()> {
    area.draw(&Circle::new(c, MARK_RADIUS, mark_style()))
        .map_err(err)
}

/// Word wrap at `width` characters (a word longer than the line stands alone).
pub(super) fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A y range covering `values` (NaN ignored) and 0, padded by 8% and rounded outwards to 0.05.
pub(super) fn gap_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (0.0f64, 0.0f64);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let pad = ((hi - lo) * 0.08).max(0.02);
    // steps of 1/20 (dividing keeps 0.35 exactly 0.35)
    (
        ((lo - pad) * 20.0).floor() / 20.0,
        ((hi + pad) * 20.0).ceil() / 20.0,
    )
}

/// Ticks from `lo` to `hi` (multiples of 1/20, as [`gap_range`] gives) every 0.05, 0.1, 0.2
/// or 0.5, whichever gives at most 10.
pub(super) fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = ((lo * 20.0).round() as i64, (hi * 20.0).round() as i64);
    let step = [1, 2, 4, 10]
        .into_iter()
        .find(|s| (b - a) / s <= 10)
        .unwrap_or(20);
    (a..=b)
        .filter(|k| k.rem_euclid(step) == 0)
        .map(|k| k as f64 / 20.0)
        .collect()
}

/// Diverging scale: blue (−1) – white (0) – red (+1); `t` is clamped to [−1, 1].
pub(super) fn diverging(t: f64) -> RGBColor {
    let t = if t.is_nan() { 0.0 } else { t.clamp(-1.0, 1.0) };
    let (end, a) = if t < 0.0 {
        ((33.0, 102.0, 172.0), -t)
    } else {
        ((178.0, 24.0, 43.0), t)
    };
    let mix = |e: f64| (255.0 + (e - 255.0) * a).round() as u8;
    RGBColor(mix(end.0), mix(end.1), mix(end.2))
}

/// Signed number with 3 decimals (`+0.217`, `-0.050`, `NA`).
pub(super) fn signed(v: f64) -> String {
    if v.is_nan() {
        "NA".into()
    } else if v.abs() < 0.0005 {
        "0.000".into()
    } else {
        format!("{v:+.3}")
    }
}

/// Number with 3 decimals (`NA` for NaN).
pub(super) fn num(v: f64) -> String {
    if v.is_nan() {
        "NA".into()
    } else {
        format!("{v:.3}")
    }
}

/// A file-name-safe form of a key (letters, digits, `-`, `_`, `.`; anything else becomes `_`).
pub(super) fn file_key(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_and_ranges() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(gap_range([0.1, 0.3]), (-0.05, 0.35));
        assert_eq!(gap_range([f64::NAN]), (-0.05, 0.05));
        assert_eq!(ticks(-0.05, 0.2), vec![-0.05, 0.0, 0.05, 0.1, 0.15, 0.2]);
        assert_eq!(
            ticks(-0.5, 1.5),
            vec![-0.4, -0.2, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4]
        );
        assert_eq!(diverging(0.0), RGBColor(255, 255, 255));
        assert_eq!(diverging(1.0), RGBColor(178, 24, 43));
        assert_eq!(diverging(-2.0), RGBColor(33, 102, 172));
        assert_eq!(signed(0.21666), "+0.217");
        assert_eq!(file_key("a b/c"), "a_b_c");
    }
}
