//! Rendering the comparisons: `reproduction.csv` (one row per printed cell, unrounded) and
//! `reproduction.md` (the counts, then one table per printed table, then the paper's README).

use serde::Serialize;

use super::compare::{counts, Comparison, Status};
use super::parse::{printed_interval, printed_number};
use super::printed::{PAPER_README, TABLES};
use crate::tables::format::{fmt_float, md_escape, table_of, Num, PyBool};

/// `reproduction.csv`: one printed cell.
#[derive(Serialize, Default)]
struct ReproRow {
    paper_table: &'static str,
    row: String,
    column: String,
    paper_value: String,
    paper_number: Num,
    run_value: Num,
    run_as_printed: String,
    difference: Num,
    run_ci_low: Num,
    run_ci_high: Num,
    ci_covers_paper: Option<PyBool>,
    matches_as_printed: Option<PyBool>,
    status: &'static str,
    source: String,
    note: String,
}

/// One line of a table in `reproduction.md`.
#[derive(Serialize, Default)]
struct ReproView {
    #[serde(rename = "Row")]
    row: String,
    #[serde(rename = "Column")]
    column: String,
    #[serde(rename = "Paper")]
    paper: String,
    #[serde(rename = "Run")]
    run: String,
    #[serde(rename = "Run - paper")]
    difference: String,
    #[serde(rename = "Run 95% CI")]
    ci: String,
    #[serde(rename = "CI covers")]
    covers: String,
    #[serde(rename = "As printed")]
    as_printed: String,
    #[serde(rename = "Status")]
    status: String,
}

fn num_text(v: f64, d: usize) -> String {
    fmt_float(v, d).unwrap_or_default()
}

/// `reproduction.csv` of the comparisons.
pub(crate) fn csv(cs: &[Comparison]) -> String {
    let rows: Vec<ReproRow> = cs
        .iter()
        .map(|c| ReproRow {
            paper_table: c.table,
            row: c.row.clone(),
            column: c.column.clone(),
            paper_value: c.paper.clone(),
            paper_number: Num(c.paper_value),
            run_value: Num(c.run_value),
            run_as_printed: c.run_text.clone(),
            difference: Num(c.difference),
            run_ci_low: Num(c.ci.map_or(f64::NAN, |x| x.0)),
            run_ci_high: Num(c.ci.map_or(f64::NAN, |x| x.1)),
            ci_covers_paper: c.ci_covers.map(PyBool),
            matches_as_printed: c.matches_printed.map(PyBool),
            status: c.status.as_str(),
            source: c.source.clone(),
            note: c.note.clone(),
        })
        .collect();
    crate::tables::format::csv_text(&rows)
}

/// `reproduction.md` of the comparisons.
pub(crate) fn markdown(cs: &[Comparison]) -> String {
    let n = counts(cs);
    let mut s = String::from("# Reproduction: this run vs the paper's printed values\n\n");
    s.push_str("Every printed cell of the paper's tables that hyst-tui can produce (the paper's values ship in `assets/paper/`, as printed), next to this run's number for it: rows matched by the paper's model key (models.toml `paper_key`) and dataset, the run's value in the printed unit, run - paper, and whether the run's 95% CI (where it has one) covers the printed value (anything that rounds to it: ± half a unit of its last printed digit). \"As printed\" = the run's value rounded as the paper printed it equals the printed text. The published page shows at most six data rows per table, so only those rows are here. `reproduction.csv` holds the same cells to six decimals, with the table file, column and filter each number comes from. Rebuild both without a model: `hyst-tui compare --paper RUN_DIR`.\n\n");
    s.push_str(&format!(
        "{} printed cells: {} compared over the paper's pairs, {} produced over other pairs, {} not run, {} not computed. Of the {} produced: {} as printed; {} have a run CI, {} of which cover the printed value.\n\n",
        n.cells, n.compared, n.other_pairs, n.not_run, n.not_computed, n.compared + n.other_pairs, n.as_printed, n.with_ci, n.ci_covers
    ));
    s.push_str("Statuses: `compared` (the run's table holds this pair, or pools exactly the paper's pairs); `other pairs` (a pooled printed row the run pools over other pairs: shown, not a reproduction); `not run` (the run has no number for it); `not computed` (no hyst-tui table produces it).\n");
    for pt in TABLES {
        let rows: Vec<&Comparison> = cs.iter().filter(|c| c.table == pt.id).collect();
        if rows.is_empty() {
            continue;
        }
        s.push_str(&format!("\n## {}\n\n{}\n\n", pt.id, md_escape(pt.note)));
        let v: Vec<ReproView> = rows
            .iter()
            .map(|c| {
                let d = printed_number(&c.paper)
                    .map(|x| x.1)
                    .or_else(|| printed_interval(&c.paper).map(|i| i.0 .1))
                    .unwrap_or(3);
                let produced = matches!(c.status, Status::Compared | Status::OtherPairs);
                ReproView {
                    row: c.row.clone(),
                    column: c.column.clone(),
                    paper: c.paper.clone(),
                    run: if produced { c.run_text.clone() } else { c.status.as_str().into() },
                    difference: if produced { num_text(c.difference, d + 1) } else { String::new() },
                    ci: c
                        .ci
                        .filter(|_| produced)
                        .map_or(String::new(), |(lo, hi)| format!("[{}, {}]", num_text(lo, d), num_text(hi, d))),
                    covers: match c.ci_covers.filter(|_| produced) {
                        Some(true) => "yes".into(),
                        Some(false) => "no".into(),
                        None => String::new(),
                    },
                    as_printed: match c.matches_printed.filter(|_| produced) {
                        Some(true) => "yes".into(),
                        Some(false) => "no".into(),
                        None => String::new(),
                    },
                    status: if c.note.is_empty() {
                        c.status.as_str().into()
                    } else {
                        format!("{} ({})", c.status.as_str(), c.note)
                    },
                }
            })
            .collect();
        s.push_str(&table_of(&v).to_markdown());
    }
    s.push_str("\n## What the printed labels mean (the paper's README)\n\n");
    for line in PAPER_README.lines() {
        s.push_str(line);
        s.push('\n');
    }
    s
}
