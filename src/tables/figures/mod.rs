//! Figures of a run: SVG files under `figures/`, drawn with `plotters` from the same indexed
//! rows, shared hierarchy and bootstrap helpers as the tables.
//!
//! - `pressure_ramp__<model>__<dataset>.svg` ([`ramp`], one per pair): mean p(advocated wrong)
//!   and mean p(correct) at clean → weak → medium → strong → medium reset → R0 with 95% paired
//!   item-bootstrap bands.
//! - `recovery_hierarchy_gap.svg` ([`hierarchy`]): pairs × main operations heat map of the
//!   hysteresis gap, a ring where the main clean-context-like criterion passes, the MRO per pair.
//! - `truncation_boundary.svg` ([`truncation`]): the gap per truncation condition per pair and
//!   the pooled mean with Table 5's interval.
//! - `cctp_alpha_by_dataset.svg` ([`cctp`]): ECDF of Table 21's per-item alpha* per dataset.
//!
//! Only the figures the rows have data for are drawn. Output is deterministic: fixed sizes,
//! one font family named in the SVG (no font file is read), no timestamps, integer pixel
//! coordinates; identical rows give identical bytes.

mod cctp;
mod hierarchy;
pub(crate) mod lens;
mod ramp;
pub(crate) mod steering;
mod style;
mod truncation;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use super::format::md_escape;
use crate::dialogue::ops_text::ops_text;
use super::{Ctx, TablesError};

/// One drawn figure.
#[derive(Clone, Debug)]
pub(crate) struct Figure {
    /// File name under `figures/`.
    pub(crate) file: String,
    pub(crate) title: String,
    /// One line for `summary.md`.
    pub(crate) caption: String,
    pub(crate) svg: String,
}

/// The figure families: name and what a run needs for it (listed in `summary.md` when absent).
const FAMILIES: [(&str, &str); 4] = [
    (
        "Pressure ramp (one per pair)",
        "every ramp step: clean_context (or the probe), weak_pressure, medium_pressure, strong_pressure, medium_reset, strong_reset (ramp suite)",
    ),
    (
        "Recovery hierarchy heat map",
        "clean probe, R0 and at least one recovery operation (hierarchy suite)",
    ),
    (
        "Truncation boundary",
        "the truncation conditions (truncation suite)",
    ),
    (
        "CCTP alpha* by dataset",
        "clean and R0 rows with stored option scores",
    ),
];

/// Every figure of a run, what was not drawn, and drawing errors (none expected).
#[derive(Debug, Default)]
pub(crate) struct Figures {
    pub(crate) figures: Vec<Figure>,
    /// Families with no data: (name, needs).
    pub(crate) missing: Vec<(&'static str, &'static str)>,
    pub(crate) errors: Vec<String>,
}

impl Figures {
    fn push(&mut self, file: String, title: String, caption: String, svg: Result<String, String>) {
        match svg {
            Ok(svg) => {
                // two keys that sanitise to one file name keep both figures
                let mut name = file.clone();
                let mut k = 2;
                while self.figures.iter().any(|f| f.file == name) {
                    name = format!("{}__{k}.svg", file.trim_end_matches(".svg"));
                    k += 1;
                }
                self.figures.push(Figure {
                    file: name,
                    title,
                    caption,
                    svg,
                });
            }
            Err(e) => self.errors.push(format!("{file}: {e}")),
        }
    }
}

/// Draws every figure the indexed rows have data for (pure: no I/O).
pub(crate) fn build_figures(ctx: &Ctx) -> Figures {
    let mut f = Figures::default();

    let ramps = ramp::data(ctx);
    if ramps.is_empty() {
        f.missing.push(FAMILIES[0]);
    }
    for r in &ramps {
        let caption = format!(
            "mean p(advocated wrong) and mean p(correct) at clean → weak → medium → strong → medium reset → R0 with 95% paired item-bootstrap bands ({} items)",
            r.n
        );
        f.push(ramp::file_name(r), ramp::title(r), caption, ramp::render(r));
    }

    match hierarchy::data(ctx) {
        Some(h) => {
            let passing = h
                .rows
                .iter()
                .flat_map(|r| r.cells.iter().flatten())
                .filter(|c| c.passes)
                .count();
            let caption = ops_text(&format!(
                "hysteresis gap mean p_X(w) − mean p_clean(w) for {} pairs × operations {{main_first}} … {{main_last}}; a ring marks the {} pair × operation cells that pass the main clean-context-like criterion; MRO per pair",
                h.rows.len(),
                passing
            ));
            f.push(
                hierarchy::FILE.into(),
                hierarchy::TITLE.into(),
                caption,
                hierarchy::render(&h),
            );
        }
        None => f.missing.push(FAMILIES[1]),
    }

    match truncation::data(ctx) {
        Some(b) => {
            let caption = format!(
                "mean gap per truncation condition (full history → reset only) for {} pairs and their mean with Table 5's 95% CI",
                b.pairs.len()
            );
            f.push(
                truncation::FILE.into(),
                truncation::TITLE.into(),
                caption,
                truncation::render(&b),
            );
        }
        None => f.missing.push(FAMILIES[2]),
    }

    match cctp::data(ctx) {
        Some(d) => {
            let caption = format!(
                "distribution (ECDF) of the per-item alpha* of Table 21's primary variant, {} dataset{} ({} items)",
                d.len(),
                if d.len() == 1 { "" } else { "s" },
                d.iter().map(|a| a.alphas.len()).sum::<usize>()
            );
            f.push(
                cctp::FILE.into(),
                cctp::TITLE.into(),
                caption,
                cctp::render(&d),
            );
        }
        None => f.missing.push(FAMILIES[3]),
    }
    f
}

/// Writes every figure into `dir` (created when there is one), adds the paths to `written` and
/// removes the `*.svg` files of `dir` that this run did not draw.
pub(crate) fn write_figures(
    ctx: &Ctx,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<Figures, TablesError> {
    let figs = build_figures(ctx);
    let mut keep = Vec::new();
    for f in &figs.figures {
        let p = dir.join(&f.file);
        super::write(&p, f.svg.as_bytes())?;
        keep.push(p.clone());
        written.push(p);
    }
    // `figures/` holds only figures.
    let is_svg = |name: &str| Path::new(name).extension().is_some_and(|x| x == "svg");
    super::remove_stale(dir, &keep, is_svg)?;
    Ok(figs)
}

/// The `Figures` section of `summary.md`: a link and a line per figure, then what was not drawn.
pub(crate) fn summary_section(f: &Figures) -> String {
    let mut s = String::from("## Figures\n\n");
    s.push_str("SVG files under `figures/` (fixed sizes and fonts, no timestamps: the same rows give the same bytes).\n\n");
    if f.figures.is_empty() {
        s.push_str("None: this run has no data for any figure.\n");
    }
    // `α*` must not open emphasis
    let esc = |t: &str| md_escape(t).replace('*', "\\*");
    for fig in &f.figures {
        s.push_str(&format!(
            "- **{}**: [{file}](figures/{file}) — {}\n",
            esc(&fig.title),
            esc(&fig.caption),
            file = fig.file
        ));
    }
    if !f.missing.is_empty() {
        s.push_str("\nNot drawn (conditions missing from this run):\n\n");
        for (name, needs) in &f.missing {
            s.push_str(&format!("- {name}: needs {needs}\n"));
        }
    }
    for e in &f.errors {
        s.push_str(&format!("\nNot drawn (drawing error): {}\n", md_escape(e)));
    }
    s.push('\n');
    s
}
