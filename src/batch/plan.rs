//! Batch planning: from what the user asked for (a [`BatchRequest`]) to a validated
//! [`BatchPlan`] — models checked against models.toml, dataset specs parsed, suites resolved,
//! the run directory named. The CLI and the explorer both plan through [`plan`].

use std::path::PathBuf;
use std::str::FromStr;

use anyhow::{bail, Result};
use sha2::{Digest, Sha256};

use crate::config::{data_dir, ModelsConfig};
use crate::data::{DatasetSpec, SelectionOptions};
use crate::dialogue::conditions::Registry;
use crate::dialogue::recipe::ExperimentSource;
use crate::dialogue::Suite;
use crate::engine::EngineOptions;
use crate::prompts::PromptSet;
use crate::protocol::AnswerFormat;
use crate::store::{RunConfig, SCORING_SETTINGS};

pub use super::runplan::RunPlan;

/// Shard `k` of `n` (1-based): a run holds the items with `subset_index % n == k - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl FromStr for Shard {
    type Err = String;
    /// Parses `K/N`, e.g. `2/8`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s.split_once('/').ok_or_else(|| format!("{s:?}: expected K/N, e.g. 2/8"))?;
        let num = |x: &str| x.trim().parse::<usize>().map_err(|_| format!("{s:?}: expected K/N with whole numbers, e.g. 2/8"));
        let (k, n) = (num(k)?, num(n)?);
        if n == 0 || k == 0 || k > n {
            return Err(format!("{s:?}: need 1 <= K <= N"));
        }
        Ok(Shard { k, n })
    }
}

/// What to run, as the user asked for it (empty lists mean the defaults).
#[derive(Clone, Debug, Default)]
pub struct BatchRequest {
    /// Model keys (default: the config's default model).
    pub models: Vec<String>,
    /// Dataset specs (default: `sample`).
    pub datasets: Vec<String>,
    /// Suites (default: the hierarchy).
    pub suites: Vec<Suite>,
    pub selection: SelectionOptions,
    /// Run directory (default: derived from the configuration under the data directory).
    pub out: Option<PathBuf>,
    /// At most this many items per dataset (after selection; by-item shards: after sharding).
    pub limit: Option<usize>,
    pub shard: Option<Shard>,
    /// How `shard` splits the run (`batch::shard`).
    pub shard_by: super::shard::ShardBy,
    /// The shared score store: a file, `off`, or `None` for `$HYST_SCORE_STORE` / the default.
    pub score_store: Option<String>,
    /// A run plan (`--plan`): it sets the models, datasets and per-pair suites, and which pairs
    /// each table pools; `datasets` then only replaces the plan's dataset specs by key.
    pub plan: Option<RunPlan>,
    /// Scoring contexts (`None`: [`default_workers`]).
    pub workers: Option<usize>,
    /// Requests in flight to a served model (`None`: its entry's `concurrency`, else the
    /// server's slot count, else 4).
    pub concurrency: Option<usize>,
    /// Seconds between rebuilds of the tables while the run goes on (`None`: 30; 0: only at
    /// the end).
    pub tables_every: Option<u64>,
    /// Several selection seeds in one run (construction-seed sensitivity); empty = `selection.seed`.
    pub seeds: Vec<u64>,
    /// `--allow-inexact-reuse`: keep prefix reuse on a GPU back-end where it is not bit-exact.
    pub allow_inexact_reuse: bool,
    /// The user's experiment files (`--experiment`, then the run plan's): their operations and
    /// ramps join the run's conditions, and its manifest records them.
    pub experiments: Vec<ExperimentSource>,
    /// The answer formats to score (`--answers`; empty = letters).
    pub answers: Vec<AnswerFormat>,
    /// `--prompts DIR`: where the open-answer overrides are looked for (`DIR/open.toml`).
    pub prompts_dir: Option<PathBuf>,
}

/// A validated batch run.
#[derive(Clone)]
pub struct BatchPlan {
    pub config: RunConfig,
    pub dataset_specs: Vec<String>,
    pub out: PathBuf,
    pub prompts: PromptSet,
    /// The open-answer form of `prompts`, when the run scores open answers.
    pub open_prompts: Option<PromptSet>,
    pub engine: EngineOptions,
    pub command_line: String,
    /// The score store shared by every run (`store::shared`); `None` = do not use one.
    pub shared_store: Option<PathBuf>,
    /// Scoring contexts over one loaded model, each on its own items (results do not depend
    /// on it).
    pub workers: usize,
    /// Requests in flight to a served model (`None`: see [`BatchRequest::concurrency`]).
    pub concurrency: Option<usize>,
    /// How often tables are rebuilt from the finished items while the run goes on (zero: only
    /// at the end).
    pub tables_every: std::time::Duration,
    /// What to do where prefix reuse is not bit-exact (checked per model on a GPU back-end).
    pub reuse_policy: crate::engine::exactness::ReusePolicy,
    /// Record every KV operation of the engines into the summary (`bench`'s matched anchor).
    pub record_kv: bool,
    /// The run's conditions: the built-in ones and those of its experiment files.
    pub registry: &'static Registry,
    /// The steering of the run's steered operations (experiment files), by condition key.
    pub steerings: super::steered::Steerings,
    /// `--lens`: after each in-process pair, read out the letter lens of its items (`lens/`).
    pub lens: bool,
}

impl BatchPlan {
    /// The prompt set of each answer format the run scores, with its fingerprint, in the
    /// configuration's order.
    pub(crate) fn format_prompts(&self) -> Vec<(&PromptSet, String)> {
        let cfg = &self.config;
        cfg.answers
            .iter()
            .map(|f| match (f, &self.open_prompts) {
                (AnswerFormat::Open, Some(p)) => (p, cfg.open_prompts_fingerprint.clone().unwrap_or_default()),
                _ => (&self.prompts, cfg.prompts_fingerprint.clone()),
            })
            .collect()
    }
}

/// Workers when `--workers` is not given: on a CPU, one per 8 cores (llama.cpp's threads stop
/// scaling long before many cores run out); with a GPU back-end, one: its context packs
/// [`default_pack`] sequences into each decode call, which keeps the device busy without a KV
/// cache per worker.
pub(crate) fn default_workers() -> usize {
    if cfg!(any(feature = "cuda", feature = "metal", feature = "vulkan")) {
        1
    } else {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / 8).max(1)
    }
}

/// Sequences decoded together when `--pack` is not given: one on a CPU, where a call of one
/// prompt's suffix already keeps the cores busy; 64 with a GPU back-end, where it does not.
pub fn default_pack() -> u32 {
    if cfg!(any(feature = "cuda", feature = "metal", feature = "vulkan")) {
        64
    } else {
        1
    }
}

/// Checks a request against the models config and resolves its defaults.
pub fn plan(
    models: &ModelsConfig,
    req: &BatchRequest,
    prompts: PromptSet,
    engine: EngineOptions,
    command_line: String,
) -> Result<BatchPlan> {
    let registry = Registry::with_experiments(&req.experiments)?;
    let mut run_plan = req.plan.clone();
    let (model_keys, datasets, mut suites, n, seed) = match &mut run_plan {
        Some(p) => {
            if !req.models.is_empty() || !req.suites.is_empty() {
                bail!("--plan {} sets the models and suites; drop --models/--suites", p.name);
            }
            p.override_datasets(&req.datasets)?;
            let used: Vec<String> = p
                .datasets
                .iter()
                .filter(|(k, _)| p.pairs.iter().any(|x| x.dataset == *k))
                .map(|(_, spec)| spec.clone())
                .collect();
            (p.models(), used, p.suites(), req.selection.n.or(p.n), p.seed.unwrap_or(req.selection.seed))
        }
        None => (
            if req.models.is_empty() { vec![models.default_model.clone()] } else { req.models.clone() },
            if req.datasets.is_empty() { vec!["sample".to_string()] } else { req.datasets.clone() },
            if req.suites.is_empty() { vec![Suite::Hierarchy] } else { req.suites.clone() },
            req.selection.n,
            req.selection.seed,
        ),
    };
    for m in &model_keys {
        models.get(m)?;
    }
    let gpu_layers = run_gpu_layers(models, &model_keys, &engine)?;
    let mut engine = engine;
    engine.gpu_layers = Some(gpu_layers);
    let mut dataset_keys = Vec::new();
    for d in &datasets {
        dataset_keys.push(DatasetSpec::parse(d)?.key());
    }
    suites.sort();
    suites.dedup();
    let mut seeds = req.seeds.clone();
    seeds.dedup();
    if seeds.len() == 1 {
        bail!("--seeds needs two or more seeds (one seed is --seed {})", seeds[0]);
    }
    let seed = seeds.first().copied().unwrap_or(seed);
    let sel = &req.selection;
    let mut answers: Vec<AnswerFormat> = if req.answers.is_empty() { vec![AnswerFormat::Letters] } else { req.answers.clone() };
    answers.sort();
    answers.dedup();
    let open_prompts = if answers.contains(&AnswerFormat::Open) { Some(prompts.open_form(req.prompts_dir.as_deref())?) } else { None };
    if let (Some(_), Some(m)) = (&open_prompts, model_keys.iter().find(|m| models.get(m).is_ok_and(|e| e.endpoint.is_some()))) {
        bail!(
            "model `{m}` is served: open answers are scored from the log-probability of every token of each option text, which hyst-tui does not yet ask a server for; score it with --answers letters, or an in-process GGUF"
        );
    }
    let config = RunConfig {
        models: model_keys,
        datasets: datasets.clone(),
        n,
        seed,
        subset_csv: sel.released.as_ref().map(|r| r.subset.display().to_string()),
        advocated_csv: sel.released.as_ref().map(|r| r.advocated.display().to_string()),
        suites,
        limit: req.limit,
        shard: req.shard.map(|s| (s.k, s.n)),
        shard_by: if req.shard.is_some() { req.shard_by } else { Default::default() },
        shuffle_options: sel.shuffle_options,
        prompts_fingerprint: prompts.fingerprint(),
        scoring_settings: SCORING_SETTINGS.into(),
        provenance: crate::engine::provenance::provenance(gpu_layers),
        plan: run_plan,
        experiments: registry.user_experiments().to_vec(),
        seeds,
        open_prompts_fingerprint: open_prompts.as_ref().map(|p| p.fingerprint()),
        answers,
    };
    let out = match &req.out {
        Some(o) => o.clone(),
        None => default_run_dir(&config, &dataset_keys),
    };
    let conds = super::item::conditions_for(registry, &config.suites);
    let steered = super::steered::steered_keys(&conds);
    if let (Some(first), Some(m)) = (steered.first(), config.models.iter().find(|m| models.get(m).is_ok_and(|e| e.endpoint.is_some()))) {
        bail!(
            "model `{m}` is served: operation `{first}` steers the residual stream with a control vector, which only an in-process llama.cpp model can do; leave the steered operations out or score an in-process model"
        );
    }
    let steerings = super::steered::load(registry, &conds, &out)?;
    Ok(BatchPlan {
        lens: false,
        steerings,
        config,
        dataset_specs: datasets,
        out,
        prompts,
        open_prompts,
        engine,
        command_line,
        shared_store: crate::store::shared::configured_path(req.score_store.as_deref()),
        workers: req.workers.unwrap_or_else(default_workers).max(1),
        concurrency: req.concurrency,
        tables_every: std::time::Duration::from_secs(req.tables_every.unwrap_or(30)),
        reuse_policy: if req.allow_inexact_reuse {
            crate::engine::exactness::ReusePolicy::AllowInexact
        } else {
            crate::engine::exactness::ReusePolicy::FallBackToScratch
        },
        record_kv: false,
        registry,
    })
}

/// The one offload of a run (its scores have one numeric provenance): `--gpu-layers`, else the
/// models' `gpu_layers` in models.toml when they agree (on the CPU it does not matter).
fn run_gpu_layers(models: &ModelsConfig, keys: &[String], engine: &EngineOptions) -> Result<u32> {
    let mut per: Vec<(String, u32)> = Vec::new();
    for k in keys {
        per.push((k.clone(), engine.gpu_layers_for(models.get(k)?)));
    }
    let first = per.first().map_or_else(crate::engine::default_gpu_layers, |p| p.1);
    if per.iter().any(|p| p.1 != first) && per.iter().any(|p| crate::engine::provenance::on_gpu(p.1)) {
        let list: Vec<String> = per.iter().map(|(k, n)| format!("{k}: {n}")).collect();
        bail!(
            "the models of this run offload different numbers of layers ({}; models.toml gpu_layers), but one run has one numeric provenance: give --gpu-layers N, or run them separately",
            list.join(", ")
        );
    }
    Ok(first)
}

/// `<data dir>/runs/<models>__<datasets>__<hash of the configuration>`: the same configuration
/// always lands in the same directory, so rerunning a command resumes its run.
fn default_run_dir(config: &RunConfig, dataset_keys: &[String]) -> PathBuf {
    let h = hex::encode(Sha256::digest(serde_json::to_string(config).expect("config serialises").as_bytes()));
    let name = format!("{}__{}__{}", config.models.join("+"), dataset_keys.join("+"), &h[..10]);
    data_dir().join("runs").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parses_k_of_n() {
        assert_eq!("2/8".parse::<Shard>(), Ok(Shard { k: 2, n: 8 }));
        assert_eq!(" 1 / 1 ".parse::<Shard>(), Ok(Shard { k: 1, n: 1 }));
        for bad in ["0/3", "4/3", "1/0", "2", "a/b", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
