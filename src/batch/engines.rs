//! Starting a model's engines for a batch, and shutting them down: the in-process workers (after
//! the GPU exactness checks that decide their options) or a served model's workers (checked
//! against the server of an earlier start), the KV operations `bench batch` records, and each
//! in-process engine's report.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};

use super::{model_sha256, BatchEvent, BatchObserver, BatchPlan};
use crate::config::{models_dir, ModelEntry, ModelsConfig};
use crate::engine::Engine;
use crate::store::Manifest;

/// The engines of one model in a batch, with what its scores record.
pub(super) struct ModelEngines<'m> {
    model: &'m ModelEntry,
    /// One per worker (in-process) or per request in flight (served).
    pub workers: Vec<Engine>,
    /// The model file's sha256 (a served model: what its server reports).
    pub sha: String,
    /// The numeric provenance of its scores: the build's, or the server's.
    pub provenance: String,
}

impl<'m> ModelEngines<'m> {
    /// Starts `model`'s engines: a served model's workers, checked against the server that
    /// scored this run before (recorded in the manifest); or the in-process workers, with the
    /// options the GPU exactness checks leave ([`options_after_gpu_checks`]).
    pub fn start(
        model: &'m ModelEntry,
        plan: &BatchPlan,
        served_before: &BTreeMap<String, crate::store::run_dir::ServedRecord>,
        manifest: &mut Manifest,
        observer: &mut dyn BatchObserver,
    ) -> Result<Self> {
        let out = &plan.out;
        let path = model.path(&models_dir());
        let (workers, sha, provenance) = if model.endpoint.is_some() {
            observer.event(BatchEvent::ModelLoading { model: &model.key });
            let engines = Engine::start_served_workers(model, &path, plan.engine.clone(), plan.concurrency)
                .map_err(|e| anyhow::anyhow!("model `{}`: {e}", model.key))?;
            let s = engines[0].info().served.clone().expect("a served engine reports its server");
            check_served(out, &model.key, &s, served_before.get(&model.key))?;
            manifest.served.insert(model.key.clone(), served_record(&s, engines.len()));
            manifest.write(out)?;
            (engines, s.model_sha256, s.provenance)
        } else {
            let sha = model_sha256(model, &path)?;
            observer.event(BatchEvent::ModelLoading { model: &model.key });
            let opts = options_after_gpu_checks(model, &path, plan, manifest, observer)?;
            let engines = Engine::start_workers(model, &path, opts, plan.workers).with_context(|| format!("model `{}`", model.key))?;
            if !plan.steerings.is_empty() {
                let shape = engines[0].shape().map_err(|e| anyhow::anyhow!("model `{}`: {e}", model.key))?;
                if let Err(e) = super::steered::check_fits(&plan.steerings, &model.key, shape) {
                    for e in engines {
                        e.shutdown();
                    }
                    return Err(e);
                }
            }
            (engines, sha, plan.config.provenance.clone())
        };
        Ok(ModelEngines { model, workers, sha, provenance })
    }

    /// Before a pair: the first worker starts recording its KV operations when the plan asks
    /// for them (`bench batch`).
    pub fn record_kv(&self, plan: &BatchPlan) -> Result<()> {
        if plan.record_kv {
            self.workers[0].record_kv(true)?;
        }
        Ok(())
    }

    /// Shuts the engines down; an in-process model's report (with its recorded KV operations)
    /// comes back.
    pub fn shut_down(self, plan: &BatchPlan) -> Result<Option<EngineReport>> {
        let report = if self.model.endpoint.is_none() {
            let ops = if plan.record_kv { self.workers[0].record_kv(false)? } else { Vec::new() };
            Some(EngineReport::of(&self.model.key, &self.workers[0], ops))
        } else {
            None
        };
        for e in self.workers {
            e.shutdown();
        }
        Ok(report)
    }
}

/// An in-process engine's clocks and counters at the end of its model's items
/// ([`crate::engine::EngineStats`]), and its KV operations when the plan recorded them.
#[derive(Clone, Debug, Default)]
pub struct EngineReport {
    pub model: String,
    /// Seconds in each of [`crate::engine::SCORING_PHASES`].
    pub phases: Vec<f64>,
    /// Seconds the worker spent in jobs.
    pub busy: f64,
    pub decode_calls: u64,
    pub decode_tokens: u64,
    pub pad_tokens: u64,
    pub kv_ops: Vec<crate::engine::KvOp>,
}

impl EngineReport {
    fn of(model: &str, engine: &Engine, kv_ops: Vec<crate::engine::KvOp>) -> EngineReport {
        let st = &engine.stats;
        let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        EngineReport {
            model: model.to_string(),
            phases: st.phase_nanos.iter().map(|n| load(n) as f64 / 1e9).collect(),
            busy: load(&st.busy_micros) as f64 / 1e6,
            decode_calls: load(&st.decode_calls),
            decode_tokens: load(&st.decode_tokens),
            pad_tokens: load(&st.pad_tokens),
            kv_ops,
        }
    }
}

/// Every model file is there (a present, GGUF-looking file), or one error line with the fix.
/// A served model needs only what renders its prompts here: its GGUF when it names one, its
/// tokenizer directory when it names one (the server itself is asked when the run reaches it).
pub fn check_model_files(models: &ModelsConfig, keys: &[String]) -> Result<()> {
    for mkey in keys {
        let model = models.get(mkey)?;
        if let Some(ep) = &model.endpoint {
            if let Some(dir) = &ep.tokenizer_dir {
                for f in ["tokenizer.json", "tokenizer_config.json"] {
                    if !dir.join(f).is_file() {
                        bail!("model `{}`: {} has no {f} (endpoint `tokenizer_dir`)", model.key, dir.display());
                    }
                }
            }
            if !(model.has_file() && ep.api.sends_tokens()) {
                continue;
            }
        }
        crate::engine::model::check_model_file(Some(&model.key), &model.path(&models_dir()))
            .map_err(|e| anyhow::anyhow!("model `{}`: {e}", model.key))?;
    }
    Ok(())
}

/// The engine options for `model`: on a GPU back-end with prefix reuse on, the reuse is checked
/// first (`engine::exactness`); where it is not bit-exact the model is scored from scratch, or
/// (`--allow-inexact-reuse`) with reuse and the deviation noted. Packed decoding (`--pack` above
/// 1) is checked the same way, and turned off where it is not exact. The checks go into the
/// manifest either way. On the CPU nothing is checked (both are exact with this build's
/// settings; `doctor` and tests/engine.rs show it).
fn options_after_gpu_checks(
    model: &ModelEntry,
    path: &Path,
    plan: &BatchPlan,
    manifest: &mut Manifest,
    observer: &mut dyn BatchObserver,
) -> Result<crate::engine::EngineOptions> {
    use crate::engine::exactness::{pack_check, reuse_check};
    use crate::store::run_dir::ReuseRecord;
    let mut opts = plan.engine.clone();
    let checks_reuse = opts.cache;
    let checks_pack = opts.pack > 1;
    if !(checks_reuse || checks_pack) || !crate::engine::provenance::on_gpu(opts.gpu_layers_for(model)) {
        return Ok(opts);
    }
    let probe = Engine::start(model, path, opts.clone()).with_context(|| format!("model `{}`", model.key))?;
    let checks = (|| {
        let reuse = if checks_reuse { Some(reuse_check(&probe).with_context(|| format!("model `{}`: the prefix-reuse check", model.key))?) } else { None };
        let pack = if checks_pack { Some(pack_check(&probe).with_context(|| format!("model `{}`: the packed-decoding check", model.key))?) } else { None };
        anyhow::Ok((reuse, pack))
    })();
    probe.shutdown();
    let (reuse, pack) = checks?;
    let mut note = |n: Option<String>| {
        if let Some(n) = n {
            let msg = format!("{}: {n}", model.key);
            tracing::warn!("{msg}");
            observer.event(BatchEvent::Notice { message: &msg });
        }
    };
    if let Some(check) = reuse {
        let (scratch, n) = check.decide(plan.reuse_policy);
        note(n);
        let scoring = if scratch { "from scratch" } else { "prefix reuse" };
        manifest.reuse_checks.insert(model.key.clone(), ReuseRecord { max_abs_dp: check.max_abs_dp, identical: check.identical, scoring: scoring.into() });
        if scratch {
            opts.cache = false;
        }
    }
    if let Some(check) = pack {
        let (off, n) = check.decide_pack(plan.reuse_policy);
        note(n);
        let scoring = if off { "one prompt per call" } else { "packed" };
        manifest.pack_checks.insert(model.key.clone(), ReuseRecord { max_abs_dp: check.max_abs_dp, identical: check.identical, scoring: scoring.into() });
        if off {
            opts.pack = 1;
        }
    }
    manifest.write(&plan.out)?;
    Ok(opts)
}

/// The served-model records of the run directory's manifest (none when there is none).
pub(super) fn previous_served(dir: &Path) -> BTreeMap<String, crate::store::run_dir::ServedRecord> {
    Manifest::read(dir).map(|m| m.served).unwrap_or_default()
}

/// The manifest's record of a served model.
fn served_record(s: &crate::engine::served::ServedInfo, concurrency: usize) -> crate::store::run_dir::ServedRecord {
    crate::store::run_dir::ServedRecord {
        api: s.api.clone(),
        url: s.url.clone(),
        model: s.model.clone(),
        reported: s.reported.clone(),
        prompt_source: s.prompt_source.clone(),
        top_k: s.top_k,
        letters: s.letters.clone(),
        concurrency,
        provenance: s.provenance.clone(),
        contexts: 0,
        bounded: 0,
        prediction_not_fixed: 0,
    }
}

/// A served model's scores in a run directory all come from one server: a resume (or another
/// start) whose server reports another identity is refused.
fn check_served(dir: &Path, key: &str, now: &crate::engine::served::ServedInfo, before: Option<&crate::store::run_dir::ServedRecord>) -> Result<()> {
    match before {
        Some(b) if b.provenance != now.provenance => bail!(
            "{}: model `{key}` was scored through another server or setting, whose scores cannot be mixed with this one's: stored: {}; now: {} (use another --out, or the server that made them)",
            dir.display(),
            b.provenance,
            now.provenance
        ),
        _ => Ok(()),
    }
}

