//! The command line of `bench` (measured figures, docs/measurements.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::dataset_help;

/// What `bench batch` and `bench answers` run: a model on the first items of a dataset.
#[derive(Debug, Args)]
pub struct BenchItems {
    /// Model key (default: the default model).
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    /// Items to run.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub limit: usize,
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
}

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Raw llama.cpp prompt throughput vs the engine on a ramp-plus-branches workload.
    Engine {
        /// Model key (default: the default model).
        #[arg(long, value_name = "KEY")]
        model: Option<String>,
        /// Tokens in the raw-throughput decode.
        #[arg(long, default_value_t = 512, value_name = "N")]
        raw_tokens: usize,
        /// Items of the bundled sample to run.
        #[arg(long, default_value_t = 2, value_name = "N")]
        items: usize,
    },
    /// Tokens per item with reuse vs from scratch vs the prefix-trie bound, on the hierarchy.
    Batch {
        #[command(flatten)]
        items: BenchItems,
        /// The most workers in the scaling table (1, 2, 4, … up to N; default: the cores).
        #[arg(long, value_name = "N")]
        workers: Option<usize>,
        /// Sequences of the packed run (`--pack` of a batch).
        #[arg(long, default_value_t = 16, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=256))]
        pack: u32,
        /// Sequences of each point of the throughput curve, comma separated; `none`: no curve.
        #[arg(long, default_value = "1,2,4,8,16", value_name = "N1,N2|none")]
        curve: String,
        /// Where the curve's SVG figure goes.
        #[arg(long, default_value = "bench-throughput.svg", value_name = "FILE")]
        figure: PathBuf,
    },
    /// What open answers cost against letters on the same items: tokens evaluated against the
    /// prefix-trie bound of contexts and option texts, and wall time.
    Answers(BenchItems),
    /// What the read-out and steering cost: the engine from scratch vs the read-out probe,
    /// with and without the letter lens, under one steering setting and a new one each call.
    Inside {
        /// Model key (default: the default model).
        #[arg(long, value_name = "KEY")]
        model: Option<String>,
        /// Items of the dataset (each gives its R0 context and its clean probe).
        #[arg(long, default_value_t = 4, value_name = "N")]
        limit: usize,
        #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
        dataset: String,
    },
    /// A served model (models.toml `endpoint`) vs its own GGUF in-process, same workload, one
    /// run: contexts/s, tokens/s and max |dp|.
    Served {
        /// The served model's key (its entry needs a GGUF `file` for the in-process side).
        #[arg(long, value_name = "KEY")]
        model: String,
        /// Items to run.
        #[arg(long, default_value_t = 2, value_name = "N")]
        limit: usize,
        #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
        dataset: String,
    },
}
