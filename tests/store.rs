//! The run directory's files: item rows as JSONL and as a typed Parquet table.

use hyst_tui::store::run_dir::ITEM_ROWS_PARQUET;
use hyst_tui::store::{read_item_rows, write_item_rows, ItemRow};

#[test]
fn parquet_has_one_typed_column_per_field() {
    use polars::prelude::*;
    let rows = hyst_tui::tables::testutil::synthetic_rows(2);
    let dir = tempfile::tempdir().unwrap();
    write_item_rows(dir.path(), &rows).unwrap();
    let f = std::fs::File::open(dir.path().join(ITEM_ROWS_PARQUET)).unwrap();
    let df = ParquetReader::new(f).finish().unwrap();
    let names: Vec<String> = df.get_column_names().iter().map(|s| s.to_string()).collect();
    assert_eq!(names, ItemRow::FIELDS);
    // The JSON keys are the same names in the same order.
    let json = serde_json::to_string(&rows[0]).unwrap();
    let pos: Vec<usize> = ItemRow::FIELDS
        .iter()
        .map(|f| json.find(&format!("\"{f}\":")).unwrap_or_else(|| panic!("{f} not in {json}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "JSON key order differs from FIELDS");
    let n_keys = serde_json::to_value(&rows[0]).unwrap().as_object().unwrap().len();
    assert_eq!(n_keys, ItemRow::FIELDS.len());
    assert_eq!(df.column("p_wrong").unwrap().dtype(), &DataType::Float64);
    assert_eq!(df.column("subset_index").unwrap().dtype(), &DataType::Int64);
    assert_eq!(df.column("correct").unwrap().dtype(), &DataType::Boolean);
    assert_eq!(df.column("item_id").unwrap().dtype(), &DataType::String);
    assert_eq!(df.height(), rows.len());
    assert_eq!(read_item_rows(dir.path()).unwrap(), rows);
}
