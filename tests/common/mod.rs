//! Shared helpers for integration tests that use real GGUF models (fetched by
//! scripts/fetch-test-models.sh into the models directory).

#![allow(dead_code)]

pub mod screens;
pub mod synthetic;

use hyst_tui::config::{models_dir, ModelEntry, ModelsConfig};
use hyst_tui::engine::{Engine, EngineOptions};

pub const SMOL: &str = "smollm2-135m";
pub const QWEN: &str = "qwen2.5-coder-0.5b";
pub const GEMMA: &str = "gemma3-270m";

pub fn entry(key: &str) -> ModelEntry {
    ModelsConfig::bundled().unwrap().get(key).unwrap().clone()
}

/// Starts an engine on a bundled test model; a missing model is a test failure with the fix.
pub fn engine_with(key: &str, opts: EngineOptions) -> Engine {
    let e = entry(key);
    let path = e.path(&models_dir());
    assert!(
        path.exists(),
        "test model {key} is missing at {}: run `bash scripts/fetch-test-models.sh`",
        path.display()
    );
    Engine::start(&e, &path, opts).unwrap_or_else(|err| panic!("{key}: {err}"))
}

pub fn engine(key: &str) -> Engine {
    engine_with(key, EngineOptions { threads: 2, ..EngineOptions::default() })
}

/// Every file under `dir/tables` and `dir/figures` (as `tables/NAME`, `figures/NAME`) plus
/// summary.md and reproduction.md/.csv, name → bytes.
pub fn run_outputs(dir: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut m = std::collections::BTreeMap::new();
    for sub in ["tables", "figures"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            m.insert(format!("{sub}/{}", p.file_name().unwrap().to_string_lossy()), std::fs::read(&p).unwrap());
        }
    }
    for f in ["summary.md", "reproduction.md", "reproduction.csv"] {
        m.insert(f.into(), std::fs::read(dir.join(f)).unwrap());
    }
    m
}

/// A run configuration of `models` on the sample with nothing else set (for manifests written
/// by tests); change fields with `RunConfig { field, ..run_config(&[..]) }`.
pub fn run_config(models: &[&str]) -> hyst_tui::store::RunConfig {
    hyst_tui::store::RunConfig {
        models: models.iter().map(|m| m.to_string()).collect(),
        datasets: vec!["sample".into()],
        n: None,
        seed: 42,
        subset_csv: None,
        advocated_csv: None,
        suites: Vec::new(),
        limit: None,
        shard: None,
        shard_by: Default::default(),
        shuffle_options: None,
        prompts_fingerprint: String::new(),
        scoring_settings: String::new(),
        provenance: String::new(),
        plan: None,
        experiments: vec![],
        seeds: vec![],
        answers: vec![hyst_tui::protocol::AnswerFormat::Letters],
        open_prompts_fingerprint: None,
    }
}

/// The score of a scripted answer `l` over `letters` (p = 0.5 on it, the rest spread evenly): for
/// tests of how dialogues are built from a model's letters, without a model.
pub fn scripted_score(letters: &[char], l: char) -> hyst_tui::protocol::SlotScore {
    let pred = letters.iter().position(|&x| x == l).unwrap();
    let n = letters.len();
    let probs: Vec<f64> = (0..n).map(|i| if i == pred { 0.5 } else { 0.5 / (n - 1) as f64 }).collect();
    hyst_tui::protocol::SlotScore {
        letters: letters.to_vec(),
        log_scores: probs.iter().map(|p| p.ln()).collect(),
        probs,
        pred,
        margin_top2: 0.0,
        entropy: 0.0,
        max_prob: 0.5,
        letter_mass: 1.0,
        variant_probs: vec![],
        variants: vec![],
        top_tokens: vec![],
        prompt_tokens: 0,
        tokens_evaluated: 0,
        tokens_reused: 0,
        prompt_hash: String::new(),
        rendered_prompt: String::new(),
        bound: None,
        open: None,
    }
}
