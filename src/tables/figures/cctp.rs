//! CCTP alpha* per dataset: the empirical distribution (ECDF) of the per-item alpha* of
//! Table 21's primary variant (wrong pressure: clean vs R0), pooled over each dataset's pairs.

use plotters::prelude::*;

use super::style::*;
use crate::metrics::bootstrap::sorted_without_nan;
use crate::metrics::cctp::{summarize, VARIANTS};
use crate::tables::cctp::primary_items;
use crate::tables::index::dataset_display;
use crate::tables::Ctx;

#[derive(Debug)]
pub(crate) struct Alphas {
    pub(crate) dataset: String,
    pub(crate) pairs: usize,
    /// Per-item alpha*, sorted ascending.
    pub(crate) alphas: Vec<f64>,
    /// Table 21's `cctp_mean_alpha` / `cctp_median_alpha` of the pooled items (`summarize`).
    pub(crate) mean: f64,
    pub(crate) median: f64,
}

pub(crate) const FILE: &str = "cctp_alpha_by_dataset.svg";
pub(crate) const TITLE: &str = "CCTP: minimal clean-anchor weight α* per item, by dataset";

/// The items of Table 21's primary `wrong` rows, pooled per dataset (datasets in the fixed
/// order); `None` without any.
pub(crate) fn data(ctx: &Ctx) -> Option<Vec<Alphas>> {
    let per_pair = primary_items(ctx);
    let mut out: Vec<Alphas> = Vec::new();
    for ds in ctx.idx.datasets() {
        let mut items = Vec::new();
        let mut pairs = 0;
        for (p, it) in &per_pair {
            if p.dataset == ds {
                items.extend(it.iter().cloned());
                pairs += 1;
            }
        }
        if items.is_empty() {
            continue;
        }
        let alphas: Vec<f64> = items.iter().map(|i| i.alpha_star).collect();
        let s = summarize(&items, 0);
        out.push(Alphas {
            dataset: ds,
            pairs,
            alphas: sorted_without_nan(&alphas),
            mean: s.cctp_mean_alpha,
            median: s.cctp_median_alpha,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// The ECDF as a step path from (0, 0) to (1, 1): at each distinct value v, a vertical step
/// from the share below v to the share at or below v.
pub(crate) fn ecdf(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut pts = vec![(0.0, 0.0)];
    let mut i = 0;
    while i < sorted.len() {
        let v = sorted[i];
        let below = i as f64 / n;
        while i < sorted.len() && sorted[i] == v {
            i += 1;
        }
        pts.push((v, below));
        pts.push((v, i as f64 / n));
    }
    pts.push((1.0, 1.0));
    pts
}

const W: u32 = 900;
const H: u32 = 500;

pub(crate) fn render(d: &[Alphas]) -> Drawn<String> {
    let entries: Vec<(Swatch, String)> = d
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (
                Swatch::Line(pair_color(i), CURVE_WIDTH),
                format!(
                    "{}: {} items, {} pair{}; mean {}, median {}",
                    dataset_display(&a.dataset),
                    a.alphas.len(),
                    a.pairs,
                    if a.pairs == 1 { "" } else { "s" },
                    num(a.mean),
                    num(a.median)
                ),
            )
        })
        .collect();
    let notes = [
        format!("Table 21's primary variant ({}): α* = smallest grid α (step 0.01) whose logit-linear projection between R0 and the clean distribution passes the main tube; per item, clean vs R0.", VARIANTS[0].name),
        "Items whose projection fails the α = 1 guarantee or whose scores are unusable have no α* (Table 21 counts them).".into(),
    ];
    let h = H.max(TITLE_H + legend_bottom(LEGEND_W, 40, &entries, &notes) as u32);
    canvas(W, h, TITLE, |body| {
        let (plot, side) = body.split_horizontally(W - LEGEND_W);
        let ticks = vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0];
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(62)
            .build_cartesian_2d(axis(0f64..1f64, ticks.clone()), axis(0f64..1f64, ticks))
            .map_err(err)?;
        let fmt = |v: &f64| format!("{v:.1}");
        chart
            .configure_mesh()
            .x_label_formatter(&fmt)
            .y_label_formatter(&fmt)
            .x_desc("α* (weight on the clean anchor; 0 = R0 already inside the tube)")
            .y_desc("share of items with α* ≤ x")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        for (i, a) in d.iter().enumerate() {
            chart
                .draw_series(LineSeries::new(
                    ecdf(&a.alphas),
                    pair_color(i).stroke_width(CURVE_WIDTH),
                ))
                .map_err(err)?;
        }
        legend(&side, 40, &entries, &notes)
    })
}
