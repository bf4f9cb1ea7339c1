//! Shared helpers for integration tests that use real GGUF models (fetched by
//! scripts/fetch-test-models.sh into the models directory).

#![allow(dead_code)]

pub mod screens;

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
