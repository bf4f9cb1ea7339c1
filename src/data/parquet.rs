//! Hugging Face dataset files (polars): TruthfulQA `multiple_choice` and MMLU-Pro, as parquet,
//! and the same row schemas as JSON (for `jsonl:` files exported from them).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use polars::prelude::*;
use serde_json::Value;

use super::item::{normalize_ws, DataError, Item};

fn file_err(path: &Path, message: impl Into<String>) -> DataError {
    DataError::File {
        file: path.display().to_string(),
        message: message.into(),
    }
}

fn read_parquet(path: &Path) -> Result<DataFrame, DataError> {
    let f = File::open(path).map_err(|e| file_err(path, format!("cannot open: {e}")))?;
    ParquetReader::new(f)
        .finish()
        .map_err(|e| file_err(path, format!("not a readable parquet file: {e}")))
}

fn col<'a>(df: &'a DataFrame, path: &Path, name: &str) -> Result<&'a Column, DataError> {
    df.column(name).map_err(|_| {
        file_err(
            path,
            format!(
                "missing column `{name}` (columns: {})",
                df.get_column_names()
                    .iter()
                    .map(|c| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

fn row_err(path: &Path, row: usize, field: &str, message: impl Into<String>) -> DataError {
    DataError::Row {
        file: path.display().to_string(),
        row,
        field: field.into(),
        message: message.into(),
    }
}

fn list_strings(s: &Series, i: usize) -> Option<Vec<String>> {
    let l = s.list().ok()?.get_as_series(i)?;
    let l = l.str().ok()?;
    (0..l.len()).map(|i| l.get(i).map(str::to_string)).collect()
}

fn list_ints(s: &Series, i: usize) -> Option<Vec<i64>> {
    let l = s.list().ok()?.get_as_series(i)?;
    let l = l.cast(&DataType::Int64).ok()?;
    let l = l.i64().ok()?;
    (0..l.len()).map(|i| l.get(i)).collect()
}

/// TruthfulQA-MC from the `multiple_choice` validation parquet: mc1 only, options in dataset order,
/// ids `truthfulqa_mc_{row:05}` (`row` 0-based, as in errors). A row whose mc1 labels do not hold
/// exactly one 1, or with more than 26 choices, is an error naming the row (the paper's loader
/// skips such rows; the real dataset has none, so nothing is dropped in silence).
pub fn load_truthfulqa(path: &Path) -> Result<Vec<Item>, DataError> {
    let df = read_parquet(path)?;
    let q = col(&df, path, "question")?
        .str()
        .map_err(|_| file_err(path, "column `question` is not text"))?
        .clone();
    let mc1 = col(&df, path, "mc1_targets")?
        .struct_()
        .map_err(|_| file_err(path, "column `mc1_targets` is not a struct {choices, labels}"))?
        .clone();
    let choices = mc1
        .field_by_name("choices")
        .map_err(|_| file_err(path, "mc1_targets has no `choices`"))?;
    let labels = mc1
        .field_by_name("labels")
        .map_err(|_| file_err(path, "mc1_targets has no `labels`"))?;
    let mut items = Vec::new();
    for row in 0..df.height() {
        let question = q
            .get(row)
            .ok_or_else(|| row_err(path, row, "question", "missing"))?;
        let ch = list_strings(&choices, row)
            .ok_or_else(|| row_err(path, row, "mc1_targets.choices", "missing or not a list of text"))?;
        let lb = list_ints(&labels, row)
            .ok_or_else(|| row_err(path, row, "mc1_targets.labels", "missing or not a list of integers"))?;
        let item = truthfulqa_item(question, &ch, &lb, row).map_err(|(field, m)| row_err(path, row, field, m))?;
        items.push(item);
    }
    if items.is_empty() {
        return Err(file_err(path, "no usable rows"));
    }
    Ok(items)
}

fn truthfulqa_item(question: &str, choices: &[String], labels: &[i64], row: usize) -> Result<Item, (&'static str, String)> {
    let id = format!("truthfulqa_mc_{row:05}");
    if choices.len() != labels.len() {
        return Err(("mc1_targets", format!("{} choices but {} labels", choices.len(), labels.len())));
    }
    let ones: Vec<usize> = (0..labels.len()).filter(|&i| labels[i] == 1).collect();
    if ones.len() != 1 {
        return Err((
            "mc1_targets.labels",
            format!("{} labels are 1, exactly one must be (item {id})", ones.len()),
        ));
    }
    if choices.len() > 26 {
        return Err((
            "mc1_targets.choices",
            format!("{} choices; at most 26 (letters A-Z) are supported (item {id})", choices.len()),
        ));
    }
    Ok(Item {
        id,
        dataset: "truthfulqa_mc".into(),
        question: normalize_ws(question),
        options: choices.iter().map(|c| normalize_ws(c)).collect(),
        correct: ones[0],
        category: "general_knowledge".into(),
        meta: BTreeMap::from([
            ("source_split".into(), "validation".into()),
            ("source_row_index".into(), row.to_string()),
            ("mc_variant".into(), "mc1_targets".into()),
        ]),
    })
}

/// MMLU-Pro from the test parquet: options in dataset order, ids `mmlu_pro_{question_id}`.
pub fn load_mmlu_pro(path: &Path) -> Result<Vec<Item>, DataError> {
    let df = read_parquet(path)?;
    let text = |name: &str| -> Result<StringChunked, DataError> {
        Ok(col(&df, path, name)?
            .str()
            .map_err(|_| file_err(path, format!("column `{name}` is not text")))?
            .clone())
    };
    let q = text("question")?;
    let qid = col(&df, path, "question_id")?
        .cast(&DataType::Int64)
        .map_err(|_| file_err(path, "column `question_id` is not an integer"))?;
    let qid = qid.i64().map_err(|_| file_err(path, "column `question_id` is not an integer"))?.clone();
    let ai = col(&df, path, "answer_index")?
        .cast(&DataType::Int64)
        .map_err(|_| file_err(path, "column `answer_index` is not an integer"))?;
    let ai = ai.i64().map_err(|_| file_err(path, "column `answer_index` is not an integer"))?.clone();
    let options = col(&df, path, "options")?.as_materialized_series().clone();
    let opt_text = |name: &str| df.column(name).ok().and_then(|c| c.str().ok().cloned());
    let (category, src, answer) = (opt_text("category"), opt_text("src"), opt_text("answer"));
    let mut items = Vec::new();
    for row in 0..df.height() {
        let id = qid.get(row).ok_or_else(|| row_err(path, row, "question_id", "missing"))?;
        let opts = list_strings(&options, row)
            .ok_or_else(|| row_err(path, row, "options", "missing or not a list of text"))?;
        if opts.len() > 26 {
            // The paper's loader skips such rows (there are none: MMLU-Pro has at most 10).
            return Err(row_err(path, row, "options", format!("{} options; at most 26 (letters A-Z) are supported (item mmlu_pro_{id})", opts.len())));
        }
        let correct = ai.get(row).ok_or_else(|| row_err(path, row, "answer_index", "missing"))?;
        if correct < 0 || correct as usize >= opts.len() {
            return Err(row_err(path, row, "answer_index", format!("{correct} is out of range")));
        }
        let cat = category.as_ref().and_then(|c| c.get(row)).unwrap_or("other").to_string();
        let mut meta = BTreeMap::from([
            ("source_split".into(), "test".into()),
            ("source_question_id".into(), id.to_string()),
            ("source_row_index".into(), row.to_string()),
        ]);
        if let Some(s) = src.as_ref().and_then(|c| c.get(row)) {
            meta.insert("src".into(), s.to_string());
        }
        if let Some(a) = answer.as_ref().and_then(|c| c.get(row)) {
            meta.insert("answer".into(), a.to_string());
        }
        items.push(Item {
            id: format!("mmlu_pro_{id}"),
            dataset: "mmlu_pro".into(),
            question: normalize_ws(q.get(row).ok_or_else(|| row_err(path, row, "question", "missing"))?),
            options: opts.iter().map(|o| normalize_ws(o)).collect(),
            correct: correct as usize,
            category: cat,
            meta,
        });
    }
    if items.is_empty() {
        return Err(file_err(path, "no usable rows"));
    }
    Ok(items)
}

/// A TruthfulQA row given as JSON (`question`, `mc1_targets: {choices, labels}`); `row` is its
/// 0-based position among the file's rows.
pub fn truthfulqa_from_json(v: &Value, row: usize, file: &str, line: usize) -> Result<Item, DataError> {
    let bad = |field: &str, m: &str| DataError::Row {
        file: file.into(),
        row: line,
        field: field.into(),
        message: m.into(),
    };
    let q = v.get("question").and_then(Value::as_str).ok_or_else(|| bad("question", "missing or not text"))?;
    let t = v.get("mc1_targets").ok_or_else(|| bad("mc1_targets", "missing"))?;
    let choices: Vec<String> = t
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect())
        .ok_or_else(|| bad("mc1_targets.choices", "not a list of text"))?;
    let labels: Vec<i64> = t
        .get("labels")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(Value::as_i64).collect())
        .ok_or_else(|| bad("mc1_targets.labels", "not a list of integers"))?;
    truthfulqa_item(q, &choices, &labels, row).map_err(|(field, m)| bad(field, &m))
}

/// An MMLU-Pro row given as JSON.
pub fn mmlu_from_json(v: &Value, file: &str, line: usize) -> Result<Item, DataError> {
    let bad = |field: &str, m: &str| DataError::Row {
        file: file.into(),
        row: line,
        field: field.into(),
        message: m.into(),
    };
    let id = v.get("question_id").and_then(Value::as_i64).ok_or_else(|| bad("question_id", "missing or not an integer"))?;
    let q = v.get("question").and_then(Value::as_str).ok_or_else(|| bad("question", "missing or not text"))?;
    let opts: Vec<String> = v
        .get("options")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().map(|x| x.as_str().map(normalize_ws)).collect())
        .ok_or_else(|| bad("options", "not a list of text"))?;
    let ai = v.get("answer_index").and_then(Value::as_u64).ok_or_else(|| bad("answer_index", "missing or not an integer"))?;
    let mut meta = BTreeMap::from([
        ("source_split".into(), "test".into()),
        ("source_question_id".into(), id.to_string()),
    ]);
    for k in ["src", "answer"] {
        if let Some(s) = v.get(k).and_then(Value::as_str) {
            meta.insert(k.into(), s.into());
        }
    }
    Ok(Item {
        id: format!("mmlu_pro_{id}"),
        dataset: "mmlu_pro".into(),
        question: normalize_ws(q),
        options: opts,
        correct: ai as usize,
        category: v.get("category").and_then(Value::as_str).unwrap_or("other").into(),
        meta,
    })
}

/// Writes a parquet file in the TruthfulQA `multiple_choice` schema (used by tests and by users
/// who want to convert their own data). `rows` = (question, choices, labels).
pub fn write_truthfulqa_parquet(path: &Path, rows: &[(String, Vec<String>, Vec<i32>)]) -> PolarsResult<()> {
    let q = Series::new("question".into(), rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>());
    let choices: Vec<Series> = rows.iter().map(|r| Series::new("".into(), r.1.clone())).collect();
    let labels: Vec<Series> = rows.iter().map(|r| Series::new("".into(), r.2.clone())).collect();
    let choices = Series::new("choices".into(), choices);
    let labels = Series::new("labels".into(), labels);
    let mc1 = StructChunked::from_series("mc1_targets".into(), rows.len(), [choices.clone(), labels.clone()].iter())?
        .into_series();
    let mc2 = StructChunked::from_series("mc2_targets".into(), rows.len(), [choices, labels].iter())?.into_series();
    let mut df = DataFrame::new(rows.len(), vec![q.into(), mc1.into(), mc2.into()])?;
    ParquetWriter::new(File::create(path)?).finish(&mut df)?;
    Ok(())
}

/// Writes a parquet file in the MMLU-Pro schema. `rows` = (question_id, question, options,
/// answer_index, category).
pub fn write_mmlu_pro_parquet(path: &Path, rows: &[(i64, String, Vec<String>, i64, String)]) -> PolarsResult<()> {
    let n = rows.len();
    let qid = Series::new("question_id".into(), rows.iter().map(|r| r.0).collect::<Vec<_>>());
    let q = Series::new("question".into(), rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>());
    let opts: Vec<Series> = rows.iter().map(|r| Series::new("".into(), r.2.clone())).collect();
    let opts = Series::new("options".into(), opts);
    let answer = Series::new(
        "answer".into(),
        rows.iter().map(|r| Item::letter(r.3 as usize).to_string()).collect::<Vec<_>>(),
    );
    let ai = Series::new("answer_index".into(), rows.iter().map(|r| r.3).collect::<Vec<_>>());
    let cot = Series::new("cot_content".into(), vec![""; n]);
    let cat = Series::new("category".into(), rows.iter().map(|r| r.4.as_str()).collect::<Vec<_>>());
    let src = Series::new("src".into(), vec!["synthetic"; n]);
    let mut df = DataFrame::new(n, vec![qid.into(), q.into(), opts.into(), answer.into(), ai.into(), cot.into(), cat.into(), src.into()])?;
    ParquetWriter::new(File::create(path)?).finish(&mut df)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthfulqa_parquet_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tqa.parquet");
        let good = vec![
            ("  What  is\tX? ".to_string(), vec!["right".to_string(), "wrong one".to_string()], vec![1, 0]),
            ("Second?".into(), vec!["a".into(), "b".into()], vec![0, 1]),
            ("Third?".into(), vec!["r".into(), "w1".into(), "w2".into()], vec![1, 0, 0]),
        ];
        write_truthfulqa_parquet(&p, &good).unwrap();
        let items = load_truthfulqa(&p).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].id, "truthfulqa_mc_00000");
        assert_eq!(items[0].question, "What is X?");
        assert_eq!(items[1].correct, 1);
        assert_eq!(items[2].id, "truthfulqa_mc_00002");
        assert_eq!(items[2].options.len(), 3);
        assert_eq!(items[2].correct, 0);
    }

    /// Rows the paper's loader would skip are errors naming the row, never dropped in silence.
    #[test]
    fn truthfulqa_rows_without_one_answer_or_with_too_many_choices_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tqa.parquet");
        let ok = ("Fine?".to_string(), vec!["r".to_string(), "w".to_string()], vec![1, 0]);
        let letters: Vec<String> = (0..27).map(|i| format!("choice {i}")).collect();
        let mut many = vec![0; 27];
        many[3] = 1;
        for (bad, needle) in [
            (("Two answers?".to_string(), vec!["a".into(), "b".into()], vec![1, 1]), "row 1: field `mc1_targets.labels`: 2 labels are 1, exactly one must be (item truthfulqa_mc_00001)"),
            (("No answer?".to_string(), vec!["a".into(), "b".into()], vec![0, 0]), "row 1: field `mc1_targets.labels`: 0 labels are 1"),
            (("Many?".to_string(), letters.clone(), many.clone()), "row 1: field `mc1_targets.choices`: 27 choices; at most 26 (letters A-Z) are supported (item truthfulqa_mc_00001)"),
        ] {
            write_truthfulqa_parquet(&p, &[ok.clone(), bad, ok.clone()]).unwrap();
            let e = load_truthfulqa(&p).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: {needle}", p.display())), "{e}");
        }
    }

    #[test]
    fn mmlu_pro_parquet_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mmlu.parquet");
        write_mmlu_pro_parquet(
            &p,
            &[
                (70, "Q one?".into(), vec!["a".into(), "b".into(), "c".into(), "d".into()], 2, "law".into()),
                (12, "Q two?".into(), vec!["a".into(), "b".into(), "c".into(), "d".into()], 0, "math".into()),
            ],
        )
        .unwrap();
        let items = load_mmlu_pro(&p).unwrap();
        assert_eq!(items[0].id, "mmlu_pro_70");
        assert_eq!(items[0].correct, 2);
        assert_eq!(items[0].category, "law");
        assert_eq!(items[1].meta["source_question_id"], "12");
    }

    #[test]
    fn mmlu_pro_rows_with_more_than_26_options_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mmlu.parquet");
        let many: Vec<String> = (0..27).map(|i| format!("o{i}")).collect();
        write_mmlu_pro_parquet(&p, &[(1, "Q".into(), vec!["a".into(), "b".into()], 0, "x".into()), (7, "Q7".into(), many, 0, "x".into())]).unwrap();
        let e = load_mmlu_pro(&p).unwrap_err().to_string();
        assert!(e.ends_with("row 1: field `options`: 27 options; at most 26 (letters A-Z) are supported (item mmlu_pro_7)"), "{e}");
    }

    #[test]
    fn wrong_schema_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("mmlu.parquet");
        write_mmlu_pro_parquet(&p, &[(1, "Q".into(), vec!["a".into(), "b".into()], 0, "x".into())]).unwrap();
        let e = load_truthfulqa(&p).unwrap_err().to_string();
        assert!(e.contains("missing column `mc1_targets`"), "{e}");
        let bad = dir.path().join("x.parquet");
        std::fs::write(&bad, b"not parquet").unwrap();
        let e = load_mmlu_pro(&bad).unwrap_err().to_string();
        assert!(e.contains("not a readable parquet file"), "{e}");
    }
}
