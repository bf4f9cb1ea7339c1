//! Pressure-ramp figure, one per pair: mean p(advocated wrong) and mean p(correct) at clean →
//! weak → medium → strong → medium reset → R0, with 95% paired item-bootstrap bands.

use crate::dialogue::CurvePoint;
use plotters::prelude::*;

use super::style::*;
use crate::metrics::bootstrap::SEED_OFFSET_PRESSURE_RAMP;
use crate::metrics::mean;
use crate::tables::boot::{paired_cis, Stat};
use crate::tables::common::{pc, pw};
use crate::tables::index::dataset_display;
use crate::tables::Ctx;

/// The six steps and their axis labels; a step's rows are the ramp's own, else those of the
/// conditions that are the same prompt (`Registry::sources`: clean is Table 2's
/// `clean_context`, else the identical probe; R0 is the ramp's `strong_reset`, else the
/// identical hierarchy condition).
pub(crate) const STEPS: [(CurvePoint, &str); 6] = [
    (CurvePoint::CleanContext, "clean"),
    (CurvePoint::WeakPressure, "weak"),
    (CurvePoint::MediumPressure, "medium"),
    (CurvePoint::StrongPressure, "strong"),
    (CurvePoint::MediumReset, "medium reset"),
    (CurvePoint::StrongReset, "R0"),
];

/// One point of a curve: mean and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    pub(crate) mean: f64,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
}

/// The ramp of one pair.
#[derive(Debug)]
pub(crate) struct Ramp {
    pub(crate) model_key: String,
    pub(crate) model: String,
    pub(crate) dataset: String,
    /// Conditions used, one per step.
    pub(crate) sources: Vec<&'static str>,
    /// Items present in all six steps.
    pub(crate) n: usize,
    pub(crate) p_wrong: Vec<Point>,
    pub(crate) p_correct: Vec<Point>,
    pub(crate) samples: usize,
    pub(crate) seed: u64,
}

/// Every pair with all six steps, in pair order. Bootstrap: a fresh `default_rng(seed + 1)`
/// stream (the ramp group's seed), one `samples × n` index matrix per pair drawn in pair order
/// and shared by the 12 means, as Table 2 draws its own; so when every ramp step has the same
/// items (as the ramp suite writes them) the clean, strong and R0 p(w) intervals equal Table 2's.
pub(crate) fn data(ctx: &Ctx) -> Vec<Ramp> {
    let (samples, seed, mut stream) = ctx.opts.bootstrap(SEED_OFFSET_PRESSURE_RAMP);
    let mut out = Vec::new();
    for p in &ctx.idx.pairs {
        let Some(sources) = STEPS
            .iter()
            .map(|(c, _)| p.resolve(p.reg.sources(c.key())))
            .collect::<Option<Vec<&'static str>>>()
        else {
            continue;
        };
        let al = p.align(&sources);
        let n = al.n();
        if n == 0 {
            continue;
        }
        let pws: Vec<Vec<f64>> = (0..STEPS.len()).map(|c| pw(&al.obs(c))).collect();
        let pcs: Vec<Vec<f64>> = (0..STEPS.len()).map(|c| pc(&al.obs(c))).collect();
        let stats: Vec<Stat> = pws.iter().chain(&pcs).map(|v| Stat::Mean(v)).collect();
        let cis = paired_cis(&mut stream, n, samples, &stats);
        let point = |v: &[f64], ci: (f64, f64)| Point {
            mean: mean(v),
            lo: ci.0,
            hi: ci.1,
        };
        let k = STEPS.len();
        out.push(Ramp {
            model_key: p.model_key.clone(),
            model: p.model.clone(),
            dataset: p.dataset.clone(),
            sources,
            n,
            p_wrong: (0..k).map(|i| point(&pws[i], cis[i])).collect(),
            p_correct: (0..k).map(|i| point(&pcs[i], cis[k + i])).collect(),
            samples,
            seed,
        });
    }
    out
}

/// File name of a pair's ramp figure.
pub(crate) fn file_name(r: &Ramp) -> String {
    format!(
        "pressure_ramp__{}__{}.svg",
        file_key(&r.model_key),
        file_key(&r.dataset)
    )
}

pub(crate) fn title(r: &Ramp) -> String {
    format!(
        "Pressure ramp: {} · {}",
        r.model,
        dataset_display(&r.dataset)
    )
}

const W: u32 = 900;
const H: u32 = 500;

pub(crate) fn render(r: &Ramp) -> Drawn<String> {
    let (clean, r0) = (r.sources[0], r.sources[STEPS.len() - 1]);
    let entries = [
        (
            Swatch::Line(WRONG, CURVE_WIDTH),
            "mean p(advocated wrong)".to_string(),
        ),
        (Swatch::Band(WRONG), "95% CI".into()),
        (Swatch::Line(CORRECT, CURVE_WIDTH), "mean p(correct)".into()),
        (Swatch::Band(CORRECT), "95% CI".into()),
    ];
    let notes = [
        format!(
            "n = {} items (those present at every step). clean = {clean}; R0 = {r0}.",
            r.n
        ),
        format!(
            "Mean p(w): clean {}, strong {}, R0 {}.",
            num(r.p_wrong[0].mean),
            num(r.p_wrong[3].mean),
            num(r.p_wrong[STEPS.len() - 1].mean)
        ),
        format!(
            "CI: paired item bootstrap, {} replicates, percentile 2.5/97.5, numpy default_rng({}) (base seed + 1, the ramp group), one index matrix per pair shared by all 12 means.",
            r.samples, r.seed
        ),
    ];
    let h = H.max(TITLE_H + legend_bottom(LEGEND_W, 40, &entries, &notes) as u32);
    canvas(W, h, &title(r), |body| {
        let (plot, side) = body.split_horizontally(W - LEGEND_W);
        let xs: Vec<f64> = (0..STEPS.len()).map(|i| i as f64).collect();
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(62)
            .build_cartesian_2d(
                axis(-0.3f64..(STEPS.len() as f64 - 0.7), xs.clone()),
                axis(0f64..1f64, vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),
            )
            .map_err(err)?;
        let x_label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-9 && i >= 0.0 && (i as usize) < STEPS.len() {
                STEPS[i as usize].1.to_string()
            } else {
                String::new()
            }
        };
        let y_label = |y: &f64| format!("{y:.1}");
        chart
            .configure_mesh()
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .x_desc("dialogue step")
            .y_desc("mean probability over items")
            .label_style(text_style(LABEL_SIZE, &INK))
            .axis_desc_style(text_style(LABEL_SIZE, &INK))
            .bold_line_style(LIGHT)
            .draw()
            .map_err(err)?;
        for (pts, color) in [(&r.p_wrong, WRONG), (&r.p_correct, CORRECT)] {
            if pts.iter().all(|p| p.lo.is_finite() && p.hi.is_finite()) {
                let band: Vec<(f64, f64)> = xs
                    .iter()
                    .zip(pts)
                    .map(|(x, p)| (*x, p.hi))
                    .chain(xs.iter().zip(pts).rev().map(|(x, p)| (*x, p.lo)))
                    .collect();
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        band,
                        color.mix(BAND_ALPHA).filled(),
                    )))
                    .map_err(err)?;
            }
        }
        for (pts, color) in [(&r.p_wrong, WRONG), (&r.p_correct, CORRECT)] {
            chart
                .draw_series(LineSeries::new(
                    xs.iter()
                        .zip(pts)
                        .filter(|(_, p)| p.mean.is_finite())
                        .map(|(x, p)| (*x, p.mean)),
                    color.stroke_width(CURVE_WIDTH),
                ))
                .map_err(err)?;
        }
        legend(&side, 40, &entries, &notes)
    })
}
