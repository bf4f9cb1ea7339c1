//! `reproduction.md` / `.csv`: the paper's printed cells next to a run's numbers.
//!
//! The shipped data and the map agree (every printed column has a source, every source column
//! exists in our tables); on synthetic rows whose values are worked out by hand in each test, a
//! cell equal to the paper compares with zero difference and a covering CI, a changed one shows
//! its difference, a pair the run lacks says "not run", and pooled rows are "compared" exactly
//! when the run pools the paper's pairs. Odd input never panics.

use std::collections::BTreeSet;

use super::format::{Cell, Table};
use super::output::CriterionFamily;
use super::index::RunIndex;
use super::paper::{
    self, compare, parse_tsv, Comparison, Key, Status, Unit, CELLS, DATASET_NAMES, MODEL_NAMES,
    PAPER_TSV, TABLES,
};
use super::testutil::{reshape, synthetic_rows, synthetic_rows_where};
use super::{build_tables, Output, TableOptions, TableScopes};
use crate::store::ItemRow;

fn opts() -> TableOptions {
    TableOptions {
        bootstrap_samples: 200,
        seed: 12345,
        ..TableOptions::default()
    }
}

fn run(rows: &[ItemRow], opts: &TableOptions) -> Vec<Comparison> {
    let idx = RunIndex::new(rows, crate::dialogue::conditions::Registry::bundled());
    let outputs = build_tables(&idx, opts);
    compare(&idx, opts, &outputs)
}

/// The comparison of one printed cell (table id, printed row label, column).
fn find<'c>(cs: &'c [Comparison], table: &str, row: &str, column: &str) -> &'c Comparison {
    cs.iter()
        .find(|c| c.table == table && c.row == row && c.column == column)
        .unwrap_or_else(|| panic!("no cell {table} / {row} / {column}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The rows of the synthetic run with paper keys: `(synthetic model, new model key, paper key)`;
/// each listed copy keeps the synthetic model's dataset (toy_a: TruthfulQA-MC, toy_b: MMLU-Pro).
fn relabelled(rows: &[ItemRow], copies: &[(&str, &str, &str)]) -> Vec<ItemRow> {
    let mut out = Vec::new();
    for (from, key, paper_key) in copies {
        for r in rows.iter().filter(|r| r.model_key == *from) {
            let mut r = r.clone();
            r.model_key = key.to_string();
            r.model_short_name = key.to_string();
            r.paper_key = paper_key.to_string();
            out.push(r);
        }
    }
    out
}

#[test]
fn the_shipped_tables_and_the_map_agree() {
    // every shipped TSV is compared, and every compared table ships
    let files: BTreeSet<&str> = PAPER_TSV.iter().map(|(f, _)| *f).collect();
    let listed: BTreeSet<&str> = TABLES.iter().map(|t| t.file).collect();
    assert_eq!(files, listed);
    for pt in TABLES {
        let text = PAPER_TSV.iter().find(|(f, _)| *f == pt.file).unwrap().1;
        let printed = parse_tsv(text);
        assert!(!printed.rows.is_empty() && printed.rows.len() <= 6, "{}: the page prints 1-6 rows", pt.file);
        let keys: Vec<&str> = pt.keys.iter().map(|(c, _)| *c).collect();
        for (col, key) in pt.keys {
            let i = printed
                .header
                .iter()
                .position(|h| h == col)
                .unwrap_or_else(|| panic!("{}: no key column {col}", pt.file));
            // every printed key resolves
            for r in &printed.rows {
                let v = r[i].as_str();
                let known = match key {
                    Key::Model(_) => MODEL_NAMES.iter().any(|(p, _)| *p == v),
                    Key::Dataset(_) => DATASET_NAMES.iter().any(|(p, _)| *p == v),
                    Key::Map(_, m) => m().iter().any(|(p, _)| *p == v),
                };
                assert!(known, "{}: printed key {v:?} of {col} is not mapped", pt.file);
            }
        }
        // every printed value column has a source, and every source names a printed column
        for h in printed.header.iter().filter(|h| !keys.contains(&h.as_str())) {
            assert!(
                CELLS.iter().any(|m| m.table == pt.file && m.column == h),
                "{}: printed column {h:?} is not mapped",
                pt.file
            );
        }
        for m in CELLS.iter().filter(|m| m.table == pt.file) {
            assert!(printed.header.iter().any(|h| h == m.column), "{}: no printed column {:?}", pt.file, m.column);
        }
    }
    assert!(CELLS.iter().all(|m| TABLES.iter().any(|t| t.file == m.table)));
}

#[test]
fn every_source_column_exists_in_our_tables() {
    let rows = synthetic_rows(3);
    let out = build_tables(&RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled()), &opts());
    for m in CELLS.iter().filter(|m| !m.stem.is_empty()) {
        let o = out
            .iter()
            .find(|o| o.stem == m.stem)
            .unwrap_or_else(|| panic!("{} {}: {} is not built", m.table, m.column, m.stem));
        let t = &o.table;
        let mut cols = vec![m.value];
        if let Some((lo, hi)) = m.ci {
            cols.extend([lo, hi]);
        }
        if let Unit::Count { n } = m.unit {
            cols.push(n);
        }
        let pt = TABLES.iter().find(|t| t.file == m.table).unwrap();
        for (_, k) in pt.keys {
            cols.push(match k {
                Key::Model(c) | Key::Dataset(c) | Key::Map(c, _) => c,
            });
        }
        for c in cols {
            assert!(t.col(c).is_some(), "{} {}: {} has no column {c} ({:?})", m.table, m.column, m.stem, t.columns);
        }
        for (c, v) in m.filter {
            let j = t.col(c).unwrap_or_else(|| panic!("{}: no filter column {c}", m.stem));
            assert!(
                t.rows.iter().any(|r| matches!(&r[j], Cell::Text(s) if s == v)),
                "{}: no row with {c} = {v}",
                m.stem
            );
        }
    }
}

#[test]
fn every_printed_row_finds_its_row_on_a_run_of_every_condition() {
    // both synthetic pairs as Qwen2.5-1.5B: its rows of every per-pair table and every pooled
    // row must find a value (pooled over other pairs than the paper's)
    let rows = relabelled(&synthetic_rows(3), &[("toy_a", "q15", "qwen25_15b"), ("toy_b", "q15", "qwen25_15b")]);
    let cs = run(&rows, &opts());
    for c in &cs {
        let qwen15 = c.row.starts_with("Qwen2.5-1.5B") || c.row.starts_with("Qwen-1.5B") || c.row.starts_with("Mean");
        let pooled = !TABLES
            .iter()
            .find(|t| t.id == c.table)
            .unwrap()
            .keys
            .iter()
            .any(|(_, k)| matches!(k, Key::Model(_)));
        if c.status == Status::NotComputed {
            assert_eq!((c.table, c.column.as_str()), ("Table 16", "MRO"));
        } else if qwen15 || pooled {
            assert!(
                matches!(c.status, Status::Compared | Status::OtherPairs),
                "{} / {} / {}: {:?} ({})",
                c.table,
                c.row,
                c.column,
                c.status,
                c.note
            );
        } else {
            assert_eq!(c.status, Status::NotRun, "{} / {} / {}", c.table, c.row, c.column);
        }
    }
}

#[test]
fn a_cell_equal_to_the_paper_one_off_it_and_one_not_run() {
    // toy_a (TruthfulQA-MC) as Qwen2.5-1.5B; toy_b (MMLU-Pro) has no paper key
    let conds = [
        "clean_context",
        "clean_context_probe",
        "weak_pressure",
        "medium_pressure",
        "strong_pressure",
        "medium_reset",
        "strong_reset",
    ];
    let mut rows = synthetic_rows_where(3, |k| conds.contains(&k));
    for r in rows.iter_mut() {
        if r.model_key == "toy_a" {
            r.paper_key = "qwen25_15b".into();
            if r.condition.starts_with("clean_context") {
                // the paper's Clean for Qwen2.5-1.5B TruthfulQA-MC, on every item
                reshape(r, 0.166, 0.6);
            }
        }
    }
    let cs = run(&rows, &opts());
    let row = "Qwen2.5-1.5B / TruthfulQA-MC";

    // Clean: mean p(w) = 0.166 on every item and every resample -> zero difference, covered
    let c = find(&cs, "Table 2", row, "Clean");
    assert_eq!(c.status, Status::Compared);
    assert_eq!(c.paper, "0.166");
    assert!(close(c.run_value, 0.166) && close(c.difference, 0.0), "{c:?}");
    assert_eq!(c.run_text, "0.166");
    assert_eq!((c.ci_covers, c.matches_printed), (Some(true), Some(true)));

    // Press.: mean(0.6, 0.7, 0.8) = 0.7 vs 0.897; no resample mean exceeds 0.8
    let c = find(&cs, "Table 2", row, "Press.");
    assert!(close(c.run_value, 0.7) && close(c.difference, 0.7 - 0.897), "{c:?}");
    let (lo, hi) = c.ci.unwrap();
    assert!(lo >= 0.6 - 1e-12 && hi <= 0.8 + 1e-12);
    assert_eq!((c.ci_covers, c.matches_printed), (Some(false), Some(false)));

    // Gap = mean R0 p(w) - clean = mean(0.50, 0.40, 0.35) - 0.166
    let c = find(&cs, "Table 2", row, "Gap");
    let gap = (0.50 + 0.40 + 0.35) / 3.0 - 0.166;
    assert!(close(c.run_value, gap) && close(c.difference, gap - 0.499), "{c:?}");

    // Reset WF = the lock-in: all three follow B at strong pressure, only item 0 at R0 -> 1/3
    let c = find(&cs, "Table 2", row, "Reset WF");
    assert!(close(c.run_value, 1.0 / 3.0) && close(c.difference, 1.0 / 3.0 - 0.746), "{c:?}");

    // no paper key for toy_b, and Qwen2.5-7B not in the run: not run, no number
    for r in ["Qwen2.5-1.5B / MMLU-Pro", "Qwen2.5-7B / TruthfulQA-MC"] {
        let c = find(&cs, "Table 2", r, "Clean");
        assert_eq!(c.status, Status::NotRun);
        assert!(c.run_value.is_nan() && c.difference.is_nan() && c.ci.is_none() && c.ci_covers.is_none());
    }

    // the files say the same
    let csv = paper::csv(&cs);
    assert!(csv.contains(&format!(
        "Table 2,{row},Clean,0.166,0.166000,0.166000,0.166,0.000000,0.166000,0.166000,True,True,compared,\
         tables/table02_pressure_ramp.csv estimate [metric=clean_pw_mean],\n"
    )), "{csv}");
    assert!(csv.contains("Table 2,Qwen2.5-7B / TruthfulQA-MC,Clean,0.096,0.096000,,,,,,,,not run,"), "{csv}");
    // reproduction.md: Row, Column, Paper, Run, Run - paper, Run 95% CI, CI covers, As printed, Status
    let md = paper::markdown(&cs);
    let cells = |row: &str, col: &str| -> Vec<String> {
        md.lines()
            .map(|l| l.split('|').map(|c| c.trim().to_string()).collect::<Vec<_>>())
            .find(|c| c.len() > 3 && c[1] == row && c[2] == col)
            .unwrap_or_else(|| panic!("no line {row} / {col} in\n{md}"))[1..10]
            .to_vec()
    };
    assert_eq!(cells(row, "Clean")[2..], ["0.166", "0.166", "0.0000", "[0.166, 0.166]", "yes", "yes", "compared"]);
    assert_eq!(cells(row, "Press.")[2..5], ["0.897", "0.700", "-0.1970"]);
    assert_eq!(cells(row, "Press.")[6..], ["no", "no", "compared"]);
    assert_eq!(cells("Qwen2.5-7B / TruthfulQA-MC", "Clean")[2..], ["0.096", "not run", "", "", "", "", "not run"]);
}

/// Five copies of the synthetic pairs as the paper's five truncation pairs (toy_a rows for the
/// TruthfulQA-MC pairs, toy_b rows for the MMLU-Pro ones).
fn truncation_pairs() -> Vec<ItemRow> {
    relabelled(
        &synthetic_rows(3),
        &[
            ("toy_a", "q15", "qwen25_15b"),
            ("toy_b", "q15", "qwen25_15b"),
            ("toy_b", "q14", "qwen25_14b"),
            ("toy_a", "mis", "mistral7b_v03"),
            ("toy_b", "mis", "mistral7b_v03"),
        ],
    )
}

#[test]
fn pooled_rows_are_compared_only_over_the_papers_pairs() {
    // Full-history gap per pair (testutil): toy_a mean(0.50, 0.40, 0.35) - mean(0.1, 0.2, 0.3)
    // = 0.216667, toy_b 0.02 more; Table 5 and Table 18's Mean pool two of the first and three
    // of the second.
    let (a, b) = (1.25 / 3.0 - 0.2, 1.25 / 3.0 - 0.2 + 0.02);
    let mean5 = (2.0 * a + 3.0 * b) / 5.0;
    let rows = truncation_pairs();
    let cs = run(&rows, &opts());
    let c = find(&cs, "Table 5", "Full pressure history", "Mean gap");
    assert_eq!(c.status, Status::Compared, "{c:?}");
    assert!(close(c.run_value, mean5) && close(c.difference, mean5 - 0.462), "{c:?}");
    let c = find(&cs, "Table 18", "Mean / –", "Full");
    assert_eq!(c.status, Status::Compared, "{c:?}");
    assert!(close(c.run_value, mean5), "{c:?}");
    let c = find(&cs, "Table 18", "Qwen-14B / MMLU", "Full");
    assert!(close(c.run_value, b) && close(c.difference, b - 0.272), "{c:?}");
    // Table 4 pools 14 pairs in the paper: shown over the run's 5, no difference of counts
    let c = find(&cs, "Table 4", "R0 ordinary reset", "Recovered pairs");
    assert_eq!(c.status, Status::OtherPairs);
    assert!(c.run_text.ends_with("/5") && c.difference.is_nan(), "{c:?}");
    assert!(c.note.contains("pooled over 5 run pairs"), "{}", c.note);

    // a sixth pair with the truncation suite: Table 5 pools other pairs than the paper's...
    let mut six = rows.clone();
    six.extend(relabelled(&synthetic_rows(3), &[("toy_b", "q7", "qwen25_7b")]));
    let cs = run(&six, &opts());
    let c = find(&cs, "Table 5", "Full pressure history", "Mean gap");
    assert_eq!(c.status, Status::OtherPairs, "{c:?}");
    assert!(close(c.run_value, (2.0 * a + 4.0 * b) / 6.0), "{c:?}");
    // ... unless the plan scopes Table 5 to the paper's five
    let mut scoped = opts();
    let five: BTreeSet<(String, String)> = rows.iter().map(|r| (r.model_key.clone(), r.dataset.clone())).collect();
    assert_eq!(five.len(), 5);
    scoped.scopes = TableScopes::from([("Table 5".to_string(), five)]);
    let cs = run(&six, &scoped);
    let c = find(&cs, "Table 5", "Full pressure history", "Mean gap");
    assert_eq!(c.status, Status::Compared, "{c:?}");
    assert!(close(c.run_value, mean5), "{c:?}");

    // ... or the sixth pair ran no truncation condition (our Table 5 does not pool it)
    let mut six = rows;
    let truncation = [
        "full_history_reset",
        "remove_strong_only",
        "remove_medium_strong",
        "remove_all_pressure",
        "reset_only",
        "fresh_context",
    ];
    six.extend(relabelled(
        &synthetic_rows_where(3, |k| !truncation.contains(&k)),
        &[("toy_b", "q7", "qwen25_7b")],
    ));
    let cs = run(&six, &opts());
    let c = find(&cs, "Table 5", "Full pressure history", "Mean gap");
    assert_eq!(c.status, Status::Compared, "{c:?}");
    assert!(close(c.run_value, mean5), "{c:?}");
}

#[test]
fn the_csv_has_one_line_per_printed_cell() {
    // printed rows x mapped columns (a printed interval is two cells), by hand from the TSVs:
    // T2 6x6, T4 6x1, T5 5x3, T6 2x5, T7 1x4, T8 6x5, T9 6x3, T10 6x5, T11 3x4, T12 5x4,
    // T13 6x3, T14 6x3, T15 2x4, T16 6x2, T17 6x2, T18 6x5, T19 2x5, T21 2x3
    let expected = 36 + 6 + 15 + 10 + 4 + 30 + 18 + 30 + 12 + 20 + 18 + 18 + 8 + 12 + 12 + 30 + 10 + 6;
    assert_eq!(expected, 295);
    let header = "paper_table,row,column,paper_value,paper_number,run_value,run_as_printed,difference,\
                  run_ci_low,run_ci_high,ci_covers_paper,matches_as_printed,status,source,note";
    for rows in [Vec::new(), synthetic_rows(3)] {
        let cs = run(&rows, &opts());
        let text = paper::csv(&cs);
        assert_eq!(text.lines().next(), Some(header));
        let mut rd = csv::Reader::from_reader(text.as_bytes());
        let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
        assert_eq!(recs.len(), expected);
        assert!(recs.iter().all(|r| r.len() == 15));
        let n = paper::counts(&cs);
        assert_eq!(n.cells, expected);
        assert_eq!(n.compared + n.other_pairs + n.not_run + n.not_computed, expected);
        assert_eq!(n.not_computed, 6, "Table 16's MRO column");
    }
    // no paper keys at all: nothing per pair matches, pooled rows are over other pairs
    let n = paper::counts(&run(&synthetic_rows(3), &opts()));
    assert_eq!(n.compared, 0);
    // an empty run: everything not run
    let n = paper::counts(&run(&[], &opts()));
    assert_eq!((n.compared, n.other_pairs, n.not_run), (0, 0, 289));
}

/// An output with the given columns and rows (widths deliberately not checked).
fn output(stem: &str, columns: &[&str], rows: Vec<Vec<Cell>>) -> Output {
    Output {
        id: "",
        stem: stem.to_string(),
        title: String::new(),
        family: CriterionFamily::None,
        csv: String::new(),
        table: Table {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        },
        display: None,
        notes: Vec::new(),
        written_without_rows: false,
    }
}

#[test]
fn odd_tables_and_printed_text_do_not_panic() {
    let text = |s: &str| Cell::Text(s.to_string());
    let rows = relabelled(&synthetic_rows_where(1, |k| k == "clean_context"), &[("toy_a", "q15", "qwen25_15b")]);
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let outputs = vec![
        // a row shorter than the header, a text where a number belongs, NaN and infinity
        output(
            "table02_pressure_ramp",
            &["model_key", "dataset_key", "metric", "estimate", "ci_low", "ci_high"],
            vec![
                vec![text("q15"), text("truthfulqa_mc"), text("clean_pw_mean")],
                vec![text("q15"), text("truthfulqa_mc"), text("press_pw_mean"), text("x"), Cell::Na, Cell::Na],
                vec![text("q15"), text("truthfulqa_mc"), text("reset_pw_mean"), Cell::Num(f64::NAN)],
                vec![text("q15"), text("truthfulqa_mc"), text("lock_in"), Cell::Num(0.5), Cell::Num(f64::INFINITY), Cell::Num(0.9)],
                vec![],
            ],
        ),
        // counts without their N, and a negative count
        output(
            "table04_recovery_counts",
            &["condition", "computed_value"],
            vec![vec![text("ordinary_strong_reset"), Cell::Int(-3)], vec![text("explicit_user_retraction"), Cell::Num(f64::NAN)]],
        ),
        // a table missing its key columns
        output("table09_ordinary_reset_gap", &["hysteresis_gap"], vec![vec![Cell::Num(0.1)]]),
    ];
    let cs = compare(&idx, &opts(), &outputs);
    assert_eq!(cs.len(), 295);
    let row = "Qwen2.5-1.5B / TruthfulQA-MC";
    for col in ["Clean", "Press.", "Reset"] {
        assert_eq!(find(&cs, "Table 2", row, col).status, Status::NotRun, "{col}");
    }
    let c = find(&cs, "Table 2", row, "Reset WF");
    assert_eq!(c.status, Status::Compared);
    assert!(close(c.run_value, 0.5) && c.ci.is_none() && c.ci_covers.is_none(), "{c:?}");
    let c = find(&cs, "Table 4", "R0 ordinary reset", "Recovered pairs");
    assert_eq!((c.run_text.as_str(), c.difference.is_nan()), ("-3", true));
    assert_eq!(find(&cs, "Table 4", "R1 user retraction", "Recovered pairs").status, Status::NotRun);
    assert_eq!(find(&cs, "Table 9", "Qwen-1.5B / TQA", "Gap").status, Status::NotRun);
    let _ = (paper::markdown(&cs), paper::csv(&cs));

    // printed text of any shape
    for t in ["", "\n\n", "a", "a\tb\n\tx\ty\tz\n\n\t\n", "\t\t\n\t\n"] {
        let p = parse_tsv(t);
        assert!(p.rows.iter().all(|r| r.len() == p.header.len()));
    }
}
