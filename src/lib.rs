//! hyst-tui: measure sycophancy hysteresis (protocol: ../shared/protocol.md) on GGUF models
//! through llama.cpp. Data flows one way:
//! data → dialogue → engine → store → metrics → tables, with the TUI on top.

pub mod cli;
pub mod commands;
pub mod config;
pub mod data;
pub mod dialogue;
pub mod engine;
pub mod fetch;
pub mod logging;
pub mod metrics;
pub mod prompts;
pub mod batch;
pub mod store;
pub mod tables;
pub mod tui;
