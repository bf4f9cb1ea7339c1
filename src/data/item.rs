//! One multiple-choice item, the error of every dataset reader, and the whitespace rule of
//! docs/protocol.md §1.1: shared by the loaders (`items`) and the file readers (`csvfile`,
//! `parquet`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum DataError {
    #[error("{file}: {message}")]
    File { file: String, message: String },
    #[error("{file}: row {row}: field `{field}`: {message}")]
    Row {
        file: String,
        row: usize,
        field: String,
        message: String,
    },
    #[error("dataset spec {spec:?}: {message}")]
    Spec { spec: String, message: String },
    #[error("item {item}: {message}")]
    Item { item: String, message: String },
}

/// One multiple-choice item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    /// Dataset key: `truthfulqa_mc`, `mmlu_pro`, `sample`, or the custom file's stem.
    pub dataset: String,
    pub question: String,
    pub options: Vec<String>,
    /// Index of the correct option.
    pub correct: usize,
    pub category: String,
    /// Source metadata (split, row index, question id, …).
    pub meta: BTreeMap<String, String>,
}

impl Item {
    pub(crate) fn letter(i: usize) -> char {
        crate::protocol::letter(i)
    }
    pub fn letters(&self) -> Vec<char> {
        (0..self.options.len()).map(Item::letter).collect()
    }
    pub fn correct_letter(&self) -> char {
        Item::letter(self.correct)
    }
    pub(crate) fn wrong_indices(&self) -> Vec<usize> {
        (0..self.options.len()).filter(|&i| i != self.correct).collect()
    }
}

/// `" ".join(text.strip().split())` (docs/protocol.md §1.1), with Python's whitespace set.
pub(crate) fn normalize_ws(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
