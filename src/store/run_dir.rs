//! The files of a run directory that are not the run cache: `manifest.json` (the run's
//! configuration and progress) and the item rows (`item_rows.jsonl`, `item_rows.parquet`).

use std::path::{Path, PathBuf};

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::rows::{parse_letter_map, record_version, ItemRow, SCHEMA_VERSION};
use super::write_atomic;
use crate::dialogue::conditions::Registry;
use crate::dialogue::recipe::{ExperimentSource, RecipeError};
use crate::dialogue::Suite;
use crate::protocol::{default_letters, letter_index};

pub(crate) const MANIFEST_FILE: &str = "manifest.json";
pub const ITEM_ROWS_JSONL: &str = "item_rows.jsonl";
pub const ITEM_ROWS_PARQUET: &str = "item_rows.parquet";

/// Errors reading or writing a run directory.
#[derive(Debug, Error)]
pub enum RunDirError {
    #[error("cannot read {path} (is this a batch run directory?): {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: line {line}: {message}")]
    BadRow { path: PathBuf, line: usize, message: String },
    #[error("{path}: not a hyst-tui manifest: {message}")]
    BadManifest { path: PathBuf, message: String },
    #[error("writing {path}: {message}")]
    Parquet { path: PathBuf, message: String },
}

/// Everything that determines a batch run's rows (the manifest's `config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub models: Vec<String>,
    pub datasets: Vec<String>,
    pub n: Option<usize>,
    pub seed: u64,
    pub subset_csv: Option<String>,
    pub advocated_csv: Option<String>,
    pub suites: Vec<Suite>,
    pub limit: Option<usize>,
    /// (k, n): shard k of n of a run split by `shard_by`.
    pub shard: Option<(usize, usize)>,
    /// How the shard splits the run: by item (`subset_index % n == k - 1` of every pair, the
    /// default) or by model (token-balanced ranges of one model's items; `batch::shard`).
    #[serde(default, skip_serializing_if = "ShardBy::is_item")]
    pub shard_by: ShardBy,
    pub shuffle_options: Option<u64>,
    pub prompts_fingerprint: String,
    pub scoring_settings: String,
    /// Numeric provenance of the scores (llama.cpp build, backend, SIMD variant, exactness
    /// settings); empty in manifests written before it was recorded.
    #[serde(default)]
    pub provenance: String,
    /// The run plan (`--plan`), when the run has one: per-pair suites and table scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<RunPlan>,
    /// The user's experiment files (`--experiment FILE`): path, content hash and content, so a
    /// changed file is a different run and `tables --from` knows the operations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub experiments: Vec<crate::dialogue::recipe::ExperimentSource>,
    /// Construction-seed sensitivity (`--seeds`): every dataset is selected once per seed and
    /// its rows carry the dataset key `<dataset>@seed<S>`; empty = one selection with `seed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds: Vec<u64>,
    /// The answer formats scored (`--answers`): letters alone (every run before open answers;
    /// then the key is not written, so such a run keeps its directory and bytes), open, or both.
    #[serde(default = "letters_only", skip_serializing_if = "is_letters_only")]
    pub answers: Vec<crate::protocol::AnswerFormat>,
    /// The fingerprint of the open-answer prompt set, when open answers are scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_prompts_fingerprint: Option<String>,
}

fn letters_only() -> Vec<crate::protocol::AnswerFormat> {
    vec![crate::protocol::AnswerFormat::Letters]
}

fn is_letters_only(v: &Vec<crate::protocol::AnswerFormat>) -> bool {
    *v == letters_only()
}

impl RunConfig {
    /// The configuration without the shard (what shards of one run must share).
    pub fn without_shard(&self) -> RunConfig {
        RunConfig {
            shard: None,
            shard_by: Default::default(),
            ..self.clone()
        }
    }
}

/// How `--shard K/N` splits a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShardBy {
    /// Round robin over items (`subset_index % N == K - 1`) of every pair.
    #[default]
    Item,
    /// Model-major: each shard one model, token-balanced ranges of its items.
    Model,
}

impl ShardBy {
    pub fn is_item(&self) -> bool {
        *self == ShardBy::Item
    }
    pub fn key(&self) -> &'static str {
        match self {
            ShardBy::Item => "item",
            ShardBy::Model => "model",
        }
    }
}

impl std::fmt::Display for ShardBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key())
    }
}

impl std::str::FromStr for ShardBy {
    type Err = String;
    fn from_str(s: &str) -> Result<ShardBy, String> {
        match s {
            "item" => Ok(ShardBy::Item),
            "model" => Ok(ShardBy::Model),
            _ => Err(format!("{s:?}: expected `item` or `model`")),
        }
    }
}

/// One model × dataset pair of a plan and the suites it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedPair {
    pub model: String,
    /// Dataset key (`DatasetSpec::key`).
    pub dataset: String,
    pub suites: Vec<Suite>,
}

/// A resolved run plan (`--plan`, read by `batch::runplan`), as recorded in a run's manifest
/// (so `tables --from`, shards and `merge` see the same scopes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// `paper`, or the plan file's path.
    pub name: String,
    pub description: String,
    /// Pairs in run order: models in the order they first appear, datasets in plan order.
    pub pairs: Vec<PlannedPair>,
    /// Table id (`Table 2`, `Aux`) → the (model key, dataset key) pairs it pools.
    pub table_scopes: BTreeMap<String, BTreeSet<(String, String)>>,
    /// Dataset key → spec, in plan order.
    pub datasets: Vec<(String, String)>,
    pub n: Option<usize>,
    pub seed: Option<u64>,
}

/// `manifest.json`: the configuration, the command line and progress (the only file of a run
/// with timestamps).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub tool: String,
    pub version: String,
    pub config: RunConfig,
    pub started: String,
    pub finished: Option<String>,
    pub command_line: String,
    pub items_done: usize,
    pub items_total: usize,
    pub complete: bool,
    /// Per model, on a GPU back-end: the prefix-reuse check made when the batch loaded it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reuse_checks: BTreeMap<String, ReuseRecord>,
    /// Per model, on a GPU back-end with `--pack` above 1: the packed-decoding check (its
    /// `scoring` says "packed" or "one prompt per call").
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pack_checks: BTreeMap<String, ReuseRecord>,
    /// Per served model: its endpoint, what the server reported and the letter coverage.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub served: BTreeMap<String, ServedRecord>,
    /// Per steering operation of the experiment files: its setting and the items of its
    /// direction's training split, which it does not score.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub steered: BTreeMap<String, SteeredRecord>,
}

/// A steering operation of a run: what it steers with and which items it leaves out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteeredRecord {
    /// SHA-256 of the vector's width, layers and values (part of its scores' keys).
    pub vector: String,
    pub alpha: f32,
    pub layers: (usize, usize),
    /// Ids of the items the direction was estimated on (its split record's training items);
    /// empty for a vector without one.
    pub training_items: Vec<String>,
}

impl ServedRecord {
    /// Counts the letter coverage of model `key`'s served rows, each (dataset, condition, item)
    /// once (its first row), as the tables count them.
    pub(crate) fn count_coverage(&mut self, key: &str, rows: &[ItemRow]) {
        let mut seen = std::collections::HashSet::new();
        let mine = rows.iter().filter(|r| {
            r.model_key == key
                && r.provenance_kind().is_served()
                && seen.insert((r.dataset.as_str(), r.condition.as_str(), r.subset_index, r.item_id.as_str()))
        });
        let mine: Vec<&ItemRow> = mine.collect();
        self.contexts = mine.len();
        let mine = mine.into_iter();
        let bounds: Vec<_> = mine.filter_map(|r| r.letter_bound()).collect();
        self.bounded = bounds.len();
        self.prediction_not_fixed = bounds.iter().filter(|b| !b.pred_fixed).count();
    }
}

/// A served model of a run (`engine::served`): where its scores came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServedRecord {
    /// `llama-server`, `completions` or `chat`.
    pub api: String,
    /// The endpoint URL (models.toml refuses credentials in it; the API key is never written).
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What the server reported of its weights and build.
    pub reported: BTreeMap<String, String>,
    pub prompt_source: String,
    pub top_k: usize,
    /// `bounded` or `exact`.
    pub letters: String,
    /// Requests in flight.
    pub concurrency: usize,
    /// The provenance of its scores (the cache refuses scores of another one).
    pub provenance: String,
    /// Contexts of the run's rows, how many had a letter token outside the top K, and of those
    /// how many have a prediction the unseen tokens could change.
    #[serde(default)]
    pub contexts: usize,
    #[serde(default)]
    pub bounded: usize,
    #[serde(default)]
    pub prediction_not_fixed: usize,
}

/// The prefix-reuse check of one model on a GPU back-end (`engine::exactness`), and what the
/// batch did about it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReuseRecord {
    /// Largest |p_reused − p_scratch| of an option probability.
    pub max_abs_dp: f64,
    /// Bit-identical.
    pub identical: bool,
    /// `prefix reuse` or `from scratch`.
    pub scoring: String,
}

impl Manifest {
    /// A manifest of this build of hyst-tui for `config`, not yet complete.
    pub fn new(config: RunConfig, command_line: String, items_total: usize) -> Manifest {
        Manifest {
            tool: "hyst-tui".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            config,
            started: now_string(),
            finished: None,
            command_line,
            items_done: 0,
            items_total,
            complete: false,
            reuse_checks: BTreeMap::new(),
            pack_checks: BTreeMap::new(),
            served: BTreeMap::new(),
            steered: BTreeMap::new(),
        }
    }

    pub fn read(dir: &Path) -> Result<Manifest, RunDirError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| RunDirError::Read { path: path.clone(), source })?;
        serde_json::from_str(&text).map_err(|e| RunDirError::BadManifest { path, message: e.to_string() })
    }

    pub fn write(&self, dir: &Path) -> Result<(), RunDirError> {
        let path = dir.join(MANIFEST_FILE);
        let json = serde_json::to_string_pretty(self).expect("a manifest serialises");
        write_atomic(&path, json.as_bytes()).map_err(|source| RunDirError::Write { path, source })
    }

    /// Marks the run complete now.
    pub(crate) fn finish(&mut self) {
        self.complete = true;
        self.finished = Some(now_string());
    }
}

/// Seconds since the Unix epoch, as text.
fn now_string() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", d.as_secs())
}

/// The experiment files the manifests of `dirs` record, each once, in order (a directory
/// without a readable manifest records none).
pub fn recorded_experiments(dirs: &[PathBuf]) -> Vec<ExperimentSource> {
    let mut files: Vec<ExperimentSource> = Vec::new();
    for dir in dirs {
        if let Ok(m) = Manifest::read(dir) {
            for e in m.config.experiments {
                if !files.iter().any(|f| f.sha256 == e.sha256) {
                    files.push(e);
                }
            }
        }
    }
    files
}

/// The condition registry to read the runs `dirs` under: the experiment files their manifests
/// record, then those of `extra` (`--experiment`) not among them.
pub fn runs_registry(dirs: &[PathBuf], extra: &[ExperimentSource]) -> Result<&'static Registry, RecipeError> {
    let mut files = recorded_experiments(dirs);
    for e in extra {
        if !files.iter().any(|f| f.sha256 == e.sha256) {
            files.push(e.clone());
        }
    }
    Registry::with_experiments(&files)
}

/// Sorts rows by (model, dataset, subset index, condition order in `reg`).
pub fn sort_rows(rows: &mut [ItemRow], reg: &Registry) {
    rows.sort_by(|a, b| {
        (&a.model_key, &a.dataset, a.subset_index, reg.position(&a.condition), &a.condition).cmp(&(
            &b.model_key,
            &b.dataset,
            b.subset_index,
            reg.position(&b.condition),
            &b.condition,
        ))
    });
}

/// Writes `item_rows.jsonl` and `item_rows.parquet` atomically.
pub fn write_item_rows(dir: &Path, rows: &[ItemRow]) -> Result<(), RunDirError> {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r).expect("an item row serialises"));
        s.push('\n');
    }
    let path = dir.join(ITEM_ROWS_JSONL);
    write_atomic(&path, s.as_bytes()).map_err(|source| RunDirError::Write { path, source })?;
    write_item_rows_parquet(&dir.join(ITEM_ROWS_PARQUET), rows)
}

/// Item rows as a Parquet table: one typed column per [`ItemRow`] field.
fn write_item_rows_parquet(path: &Path, rows: &[ItemRow]) -> Result<(), RunDirError> {
    use polars::prelude::{DataFrame, ParquetWriter};
    let err = |e: polars::prelude::PolarsError| RunDirError::Parquet {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut columns = ItemRow::parquet_columns(rows);
    // The letter-bound column exists only in runs with bounded served scores.
    if rows.iter().all(|r| r.letter_bound_json.is_empty()) {
        columns.retain(|c| c.name().as_str() != "letter_bound_json");
    }
    // The open-answer columns exist only in runs with open-answer rows.
    if rows.iter().all(|r| r.answer_format.is_empty()) {
        columns.retain(|c| !matches!(c.name().as_str(), "answer_format" | "open_answers_json"));
    }
    let mut df = DataFrame::new(rows.len(), columns).map_err(err)?;
    let mut buf = Vec::new();
    ParquetWriter::new(&mut buf).finish(&mut df).map_err(err)?;
    write_atomic(path, &buf).map_err(|source| RunDirError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// A row of `item_rows.jsonl` that was not used, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct RowProblem {
    /// 1-based line number.
    pub line: usize,
    pub reason: String,
}

/// The valid rows of a run's `item_rows.jsonl`, each with its line number, and the rows skipped.
#[derive(Clone, Debug, Default)]
pub struct LoadedRows {
    pub path: PathBuf,
    pub rows: Vec<ItemRow>,
    /// Line number of each row in `rows`.
    pub lines: Vec<usize>,
    pub skipped: Vec<RowProblem>,
}

impl LoadedRows {
    /// One line for the user about the skipped rows, or `None`.
    pub(crate) fn describe_skipped(&self) -> Option<String> {
        let first = self.skipped.first()?;
        Some(format!(
            "{}: {} malformed row{} skipped (line {}: {}){}",
            self.path.display(),
            self.skipped.len(),
            if self.skipped.len() == 1 { "" } else { "s" },
            first.line,
            first.reason,
            if self.skipped.len() > 1 { ", …" } else { "" }
        ))
    }
}

/// "A–D" for four options.
fn letter_range(n: usize) -> String {
    match n {
        0 => "none".into(),
        1 => "A".into(),
        n => format!("A–{}", default_letters(n).last().copied().unwrap_or('A')),
    }
}

/// Whether a stored row is consistent enough to be used: a condition of `reg`, 2–26 options that
/// match `choices_json`, letters within the options (the advocated wrong one not the correct
/// one), option probabilities (and log-scores) for exactly the item's letters A.., in order,
/// and probabilities that are numbers in [0, 1].
pub(crate) fn check_item_row(r: &ItemRow, reg: &Registry) -> Result<(), String> {
    if reg.find(&r.condition).is_none() {
        return Err(format!("unknown condition {:?}", r.condition));
    }
    let n = match serde_json::from_str::<Vec<String>>(&r.choices_json) {
        Ok(c) => c.len(),
        Err(e) => return Err(format!("choices_json is not a list of option texts: {e}")),
    };
    if !(2..=26).contains(&n) {
        return Err(format!("choices_json has {n} options (2 to 26 expected)"));
    }
    if r.n_options != n {
        return Err(format!("n_options is {}, choices_json has {n} options", r.n_options));
    }
    let index = |field: &str, l: &str| -> Result<usize, String> {
        letter_index(l)
            .filter(|&i| i < n)
            .ok_or_else(|| format!("{field} {l:?} is not one of the item's options {}", letter_range(n)))
    };
    let correct = index("correct_option_letter", &r.correct_option_letter)?;
    let wrong = index("wrong_advocated_letter", &r.wrong_advocated_letter)?;
    if wrong == correct {
        return Err(format!("the advocated wrong option {} is the correct one", r.wrong_advocated_letter));
    }
    index("shown_correct_letter", &r.shown_correct_letter)?;
    index("shown_wrong_letter", &r.shown_wrong_letter)?;
    index("pred_letter", &r.pred_letter)?;
    let want: Vec<String> = default_letters(n).iter().map(char::to_string).collect();
    let letters_of = |field: &str, json: &str| -> Result<std::collections::BTreeMap<String, f64>, String> {
        let m = parse_letter_map(json).map_err(|e| format!("{field} is not a letter → number map: {e}"))?;
        if m.keys().ne(want.iter()) {
            let got: Vec<&str> = m.keys().map(String::as_str).collect();
            return Err(format!("{field} has letters [{}], the item has options {}", got.join(", "), letter_range(n)));
        }
        Ok(m)
    };
    for (l, p) in letters_of("option_probs_json", &r.option_probs_json)? {
        if p.is_nan() {
            return Err(format!("the probability of {l} is not a number (NaN or null)"));
        }
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("the probability of {l} is {p}, outside 0–1"));
        }
    }
    letters_of("option_log_scores_json", &r.option_log_scores_json)?;
    for (field, p) in [("p_wrong", r.p_wrong), ("p_correct", r.p_correct)] {
        if !(0.0..=1.0).contains(&p) {
            return Err(format!("{field} is {p}, outside 0–1"));
        }
    }
    Ok(())
}

/// Reads a run's `item_rows.jsonl`, keeping the valid rows (their conditions those of `reg`)
/// and reporting the others with their line numbers. A row written by a newer hyst-tui is an
/// error (never silently skipped).
pub fn load_item_rows(dir: &Path, reg: &Registry) -> Result<LoadedRows, RunDirError> {
    let path = dir.join(ITEM_ROWS_JSONL);
    let bytes = std::fs::read(&path).map_err(|source| RunDirError::Read { path: path.clone(), source })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut out = LoadedRows {
        path: path.clone(),
        ..LoadedRows::default()
    };
    for (i, l) in text.lines().enumerate() {
        let line = i + 1;
        if l.trim().is_empty() {
            continue;
        }
        let problem = match record_version(l) {
            Ok(v) if v > SCHEMA_VERSION => {
                return Err(RunDirError::BadRow {
                    path,
                    line,
                    message: format!("written by a newer hyst-tui (row schema {v}, this build reads up to {SCHEMA_VERSION})"),
                })
            }
            Err(e) => Some(format!("not a JSON row: {e}")),
            Ok(_) => match serde_json::from_str::<ItemRow>(l) {
                Err(e) => Some(format!("not an item row: {e}")),
                Ok(r) => match check_item_row(&r, reg) {
                    Err(reason) => Some(reason),
                    Ok(()) => {
                        out.rows.push(r);
                        out.lines.push(line);
                        None
                    }
                },
            },
        };
        if let Some(reason) = problem {
            out.skipped.push(RowProblem { line, reason });
        }
    }
    Ok(out)
}

/// Reads `item_rows.jsonl` of a run directory; any unreadable or inconsistent row is an error.
pub fn read_item_rows(dir: &Path, reg: &Registry) -> Result<Vec<ItemRow>, RunDirError> {
    let loaded = load_item_rows(dir, reg)?;
    if let Some(p) = loaded.skipped.first() {
        return Err(RunDirError::BadRow {
            path: loaded.path,
            line: p.line,
            message: p.reason.clone(),
        });
    }
    Ok(loaded.rows)
}
