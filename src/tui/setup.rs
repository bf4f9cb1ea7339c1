//! What the explorer is started with: [`AppConfig`] (models, engine options, prompts, the model,
//! dataset or stored run, the shared score store, a batch's template) and the behaviour
//! switches of [`AppOptions`].

use std::path::PathBuf;

use super::theme::Theme;
use crate::batch::BatchRequest;
use crate::dialogue::recipe::ExperimentSource;
use crate::config::ModelsConfig;
use crate::engine::EngineOptions;
use crate::prompts::PromptSet;

/// Behaviour switches (tests and screenshots freeze the status bar and turn prefetch off).
#[derive(Clone, Copy, Debug)]
pub struct AppOptions {
    /// No timings, no tokens/s, no spinner: the screen depends only on the data.
    pub frozen: bool,
    /// Score other items in the background once the current one is done.
    pub prefetch: bool,
    /// Prefetch only the first N items of the list (0 = all).
    pub prefetch_window: usize,
    pub color: bool,
}

impl Default for AppOptions {
    fn default() -> Self {
        AppOptions {
            frozen: false,
            prefetch: true,
            prefetch_window: 0,
            color: Theme::from_env().color,
        }
    }
}

/// Everything the explorer is started with.
#[derive(Clone)]
pub struct AppConfig {
    pub models: ModelsConfig,
    pub engine: EngineOptions,
    pub prompts: PromptSet,
    /// Model key (default: the config's default model).
    pub model: Option<String>,
    /// Models compared with it from the start (keys of models.toml or of the stored run).
    pub compare: Vec<String>,
    /// Dataset spec (default: `sample`).
    pub dataset: Option<String>,
    /// Browse this stored batch run instead of scoring.
    pub run: Option<PathBuf>,
    /// The directory whose runs the Tables view lists (Enter opens one); `None` = no Runs pane
    /// (what [`AppConfig::new`] chooses; the binary passes `config::runs_dir`).
    pub runs_dir: Option<PathBuf>,
    /// `run` was not asked for but is the newest run of `runs_dir` (`hyst-tui` without flags):
    /// if it cannot be read the explorer scores the default dataset instead.
    pub newest_run: bool,
    /// The score store shared with every run (`store::shared`): scores found there are never
    /// computed, and every score computed here is added to it. `None` = none (what
    /// [`AppConfig::new`] chooses; the binary passes `store::shared::configured_path`).
    pub score_store: Option<PathBuf>,
    /// The item selection, and the template of a batch started with `b` (its models, datasets
    /// and suites are replaced by the explorer's model, dataset and the hierarchy; its score
    /// store by the explorer's).
    pub batch: BatchRequest,
    /// The command line recorded in the manifest of a batch started with `b`.
    pub command_line: String,
    /// The user's experiment files (`--experiment`): their operations join those of every run
    /// opened (each run adds the files its manifest records).
    pub experiments: Vec<ExperimentSource>,
    pub options: AppOptions,
    /// The steering setting `T` toggles on a step as a what-if (`--steer`), if any.
    pub steering: Option<crate::engine::inside::Steering>,
    /// The control-vector file of `steering` (what `S` in the Slot view writes into the
    /// experiment file it saves).
    pub steer_file: Option<std::path::PathBuf>,
}

impl AppConfig {
    /// The bundled prompts, default engine options and selection, the default model on `sample`,
    /// no shared score store, nothing compared.
    pub fn new(models: ModelsConfig) -> AppConfig {
        AppConfig {
            models,
            engine: EngineOptions::default(),
            prompts: PromptSet::bundled(),
            model: None,
            compare: Vec::new(),
            dataset: None,
            run: None,
            runs_dir: None,
            newest_run: false,
            score_store: None,
            batch: BatchRequest::default(),
            command_line: "hyst-tui (explorer)".into(),
            experiments: Vec::new(),
            options: AppOptions::default(),
            steering: None,
            steer_file: None,
        }
    }
}

