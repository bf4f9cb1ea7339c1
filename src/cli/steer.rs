//! The command line of `lens` and `steer` (the letter lens and steering, docs/guide/inside.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{dataset_help, parse_layer_range, SelectionArgs};

#[derive(Debug, Args)]
pub struct LensArgs {
    /// Model key (default: the default model). A served model is refused.
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Conditions to read out, comma separated (default: clean_context, strong_pressure and the
    /// main recovery operations R0-R6).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    pub conditions: Vec<String>,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum SteerCmd {
    /// Estimate a contamination direction: per layer, the mean over training items of the
    /// residual stream at the answer slot in the condition's context minus the clean probe's.
    /// Writes DIR/direction.gguf (llama.cpp's control-vector format) and DIR/split.json.
    Direction(SteerDirectionArgs),
    /// Steer the held-out items' condition and clean probe with the direction (and a random
    /// direction of the same length) at each α and layer range; writes DIR/sweep.csv, .md,
    /// .json and .svg.
    Sweep(SteerSweepArgs),
}

/// What both steering commands share: the model, items and condition.
#[derive(Debug, Args)]
pub struct SteerItemsArgs {
    /// Model key (default: the default model). A served model is refused.
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// The condition whose contamination is studied (see `hyst-tui conditions`; default: R0,
    /// `ordinary_strong_reset`, or for `sweep --direction` the condition it was estimated on).
    #[arg(long, value_name = "NAME")]
    pub condition: Option<String>,
}

#[derive(Debug, Args)]
pub struct SteerDirectionArgs {
    #[command(flatten)]
    pub items: SteerItemsArgs,
    /// Share of the selected items used to estimate the direction (the rest are held out).
    #[arg(long, default_value_t = 0.5, value_name = "F")]
    pub train_fraction: f64,
    /// Seed of the train / held-out split.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub split_seed: u64,
    /// Directory for direction.gguf and split.json.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct SteerSweepArgs {
    #[command(flatten)]
    pub items: SteerItemsArgs,
    /// A directory written by `steer direction`: its direction.gguf, evaluated on the items
    /// its split.json holds out (the selection must be the one it was estimated on).
    #[arg(long, value_name = "DIR", conflicts_with = "vector", required_unless_present = "vector")]
    pub direction: Option<PathBuf>,
    /// A control-vector file made elsewhere (every selected item is held out).
    #[arg(long, value_name = "FILE")]
    pub vector: Option<PathBuf>,
    /// Steering strengths (the vector times α is added; with a contamination direction,
    /// negative α steers away from the condition toward the clean probe).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, default_value = "-2,-1,-0.5,0,0.5", value_name = "A,B,...")]
    pub alphas: Vec<f32>,
    /// Layer ranges to steer, comma separated, each FIRST-LAST or one layer (default: the
    /// middle layer of the vector's span).
    #[arg(long, value_delimiter = ',', value_parser = parse_layer_range, value_name = "L|A-B,...")]
    pub layers: Vec<(usize, usize)>,
    /// Seed of the random-direction control.
    #[arg(long, default_value_t = 1, value_name = "SEED")]
    pub random_seed: u64,
    /// Output directory (default: the --direction directory).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}
