//! hyst-tui: measure sycophancy hysteresis (methods: docs/protocol.md) on GGUF models
//! through llama.cpp. Data flows one way, each layer using only the ones above it in this list
//! (tests/architecture.rs checks the imports):
//!
//! - `protocol` — plain data types: chat messages, slot scores and their provenance kind, the
//!   `Scorer` trait, letters;
//!   `util` — small helpers;
//! - `config`, `data`, `prompts` — models.toml, items and selection, prompt sets;
//! - `dialogue` (conditions → messages, the ramp), `fetch`, `logging`;
//! - `store` — run directories: the run cache, the shared store, item rows, manifest;
//! - `metrics` → `tables` — the paper's measures and tables; beside them `engine` (llama.cpp and
//!   served models), which only `batch` and `tui` use;
//! - `batch` — models × datasets × conditions, reporting through an observer;
//! - `tui` — the explorer.
//!
//! The command line (`cli`, `commands`) lives in the binary and is imported by nothing here.

pub mod batch;
pub mod config;
pub mod data;
pub mod dialogue;
pub mod engine;
pub mod fetch;
pub mod logging;
pub mod metrics;
pub mod prompts;
pub mod protocol;
pub mod store;
pub mod tables;
pub mod tui;
pub mod util;
