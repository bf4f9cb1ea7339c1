//! Items and dataset loaders (docs/protocol.md §1.1).
//!
//! Dataset specs: `sample` (the bundled assets/sample.jsonl), `truthfulqa:PATH` (Hugging Face
//! `truthful_qa` multiple_choice parquet, mc1 only), `mmlu_pro:PATH` (MMLU-Pro parquet),
//! `jsonl:PATH` (our schema, or either Hugging Face schema, one object per line), `csv:PATH`
//! (our schema). Every bad row is one error naming the file, the row and the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::item::{normalize_ws, DataError, Item};

pub(crate) const SAMPLE_JSONL: &str = include_str!("../../assets/sample.jsonl");
/// Eight long exam-style items written for this project: 10 options each, question and options
/// together 950–1,430 characters (MMLU-Pro's median is about 440, its 90th percentile about
/// 1,330), for benchmarks that reflect MMLU-Pro-shaped prompts.
pub(crate) const LONG_JSONL: &str = include_str!("../../assets/long.jsonl");

fn check_item(item: &Item, file: &str, row: usize) -> Result<(), DataError> {
    let bad = |field: &str, message: String| DataError::Row {
        file: file.to_string(),
        row,
        field: field.to_string(),
        message,
    };
    if item.question.is_empty() {
        return Err(bad("question", "empty".into()));
    }
    if item.options.len() < 2 {
        return Err(bad("options", format!("{} option(s); at least 2 are needed", item.options.len())));
    }
    if item.options.len() > 26 {
        return Err(bad(
            "options",
            format!("{} options; at most 26 (letters A-Z) are supported", item.options.len()),
        ));
    }
    if let Some(i) = item.options.iter().position(|o| o.is_empty()) {
        return Err(bad("options", format!("option {} is empty", Item::letter(i))));
    }
    if item.correct >= item.options.len() {
        return Err(bad("answer", format!("index {} is out of range", item.correct)));
    }
    Ok(())
}

/// The forms of a dataset spec, as [`DatasetSpec::parse`] takes them: the one place they are
/// written for the command line's help.
pub const DATASET_SPEC_FORMS: &str =
    "sample, long (the bundled long exam-style items), truthfulqa:PATH, mmlu_pro:PATH, jsonl:PATH, csv:PATH";

/// A parsed `--dataset` spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatasetSpec {
    Sample,
    /// `long`: the bundled long exam-style items (assets/long.jsonl), MMLU-Pro-shaped work.
    Long,
    TruthfulQa(PathBuf),
    MmluPro(PathBuf),
    Jsonl(PathBuf),
    Csv(PathBuf),
}

impl DatasetSpec {
    pub fn parse(spec: &str) -> Result<Self, DataError> {
        if spec == "sample" {
            return Ok(Self::Sample);
        }
        if spec == "long" {
            return Ok(Self::Long);
        }
        let (kind, path) = spec.split_once(':').ok_or_else(|| DataError::Spec {
            spec: spec.into(),
            message: "expected `sample`, `long` or KIND:PATH with KIND one of truthfulqa, mmlu_pro, jsonl, csv".into(),
        })?;
        let p = PathBuf::from(path);
        match kind {
            "truthfulqa" => Ok(Self::TruthfulQa(p)),
            "mmlu_pro" => Ok(Self::MmluPro(p)),
            "jsonl" => Ok(Self::Jsonl(p)),
            "csv" => Ok(Self::Csv(p)),
            _ => Err(DataError::Spec {
                spec: spec.into(),
                message: format!("unknown kind {kind:?} (truthfulqa, mmlu_pro, jsonl, csv)"),
            }),
        }
    }

    /// Short dataset key used in ids, stores and tables.
    pub(crate) fn key(&self) -> String {
        match self {
            Self::Sample => "sample".into(),
            Self::Long => "long".into(),
            Self::TruthfulQa(_) => "truthfulqa_mc".into(),
            Self::MmluPro(_) => "mmlu_pro".into(),
            Self::Jsonl(p) | Self::Csv(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "custom".into()),
        }
    }

    pub fn load(&self) -> Result<Vec<Item>, DataError> {
        match self {
            Self::Sample => load_jsonl_str(SAMPLE_JSONL, "assets/sample.jsonl", "sample"),
            Self::Long => load_jsonl_str(LONG_JSONL, "assets/long.jsonl", "long"),
            Self::Jsonl(p) => {
                let text = read(p)?;
                load_jsonl_str(&text, &p.display().to_string(), &self.key())
            }
            Self::Csv(p) => load_csv(p, &self.key()),
            Self::TruthfulQa(p) => super::parquet::load_truthfulqa(p),
            Self::MmluPro(p) => super::parquet::load_mmlu_pro(p),
        }
    }
}

fn read(p: &Path) -> Result<String, DataError> {
    std::fs::read_to_string(p).map_err(|e| DataError::File {
        file: p.display().to_string(),
        message: format!("cannot read: {e}"),
    })
}

/// Our own schema: `{"id"?, "question", "options": [...], "answer": index | "letter", "category"?}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OwnRow {
    #[serde(default)]
    id: Option<String>,
    question: String,
    options: Vec<String>,
    answer: serde_json::Value,
    #[serde(default)]
    category: Option<String>,
}

fn parse_answer(v: &serde_json::Value, n: usize) -> Result<usize, String> {
    match v {
        serde_json::Value::Number(x) => x
            .as_u64()
            .map(|i| i as usize)
            .filter(|&i| i < n)
            .ok_or_else(|| format!("{x} is not an option index 0..{}", n.saturating_sub(1))),
        serde_json::Value::String(s) => {
            let s = s.trim();
            let mut cs = s.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) if c.is_ascii_uppercase() && ((c as u8 - b'A') as usize) < n => {
                    Ok((c as u8 - b'A') as usize)
                }
                _ => Err(format!("{s:?} is not an option letter A..{}", Item::letter(n.saturating_sub(1)))),
            }
        }
        other => Err(format!("{other} is neither an index nor a letter")),
    }
}

/// JSONL in our schema or either Hugging Face schema (TruthfulQA mc1_targets / MMLU-Pro rows).
pub fn load_jsonl_str(text: &str, file: &str, dataset: &str) -> Result<Vec<Item>, DataError> {
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let row = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| DataError::Row {
            file: file.into(),
            row,
            field: "(line)".into(),
            message: format!("not JSON: {e}"),
        })?;
        let item = if v.get("mc1_targets").is_some() {
            super::parquet::truthfulqa_from_json(&v, items.len(), file, row)?
        } else if v.get("answer_index").is_some() {
            super::parquet::mmlu_from_json(&v, file, row)?
        } else {
            let r: OwnRow = serde_json::from_value(v).map_err(|e| DataError::Row {
                file: file.into(),
                row,
                field: "(row)".into(),
                message: e.to_string(),
            })?;
            let options: Vec<String> = r.options.iter().map(|o| normalize_ws(o)).collect();
            let correct = parse_answer(&r.answer, options.len()).map_err(|m| DataError::Row {
                file: file.into(),
                row,
                field: "answer".into(),
                message: m,
            })?;
            Item {
                id: r.id.unwrap_or_else(|| format!("{dataset}_{:05}", row - 1)),
                dataset: dataset.into(),
                question: normalize_ws(&r.question),
                options,
                correct,
                category: r.category.unwrap_or_else(|| "general".into()),
                meta: BTreeMap::from([("source_row_index".into(), (row - 1).to_string())]),
            }
        };
        check_item(&item, file, row)?;
        items.push(item);
    }
    finish(items, file)
}

fn finish(items: Vec<Item>, file: &str) -> Result<Vec<Item>, DataError> {
    if items.is_empty() {
        return Err(DataError::File {
            file: file.into(),
            message: "no items".into(),
        });
    }
    let mut seen = std::collections::HashSet::new();
    for it in &items {
        if !seen.insert(it.id.as_str()) {
            return Err(DataError::Item {
                item: it.id.clone(),
                message: format!("duplicate id in {file}"),
            });
        }
    }
    Ok(items)
}

/// A `csv:PATH` row: the fixed columns (header names are matched trimmed and case-insensitively;
/// empty optional cells are `None`). The option columns `option_a`, `option_b`, … are a variable
/// set, read by header position.
#[derive(Deserialize)]
struct CsvRow {
    question: String,
    answer: String,
    /// A JSON array of the option texts; used instead of the option columns when present.
    #[serde(default)]
    options: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    category: Option<String>,
}

/// CSV in our schema: columns `question`, `answer` (index or letter), option columns
/// `option_a`, `option_b`, … (empty cells end the list) or one `options` column holding a JSON
/// array; optional `id`, `category`. Rows are numbered as a spreadsheet does (header = row 1);
/// the default id is `{dataset}_{row - 2:05}`.
fn load_csv(path: &Path, dataset: &str) -> Result<Vec<Item>, DataError> {
    let table = super::csvfile::read(path)?;
    let file = table.file.clone();
    let header: csv::StringRecord = table.header.iter().map(|h| h.trim().to_ascii_lowercase()).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    if col("question").is_none() || col("answer").is_none() {
        return Err(DataError::File {
            file,
            message: "header needs `question` and `answer` columns".into(),
        });
    }
    let options_json = col("options");
    let option_cols: Vec<usize> = (0..26)
        .map_while(|i| col(&format!("option_{}", Item::letter(i).to_ascii_lowercase())))
        .collect();
    if options_json.is_none() && option_cols.is_empty() {
        return Err(DataError::File {
            file,
            message: "header needs option columns `option_a`, `option_b`, … or an `options` column (JSON array)".into(),
        });
    }
    for name in ["question", "answer", "options", "id", "category"] {
        if header.iter().filter(|h| *h == name).count() > 1 {
            return Err(DataError::File {
                file,
                message: format!("column `{name}` appears more than once"),
            });
        }
    }
    let mut items = Vec::new();
    for rec in &table.records {
        let row = rec.row;
        let r: CsvRow = table.deserialize(rec, &header)?;
        let options: Vec<String> = if options_json.is_some() {
            serde_json::from_str::<Vec<String>>(r.options.as_deref().unwrap_or("")).map_err(|e| DataError::Row {
                file: file.clone(),
                row,
                field: "options".into(),
                message: format!("not a JSON array of strings: {e}"),
            })?
        } else {
            option_cols
                .iter()
                .map(|&c| rec.fields.get(c).unwrap_or(""))
                .take_while(|s| !s.trim().is_empty())
                .map(String::from)
                .collect()
        };
        let options: Vec<String> = options.iter().map(|o| normalize_ws(o)).collect();
        let ans = r.answer.trim();
        let ans_v = match ans.parse::<u64>() {
            Ok(n) => serde_json::json!(n),
            Err(_) => serde_json::json!(ans),
        };
        let correct = parse_answer(&ans_v, options.len()).map_err(|m| DataError::Row {
            file: file.clone(),
            row,
            field: "answer".into(),
            message: m,
        })?;
        let trimmed = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let item = Item {
            id: trimmed(r.id).unwrap_or_else(|| format!("{dataset}_{:05}", row - 2)),
            dataset: dataset.into(),
            question: normalize_ws(&r.question),
            options,
            correct,
            category: trimmed(r.category).unwrap_or_else(|| "general".into()),
            meta: BTreeMap::from([("source_row_index".into(), (row - 2).to_string())]),
        };
        check_item(&item, &file, row)?;
        items.push(item);
    }
    finish(items, &file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spec_form_in_the_help_parses() {
        let forms: Vec<&str> = DATASET_SPEC_FORMS.split(", ").map(|f| f.split(' ').next().unwrap()).collect();
        assert_eq!(forms.len(), 6);
        for f in forms {
            let spec = f.replace("PATH", "x.jsonl");
            assert!(DatasetSpec::parse(&spec).is_ok(), "{spec}");
        }
    }

    #[test]
    fn truthfulqa_rows_as_jsonl_name_the_line() {
        // The JSONL form of the parquet readers' row checks (data::parquet's tests).
        let text = r#"{"question":"Q?","mc1_targets":{"choices":["r","w"],"labels":[1,0]}}
{"question":"Q2?","mc1_targets":{"choices":["r","w"],"labels":[1,1]}}"#;
        let e = load_jsonl_str(text, "x.jsonl", "x").unwrap_err().to_string();
        assert!(e.starts_with("x.jsonl: row 2: field `mc1_targets.labels`: 2 labels are 1, exactly one must be (item truthfulqa_mc_00001)"), "{e}");
    }

    #[test]
    fn hf_schemas_as_jsonl() {
        let text = r#"{"question":"Q?","mc1_targets":{"choices":["r","w"],"labels":[1,0]},"mc2_targets":{"choices":[],"labels":[]}}
{"question_id":5,"question":"M?","options":["a","b","c"],"answer":"C","answer_index":2,"category":"math","src":"s"}"#;
        let items = load_jsonl_str(text, "x.jsonl", "x").unwrap();
        assert_eq!(items[0].id, "truthfulqa_mc_00000");
        assert_eq!(items[1].id, "mmlu_pro_5");
        assert_eq!(items[1].correct, 2);
    }

    #[test]
    fn the_long_items_are_mmlu_pro_shaped() {
        let items = DatasetSpec::Long.load().unwrap();
        assert!(items.len() >= 8);
        let mut answers = std::collections::BTreeSet::new();
        for it in &items {
            assert_eq!(it.options.len(), 10, "{}", it.id);
            let chars = it.question.chars().count() + it.options.iter().map(|o| o.chars().count()).sum::<usize>();
            assert!(chars >= 800, "{}: {chars} characters", it.id);
            answers.insert(it.correct);
        }
        assert!(answers.len() > 4, "the correct letter varies");
    }

    #[test]
    fn whitespace_normalisation_matches_python_split() {
        assert_eq!(normalize_ws("  a\t b\n\nc  "), "a b c");
        assert_eq!(normalize_ws("x\u{a0}y"), "x y");
        assert_eq!(normalize_ws(""), "");
    }

    #[test]
    fn bundled_sample_loads() {
        let items = DatasetSpec::Sample.load().unwrap();
        assert!(items.len() >= 40);
        let positions: std::collections::HashSet<usize> = items.iter().map(|i| i.correct).collect();
        assert!(positions.len() >= 5, "answers spread over positions");
        assert!(items.iter().all(|i| (2..=10).contains(&i.options.len())));
    }

    #[test]
    fn own_jsonl_schema_and_errors_name_row_and_field() {
        let ok = r#"{"question":"Q?","options":["a","b"],"answer":"B"}"#;
        let items = load_jsonl_str(ok, "f.jsonl", "f").unwrap();
        assert_eq!(items[0].correct, 1);
        assert_eq!(items[0].id, "f_00000");
        let bad = format!("{ok}\n{}", r#"{"question":"Q?","options":["a","b"],"answer":5}"#);
        let e = load_jsonl_str(&bad, "f.jsonl", "f").unwrap_err().to_string();
        assert!(e.contains("f.jsonl: row 2: field `answer`"), "{e}");
        let many: Vec<String> = (0..27).map(|i| format!("\"o{i}\"")).collect();
        let e = load_jsonl_str(
            &format!("{{\"question\":\"Q\",\"options\":[{}],\"answer\":0}}", many.join(",")),
            "f.jsonl",
            "f",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("27 options"), "{e}");
        let e = load_jsonl_str("{\"question\":1}", "f.jsonl", "f").unwrap_err().to_string();
        assert!(e.contains("row 1"), "{e}");
    }

    #[test]
    fn csv_schema() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("my.csv");
        std::fs::write(
            &p,
            "id,question,option_a,option_b,option_c,answer,category\nq1,\"What, really?\",x,\"say \"\"y\"\"\",,B,fun\nq2,Two?,a,b,c,2,\n",
        )
        .unwrap();
        let items = DatasetSpec::Csv(p.clone()).load().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].question, "What, really?");
        assert_eq!(items[0].options, vec!["x", "say \"y\""]);
        assert_eq!(items[0].correct, 1);
        assert_eq!(items[1].correct, 2);
        assert_eq!(items[1].category, "general");
        assert_eq!(items[0].dataset, "my");
        std::fs::write(&p, "question,option_a,option_b,answer\nQ,a,b,Z\n").unwrap();
        let e = DatasetSpec::Csv(p).load().unwrap_err().to_string();
        assert!(e.contains("row 2: field `answer`"), "{e}");
    }

    fn csv_load(text: &[u8]) -> Result<Vec<Item>, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.csv");
        std::fs::write(&p, text).unwrap();
        DatasetSpec::Csv(p).load().map_err(|e| e.to_string())
    }

    #[test]
    fn csv_quoting_crlf_bom_blank_lines_and_default_ids() {
        // Multi-line quoted cells and blank lines: rows count as a spreadsheet does, so the
        // default ids are the same as with the hand-written parser this replaced.
        let items = csv_load(
            b"\xEF\xBB\xBFQuestion , OPTION_A,option_b,option_c,Answer,category\r\n\
\"Multi\r\nline, \"\"quoted\"\" question?\",x,\"say \"\"y\"\", ok\",,B,fun\r\n\
\r\n\
Two?,a,b,c,2,\r\n\
,,,,,\r\n\
  Four?  ,a ,  b,,1, sp \r\n",
        )
        .unwrap();
        let got: Vec<(&str, &str, &str, usize, &str)> = items
            .iter()
            .map(|i| (i.id.as_str(), i.question.as_str(), i.category.as_str(), i.correct, i.meta["source_row_index"].as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("d_00000", "Multi line, \"quoted\" question?", "fun", 1, "0"),
                ("d_00002", "Two?", "general", 2, "2"),
                ("d_00004", "Four?", "sp", 1, "4"),
            ]
        );
        assert_eq!(items[0].options, ["x", "say \"y\", ok"]);
        assert_eq!(items[2].options, ["a", "b"]);
    }

    #[test]
    fn csv_options_json_column() {
        let items = csv_load(b"question,options,answer,id\nQ1?,\"[\"\"a\"\",\"\"b,c\"\"]\",1,\nQ2?,\"[\"\"d\"\",\"\"e\"\"]\",A,my-id\n").unwrap();
        assert_eq!(items[0].options, ["a", "b,c"]);
        assert_eq!((items[0].id.as_str(), items[0].correct), ("d_00000", 1));
        assert_eq!((items[1].id.as_str(), items[1].correct), ("my-id", 0));
        let e = csv_load(b"question,options,answer\nQ,\"[1]\",0\n").unwrap_err();
        assert!(e.ends_with("d.csv: row 2: field `options`: not a JSON array of strings: invalid type: integer `1`, expected a string at line 1 column 2"), "{e}");
    }

    #[test]
    fn csv_errors_name_file_row_or_line_and_field() {
        let e = csv_load(b"question,option_a,option_b,answer\nQ,a,b,A\nQ2,a,b,Z\n").unwrap_err();
        assert!(e.ends_with("d.csv: row 3: field `answer`: \"Z\" is not an option letter A..B"), "{e}");
        let e = csv_load(b"question,option_a,option_b\nQ,a,b\n").unwrap_err();
        assert!(e.ends_with("d.csv: header needs `question` and `answer` columns"), "{e}");
        let e = csv_load(b"question,answer\nQ,A\n").unwrap_err();
        assert!(e.ends_with("d.csv: header needs option columns `option_a`, `option_b`, \u{2026} or an `options` column (JSON array)"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer,Question\nQ,a,b,A,Q\n").unwrap_err();
        assert!(e.ends_with("d.csv: column `question` appears more than once"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer\nQ,a,b,A\nQ2,\"a,b\n").unwrap_err();
        assert!(e.ends_with("d.csv: line 3: unterminated quoted field: a quote opened in the record starting here is never closed"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer\nQ,a,b,A\nQ2,a,b\n").unwrap_err();
        assert!(e.ends_with("d.csv: line 3: 3 fields, but the header has 4"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer\nQ,a,b,A\nQ2,a,\xff,B\n").unwrap_err();
        assert!(e.ends_with("d.csv: line 3: not valid UTF-8 in field 3 (column `option_b`)"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer\n\n").unwrap_err();
        assert!(e.ends_with("d.csv: no items"), "{e}");
        let e = csv_load(b"").unwrap_err();
        assert!(e.ends_with("d.csv: empty file"), "{e}");
        let e = csv_load(b"question,option_a,option_b,answer\nQ,a,,0\n").unwrap_err();
        assert!(e.ends_with("d.csv: row 2: field `options`: 1 option(s); at least 2 are needed"), "{e}");
    }

    #[test]
    fn specs() {
        assert_eq!(DatasetSpec::parse("sample").unwrap(), DatasetSpec::Sample);
        assert_eq!(DatasetSpec::parse("long").unwrap(), DatasetSpec::Long);
        assert_eq!(
            DatasetSpec::parse("mmlu_pro:/x/t.parquet").unwrap().key(),
            "mmlu_pro"
        );
        assert!(DatasetSpec::parse("nope:x").is_err());
        assert!(DatasetSpec::parse("x").is_err());
    }
}
