//! The comparison: the run's rows that match a printed row, the pooled status of a printed
//! row (over the paper's pairs or other pairs) and one [`Comparison`] per printed cell, with
//! their [`ReproductionCounts`].

use std::collections::{BTreeMap, BTreeSet};

use super::parse::{
    parse_tsv, printed_cell, printed_count, printed_interval, printed_number, Printed,
};
use super::printed::{
    CellMap, Key, PaperTable, Pool, Unit, CELLS, DATASET_NAMES, MODEL_NAMES, PAPER_TSV, TABLES,
};
use crate::tables::format::{fmt_float, Cell, Table};
use crate::tables::index::RunIndex;
use crate::tables::{Output, TableOptions};

/// The pairs of the paper behind a pooled printed row (paper model key, dataset key).
fn paper_pairs(pool: Pool) -> BTreeSet<(String, String)> {
    let models: &[&str] = match pool {
        Pool::PerPair => &[],
        Pool::All14 => &[
            "qwen25_15b", "qwen25_7b", "qwen25_14b", "mistral7b_v03", "llama31_8b", "gemma2_2b", "gemma2_9b",
        ],
        Pool::Truncation5 => {
            return [
                ("qwen25_15b", "truthfulqa_mc"),
                ("qwen25_15b", "mmlu_pro"),
                ("qwen25_14b", "mmlu_pro"),
                ("mistral7b_v03", "truthfulqa_mc"),
                ("mistral7b_v03", "mmlu_pro"),
            ]
            .iter()
            .map(|(m, d)| (m.to_string(), d.to_string()))
            .collect()
        }
        Pool::Relabel6 => {
            return [
                ("qwen25_15b", "truthfulqa_mc"),
                ("qwen25_15b", "mmlu_pro"),
                ("qwen25_7b", "mmlu_pro"),
                ("qwen25_14b", "mmlu_pro"),
                ("mistral7b_v03", "truthfulqa_mc"),
                ("mistral7b_v03", "mmlu_pro"),
            ]
            .iter()
            .map(|(m, d)| (m.to_string(), d.to_string()))
            .collect()
        }
    };
    models
        .iter()
        .flat_map(|m| ["truthfulqa_mc", "mmlu_pro"].map(|d| (m.to_string(), d.to_string())))
        .collect()
}

fn lookup(map: &[(&'static str, &'static str)], key: &str) -> Option<&'static str> {
    map.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// Canonical dataset key of a printed or stored dataset name.
fn dataset_key(s: &str) -> String {
    lookup(DATASET_NAMES, s).map_or_else(|| s.to_string(), str::to_string)
}

/// How a comparison came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// The run produced the cell over the paper's pairs.
    Compared,
    /// The run produced the cell, pooled over other pairs than the paper's.
    OtherPairs,
    /// The run has no number for the cell.
    NotRun,
    /// No table of ours produces the cell.
    NotComputed,
}

impl Status {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Status::Compared => "compared",
            Status::OtherPairs => "other pairs",
            Status::NotRun => "not run",
            Status::NotComputed => "not computed",
        }
    }
}

/// One printed cell and the run's number for it.
#[derive(Clone, Debug)]
pub(crate) struct Comparison {
    pub(crate) table: &'static str,
    /// The printed row's key cells joined with ` / `.
    pub(crate) row: String,
    /// The printed column (`95% CI (low)` for an interval's end).
    pub(crate) column: String,
    /// The printed text of the cell.
    pub(crate) paper: String,
    /// The printed number (NaN for text).
    pub(crate) paper_value: f64,
    /// The run's number in the printed unit (NaN when none).
    pub(crate) run_value: f64,
    /// The run's cell as the paper would print it (`0.746`, `2/14`, `R3a deletion`).
    pub(crate) run_text: String,
    /// run − paper in the printed unit (NaN when not comparable).
    pub(crate) difference: f64,
    /// The run's 95% interval in the printed unit.
    pub(crate) ci: Option<(f64, f64)>,
    /// The CI overlaps the printed value's rounding interval (± half a unit of its last digit).
    pub(crate) ci_covers: Option<bool>,
    /// The run's value rounded as printed equals the printed text.
    pub(crate) matches_printed: Option<bool>,
    pub(crate) status: Status,
    /// Where the run's number comes from (`tables/<stem>.csv` column [filters]).
    pub(crate) source: String,
    pub(crate) note: String,
}

/// The run side: our outputs, the run's paper keys and the pairs each table pools.
struct Run<'o> {
    outputs: &'o [Output],
    /// Run model key → paper key (models with one).
    paper_key: BTreeMap<String, String>,
    /// Table id → the (paper key or run key, dataset) pairs in its scope.
    pooled: BTreeMap<&'static str, Vec<(Option<String>, String)>>,
}

impl Run<'_> {
    fn model(&self, run_key: &str) -> String {
        self.paper_key
            .get(run_key)
            .cloned()
            .unwrap_or_else(|| run_key.to_string())
    }
}

fn cell_text(c: &Cell) -> Option<String> {
    match c {
        Cell::Text(s) => Some(s.clone()),
        Cell::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

fn cell_number(c: &Cell) -> f64 {
    match c {
        Cell::Num(v) | Cell::Pct(v) => *v,
        Cell::Int(i) => *i as f64,
        _ => f64::NAN,
    }
}

/// The rows of `t` that match a printed row's keys and the cell's filters.
fn matching_rows<'t>(
    run: &Run,
    t: &'t Table,
    keys: &[(&'static str, Key)],
    printed: &Printed,
    prow: &[String],
    filter: &[(&str, &str)],
) -> Vec<&'t Vec<Cell>> {
    let mut conds: Vec<(usize, Box<dyn Fn(&str) -> bool + '_>)> = Vec::new();
    for (pcol, key) in keys {
        let Some(ptext) = printed_cell(printed, prow, pcol).map(str::to_string) else {
            return Vec::new();
        };
        let (col, pred): (&str, Box<dyn Fn(&str) -> bool>) = match *key {
            Key::Model(col) => {
                let want = lookup(MODEL_NAMES, &ptext).map(str::to_string);
                (
                    col,
                    Box::new(move |ours: &str| want.as_deref() == Some(run.model(ours).as_str())),
                )
            }
            Key::Dataset(col) => {
                let want = dataset_key(&ptext);
                (col, Box::new(move |ours: &str| dataset_key(ours) == want))
            }
            Key::Map(col, map) => {
                let want = lookup(map(), &ptext);
                (col, Box::new(move |ours: &str| want == Some(ours)))
            }
        };
        let Some(j) = t.col(col) else {
            return Vec::new();
        };
        conds.push((j, pred));
    }
    for (col, val) in filter {
        let Some(j) = t.col(col) else {
            return Vec::new();
        };
        let val = val.to_string();
        conds.push((j, Box::new(move |ours: &str| ours == val)));
    }
    t.rows
        .iter()
        .filter(|r| {
            conds
                .iter()
                .all(|(j, p)| r.get(*j).and_then(cell_text).is_some_and(|s| p(&s)))
        })
        .collect()
}

/// Decimals-faithful text of a number in the printed unit.
fn as_printed(v: f64, decimals: usize) -> String {
    fmt_float(v, decimals).unwrap_or_else(|| "NA".into())
}

/// The pooled status of a printed row: compared when the run's table pools exactly the
/// paper's pairs (restricted to the row's dataset when it has one).
fn pool_status(run: &Run, id: &str, pool: Pool, row_dataset: Option<&str>) -> (Status, String) {
    let mut want = paper_pairs(pool);
    if let Some(d) = row_dataset {
        want.retain(|(_, ds)| ds == d);
    }
    let have: Vec<&(Option<String>, String)> = run
        .pooled
        .get(id)
        .map(|v| {
            v.iter()
                .filter(|(_, ds)| row_dataset.is_none_or(|d| ds == d))
                .collect()
        })
        .unwrap_or_default();
    let keyed: BTreeSet<(String, String)> = have
        .iter()
        .filter_map(|(m, d)| m.clone().map(|m| (m, d.clone())))
        .collect();
    let exact = have.len() == keyed.len() && keyed == want;
    let note = format!(
        "pooled over {} run pairs ({} with a paper key); the paper pools {}",
        have.len(),
        keyed.len(),
        want.len()
    );
    if exact {
        (Status::Compared, String::new())
    } else {
        (Status::OtherPairs, note)
    }
}

fn compare_cell(
    run: &Run,
    pt: &PaperTable,
    printed: &Printed,
    prow: &[String],
    map: &CellMap,
) -> Comparison {
    // the printed text of the cell (every mapped column is in its TSV: a test checks it)
    let paper = printed_cell(printed, prow, map.column).unwrap_or_default().to_string();
    let row_label: Vec<&str> = pt
        .keys
        .iter()
        .filter_map(|(c, _)| printed_cell(printed, prow, c))
        .collect();
    let column = match map.unit {
        Unit::IntervalLow => format!("{} (low)", map.column),
        Unit::IntervalHigh => format!("{} (high)", map.column),
        _ => map.column.to_string(),
    };
    // the printed number and its decimals
    let (paper_value, decimals) = match map.unit {
        Unit::Fraction | Unit::Percent => printed_number(&paper).unwrap_or((f64::NAN, 3)),
        Unit::IntervalLow => printed_interval(&paper).map_or((f64::NAN, 3), |i| i.0),
        Unit::IntervalHigh => printed_interval(&paper).map_or((f64::NAN, 3), |i| i.1),
        Unit::Count { .. } => printed_count(&paper).map_or((f64::NAN, 0), |(k, _)| (k as f64, 0)),
        Unit::Text(_) => (f64::NAN, 0),
    };
    let mut c = Comparison {
        table: pt.id,
        row: row_label.join(" / "),
        column,
        paper: paper.clone(),
        paper_value,
        run_value: f64::NAN,
        run_text: String::new(),
        difference: f64::NAN,
        ci: None,
        ci_covers: None,
        matches_printed: None,
        status: Status::NotRun,
        source: String::new(),
        note: map.note.to_string(),
    };
    if map.stem.is_empty() {
        c.status = Status::NotComputed;
        return c;
    }
    let filt: Vec<String> = map.filter.iter().map(|(k, v)| format!("{k}={v}")).collect();
    c.source = format!(
        "tables/{}.csv {}{}",
        map.stem,
        map.value,
        if filt.is_empty() {
            String::new()
        } else {
            format!(" [{}]", filt.join(", "))
        }
    );
    let Some(out) = run.outputs.iter().find(|o| o.stem == map.stem) else {
        return c;
    };
    let t = &out.table;
    let rows = matching_rows(run, t, pt.keys, printed, prow, map.filter);
    let Some(r) = rows.first() else {
        return c;
    };
    if rows.len() > 1 {
        c.note = format!("{} run rows match; the first is shown", rows.len());
    }
    let Some(value_cell) = t.col(map.value).and_then(|j| r.get(j)) else {
        return c;
    };
    let cell_of = |col: &str| t.col(col).and_then(|i| r.get(i));
    let scale = match map.unit {
        Unit::Percent => 100.0,
        _ => 1.0,
    };
    // pooled rows: over the paper's pairs?
    let row_model = pt.keys.iter().find_map(|(pc, k)| match k {
        Key::Model(_) => printed_cell(printed, prow, pc),
        _ => None,
    });
    let pooled_row = pt.pool != Pool::PerPair || row_model.is_some_and(|m| lookup(MODEL_NAMES, m) == Some("all"));
    let row_dataset = pt.keys.iter().find_map(|(pc, k)| match k {
        Key::Dataset(_) => printed_cell(printed, prow, pc)
            .map(dataset_key)
            .filter(|d| d != "all"),
        _ => None,
    });
    let (status, note) = if pooled_row {
        // a pooled row of a per-pair table is Table 18's Mean (the five truncation pairs)
        let pool = if pt.pool == Pool::PerPair { Pool::Truncation5 } else { pt.pool };
        pool_status(run, pt.id, pool, row_dataset.as_deref())
    } else {
        (Status::Compared, String::new())
    };
    match map.unit {
        Unit::Text(m) => {
            let m = m();
            let ours = cell_text(value_cell).unwrap_or_default();
            let printed_as = m
                .iter()
                .find(|(_, v)| *v == ours)
                .map_or(ours.clone(), |(p, _)| p.to_string());
            c.run_text = printed_as;
            c.matches_printed = Some(lookup(m, &paper) == Some(ours.as_str()) || c.run_text == paper);
        }
        Unit::Count { n } => {
            let k = cell_number(value_cell);
            let big_n = cell_of(n).map_or(f64::NAN, cell_number);
            if !k.is_finite() {
                c.note = "the run's value is NA".into();
                return c;
            }
            c.run_value = k;
            c.run_text = if big_n.is_finite() {
                format!("{}/{}", k as i64, big_n as i64)
            } else {
                format!("{}", k as i64)
            };
            c.matches_printed = Some(c.run_text == paper);
            // a difference of counts only means something over as many pairs as the paper's
            let same_n = printed_count(&paper).is_some_and(|(_, pn)| pn as f64 == big_n);
            if same_n {
                c.difference = k - paper_value;
            }
        }
        _ => {
            let v = cell_number(value_cell);
            if !v.is_finite() {
                c.note = "the run's value is NA".into();
                return c;
            }
            c.run_value = v * scale;
            c.run_text = as_printed(c.run_value, decimals);
            c.difference = c.run_value - paper_value;
            if paper_value.is_finite() {
                c.matches_printed = Some(c.run_text == as_printed(paper_value, decimals));
            }
            if let Some((lo, hi)) = map.ci {
                if let (Some(a), Some(b)) = (cell_of(lo), cell_of(hi)) {
                    let (lo, hi) = (cell_number(a) * scale, cell_number(b) * scale);
                    if lo.is_finite() && hi.is_finite() {
                        c.ci = Some((lo, hi));
                        // no verdict on a printed text that is not a number; the printed value
                        // stands for everything that rounds to it (± half a unit of its last digit)
                        if paper_value.is_finite() {
                            let half = 0.5 * 10f64.powi(-(decimals.min(15) as i32));
                            c.ci_covers = Some(lo <= paper_value + half && paper_value - half <= hi);
                        }
                    }
                }
            }
        }
    }
    c.status = status;
    if !note.is_empty() {
        c.note = if c.note.is_empty() { note } else { format!("{}; {note}", c.note) };
    }
    c
}

/// Every printed cell the mapping covers, compared with the run's tables.
pub(crate) fn compare(idx: &RunIndex, opts: &TableOptions, outputs: &[Output]) -> Vec<Comparison> {
    let paper_key: BTreeMap<String, String> = idx
        .pairs
        .iter()
        .filter(|p| !p.paper_key.is_empty())
        .map(|p| (p.model_key.clone(), p.paper_key.clone()))
        .collect();
    let mut pooled = BTreeMap::new();
    for pt in TABLES {
        let pairs: Vec<(Option<String>, String)> = idx
            .pairs
            .iter()
            .filter(|p| {
                opts.scopes
                    .get(pt.id)
                    .is_none_or(|s| s.contains(&(p.model_key.clone(), p.dataset.clone())))
            })
            .filter(|p| (pt.needs)(idx.reg).is_empty() || (pt.needs)(idx.reg).iter().any(|c| p.has(c)))
            .map(|p| ((!p.paper_key.is_empty()).then(|| p.paper_key.clone()), p.dataset.clone()))
            .collect();
        pooled.insert(pt.id, pairs);
    }
    let run = Run { outputs, paper_key, pooled };
    let mut out = Vec::new();
    for pt in TABLES {
        // every listed table ships (a test checks it); a missing one would only be skipped
        let Some(text) = PAPER_TSV.iter().find(|(f, _)| *f == pt.file).map(|(_, t)| *t) else {
            continue;
        };
        let printed = parse_tsv(text);
        for prow in &printed.rows {
            for map in CELLS.iter().filter(|m| m.table == pt.file) {
                out.push(compare_cell(&run, pt, &printed, prow, map));
            }
        }
    }
    out
}

/// Counts of a comparison (for `compare --paper` and the top of `reproduction.md`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReproductionCounts {
    /// Printed cells the mapping covers.
    pub cells: usize,
    /// Produced over the paper's pairs.
    pub compared: usize,
    /// Produced, pooled over other pairs.
    pub other_pairs: usize,
    /// Of the produced cells, those equal to the printed text when rounded as printed.
    pub as_printed: usize,
    /// Produced cells with a run CI, and those whose CI covers the printed value.
    pub with_ci: usize,
    pub ci_covers: usize,
    /// Printed cells the run has no number for.
    pub not_run: usize,
    /// Printed cells no table of ours produces (Table 16's MRO).
    pub not_computed: usize,
}

pub(crate) fn counts(cs: &[Comparison]) -> ReproductionCounts {
    let produced = |c: &&Comparison| matches!(c.status, Status::Compared | Status::OtherPairs);
    ReproductionCounts {
        cells: cs.len(),
        compared: cs.iter().filter(|c| c.status == Status::Compared).count(),
        other_pairs: cs.iter().filter(|c| c.status == Status::OtherPairs).count(),
        as_printed: cs.iter().filter(produced).filter(|c| c.matches_printed == Some(true)).count(),
        with_ci: cs.iter().filter(produced).filter(|c| c.ci_covers.is_some()).count(),
        ci_covers: cs.iter().filter(produced).filter(|c| c.ci_covers == Some(true)).count(),
        not_run: cs.iter().filter(|c| c.status == Status::NotRun).count(),
        not_computed: cs.iter().filter(|c| c.status == Status::NotComputed).count(),
    }
}
