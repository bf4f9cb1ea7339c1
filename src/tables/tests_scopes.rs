//! Table scopes of run plans and the pair order by paper key, on the synthetic rows of
//! [`super::testutil`] (pairs `toy_a` × TruthfulQA-MC and `toy_b` × MMLU-Pro).

use std::collections::BTreeSet;

use super::index::RunIndex;
use super::testutil::synthetic_rows;
use super::{build_tables, Output, TableOptions, TableScopes};
use crate::store::ItemRow;

fn opts(scopes: TableScopes) -> TableOptions {
    TableOptions {
        bootstrap_samples: 500,
        seed: 12345,
        scopes,
    }
}

fn scope(table: &str, pairs: &[(&str, &str)]) -> TableScopes {
    let mut s = TableScopes::new();
    s.insert(
        table.to_string(),
        pairs
            .iter()
            .map(|(m, d)| (m.to_string(), d.to_string()))
            .collect::<BTreeSet<_>>(),
    );
    s
}

fn csv_of<'o>(out: &'o [Output], stem: &str) -> &'o str {
    &out.iter()
        .find(|o| o.stem == stem)
        .unwrap_or_else(|| panic!("{stem} not built"))
        .csv
}

/// Data lines (no header) of a CSV that mention `needle`.
fn lines_with(csv: &str, needle: &str) -> usize {
    csv.lines().skip(1).filter(|l| l.contains(needle)).count()
}

#[test]
fn a_scope_removes_a_pair_from_its_table_only() {
    let rows = synthetic_rows(3);
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let all = build_tables(&idx, &opts(TableScopes::new()));
    let mut scopes = scope("Table 2", &[("toy_a", "truthfulqa_mc")]);
    scopes.extend(scope("Table 4", &[("toy_b", "mmlu_pro")]));
    let scoped = build_tables(&idx, &opts(scopes));

    // Table 2 pools toy_a only: 6 metric rows for it, none for toy_b.
    assert_eq!(lines_with(csv_of(&all, "table02_pressure_ramp"), "toy_b"), 6);
    assert_eq!(lines_with(csv_of(&scoped, "table02_pressure_ramp"), "toy_b"), 0);
    assert_eq!(lines_with(csv_of(&scoped, "table02_pressure_ramp"), "toy_a"), 6);
    // toy_a's numbers do not change (it is the first pair of the stream either way).
    let a_all: Vec<&str> = csv_of(&all, "table02_pressure_ramp")
        .lines()
        .filter(|l| l.contains("toy_a"))
        .collect();
    let a_scoped: Vec<&str> = csv_of(&scoped, "table02_pressure_ramp")
        .lines()
        .filter(|l| l.contains("toy_a"))
        .collect();
    assert_eq!(a_all, a_scoped);

    // Table 4 counts over its one pair; Table 16 (same hierarchy, no scope) over both.
    let t4 = csv_of(&scoped, "table04_recovery_counts");
    assert!(t4.lines().skip(1).all(|l| l.contains(",1,")), "{t4}");
    let t16 = csv_of(&scoped, "table16_strict_vs_mro");
    assert!(t16.lines().skip(1).all(|l| l.contains(",2,")), "{t16}");

    // Tables not named keep both pairs.
    for stem in ["table09_ordinary_reset_gap", "table10_decomposition_counts"] {
        assert_eq!(csv_of(&scoped, stem), csv_of(&all, stem), "{stem}");
    }
}

#[test]
fn a_scope_without_the_runs_pairs_leaves_the_table_unwritten() {
    let rows = synthetic_rows(3);
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let out = build_tables(&idx, &opts(scope("Table 9", &[("other", "mmlu_pro")])));
    assert!(!out.iter().any(|o| o.stem == "table09_ordinary_reset_gap"));
    assert!(out.iter().any(|o| o.stem == "table02_pressure_ramp"));
}

/// The synthetic rows with the two pairs' run keys and paper keys replaced.
fn keyed(a: (&str, &str), b: (&str, &str)) -> Vec<ItemRow> {
    let mut rows = synthetic_rows(10);
    for r in &mut rows {
        let (k, pk) = if r.model_key == "toy_a" { a } else { b };
        r.model_key = k.to_string();
        r.paper_key = pk.to_string();
    }
    rows
}

/// `(model_key, ci_low, ci_high)` of every hysteresis-gap row of Table 2.
fn gap_cis(rows: &[ItemRow]) -> Vec<(String, String)> {
    let idx = RunIndex::new(rows, crate::dialogue::conditions::Registry::bundled());
    let out = build_tables(&idx, &opts(TableScopes::new()));
    csv_of(&out, "table02_pressure_ramp")
        .lines()
        .filter(|l| l.contains(",hysteresis_gap,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            // dataset_key identifies the pair independent of the run's model keys
            (f[4].to_string(), format!("{},{}", f[8], f[9]))
        })
        .collect()
}

#[test]
fn pairs_are_ordered_by_paper_key_when_known() {
    // Paper order: qwen25_15b before qwen25_7b, whatever the run's keys say.
    let rows = keyed(("zeta", "qwen25_7b"), ("alpha", "qwen25_15b"));
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let order: Vec<&str> = idx.pairs.iter().map(|p| p.model_key.as_str()).collect();
    assert_eq!(order, ["alpha", "zeta"]);
    let rows = keyed(("alpha", "qwen25_7b"), ("zeta", "qwen25_15b"));
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let order: Vec<&str> = idx.pairs.iter().map(|p| p.model_key.as_str()).collect();
    assert_eq!(order, ["zeta", "alpha"]);
    // Without paper keys (rows of older runs): the run's keys, as before.
    let rows = keyed(("zeta", ""), ("alpha", ""));
    let idx = RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled());
    let order: Vec<&str> = idx.pairs.iter().map(|p| p.model_key.as_str()).collect();
    assert_eq!(order, ["alpha", "zeta"]);
}

#[test]
fn same_paper_pairs_give_the_same_digits_whatever_their_run_keys() {
    let a = gap_cis(&keyed(("m-one", "qwen25_15b"), ("m-two", "qwen25_7b")));
    let b = gap_cis(&keyed(("zz-last", "qwen25_15b"), ("aa-first", "qwen25_7b")));
    let mut a = a;
    let mut b = b;
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Without paper keys the stream order follows the run keys, so the digits move.
    let mut c = gap_cis(&keyed(("zz-last", ""), ("aa-first", "")));
    c.sort();
    assert_ne!(a, c, "the test needs the two orders to differ");
}
