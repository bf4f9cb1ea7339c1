//! Command-line interface (clap derive). The binary parses these, then `commands::*` run them.
//! Value lists (suites, explorer screens) come from the library's own registries.

use hyst_tui::dialogue::conditions::ids;
use std::path::PathBuf;
use std::sync::OnceLock;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use hyst_tui::batch::shard::ShardBy;
use hyst_tui::batch::Shard;
use hyst_tui::data::{ReleasedLists, SelectionOptions, DATASET_SPEC_FORMS, DEFAULT_SEED};
use hyst_tui::dialogue::Suite;
use hyst_tui::tui::{Screen, TermSize};

#[path = "cli/bench.rs"]
mod bench;
#[path = "cli/steer.rs"]
mod steer;
pub use bench::BenchCmd;
pub use steer::{LensArgs, SteerCmd, SteerDirectionArgs, SteerItemsArgs, SteerSweepArgs};

/// The suites `--suites all` stands for (the paper's), and those it leaves out (the bundled
/// experiments'), named from the registry so that the help cannot drift from the expansion
/// ([`BatchArgs::suites`]; the docs test compares the two).
fn all_suites_text() -> String {
    let keys = |v: &[Suite]| v.iter().map(|s| s.key()).collect::<Vec<_>>().join(", ");
    let left_out: Vec<Suite> = Suite::EVERY.iter().copied().filter(|s| !Suite::ALL.contains(s)).collect();
    if left_out.is_empty() {
        format!("every suite: {}", keys(&Suite::ALL))
    } else {
        format!("the paper's suites: {}; not {}", keys(&Suite::ALL), keys(&left_out))
    }
}

/// The help of `--suites`.
fn suites_help() -> String {
    format!("Suites, comma separated (default: hierarchy; `all` = {}).", all_suites_text())
}

/// The help of an option that takes one dataset spec (the forms are written once, beside their
/// parser: `data::DATASET_SPEC_FORMS`).
fn dataset_help() -> String {
    format!("Dataset spec: {DATASET_SPEC_FORMS}")
}

#[derive(Debug, Parser)]
#[command(
    name = "hyst-tui",
    version,
    about = "Explore and batch-run sycophancy hysteresis measurements on GGUF models (llama.cpp).",
    long_about = "Without a command, opens the terminal explorer. `hyst-tui --batch` (= `hyst-tui batch`) runs \
models x datasets x conditions and writes the paper's tables."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The engine's options: they matter only to a command that loads a model in-process.
const ENGINE_OPTS: [&str; 5] = ["threads", "no_cache", "gpu_layers", "allow_inexact_reuse", "ctx"];

/// The global options (argument ids) that a command, named by its path under `hyst-tui`, leaves
/// unused. Every command still accepts every global option (a script may put them anywhere), but
/// its help lists only those it uses: `tables --help` names no engine option. The explorer (no
/// command), `batch`, `snapshot` and `slurm` (which hands them to its tasks) use them all.
pub fn unused_global_opts(path: &[&str]) -> Vec<&'static str> {
    let engine = ENGINE_OPTS.to_vec();
    let dialogue = ["prompts", "experiments"];
    let mut v: Vec<&'static str> = match path {
        ["models", ..] => [&engine[..], &dialogue, &["score_store"]].concat(),
        // One conversation given as messages, or checks of a model: no conditions are built.
        ["score"] | ["doctor"] => [&dialogue[..], &["allow_inexact_reuse", "score_store"]].concat(),
        // Benchmarks score into scratch runs of their own, without the shared store, and
        // measure reuse themselves.
        ["bench", ..] => vec!["allow_inexact_reuse", "score_store"],
        ["prompts"] | ["lens"] | ["steer", ..] => vec!["allow_inexact_reuse", "score_store"],
        ["conditions"] => [&engine[..], &["prompts", "score_store", "models_config"]].concat(),
        // Stored rows only: no model, no prompt; a run's own experiments and --experiment.
        ["tables"] | ["compare"] | ["merge"] => [&engine[..], &["prompts", "score_store", "models_config"]].concat(),
        ["items"] | ["status"] => [&engine[..], &dialogue, &["score_store", "models_config"]].concat(),
        ["completions"] => [&engine[..], &dialogue, &["score_store", "models_config", "log_file"]].concat(),
        _ => Vec::new(),
    };
    v.sort_unstable();
    v
}

/// The command line definition as the program uses it (parsing, help, completions, the
/// command reference): [`Cli`]'s, with each command's unused global options hidden from its
/// help ([`unused_global_opts`]). A command gets a hidden copy of such an option before clap
/// hands the global options down (which skips a command that has the option already), so it is
/// parsed, and its value reaches [`GlobalOpts`], as anywhere else.
pub fn command() -> clap::Command {
    fn hide(cmd: clap::Command, globals: &[clap::Arg], path: &mut Vec<String>) -> clap::Command {
        let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
        let mut cmd = cmd;
        for name in names {
            path.push(name.clone());
            let unused = unused_global_opts(&path.iter().map(String::as_str).collect::<Vec<_>>());
            cmd = cmd.mut_subcommand(&name, |mut sub| {
                for g in globals.iter().filter(|g| unused.contains(&g.get_id().as_str())) {
                    if !sub.get_arguments().any(|a| a.get_id() == g.get_id()) {
                        sub = sub.arg(g.clone().hide(true));
                    }
                }
                hide(sub, globals, path)
            });
            path.pop();
        }
        cmd
    }
    use clap::CommandFactory;
    let cmd = Cli::command();
    let globals: Vec<clap::Arg> = cmd.get_arguments().filter(|a| a.is_global_set()).cloned().collect();
    hide(cmd, &globals, &mut Vec::new())
}

#[derive(Debug, Args, Clone)]
pub struct GlobalOpts {
    /// models.toml to use (default: $HYST_MODELS_CONFIG, else the bundled one).
    #[arg(long, global = true, value_name = "FILE")]
    pub models_config: Option<PathBuf>,
    /// Write logs (including llama.cpp's) here instead of <data dir>/logs/hyst-tui.log.
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// CPU threads for llama.cpp (default: all cores).
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,
    /// Evaluate every prompt from scratch (no KV-cache prefix reuse; the run cache and the shared
    /// score store are still used).
    #[arg(long, global = true, visible_alias = "no-prefix-reuse")]
    pub no_cache: bool,
    /// Layers to offload to the GPU (builds with --features cuda, metal or vulkan; default: the
    /// model's `gpu_layers` in models.toml, else all). Part of the numeric provenance.
    #[arg(long, global = true, value_name = "N")]
    pub gpu_layers: Option<u32>,
    /// On a GPU back-end where prefix-reused scores are not bit-identical to scratch scores
    /// (checked when a batch loads each model), keep reusing prefixes and record the measured
    /// deviation, instead of scoring that model's prompts from scratch; likewise keep packing
    /// (--pack) where packed scores differ from one prompt per call.
    #[arg(long, global = true)]
    pub allow_inexact_reuse: bool,
    /// Context size in tokens (default: the model's `context` in models.toml).
    #[arg(long, global = true, value_name = "TOKENS")]
    pub ctx: Option<u32>,
    /// Directory with a replacement prompt set (DIR/default.toml; default: the bundled prompts/).
    #[arg(long, global = true, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// An experiment file: more recovery operations and custom pressure ramps, written in the
    /// schema of the bundled prompts/conditions.toml with their own texts (repeatable). A stored
    /// run remembers its experiments.
    #[arg(long = "experiment", global = true, value_name = "FILE")]
    pub experiments: Vec<PathBuf>,
    /// The score store shared by all runs and the explorer (default: $HYST_SCORE_STORE, else
    /// <data dir>/scores/scores.jsonl); `off` scores everything a run's own cache lacks.
    #[arg(long, global = true, value_name = "FILE|off")]
    pub score_store: Option<String>,
    /// Same as the `batch` command.
    #[arg(long)]
    pub batch: bool,
    #[command(flatten)]
    pub batch_args: BatchArgs,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// Options of the explorer (no command).
#[derive(Debug, Args, Clone)]
pub struct TuiArgs {
    /// Model key for the explorer (default: the default model).
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    #[arg(long, value_name = "SPEC", help = format!("Dataset spec for the explorer: {DATASET_SPEC_FORMS} (default: sample)"))]
    pub dataset: Option<String>,
    /// Browse a stored batch run without recomputing.
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// The steering what-if of the Slot view (`T`).
    #[command(flatten)]
    pub steering: SteeringArgs,
}

/// A steering setting: `score` scores under it, the explorer offers it as a what-if.
#[derive(Debug, Args, Clone)]
pub struct SteeringArgs {
    /// Steer with this control vector (llama.cpp's format: GGUF tensors `direction.N`), added
    /// to the residual stream after each steered layer.
    #[arg(long, value_name = "FILE")]
    pub steer: Option<PathBuf>,
    /// Steering strength: the vector is multiplied by it (needs --steer).
    #[arg(long, value_name = "ALPHA", default_value_t = 1.0, requires = "steer", allow_negative_numbers = true)]
    pub alpha: f32,
    /// Layers to steer, as FIRST-LAST or one layer (needs --steer; default: every layer the
    /// vector has a direction for).
    #[arg(long, value_name = "FIRST-LAST", requires = "steer", value_parser = parse_layer_range)]
    pub steer_layers: Option<(usize, usize)>,
}

#[derive(Debug, Args, Clone)]
pub struct SnapshotArgs {
    /// The screen to render.
    #[arg(long, default_value = "dialogue", value_name = "SCREEN")]
    pub view: ScreenArg,
    /// Item id (default: the first item).
    #[arg(long, value_name = "ID")]
    pub item: Option<String>,
    /// Terminal size WIDTHxHEIGHT (40x10 to 1000x1000).
    #[arg(long, default_value = "120x40", value_name = "WxH")]
    pub size: TermSize,
    /// Output file: .svg, .html or .txt.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Model key (default: the default model).
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
    /// Dialogue step to show, as the explorer's step keys count them: 0 = clean … 6 = clean
    /// probe (the ramp), then any custom ramp's steps, then the recovery operations.
    #[arg(long, value_name = "STEP")]
    pub step: Option<usize>,
    /// Tables view: the stored batch run to show.
    #[arg(long, value_name = "DIR")]
    pub run: Option<PathBuf>,
    /// Models to compare with the shown one, comma separated (model keys, or a stored run's
    /// models): the Items, Dialogue, Trace and Recovery views show them side by side.
    #[arg(long, value_delimiter = ',', value_name = "K1,K2")]
    pub compare: Vec<String>,
}

/// Item selection shared by `items`, `prompts`, `batch` and the explorer.
#[derive(Debug, Args, Clone)]
pub struct SelectionArgs {
    /// Items to draw (CPython `random.Random(seed).shuffle`, first N; default: all).
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,
    /// Selection seed (subset draw and advocated wrong option).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// The paper's released item list (item_subsets/*.csv); needs --advocated.
    #[arg(long, value_name = "CSV", requires = "advocated")]
    pub subset: Option<PathBuf>,
    /// The paper's released advocated wrong answers (advocated_wrong_answers/*.csv).
    #[arg(long, value_name = "CSV", requires = "subset")]
    pub advocated: Option<PathBuf>,
    /// Permute each item's options deterministically with this seed before anything else
    /// (off by default; the paper keeps dataset order, so TruthfulQA's answer is always A).
    #[arg(long, value_name = "SEED")]
    pub shuffle_options: Option<u64>,
}

/// Options of batch mode (`hyst-tui --batch` / `hyst-tui batch`).
#[derive(Debug, Args, Clone)]
pub struct BatchArgs {
    /// Model keys, comma separated (default: the default model).
    #[arg(long, value_delimiter = ',', value_name = "K1,K2")]
    pub models: Vec<String>,
    #[arg(long, value_delimiter = ',', value_name = "SPEC,...", help = format!("Dataset specs, comma separated: {DATASET_SPEC_FORMS}"))]
    pub datasets: Vec<String>,
    #[arg(long, value_delimiter = ',', value_name = "SUITE,...", help = suites_help())]
    pub suites: Vec<SuiteArg>,
    /// Run directory (default: <data dir>/runs/<name derived from the configuration>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Score at most N items per dataset (after selection and sharding).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Run shard K of N (1-based) of the run, split as --shard-by says.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    /// How --shard splits the run: `item` (items with subset_index % N == K-1 of every model x
    /// dataset pair; --limit per shard) or `model` (each shard one model only, token-balanced
    /// ranges of its items after --limit; the split `hyst-tui slurm` uses).
    #[arg(long, value_name = "item|model", default_value = "item", requires = "shard")]
    pub shard_by: ShardBy,
    /// A run plan: which suites run on which model x dataset pairs and which pairs each table
    /// pools (a TOML file, or `paper` for the bundled plan of the paper). --datasets then
    /// replaces the plan's dataset files by dataset key.
    #[arg(long, value_name = "FILE|paper", conflicts_with_all = ["models", "suites"])]
    pub plan: Option<String>,
    /// Scoring contexts over one loaded model, each scoring its own items (default: one per 8
    /// CPU cores, 1 with a GPU back-end, where --pack fills the device). --threads is divided between them. Results do not
    /// depend on it.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: Option<u16>,
    /// Requests in flight to a served model (models.toml `endpoint`), each worker taking one
    /// item's contexts in order so the server's prompt cache holds its shared prefix (default:
    /// the entry's `concurrency`, else the server's slot count where it reports one, else 4).
    /// The order of the results does not depend on it; on a server that batches requests
    /// together (llama-server with `-np` > 1, vLLM) the digits may.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub concurrency: Option<u16>,
    /// Served models: before scoring, wait up to SECONDS for each served model's server to
    /// answer (asked every 2 s), e.g. a Slurm task started beside its server job (`slurm
    /// --server-job` passes it on). Without it a server that is not there fails after the
    /// entry's retries.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=604800))]
    pub wait_for_server: Option<u64>,
    /// Rebuild the tables from the finished items every SECS seconds while the run goes on
    /// (default 30; 0: only at the end).
    #[arg(long, value_name = "SECS")]
    pub tables_every: Option<u64>,
    /// Host memory for KV-cache snapshots (prefix reuse), in MB (default: an eighth of the
    /// available memory, at most 4096).
    #[arg(long, value_name = "MB")]
    pub snapshot_mem: Option<u64>,
    /// llama.cpp sequences decoded together, each with a KV stream of its own: an item's
    /// branches go into one decode call, and one item per 16 sequences is scored at once
    /// (default 1 on a CPU: one prompt per call; 64 with a GPU back-end). Results do not depend
    /// on it on the CPU; on a GPU it is checked like prefix reuse.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub pack: Option<u32>,
    /// Print the work the run implies (pairs, suites, items, contexts, estimated tokens) without
    /// loading a model, and exit.
    #[arg(long)]
    pub dry_run: bool,
    /// After each in-process model × dataset, read out the letter lens of its items (clean,
    /// strongest pressure, R0-R6 as scored, and steering operations) into DIR/lens/.
    #[arg(long)]
    pub lens: bool,
    /// With --dry-run: print it as one JSON object.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    /// Construction-seed sensitivity: run the same configuration once per selection seed
    /// (subset draw and advocated wrong option), comma separated, in one run directory; each
    /// seed's rows carry the dataset key `<dataset>@seed<S>`.
    #[arg(long, value_delimiter = ',', value_name = "S1,S2", conflicts_with_all = ["subset", "plan"])]
    pub seeds: Vec<u64>,
    /// Answer format: `letters` (the options listed under letters, the slot measured over the
    /// letter tokens: the paper), `open` (the question asked without its options, the slot
    /// measured over the option texts as the assistant's answer; rows and tables under open/),
    /// or `both` (and tables/answer_formats comparing them).
    #[arg(long, value_name = "letters|open|both", default_value = "letters")]
    pub answers: AnswersArg,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

impl BatchArgs {
    /// The suites asked for (`all` expanded; empty = the default).
    pub fn suites(&self) -> Vec<Suite> {
        let mut v: Vec<Suite> = self
            .suites
            .iter()
            .flat_map(|s| match s.0 {
                Some(x) => vec![x],
                None => Suite::ALL.to_vec(),
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

impl SelectionArgs {
    pub fn options(&self) -> SelectionOptions {
        SelectionOptions {
            n: self.n,
            seed: self.seed,
            released: match (&self.subset, &self.advocated) {
                (Some(s), Some(a)) => Some(ReleasedLists {
                    subset: s.clone(),
                    advocated: a.clone(),
                }),
                _ => None,
            },
            shuffle_options: self.shuffle_options,
        }
    }
}

/// A suite name, or `all` (`None`). The names come from [`Suite::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuiteArg(pub Option<Suite>);

/// `--answers`: which answer formats a batch scores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum AnswersArg {
    #[default]
    Letters,
    Open,
    Both,
}

impl AnswersArg {
    pub fn formats(self) -> Vec<hyst_tui::protocol::AnswerFormat> {
        use hyst_tui::protocol::AnswerFormat;
        match self {
            AnswersArg::Letters => vec![AnswerFormat::Letters],
            AnswersArg::Open => vec![AnswerFormat::Open],
            AnswersArg::Both => vec![AnswerFormat::Letters, AnswerFormat::Open],
        }
    }
}

impl ValueEnum for SuiteArg {
    fn value_variants<'a>() -> &'a [Self] {
        static V: OnceLock<Vec<SuiteArg>> = OnceLock::new();
        V.get_or_init(|| Suite::EVERY.iter().map(|s| SuiteArg(Some(*s))).chain([SuiteArg(None)]).collect())
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Some(s) => PossibleValue::new(s.key()),
            None => PossibleValue::new("all").help(all_suites_text()),
        })
    }
}

/// An explorer screen for `snapshot --view`. The names come from [`Screen::all`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScreenArg(pub Screen);

impl ValueEnum for ScreenArg {
    fn value_variants<'a>() -> &'a [Self] {
        static V: OnceLock<Vec<ScreenArg>> = OnceLock::new();
        V.get_or_init(|| Screen::all().into_iter().map(ScreenArg).collect())
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        let mut v = PossibleValue::new(self.0.name());
        for a in self.0.aliases() {
            v = v.alias(*a);
        }
        Some(v)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List or fetch model files.
    #[command(subcommand)]
    Models(ModelsCmd),
    /// Score the answer slot of conversations given as JSON / JSONL.
    Score(ScoreArgs),
    /// Check the build and every present model, one verdict per line.
    Doctor(DoctorArgs),
    /// Benchmarks that print ratios measured in one run.
    #[command(subcommand)]
    Bench(BenchCmd),
    /// Print the message list of one condition for one item.
    Prompts(PromptsArgs),
    /// The letter lens across items: for each item, the option distribution after every layer
    /// in the clean context, under pressure and after each recovery operation; per condition,
    /// from which layer the advocated letter leads. Writes DIR/lens.jsonl, lens_depth.csv and
    /// lens.svg.
    Lens(LensArgs),
    /// Steering experiments: estimate a contamination direction from the model's own contexts,
    /// then sweep steering strength and layers on held-out items.
    #[command(subcommand)]
    Steer(SteerCmd),
    /// List every condition with a one-line description.
    Conditions,
    /// Print the selected items with their correct and advocated-wrong letters (CSV).
    Items(ItemsArgs),
    /// Run models x datasets x conditions and write the paper's tables (same as --batch).
    Batch(BatchArgs),
    /// Render a view of the explorer headlessly to .svg, .html or .txt.
    Snapshot(SnapshotArgs),
    /// Rebuild every table of a run from its stored rows (no model needed).
    Tables {
        /// The run directory.
        #[arg(long, value_name = "DIR")]
        from: PathBuf,
    },
    /// Compare a stored run with the paper's printed values: (re)writes the run's
    /// reproduction.md and reproduction.csv from its item rows (no model needed) and prints
    /// the counts.
    Compare {
        /// The run directory to set side by side with the paper's printed tables.
        #[arg(long, value_name = "RUN_DIR")]
        paper: PathBuf,
    },
    /// Combine the shards of one run into one run directory (idempotent; refuses a missing,
    /// incomplete, duplicated or mixed shard).
    Merge {
        /// Shard run directories (written by `batch --shard K/N` or `hyst-tui slurm`), a parent
        /// directory holding them (a slurm run directory: its tasks/), or a quoted glob.
        #[arg(required = true, value_name = "DIR|PARENT|GLOB")]
        dirs: Vec<PathBuf>,
        /// The merged run directory to write.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Write a Slurm job array for a batch run (one model per task, token-balanced) and its
    /// merge job; with --submit, submit them (again: only the tasks not complete).
    Slurm(SlurmArgs),
    /// Where runs stand: items done of total, contexts scored, last progress, complete, and for
    /// a slurm run each task's Slurm state. Exit status 0 only when every run is complete.
    Status {
        /// Run directories, slurm run directories (`hyst-tui slurm`), or parents of run directories.
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
    },
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    ///
    /// For example `hyst-tui completions bash > ~/.local/share/bash-completion/completions/hyst-tui`,
    /// or `hyst-tui completions zsh > ~/.zfunc/_hyst-tui` (with ~/.zfunc in $fpath).
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
}

/// `hyst-tui slurm`: the batch options of the run, and the job's.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// Array tasks: each loads one model and runs a token-balanced range of its items (at least
    /// one per model).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub tasks: u32,
    /// Slurm partition of the tasks and the merge job.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Generic resources of each task, e.g. gpu:1 (not of the merge job).
    #[arg(long, value_name = "G")]
    pub gres: Option<String>,
    /// Time limit of each job (Slurm's format, e.g. 4:00:00).
    #[arg(long, value_name = "T")]
    pub time: Option<String>,
    /// Memory of each job (Slurm's format, e.g. 16G).
    #[arg(long, value_name = "M")]
    pub mem: Option<String>,
    /// CPUs of each task (also hyst-tui's --threads when that is not given).
    #[arg(long, value_name = "C")]
    pub cpus_per_task: Option<u32>,
    /// Another sbatch option for both scripts, e.g. --sbatch-arg=--account=abc (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_arg: Vec<String>,
    /// Submit the array and the merge job with sbatch, and print their job ids.
    #[arg(long)]
    pub submit: bool,
    /// A job script that serves the run's served model (vLLM, llama-server, …): submitted first;
    /// it writes its host name to "$HYST_SERVER_HOST_FILE", the tasks start once it runs, read
    /// that host into $HYST_SERVER_HOST (for a models.toml url such as
    /// http://${HYST_SERVER_HOST}:8000/v1) and wait for the server (--wait-for-server, default
    /// 3600); a last job cancels the server once the array has ended.
    #[arg(long, value_name = "FILE")]
    pub server_job: Option<PathBuf>,
    #[command(flatten)]
    pub batch: BatchArgs,
}

#[derive(Debug, Args)]
pub struct PromptsArgs {
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
    /// Item id (default: the first selected item).
    #[arg(long, value_name = "ID")]
    pub item: Option<String>,
    /// Condition name (see `hyst-tui conditions`).
    #[arg(long, default_value = ids::ORDINARY_RESET, value_name = "NAME")]
    pub condition: String,
    /// With a model: run the ramp for real (the assistant letters are the model's), and print
    /// the rendered template text and token count.
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    /// Print the item, condition, letters and messages (with --model also the rendered prompt)
    /// as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}


#[derive(Debug, Args)]
pub struct ItemsArgs {
    #[arg(long, default_value = "sample", value_name = "SPEC", help = dataset_help())]
    pub dataset: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

#[derive(Debug, Subcommand)]
pub enum ModelsCmd {
    /// Every model in models.toml: key, present?, size, sha256 check.
    List {
        /// Skip hashing (faster; shows presence and size only).
        #[arg(long)]
        no_verify: bool,
    },
    /// Download / assemble model files and verify their sha256 (idempotent).
    ///
    /// Hugging Face files are downloaded into the hub cache ($HF_HUB_CACHE, else $HF_HOME/hub,
    /// else ~/.cache/huggingface/hub) from $HF_ENDPOINT (default https://huggingface.co) and
    /// linked into the models directory (a hard link, else a symlink; never a second copy). A
    /// download that breaks off resumes where it stopped, in this run or the next.
    Fetch {
        /// Model keys from models.toml, one or more (see `hyst-tui models list`).
        #[arg(required = true, value_name = "KEY")]
        keys: Vec<String>,
        /// Resume a download that breaks off up to N times in this run (the next run resumes it
        /// too).
        #[arg(long, value_name = "N", default_value_t = 3)]
        retries: u32,
    },
    /// Print the models directory.
    Dir,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Model key from models.toml (default: the config's default_model).
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    /// A .json file with one conversation ([{"role":..,"content":..}, ...]) or a .jsonl file with
    /// one conversation per line (an array, or {"messages": [...], "letters": "A,B,C"}).
    #[arg(long, value_name = "FILE")]
    pub messages: PathBuf,
    /// Option letters to score, comma separated (default A,B,C,D).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    pub letters: Option<Vec<char>>,
    /// Print one JSON object per conversation.
    #[arg(long)]
    pub json: bool,
    /// Also print the model's greedy continuation at the answer slot, up to N tokens (1-4096;
    /// not with --steer: a continuation is never steered).
    #[arg(long, value_name = "N", conflicts_with = "steer")]
    pub generate: Option<usize>,
    /// Also read the letter lens: the option distribution after every layer (with --json, a
    /// `lens` list per output line, layer 0 first).
    #[arg(long)]
    pub lens: bool,
    #[command(flatten)]
    pub steering: SteeringArgs,
}

/// `FIRST-LAST` or `N` (a range of layers, inclusive).
fn parse_layer_range(s: &str) -> Result<(usize, usize), String> {
    hyst_tui::dialogue::recipe::parse_layer_range(s)
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check only this model (default: every present model).
    #[arg(long, value_name = "KEY")]
    pub model: Option<String>,
    /// Compare llama.cpp's tokenization with this Hugging Face tokenizer.json (needs --model).
    #[arg(long, value_name = "TOKENIZER_JSON", requires = "model")]
    pub hf_tokenizer: Option<PathBuf>,
}

