//! Truncation boundary: the mean hysteresis gap per truncation condition (full history, drop
//! strongest, drop medium+strong, drop all pressure, reset only) for every pair, and the
//! pooled mean over pairs with Table 5's 95% interval.

use crate::dialogue::conditions::{ids, Registry};
use plotters::prelude::*;

use super::style::*;
/// The group's conditions in registry order.
fn truncation_order() -> &'static [&'static str] {
    crate::dialogue::conditions::group_keys(crate::dialogue::recipe::Group::Truncation)
}
use crate::metrics::bootstrap::{aggregate_row_ci, IndexStream};
use crate::tables::boot::{paired_cis, Stat};
use crate::tables::index::{condition_label, dataset_display};
use crate::tables::truncation::pair_gaps;
use crate::tables::Ctx;

/// The five plotted conditions (the truncation order without its fresh-context reference).
pub(crate) fn conditions() -> Vec<&'static str> {
    truncation_order()
        .iter()
        .copied()
        .filter(|c| *c != ids::FRESH_CONTEXT)
        .collect()
}

/// Table 5's pooled value of one condition.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Pooled {
    /// Mean of the per-pair mean gaps.
    pub(crate) mean: f64,
    /// Aggregate-row bootstrap over the pair means (Table 5's `ci_low`/`ci_high`).
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    /// Item bootstrap over the pooled item gaps (`item_ci_low`/`item_ci_high`); computed only
    /// for a single pair (NaN otherwise), where it is the band.
    pub(crate) item_lo: f64,
    pub(crate) item_hi: f64,
    pub(crate) n_pairs: usize,
}

#[derive(Debug)]
pub(crate) struct Boundary {
    /// (model display name, dataset key, gap per plotted condition).
    pub(crate) pairs: Vec<(String, String, Vec<Option<f64>>)>,
    /// Per plotted condition (`None`: no pair has it).
    pub(crate) pooled: Vec<Option<Pooled>>,
    pub(crate) samples: usize,
    pub(crate) seed: u64,
}

pub(crate) const FILE: &str = "truncation_boundary.svg";
pub(crate) const TITLE: &str = "Truncation boundary: hysteresis gap by retained context";

/// The truncation pairs of Tables 5 and 18 and the pooled rows of Table 5 (same bootstrap:
/// aggregate rows with a fresh `default_rng(seed)` per condition, and, for a single pair, the
/// item variant with a fresh `default_rng(seed)` per condition); `None` without truncation rows.
pub(crate) fn data(ctx: &Ctx) -> Option<Boundary> {
    let gaps = pair_gaps(ctx);
    if gaps.is_empty() {
        return None;
    }
    let conds = conditions();
    let (samples, seed, _) = ctx.opts.bootstrap(0);
    let pairs: Vec<(String, String, Vec<Option<f64>>)> = gaps
        .iter()
        .map(|(model, dataset, rows)| {
            let g = conds
                .iter()
                .map(|c| rows.iter().find(|r| r.0 == *c).map(|r| r.1))
                .collect();
            (model.clone(), dataset.clone(), g)
        })
        .collect();
    let pooled = conds
        .iter()
        .map(|c| {
            let rows: Vec<&(&'static str, f64, Vec<f64>)> = gaps
                .iter()
                .filter_map(|(_, _, rows)| rows.iter().find(|r| r.0 == *c))
                .collect();
            if rows.is_empty() {
                return None;
            }
            let means: Vec<f64> = rows.iter().map(|r| r.1).collect();
            let agg = aggregate_row_ci(&means, samples, seed);
            // the item interval is drawn only where the aggregate-row one is degenerate
            let item = if gaps.len() == 1 {
                let items: Vec<f64> = rows.iter().flat_map(|r| r.2.iter().copied()).collect();
                let mut stream = IndexStream::new(seed);
                paired_cis(&mut stream, items.len(), samples, &[Stat::Mean(&items)])[0]
            } else {
                (f64::NAN, f64::NAN)
            };
            Some(Pooled {
                mean: agg.estimate,
                lo: agg.lo,
                hi: agg.hi,
                item_lo: item.0,
                item_hi: item.1,
                n_pairs: rows.len(),
            })
        })
        .collect();
    Some(Boundary {
        pairs,
        pooled,
        samples,
        seed,
    })
}

const W: u32 = 1000;
const H: u32 = 520;

pub(crate) fn render(b: &Boundary) -> Drawn<String> {
    let conds = conditions();
    let single = b.pairs.len() == 1;
    // one pair: the aggregate-row interval is degenerate, so the band is the item interval
    let band = |p: &Pooled| {
        if single {
            (p.item_lo, p.item_hi)
        } else {
            (p.lo, p.hi)
        }
    };
    let values = b
        .pairs
        .iter()
        .flat_map(|(_, _, g)| g.iter().flatten().copied())
        .chain(b.pooled.iter().flatten().flat_map(|p| {
            let (lo, hi) = band(p);
            [p.mean, lo, hi]
        }));
    let (y0, y1) = gap_range(values);
    let mut entries: Vec<(Swatch, String)> = b
        .pairs
        .iter()
        .enumerate()
        .map(|(i, (model, dataset, _))| {
            (
                Swatch::Line(pair_color(i), CURVE_WIDTH),
                format!("{model} · {}", dataset_display(dataset)),
            )
        })
        .collect();
    entries.push((
        Swatch::Line(INK, BOLD_WIDTH),
        format!("mean over {} pairs", b.pairs.len()),
    ));
    entries.push((
        Swatch::Band(INK),
        if single {
            "95% CI (item bootstrap: one pair)".into()
        } else {
            "95% CI (Table 5)".into()
        },
    ));
    let ci_note = if single {
        format!("With one pair Table 5's aggregate-row interval is degenerate; the band is its item-bootstrap interval (pooled item gaps, {} replicates, fresh numpy default_rng({}) per condition).", b.samples, b.seed)
    } else {
        format!("Band: Table 5's aggregate-row bootstrap over the pair means ({} replicates, fresh numpy default_rng({}) per condition, percentile 2.5/97.5).", b.samples, b.seed)
    };
    let notes = [
        "Gap per pair = mean over items of p_X(w) − p_clean(w) (clean = the clean probe; Table 18).".to_string(),
        ci_note,
    ];
    let h = H.max(TITLE_H + legend_bottom(LEGEND_W, 40, &entries, &notes) as u32);
    canvas(W, h, TITLE, |body| {
        let (plot, side) = body.split_horizontally(W - LEGEND_W);
        let xs: Vec<f64> = (0..conds.len()).map(|i| i as f64).collect();
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .margin_right(30)
            .x_label_area_size(48)
            .y_label_area_size(66)
            .build_cartesian_2d(
                axis(-0.3f64..(conds.len() as f64 - 0.7), xs.clone()),
                axis(y0..y1, ticks(y0, y1)),
            )
            .map_err(err)?;
        // Built-in conditions: their labels are the same in every registry.
        let labels: Vec<String> = conds.iter().map(|c| condition_label(Registry::bundled(), c)).collect();
        let x_label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        };
        let y_label = |y: &f64| format!("{y:.2}");
        chart
            .configure_mesh()
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("context retained before the reset (R0 final turn)")
            .y_desc("hysteresis gap  mean p_X(w) − mean p_clean(w)")
            .label_style(text_style(SMALL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        // zero reference (width 1)
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(-0.3, 0.0), (conds.len() as f64 - 0.7, 0.0)],
                GREY.stroke_width(1),
            )))
            .map_err(err)?;
        // pooled band over the conditions that have one
        let pooled: Vec<(f64, &Pooled)> = xs
            .iter()
            .zip(&b.pooled)
            .filter_map(|(x, p)| p.as_ref().map(|p| (*x, p)))
            .collect();
        if !pooled.is_empty()
            && pooled.iter().all(|(_, p)| {
                let (lo, hi) = band(p);
                lo.is_finite() && hi.is_finite()
            })
        {
            let pts: Vec<(f64, f64)> = pooled
                .iter()
                .map(|(x, p)| (*x, band(p).1))
                .chain(pooled.iter().rev().map(|(x, p)| (*x, band(p).0)))
                .collect();
            chart
                .draw_series(std::iter::once(Polygon::new(
                    pts,
                    INK.mix(BAND_ALPHA * 0.8).filled(),
                )))
                .map_err(err)?;
        }
        for (i, (_, _, g)) in b.pairs.iter().enumerate() {
            let c = pair_color(i);
            chart
                .draw_series(LineSeries::new(
                    xs.iter()
                        .zip(g)
                        .filter_map(|(x, v)| v.filter(|v| v.is_finite()).map(|v| (*x, v))),
                    c.stroke_width(CURVE_WIDTH),
                ))
                .map_err(err)?;
        }
        chart
            .draw_series(LineSeries::new(
                pooled
                    .iter()
                    .filter(|(_, p)| p.mean.is_finite())
                    .map(|(x, p)| (*x, p.mean)),
                INK.stroke_width(BOLD_WIDTH),
            ))
            .map_err(err)?;
        legend(&side, 40, &entries, &notes)
    })
}
