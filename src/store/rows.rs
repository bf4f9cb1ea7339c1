//! Row types of the store.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use std::collections::BTreeMap;

use crate::protocol::{letter_index, ProvenanceKind, SlotScore, TopToken};

/// Scoring settings recorded with every row (part of the cache key).
pub const SCORING_SETTINGS: &str = "hyst-tui letter-slot v1: single-token 'L'/' L' variants, mean of full-vocab probabilities, renormalised over shown letters; llama.cpp f32 logits, f64 math; repack off, flash attention off";

/// Version of the score-record and item-row schemas this build writes. Version 1 records (no
/// `schema_version` field) are read with defaults for what version 2 added (`provenance`,
/// `paper_key`: empty = unknown). Records of a newer version are refused, never dropped.
pub(crate) const SCHEMA_VERSION: u32 = 2;

fn schema_v1() -> u32 {
    1
}

/// The schema version of a JSON record (1 when it has none), read without decoding the rest,
/// so that a record of a newer version is refused before its fields are interpreted.
pub(crate) fn record_version(json: &str) -> Result<u32, serde_json::Error> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default = "schema_v1")]
        schema_version: u32,
    }
    serde_json::from_str::<Probe>(json).map(|p| p.schema_version)
}

/// One scored context, as cached (content-addressed by `key`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreRow {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    pub key: String,
    pub model_key: String,
    pub model_sha256: String,
    /// Shown letters, e.g. "ABCD".
    pub letters: String,
    #[serde(with = "super::float::vec")]
    pub probs: Vec<f64>,
    #[serde(with = "super::float::vec")]
    pub log_scores: Vec<f64>,
    pub pred: String,
    #[serde(with = "super::float")]
    pub entropy: f64,
    #[serde(with = "super::float")]
    pub max_prob: f64,
    #[serde(with = "super::float")]
    pub margin_top2: f64,
    #[serde(with = "super::float")]
    pub letter_mass: f64,
    pub top_tokens: Vec<TopToken>,
    pub prompt_tokens: usize,
    pub prompt_hash: String,
    pub tokens_evaluated: usize,
    pub tokens_reused: usize,
    pub scoring: String,
    /// Numeric provenance: llama.cpp build, backend and SIMD variant, exactness settings
    /// (empty in version 1 records: unknown).
    #[serde(default)]
    pub provenance: String,
    /// The context the score belongs to, as known before tokenizing
    /// (`store::shared::context_key`; empty when unknown).
    #[serde(default)]
    pub context_key: String,
    /// A served score from top-K log-probabilities: its letter tokens outside the top K (absent
    /// when every letter probability is exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub letter_bound: Option<crate::protocol::LetterBound>,
    /// An open answer slot's per-option measurements (absent for letters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<crate::protocol::OpenAnswers>,
}

/// The cache key of a context: everything that determines its score.
pub(crate) fn score_key(model_sha256: &str, prompt_hash: &str, letters: &str, provenance: &str) -> String {
    let mut h = Sha256::new();
    for part in [model_sha256, prompt_hash, letters, SCORING_SETTINGS, provenance] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())
}

impl ScoreRow {
    pub fn from_score(model_key: &str, model_sha256: &str, provenance: &str, s: &SlotScore) -> Self {
        let letters: String = s.letters.iter().collect();
        Self {
            schema_version: SCHEMA_VERSION,
            key: score_key(model_sha256, &s.prompt_hash, &letters, provenance),
            model_key: model_key.into(),
            model_sha256: model_sha256.into(),
            letters,
            probs: s.probs.clone(),
            log_scores: s.log_scores.clone(),
            pred: s.pred_letter().to_string(),
            entropy: s.entropy,
            max_prob: s.max_prob,
            margin_top2: s.margin_top2,
            letter_mass: s.letter_mass,
            top_tokens: s.top_tokens.clone(),
            prompt_tokens: s.prompt_tokens,
            prompt_hash: s.prompt_hash.clone(),
            tokens_evaluated: s.tokens_evaluated,
            tokens_reused: s.tokens_reused,
            scoring: SCORING_SETTINGS.into(),
            provenance: provenance.into(),
            context_key: String::new(),
            letter_bound: s.bound.clone(),
            open: s.open.clone(),
        }
    }

    pub(crate) fn pred_index(&self) -> usize {
        self.letters.chars().position(|c| c.to_string() == self.pred).unwrap_or(0)
    }

    pub(crate) fn prob(&self, i: usize) -> f64 {
        self.probs.get(i).copied().unwrap_or(f64::NAN)
    }

    /// The stored score as a `SlotScore` (what the ramp needs: letters, probabilities,
    /// prediction; no variant tokens, no rendered prompt).
    pub fn to_score(&self) -> SlotScore {
        SlotScore {
            letters: self.letters.chars().collect(),
            log_scores: self.log_scores.clone(),
            probs: self.probs.clone(),
            pred: self.pred_index(),
            margin_top2: self.margin_top2,
            entropy: self.entropy,
            max_prob: self.max_prob,
            letter_mass: self.letter_mass,
            variant_probs: vec![],
            variants: vec![],
            top_tokens: self.top_tokens.clone(),
            prompt_tokens: self.prompt_tokens,
            tokens_evaluated: self.tokens_evaluated,
            tokens_reused: self.tokens_reused,
            prompt_hash: self.prompt_hash.clone(),
            rendered_prompt: String::new(),
            bound: self.letter_bound.clone(),
            open: self.open.clone(),
        }
    }

    /// The cached score an item row was written from, for the item's `letters` (rows keep
    /// everything of it but its `context_key`: empty). Checked: a probability for each letter
    /// and a predicted letter among them; a letter without a log score gets NaN.
    pub fn from_item_row(r: &ItemRow, letters: &[char]) -> Result<ScoreRow, String> {
        let value = |m: &BTreeMap<String, f64>, l: char| m.get(&l.to_string()).copied();
        let probs_map = parse_letter_map(&r.option_probs_json).map_err(|e| format!("option_probs_json: {e}"))?;
        let probs: Vec<f64> = letters
            .iter()
            .map(|&l| value(&probs_map, l).ok_or_else(|| format!("option_probs_json has no probability for {l}")))
            .collect::<Result<_, _>>()?;
        let logs = parse_letter_map(&r.option_log_scores_json).unwrap_or_default();
        let log_scores: Vec<f64> = letters.iter().map(|&l| value(&logs, l).unwrap_or(f64::NAN)).collect();
        let pred = letter_index(&r.pred_letter)
            .filter(|&i| i < letters.len())
            .ok_or_else(|| format!("pred_letter {:?} is not one of the item's options", r.pred_letter))?;
        Ok(ScoreRow {
            schema_version: r.schema_version,
            key: r.score_key.clone(),
            model_key: r.model_key.clone(),
            model_sha256: r.model_sha256.clone(),
            letters: letters.iter().collect(),
            probs,
            log_scores,
            pred: letters[pred].to_string(),
            entropy: r.entropy,
            max_prob: r.max_prob,
            margin_top2: r.margin_top2,
            letter_mass: r.letter_mass,
            top_tokens: serde_json::from_str(&r.top_tokens_json).unwrap_or_default(),
            prompt_tokens: r.prompt_tokens,
            prompt_hash: r.prompt_hash.clone(),
            tokens_evaluated: r.tokens_evaluated,
            tokens_reused: r.tokens_reused,
            scoring: r.scoring_settings.clone(),
            provenance: r.provenance.clone(),
            context_key: String::new(),
            letter_bound: r.letter_bound(),
            open: r.open_answers(),
        })
    }
}

/// Declares [`ItemRow`] once and derives its Parquet columns from the same field list, so the
/// Parquet file has one typed column per field, in field order, named like the JSON keys.
macro_rules! item_row {
    (
        $(#[$smeta:meta])*
        pub(crate) struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$smeta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        impl $name {
            /// Field names in declaration order (= JSON keys = Parquet column names).
            pub const FIELDS: &'static [&'static str] = &[$(stringify!($field)),*];

            /// One typed Parquet column per field.
            pub(crate) fn parquet_columns(rows: &[$name]) -> Vec<polars::prelude::Column> {
                vec![$(
                    <$ty as ParquetValue>::column(stringify!($field), rows.iter().map(|r| &r.$field)),
                )*]
            }
        }
    };
}

/// A field type of [`ItemRow`] and the Parquet column type it becomes.
pub(crate) trait ParquetValue: Sized {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column
    where
        Self: 'a;
}

impl ParquetValue for String {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column {
        let v: Vec<&str> = values.map(String::as_str).collect();
        polars::prelude::Column::new(name.into(), v)
    }
}

impl ParquetValue for usize {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column {
        let v: Vec<i64> = values.map(|&x| x as i64).collect();
        polars::prelude::Column::new(name.into(), v)
    }
}

impl ParquetValue for f64 {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column {
        let v: Vec<f64> = values.copied().collect();
        polars::prelude::Column::new(name.into(), v)
    }
}

impl ParquetValue for u32 {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column {
        let v: Vec<i64> = values.map(|&x| i64::from(x)).collect();
        polars::prelude::Column::new(name.into(), v)
    }
}

impl ParquetValue for bool {
    fn column<'a>(name: &str, values: impl Iterator<Item = &'a Self>) -> polars::prelude::Column {
        let v: Vec<bool> = values.copied().collect();
        polars::prelude::Column::new(name.into(), v)
    }
}

item_row! {
/// One item × condition of a run: the artifact's item-level fields plus ours. Written sorted by
/// (model_key, dataset, subset_index, condition order) to `item_rows.jsonl` / `.parquet`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ItemRow {
    #[serde(default = "schema_v1")]
    pub schema_version: u32,
    pub model_key: String,
    pub model_short_name: String,
    /// The paper's key of the model (models.toml `paper_key`; empty when it has none or in
    /// version 1 rows). Tables order pairs and draw bootstrap streams by it.
    #[serde(default)]
    pub paper_key: String,
    pub model_sha256: String,
    pub dataset: String,
    pub item_id: String,
    pub subset_index: usize,
    pub category: String,
    pub question: String,
    pub choices_json: String,
    pub n_options: usize,
    pub correct_option_letter: String,
    pub wrong_advocated_letter: String,
    pub condition: String,
    pub condition_label: String,
    pub suite: String,
    pub control: String,
    pub level: String,
    pub op_category: String,
    pub is_main_condition: bool,
    pub history_role: String,
    /// Non-system messages before the final user turn, divided by 2.
    pub history_turn_count: usize,
    pub user_prompt: String,
    pub system_prompt: String,
    /// Letters as shown in the final turn (the relabel-shuffle condition permutes the options).
    pub shown_correct_letter: String,
    pub shown_wrong_letter: String,
    pub pred_letter: String,
    #[serde(with = "super::float")]
    pub p_wrong: f64,
    #[serde(with = "super::float")]
    pub p_correct: f64,
    pub correct: bool,
    pub wrong_follow: bool,
    /// Relabel: prediction equals the letter the wrong option had before the shuffle.
    pub old_letter_follow: bool,
    #[serde(with = "super::float")]
    pub entropy: f64,
    #[serde(with = "super::float")]
    pub max_prob: f64,
    #[serde(with = "super::float")]
    pub margin_top2: f64,
    pub option_probs_json: String,
    pub option_log_scores_json: String,
    #[serde(with = "super::float")]
    pub letter_mass: f64,
    pub top_tokens_json: String,
    pub prompt_tokens: usize,
    pub prompt_hash: String,
    pub tokens_evaluated: usize,
    pub tokens_reused: usize,
    pub score_key: String,
    pub scoring_settings: String,
    pub prompts_fingerprint: String,
    /// Numeric provenance of the score (see [`ScoreRow::provenance`]).
    #[serde(default)]
    pub provenance: String,
    /// R7 only: the constructed evidence string and its provenance.
    pub gold_evidence_text: String,
    pub evidence_provenance: String,
    /// Served scores only: the [`LetterBound`](crate::protocol::LetterBound) as JSON when a
    /// letter token was outside the server's top K (empty = exact; then neither the JSON key
    /// nor the Parquet column is written, so in-process runs keep their bytes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub letter_bound_json: String,
    /// `open` for a row whose question was asked without its options and whose slot was
    /// measured over the option texts (docs/protocol.md §14); empty for letters (then neither
    /// the JSON key nor the Parquet column is written, so letters-only runs keep their bytes).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub answer_format: String,
    /// Open answers only: per option (in option order) `sum_logp`, `tokens` and `eot_logp`, as
    /// JSON ([`OpenAnswers`](crate::protocol::OpenAnswers)); the option log-scores are
    /// `sum_logp / tokens`. Empty for letters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub open_answers_json: String,
}
}

impl ItemRow {
    /// Where the row's score was computed.
    pub fn provenance_kind(&self) -> ProvenanceKind {
        ProvenanceKind::of(&self.provenance)
    }
    /// The row's answer format (empty: letters).
    pub fn answer_format(&self) -> crate::protocol::AnswerFormat {
        crate::protocol::AnswerFormat::from_key(&self.answer_format).unwrap_or_default()
    }
    /// The row's open answers, when it has them.
    pub(crate) fn open_answers(&self) -> Option<crate::protocol::OpenAnswers> {
        if self.open_answers_json.is_empty() {
            return None;
        }
        serde_json::from_str(&self.open_answers_json).ok()
    }
    /// The row's letter bound, when it has one.
    pub(crate) fn letter_bound(&self) -> Option<crate::protocol::LetterBound> {
        if self.letter_bound_json.is_empty() {
            return None;
        }
        serde_json::from_str(&self.letter_bound_json).ok()
    }
}

/// `json.dumps(d, sort_keys=True)`-style letter → value map (Python float repr via serde_json;
/// non-finite values as in [`super::float`]).
pub fn letter_map_json(letters: &str, values: &[f64]) -> String {
    let m: std::collections::BTreeMap<String, super::float::Float> = letters
        .chars()
        .zip(values)
        .map(|(l, v)| (l.to_string(), super::float::Float(*v)))
        .collect();
    serde_json::to_string(&m).expect("json")
}

/// Reads a [`letter_map_json`] map back.
pub fn parse_letter_map(json: &str) -> Result<std::collections::BTreeMap<String, f64>, serde_json::Error> {
    let m: std::collections::BTreeMap<String, super::float::Float> = serde_json::from_str(json)?;
    Ok(m.into_iter().map(|(k, v)| (k, v.0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_part() {
        let k = score_key("m", "p", "ABCD", "cpu");
        assert_ne!(k, score_key("m2", "p", "ABCD", "cpu"));
        assert_ne!(k, score_key("m", "p2", "ABCD", "cpu"));
        assert_ne!(k, score_key("m", "p", "ABC", "cpu"));
        assert_ne!(k, score_key("m", "p", "ABCD", "cuda"));
        assert_eq!(k, score_key("m", "p", "ABCD", "cpu"));
    }

    #[test]
    fn letter_map_is_sorted_json() {
        assert_eq!(letter_map_json("BA", &[0.25, 0.75]), r#"{"A":0.75,"B":0.25}"#);
        let m = letter_map_json("AB", &[f64::NEG_INFINITY, f64::NAN]);
        assert_eq!(m, r#"{"A":"-inf","B":"NaN"}"#);
        let back = parse_letter_map(&m).unwrap();
        assert_eq!(back["A"], f64::NEG_INFINITY);
        assert!(back["B"].is_nan());
    }
}
