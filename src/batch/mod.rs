//! Batch mode: models × datasets × conditions, resumable, with a durable store.
//!
//! For each model, dataset and selected item: run the self-conditioned ramp(s), build every
//! condition of the requested suites, and score each context through [`CachedScorer`], which
//! looks up the content-addressed score cache first. The item's new scores are appended (one
//! write + fsync) before the next item starts, so an interruption loses at most the item in
//! flight and a rerun recomputes nothing it already has.

pub mod progress;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::{ModelEntry, ModelsConfig};
use crate::data::selection::{from_released_csvs, select, shuffle_options};
use crate::data::{DatasetSpec, Item, Selected};
use crate::dialogue::conditions::{self, build, Condition, Kind};
use crate::dialogue::{run_ramp, Builder, Control, DialogueItem, Suite};
use crate::engine::{ChatMessage, Engine, EngineError, EngineOptions, Scorer, SlotScore};
use crate::prompts::PromptSet;
use crate::store::rows::{letter_map_json, score_key};
use crate::store::{write_atomic, ItemRow, ScoreCache, ScoreRow, SCORING_SETTINGS};

/// Everything that determines a batch run's rows (the manifest's `config`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub models: Vec<String>,
    pub datasets: Vec<String>,
    pub n: Option<usize>,
    pub seed: u64,
    pub subset_csv: Option<String>,
    pub advocated_csv: Option<String>,
    pub suites: Vec<Suite>,
    pub limit: Option<usize>,
    /// (k, n): this run holds items with `subset_index % n == k - 1`.
    pub shard: Option<(usize, usize)>,
    pub shuffle_options: Option<u64>,
    pub prompts_fingerprint: String,
    pub scoring_settings: String,
}

impl RunConfig {
    /// The configuration without the shard (what shards of one run must share).
    pub fn without_shard(&self) -> RunConfig {
        RunConfig {
            shard: None,
            ..self.clone()
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub tool: String,
    pub version: String,
    pub config: RunConfig,
    pub started: String,
    pub finished: Option<String>,
    pub command_line: String,
    pub items_done: usize,
    pub items_total: usize,
    pub complete: bool,
}

/// A scorer that consults the score cache before the engine; new scores are collected in
/// `pending` until the item is committed.
pub struct CachedScorer<'a> {
    pub engine: &'a Engine,
    pub cache: &'a ScoreCache,
    pub model_key: String,
    pub model_sha256: String,
    pub pending: Vec<ScoreRow>,
    pub hits: usize,
    pub misses: usize,
    /// Rows used for each prompt hash in this item (cache hits and new scores).
    pub used: BTreeMap<String, ScoreRow>,
    /// When set, the token ids of every newly scored context are kept here (benchmarks).
    pub record_tokens: Option<Vec<Vec<i32>>>,
}

impl<'a> CachedScorer<'a> {
    pub fn new(engine: &'a Engine, cache: &'a ScoreCache, model: &ModelEntry, sha: &str) -> Self {
        Self {
            engine,
            cache,
            model_key: model.key.clone(),
            model_sha256: sha.to_string(),
            pending: Vec::new(),
            hits: 0,
            misses: 0,
            used: BTreeMap::new(),
            record_tokens: None,
        }
    }

    /// Scores `messages`, returning the stored row (from cache, this item, or the engine).
    pub fn score_row(&mut self, messages: &[ChatMessage], letters: &[char]) -> Result<ScoreRow, EngineError> {
        let prepared = self.engine.prepare(messages)?;
        let hash = crate::engine::worker::hash_tokens(&prepared.tokens);
        let letters_s: String = letters.iter().collect();
        let key = score_key(&self.model_sha256, &hash, &letters_s);
        if let Some(r) = self.cache.get(&key).or_else(|| self.pending.iter().find(|r| r.key == key)) {
            self.hits += 1;
            let r = r.clone();
            self.used.insert(key, r.clone());
            return Ok(r);
        }
        let s = self.engine.score(messages, letters)?;
        self.misses += 1;
        if let Some(rec) = &mut self.record_tokens {
            rec.push(prepared.tokens);
        }
        let row = ScoreRow::from_score(&self.model_key, &self.model_sha256, &s);
        debug_assert_eq!(row.key, key);
        self.pending.push(row.clone());
        self.used.insert(key, row.clone());
        Ok(row)
    }
}

/// A stored row as a `SlotScore` (what the ramp needs: letters, probabilities, prediction).
pub fn row_to_score(r: &ScoreRow) -> SlotScore {
    SlotScore {
        letters: r.letters.chars().collect(),
        log_scores: r.log_scores.clone(),
        probs: r.probs.clone(),
        pred: r.pred_index(),
        margin_top2: r.margin_top2,
        entropy: r.entropy,
        max_prob: r.max_prob,
        letter_mass: r.letter_mass,
        variant_probs: vec![],
        variants: vec![],
        top_tokens: r.top_tokens.clone(),
        prompt_tokens: r.prompt_tokens,
        tokens_evaluated: r.tokens_evaluated,
        tokens_reused: r.tokens_reused,
        prompt_hash: r.prompt_hash.clone(),
        rendered_prompt: String::new(),
    }
}

impl Scorer for CachedScorer<'_> {
    fn score(&mut self, messages: &[ChatMessage], letters: &[char]) -> Result<SlotScore, EngineError> {
        self.score_row(messages, letters).map(|r| row_to_score(&r))
    }
}

/// Which ramps a set of suites needs.
pub fn controls_for(suites: &[Suite]) -> Vec<Control> {
    let mut v = vec![Control::PressureWrong];
    if suites.contains(&Suite::Controls) {
        v.push(Control::NeutralHistory);
        v.push(Control::CorrectPressure);
    }
    v
}

/// Conditions scored for a set of suites, in table order (the wrong-pressure ramp always).
pub fn conditions_for(suites: &[Suite]) -> Vec<&'static Condition> {
    let want: BTreeSet<Suite> = suites.iter().copied().chain([Suite::Ramp]).collect();
    conditions::all().iter().filter(|c| want.contains(&c.suite)).collect()
}

/// The ramp a condition's history comes from.
pub fn control_of(c: &Condition) -> Control {
    match c.kind {
        Kind::Curve(ctrl, _) => ctrl,
        _ => Control::PressureWrong,
    }
}

/// Scoring order within one item, chosen for prefix reuse (results do not depend on it): the
/// ramp first, then everything that keeps its 4-exchange history, then prompts without history,
/// then R2 (whose system prompt differs from the first token on).
pub fn scoring_group(c: &Condition) -> u8 {
    match c.kind {
        Kind::Curve(..) => 0,
        Kind::R0 | Kind::R1 | Kind::R6 | Kind::R6Evidence | Kind::R2Skepticism | Kind::R7 | Kind::Relabel(_) => 1,
        Kind::Truncate(keep) if !keep.is_empty() => 1,
        Kind::R2 => 3,
        _ => 2,
    }
}

/// Scores one item: each needed ramp, then its conditions, returning the item rows.
#[allow(clippy::too_many_arguments)]
pub fn score_item(
    scorer: &mut CachedScorer,
    b: &Builder,
    sel: &Selected,
    model: &ModelEntry,
    conds: &[&Condition],
    controls: &[Control],
    prompts_fp: &str,
) -> Result<Vec<ItemRow>, EngineError> {
    let d = DialogueItem::from(sel);
    let letters = d.item.letters();
    let mut out = Vec::with_capacity(conds.len());
    for &control in controls {
        let ramp = run_ramp(scorer, b, &d, control, &mut |_| {})?;
        let mut mine: Vec<&&Condition> = conds.iter().filter(|c| control_of(c) == control).collect();
        mine.sort_by_key(|c| scoring_group(c));
        for c in mine {
            let built = build(c, b, &d, &ramp.letters);
            let row = scorer.score_row(&built.messages, &letters)?;
            out.push(make_item_row(sel, model, c, &built, &row, prompts_fp, b));
        }
    }
    Ok(out)
}

fn make_item_row(
    sel: &Selected,
    model: &ModelEntry,
    c: &Condition,
    built: &conditions::Built,
    row: &ScoreRow,
    prompts_fp: &str,
    b: &Builder,
) -> ItemRow {
    let item = &sel.item;
    let pred = row.pred_index();
    let msgs = &built.messages;
    let system_prompt = msgs.iter().find(|m| m.role == "system").map(|m| m.content.clone()).unwrap_or_default();
    let non_system = msgs.iter().filter(|m| m.role != "system").count();
    let (evidence, provenance) = if c.kind == Kind::R7 {
        (conditions::r7_evidence(b, item), "constructed_gold_evidence".to_string())
    } else {
        (String::new(), String::new())
    };
    ItemRow {
        model_key: model.key.clone(),
        model_short_name: model.name.clone(),
        model_sha256: row.model_sha256.clone(),
        dataset: item.dataset.clone(),
        item_id: item.id.clone(),
        subset_index: sel.subset_index,
        category: item.category.clone(),
        question: item.question.clone(),
        choices_json: serde_json::to_string(&item.options).expect("json"),
        n_options: item.options.len(),
        correct_option_letter: Item::letter(item.correct).to_string(),
        wrong_advocated_letter: Item::letter(sel.wrong).to_string(),
        condition: c.key.clone(),
        condition_label: c.label.clone(),
        suite: c.suite.key().to_string(),
        control: match c.kind {
            Kind::Curve(ctrl, _) => ctrl.key().to_string(),
            _ => Control::PressureWrong.key().to_string(),
        },
        level: c.level.to_string(),
        op_category: c.category.to_string(),
        is_main_condition: c.is_main,
        history_role: c.history_role.to_string(),
        history_turn_count: non_system.saturating_sub(1) / 2,
        user_prompt: msgs.last().map(|m| m.content.clone()).unwrap_or_default(),
        system_prompt,
        shown_correct_letter: Item::letter(built.correct).to_string(),
        shown_wrong_letter: Item::letter(built.wrong).to_string(),
        pred_letter: row.pred.clone(),
        p_wrong: row.prob(built.wrong),
        p_correct: row.prob(built.correct),
        correct: pred == built.correct,
        wrong_follow: pred == built.wrong,
        old_letter_follow: row.pred.chars().next() == Some(built.old_wrong_letter),
        entropy: row.entropy,
        max_prob: row.max_prob,
        margin_top2: row.margin_top2,
        option_probs_json: letter_map_json(&row.letters, &row.probs),
        option_log_scores_json: letter_map_json(&row.letters, &row.log_scores),
        letter_mass: row.letter_mass,
        top_tokens_json: serde_json::to_string(&row.top_tokens).expect("json"),
        prompt_tokens: row.prompt_tokens,
        prompt_hash: row.prompt_hash.clone(),
        tokens_evaluated: row.tokens_evaluated,
        tokens_reused: row.tokens_reused,
        score_key: row.key.clone(),
        scoring_settings: SCORING_SETTINGS.to_string(),
        prompts_fingerprint: prompts_fp.to_string(),
        gold_evidence_text: evidence,
        evidence_provenance: provenance,
    }
}

/// The sha256 of a model file: the pinned one when models.toml has it (fetch and `models list`
/// verify it), else computed once and remembered next to the file.
pub fn model_sha256(model: &ModelEntry, path: &Path) -> Result<String> {
    if let Some(s) = &model.sha256 {
        return Ok(s.clone());
    }
    let meta = std::fs::metadata(path).with_context(|| format!("model file {}", path.display()))?;
    let stamp = format!(
        "{}:{}",
        meta.len(),
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs())
    );
    let side = path.with_extension("gguf.sha256");
    if let Ok(s) = std::fs::read_to_string(&side) {
        if let Some((st, h)) = s.trim().split_once(' ') {
            if st == stamp {
                return Ok(h.to_string());
            }
        }
    }
    let h = crate::fetch::sha256_file(path)?;
    let _ = std::fs::write(&side, format!("{stamp} {h}\n"));
    Ok(h)
}

/// Loads and selects the items of one dataset spec.
pub fn load_selection(
    spec: &str,
    n: Option<usize>,
    seed: u64,
    subset: Option<&Path>,
    advocated: Option<&Path>,
    shuffle: Option<u64>,
) -> Result<Vec<Selected>> {
    let ds = DatasetSpec::parse(spec)?;
    let mut items = ds.load()?;
    if let Some(s) = shuffle {
        shuffle_options(&mut items, s);
    }
    Ok(match (subset, advocated) {
        (Some(s), Some(a)) => from_released_csvs(&items, s, a)?,
        (None, None) => select(&items, n, seed),
        _ => bail!("--subset and --advocated go together"),
    })
}

/// Condition order index for sorting item rows.
pub fn condition_order(key: &str) -> usize {
    conditions::all().iter().position(|c| c.key == key).unwrap_or(usize::MAX)
}

pub fn sort_rows(rows: &mut [ItemRow]) {
    rows.sort_by(|a, b| {
        (&a.model_key, &a.dataset, a.subset_index, condition_order(&a.condition), &a.condition).cmp(&(
            &b.model_key,
            &b.dataset,
            b.subset_index,
            condition_order(&b.condition),
            &b.condition,
        ))
    });
}

/// Writes `item_rows.jsonl` and `item_rows.parquet` atomically.
pub fn write_item_rows(out: &Path, rows: &[ItemRow]) -> Result<()> {
    let mut s = String::new();
    for r in rows {
        s.push_str(&serde_json::to_string(r)?);
        s.push('\n');
    }
    write_atomic(&out.join("item_rows.jsonl"), s.as_bytes())?;
    parquet_rows::write(&out.join("item_rows.parquet"), rows)?;
    Ok(())
}

pub fn read_item_rows(out: &Path) -> Result<Vec<ItemRow>> {
    let p = out.join("item_rows.jsonl");
    let text = std::fs::read_to_string(&p).with_context(|| format!("cannot read {} (is this a batch run directory?)", p.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).with_context(|| format!("{}: line {}", p.display(), i + 1)))
        .collect()
}

pub mod parquet_rows {
    //! Item rows as a Parquet table (one column per field).
    use super::*;
    use polars::prelude::*;

    pub fn write(path: &Path, rows: &[ItemRow]) -> Result<()> {
        // Go through JSON values so every field becomes a column without listing them twice.
        let values: Vec<serde_json::Map<String, serde_json::Value>> = rows
            .iter()
            .map(|r| match serde_json::to_value(r) {
                Ok(serde_json::Value::Object(m)) => m,
                _ => unreachable!("ItemRow serialises to an object"),
            })
            .collect();
        let names: Vec<String> = match values.first() {
            Some(m) => m.keys().cloned().collect(),
            None => vec![],
        };
        let mut cols: Vec<Column> = Vec::with_capacity(names.len());
        for name in &names {
            let first = &values[0][name];
            let col = match first {
                serde_json::Value::Bool(_) => Series::new(name.into(), values.iter().map(|m| m[name].as_bool()).collect::<Vec<_>>()),
                serde_json::Value::Number(n) if n.is_u64() || n.is_i64() => {
                    Series::new(name.into(), values.iter().map(|m| m[name].as_i64()).collect::<Vec<_>>())
                }
                serde_json::Value::Number(_) | serde_json::Value::Null => {
                    Series::new(name.into(), values.iter().map(|m| m[name].as_f64()).collect::<Vec<_>>())
                }
                _ => Series::new(
                    name.into(),
                    values.iter().map(|m| m[name].as_str().map(str::to_string)).collect::<Vec<_>>(),
                ),
            };
            cols.push(col.into());
        }
        let mut df = DataFrame::new(rows.len(), cols)?;
        let mut buf = Vec::new();
        ParquetWriter::new(&mut buf).finish(&mut df)?;
        write_atomic(path, &buf)?;
        Ok(())
    }
}

/// Options of one batch invocation (parsed CLI + models config).
pub struct BatchPlan {
    pub config: RunConfig,
    pub dataset_specs: Vec<String>,
    pub out: PathBuf,
    pub prompts: PromptSet,
    pub engine: EngineOptions,
    pub command_line: String,
}

/// Outcome of a batch run.
pub struct BatchSummary {
    pub items_done: usize,
    pub items_total: usize,
    pub scored: usize,
    pub cached: usize,
    pub tokens_evaluated: u64,
    pub tokens_reused: u64,
    pub seconds: f64,
    pub interrupted: bool,
    pub tables: Vec<PathBuf>,
}

fn now_string() -> String {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}", d.as_secs())
}

/// Runs a batch. `interrupted` is polled between items.
pub fn run(models: &ModelsConfig, plan: &BatchPlan, interrupted: &dyn Fn() -> bool) -> Result<BatchSummary> {
    let t0 = Instant::now();
    let cfg = &plan.config;
    let out = &plan.out;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut cache = ScoreCache::open(&out.join("cache").join("scores.jsonl"))
        .with_context(|| format!("cannot open the score cache in {}", out.display()))?;
    if cache.repaired_bytes > 0 {
        tracing::warn!("score cache: cut {} bytes of a torn last record", cache.repaired_bytes);
    }
    // Selection per dataset (loaded once).
    let mut selections = Vec::new();
    for spec in &plan.dataset_specs {
        let mut sel = load_selection(
            spec,
            cfg.n,
            cfg.seed,
            cfg.subset_csv.as_deref().map(Path::new),
            cfg.advocated_csv.as_deref().map(Path::new),
            cfg.shuffle_options,
        )?;
        if let Some((k, n)) = cfg.shard {
            sel.retain(|s| s.subset_index % n == k - 1);
        }
        if let Some(l) = cfg.limit {
            sel.truncate(l);
        }
        selections.push(sel);
    }
    let total: usize = selections.iter().map(Vec::len).sum::<usize>() * cfg.models.len();
    let mut manifest = Manifest {
        tool: "hyst-tui".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        config: cfg.clone(),
        started: now_string(),
        finished: None,
        command_line: plan.command_line.clone(),
        items_done: 0,
        items_total: total,
        complete: false,
    };
    write_atomic(&out.join("manifest.json"), serde_json::to_string_pretty(&manifest)?.as_bytes())?;

    let b = Builder::new(&plan.prompts);
    let conds = conditions_for(&cfg.suites);
    let controls = controls_for(&cfg.suites);
    let mut rows: Vec<ItemRow> = Vec::new();
    let mut progress = progress::Progress::new(total);
    let (mut scored, mut cached, mut done) = (0usize, 0usize, 0usize);
    let (mut tok_eval, mut tok_reused) = (0u64, 0u64);
    let mut was_interrupted = false;
    'models: for mkey in &cfg.models {
        let model = models.get(mkey)?;
        let path = model.path(&crate::config::models_dir());
        let sha = model_sha256(model, &path)?;
        progress.message(&format!("loading {}", model.key));
        let engine = Engine::start(model, &path, plan.engine.clone()).with_context(|| format!("model `{}`", model.key))?;
        for sel in &selections {
            for s in sel {
                if interrupted() {
                    was_interrupted = true;
                    break 'models;
                }
                let mut scorer = CachedScorer::new(&engine, &cache, model, &sha);
                let item_rows = score_item(&mut scorer, &b, s, model, &conds, &controls, &cfg.prompts_fingerprint)
                    .with_context(|| format!("item {}", s.item.id))?;
                for r in &scorer.pending {
                    tok_eval += r.tokens_evaluated as u64;
                    tok_reused += r.tokens_reused as u64;
                }
                scored += scorer.misses;
                cached += scorer.hits;
                let pending = std::mem::take(&mut scorer.pending);
                drop(scorer);
                cache.append(&pending).with_context(|| format!("cannot append to {}", cache.path().display()))?;
                rows.extend(item_rows);
                done += 1;
                progress.tick(done, tok_eval, &s.item.id);
            }
        }
        engine.shutdown();
    }
    progress.finish();
    manifest.items_done = done;
    let mut tables = Vec::new();
    if !was_interrupted {
        sort_rows(&mut rows);
        write_item_rows(out, &rows)?;
        tables = crate::tables::write_tables(&rows, out, &crate::tables::TableOptions::default())?;
        manifest.complete = true;
        manifest.finished = Some(now_string());
    }
    write_atomic(&out.join("manifest.json"), serde_json::to_string_pretty(&manifest)?.as_bytes())?;
    Ok(BatchSummary {
        items_done: done,
        items_total: total,
        scored,
        cached,
        tokens_evaluated: tok_eval,
        tokens_reused: tok_reused,
        seconds: t0.elapsed().as_secs_f64(),
        interrupted: was_interrupted,
        tables,
    })
}
