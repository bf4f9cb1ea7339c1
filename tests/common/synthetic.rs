//! The library's synthetic item rows (`tables::testutil`, a test-only module) for integration
//! tests: `synthetic_rows(3)` is stored in tests/data/synthetic_rows.jsonl, and a unit test
//! keeps it equal to the generator.

use hyst_tui::store::ItemRow;

/// The rows of `tables::testutil::synthetic_rows(n_items)`, for at most 3 items (rows are in
/// pair, item, condition order, so fewer items are the rows of the first ones).
pub fn synthetic_rows(n_items: usize) -> Vec<ItemRow> {
    assert!(n_items <= 3, "tests/data/synthetic_rows.jsonl holds 3 items per pair");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/synthetic_rows.jsonl");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .map(|l| serde_json::from_str::<ItemRow>(l).unwrap_or_else(|e| panic!("{path}: {e}")))
        .filter(|r| r.subset_index < n_items)
        .collect()
}
