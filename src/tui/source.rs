//! What the explorer opens: a stored batch run (its items, every model's stored scores, the
//! rows it skipped, a notice saying what is shown) or a dataset to score.

use anyhow::{bail, Result};

use super::action::Action;
use super::keymap::key_for;
use super::item_scores::ItemScores;
use super::screen::View;
use super::setup::AppConfig;
use super::stored_run::{self, RowProblem};
use crate::data::{load_selection, DatasetSpec, Selected};
use crate::dialogue::conditions::Registry;
use crate::store::run_dir::runs_registry;

/// The run or dataset the explorer shows.
pub(crate) struct Source {
    /// Its conditions: the built-in ones and those of the run's and the user's experiment files.
    pub(crate) reg: &'static Registry,
    /// The dataset's name in the status bar.
    pub(crate) label: String,
    /// The dataset spec a batch started with `b` runs on.
    pub(crate) spec: String,
    /// Rows of the stored run that were skipped, and items left out.
    pub(crate) problems: Vec<RowProblem>,
}

/// What [`open`] found.
pub(crate) struct Opened {
    pub(crate) source: Source,
    pub(crate) items: Vec<Selected>,
    /// A stored run's scores (every model's), else none.
    pub(crate) scores: ItemScores,
    /// The model shown first.
    pub(crate) model_key: String,
    /// The models of the stored run (empty without one).
    pub(crate) stored_models: Vec<String>,
    /// What the status line says first.
    pub(crate) notice: Option<String>,
}

/// Opens the stored run of `cfg.run` (under the conditions of the experiment files its
/// manifest records and `cfg.experiments`), else the dataset of `cfg.dataset` (default
/// `sample`) with the configured model (under `cfg.experiments`).
pub(crate) fn open(cfg: &AppConfig) -> Result<Opened> {
    let Some(dir) = &cfg.run else {
        let reg = Registry::with_experiments(&cfg.experiments)?;
        let spec = cfg.dataset.clone().unwrap_or_else(|| "sample".into());
        let items = load_selection(&spec, &cfg.batch.selection)?;
        if items.is_empty() {
            bail!("dataset {spec}: no items");
        }
        return Ok(Opened {
            source: Source { reg, label: DatasetSpec::parse(&spec)?.key(), spec, problems: Vec::new() },
            items,
            scores: ItemScores::new(reg),
            model_key: cfg.models.get(cfg.model.as_deref().unwrap_or(&cfg.models.default_model))?.key.clone(),
            stored_models: Vec::new(),
            notice: None,
        });
    };
    let reg = runs_registry(&[dir.clone()], &cfg.experiments)?;
    let run = stored_run::load_run(dir, cfg.model.as_deref(), reg)?;
    let mut scores = ItemScores::new(reg);
    for (model, id, part, s) in run.scores {
        scores.insert(&model, &id, part, s);
    }
    for p in &run.problems {
        tracing::warn!("stored run: skipped {p}");
    }
    let tables = key_for(Action::ShowView(View::Tables));
    let notice = match run.problems.first() {
        None if run.being_written.is_some() => {
            let (pid, total) = run.being_written.clone().unwrap_or_default();
            format!(
                "a batch (pid {pid}) is still writing this run: {}{} items shown; reopen it ({tables}: Runs, {}) for more",
                run.items.len(),
                total.map(|t| format!(" of {t}")).unwrap_or_default(),
                key_for(Action::OpenSelectedRun)
            )
        }
        None if cfg.newest_run => format!("the newest run of the data directory ({tables}: every run; --dataset sample scores instead)"),
        None => format!("browsing a stored run ({}: load a model to score more)", key_for(Action::OpenModels)),
        Some(p) => format!("{} (all {} in the log)", p.short(), run.problems.len()),
    };
    Ok(Opened {
        source: Source { reg, label: run.dataset, spec: cfg.dataset.clone().unwrap_or_else(|| "sample".into()), problems: run.problems },
        items: run.items,
        scores,
        model_key: run.model_key,
        stored_models: run.models,
        notice: Some(notice),
    })
}
