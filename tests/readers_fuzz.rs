//! Property tests over every reader of external input: dataset JSONL and CSV files, models.toml,
//! prompt sets, the score cache and a run's item rows. Each gets arbitrary bytes and mutations of
//! a valid file (flipped, inserted and deleted bytes, truncation). None may panic; a failure must
//! be one clear line (an error message without a line break).

mod common;

use std::path::Path;

use proptest::prelude::*;

use hyst_tui::config::ModelsConfig;
use hyst_tui::data::DatasetSpec;
use hyst_tui::prompts::PromptSet;
use hyst_tui::store::run_dir::load_item_rows;
use hyst_tui::store::ScoreCache;

/// A byte-level edit of a valid input.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(i, b)| Edit::Flip(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Truncate),
    ];
    prop::collection::vec(edit, 1..6)
}

fn mutate(valid: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut v = valid.to_vec();
    for e in edits {
        if v.is_empty() {
            break;
        }
        match *e {
            Edit::Flip(i, b) => {
                let i = i % v.len();
                v[i] ^= b;
            }
            Edit::Insert(i, b) => {
                let i = i % (v.len() + 1);
                v.insert(i, b);
            }
            Edit::Delete(i) => {
                let i = i % v.len();
                v.remove(i);
            }
            Edit::Truncate(i) => {
                let i = i % v.len();
                v.truncate(i);
            }
        }
    }
    v
}

/// Arbitrary bytes, or a mutation of `valid`.
fn inputs(valid: &'static [u8]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        edits().prop_map(move |e| mutate(valid, &e)),
    ]
}

fn one_line<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<(), TestCaseError> {
    if let Err(e) = r {
        let msg = e.to_string();
        prop_assert!(!msg.trim().is_empty(), "empty error message");
        prop_assert!(!msg.contains('\n'), "error spans several lines: {msg}");
    }
    Ok(())
}

const SAMPLE_JSONL: &[u8] = include_bytes!("../assets/sample.jsonl");
const MODELS_TOML: &[u8] = include_bytes!("../models.toml");
const PROMPTS_TOML: &[u8] = include_bytes!("../prompts/default.toml");
const DATASET_CSV: &[u8] = b"id,question,answer,option_a,option_b,option_c,category\n\
q1,\"Which is a primary colour, of light?\",B,Green-ish,Red,\"Purple \"\"deep\"\"\",colour\n\
q2,How many legs has a spider?,1,Six,Eight,Ten,biology\n";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn dataset_jsonl(bytes in inputs(SAMPLE_JSONL)) {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "d.jsonl", &bytes);
        one_line(DatasetSpec::parse(&format!("jsonl:{}", p.display())).unwrap().load())?;
    }

    #[test]
    fn dataset_csv(bytes in inputs(DATASET_CSV)) {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "d.csv", &bytes);
        one_line(DatasetSpec::parse(&format!("csv:{}", p.display())).unwrap().load())?;
    }

    #[test]
    fn models_toml(bytes in inputs(MODELS_TOML)) {
        let text = String::from_utf8_lossy(&bytes);
        one_line(ModelsConfig::from_toml_str(&text, "fuzzed models.toml"))?;
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "models.toml", &bytes);
        one_line(ModelsConfig::load(&p))?;
    }

    #[test]
    fn prompt_set(bytes in inputs(PROMPTS_TOML)) {
        let text = String::from_utf8_lossy(&bytes);
        one_line(PromptSet::from_toml_str(&text, "fuzzed default.toml"))?;
    }
}

/// A valid score cache and item rows, made from the synthetic rows of the tables module.
fn valid_run() -> &'static (Vec<u8>, Vec<u8>) {
    static RUN: std::sync::OnceLock<(Vec<u8>, Vec<u8>)> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let rows = common::synthetic::synthetic_rows(1);
        hyst_tui::store::write_item_rows(dir.path(), &rows[..6]).unwrap();
        let items = std::fs::read(dir.path().join("item_rows.jsonl")).unwrap();
        let mut cache = ScoreCache::open(&dir.path().join("scores.jsonl")).unwrap();
        let score = hyst_tui::protocol::SlotScore {
            letters: vec!['A', 'B'],
            log_scores: vec![-0.5, f64::NEG_INFINITY],
            probs: vec![1.0, 0.0],
            pred: 0,
            margin_top2: f64::INFINITY,
            entropy: 0.0,
            max_prob: 1.0,
            letter_mass: 0.9,
            variant_probs: vec![],
            variants: vec![],
            top_tokens: vec![],
            prompt_tokens: 12,
            tokens_evaluated: 12,
            tokens_reused: 0,
            prompt_hash: "ab".repeat(32),
            rendered_prompt: String::new(),
            bound: None,
            open: None,
        };
        let rows: Vec<_> = (0..3)
            .map(|i| hyst_tui::store::ScoreRow::from_score("m", &format!("{i}"), "cpu", &score))
            .collect();
        cache.append(&rows).unwrap();
        drop(cache);
        (std::fs::read(dir.path().join("scores.jsonl")).unwrap(), items)
    })
}

fn cache_inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        edits().prop_map(|e| mutate(&valid_run().0, &e)),
    ]
}

fn item_inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        edits().prop_map(|e| mutate(&valid_run().1, &e)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn score_cache(bytes in cache_inputs()) {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "scores.jsonl", &bytes);
        match ScoreCache::open(&p) {
            Err(e) => one_line(Err::<(), _>(e))?,
            Ok(c) => {
                // Whatever was read, reopening reads the same records and repairs nothing more.
                let n = c.len();
                drop(c);
                let again = ScoreCache::open(&p).unwrap();
                prop_assert_eq!(again.len(), n);
                prop_assert!(again.report.quarantined.is_empty() && again.report.torn_bytes == 0);
            }
        }
    }

    #[test]
    fn item_rows(bytes in item_inputs()) {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "item_rows.jsonl", &bytes);
        one_line(load_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()))?;
    }
}

