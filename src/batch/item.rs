//! Scoring one item: its ramps, then every condition of the requested suites, through a
//! [`CachedScorer`] that answers from the run cache first. Returns the item rows.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::RwLock;

use anyhow::{Context, Result};

use crate::config::ModelEntry;
use crate::data::Selected;
use crate::dialogue::conditions::{self, base_of, build, Base, Condition, Kind, Registry};
use crate::dialogue::{run_ramp, Builder, Control, CurvePoint, DialogueItem, Suite};
use crate::engine::inside::{InspectOptions, Steering};
use crate::engine::{Engine, EngineError};
use crate::protocol::{letter, AnswerFormat, AnswerSlot, ChatMessage, Scorer, SlotScore};
use crate::store::rows::{letter_map_json, score_key};
use crate::store::shared::{context_key, SharedScores};
use crate::store::{ItemRow, ScoreCache, ScoreRow, SCORING_SETTINGS};

/// A scorer that consults the run cache, then the shared store, before the engine; new scores
/// are collected in `pending` until the item is committed.
pub struct CachedScorer<'a> {
    pub engine: &'a Engine,
    pub cache: &'a RwLock<ScoreCache>,
    /// The store shared by every run (`None` = not used).
    pub shared: Option<&'a RwLock<SharedScores>>,
    pub model_key: String,
    pub model_sha256: String,
    /// Numeric provenance of new scores (part of the cache key).
    pub provenance: String,
    /// How the model's prompts are formatted (part of the context key).
    pub prompt_format: String,
    /// Scores the engine computed for this item, to be stored.
    pub pending: Vec<ScoreRow>,
    /// Scores found in the shared store, to be copied into the run's cache.
    pub imported: Vec<ScoreRow>,
    /// Distinct contexts of this item found in the run's own cache (`cache/scores.jsonl`:
    /// an earlier start of the run, or an item committed before this one).
    pub from_run_cache: usize,
    /// Distinct contexts of this item found in the shared store.
    pub from_shared: usize,
    /// Contexts the engine scored (each distinct context once).
    pub misses: usize,
    /// Rows used for each prompt hash in this item (cache hits and new scores).
    pub used: BTreeMap<String, ScoreRow>,
    /// Once it says so, the next prompt the engine would score is refused with
    /// [`EngineError::Cancelled`] (a stopped batch abandons its items in flight; what they
    /// scored stays in `pending`).
    pub stop: Option<&'a (dyn Fn() -> bool + Sync)>,
    /// The steering of steered conditions, by condition key (`None`: the run has none).
    pub steerings: Option<&'a super::steered::Steerings>,
}

impl<'a> CachedScorer<'a> {
    pub fn new(engine: &'a Engine, cache: &'a RwLock<ScoreCache>, model: &ModelEntry, sha: &str, provenance: &str) -> Self {
        Self {
            engine,
            cache,
            shared: None,
            model_key: model.key.clone(),
            model_sha256: sha.to_string(),
            provenance: provenance.to_string(),
            prompt_format: model.prompt_format(),
            pending: Vec::new(),
            imported: Vec::new(),
            from_run_cache: 0,
            from_shared: 0,
            misses: 0,
            used: BTreeMap::new(),
            stop: None,
            steerings: None,
        }
    }

    /// Scores `messages`, returning the stored row (from cache, this item, or the engine). The
    /// prompt is rendered and tokenized once: the cache key is computed from its tokens, and on a
    /// miss the engine scores those same tokens.
    pub(crate) fn score_row(&mut self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<ScoreRow, EngineError> {
        let mut rows = self.score_rows(&[messages], slot, false)?;
        Ok(rows.remove(0))
    }

    /// [`score_row`](Self::score_row) for several conversations: those found nowhere go to the
    /// engine together, as one group of branches when `group` and the slot is letters (decoded
    /// together by a packing engine, [`Engine::score_group`]), else one after another. Rows in
    /// the conversations' order.
    pub(crate) fn score_rows(&mut self, conversations: &[&[ChatMessage]], slot: &AnswerSlot, group: bool) -> Result<Vec<ScoreRow>, EngineError> {
        // Preparing may ask a served engine too (its tokenizer): a stopped batch asks nothing.
        if self.stop.is_some_and(|s| s()) {
            return Err(EngineError::Cancelled);
        }
        let letters_s = slot.key();
        let mut rows: Vec<Option<ScoreRow>> = Vec::with_capacity(conversations.len());
        let mut keys = Vec::with_capacity(conversations.len());
        // (conversation index, key, prepared) of each prompt the engine must score
        let mut misses: Vec<(usize, String, crate::engine::Prepared)> = Vec::new();
        for (i, messages) in conversations.iter().enumerate() {
            let prepared = self.engine.prepare(messages)?;
            let hash = prepared.hash();
            let key = score_key(&self.model_sha256, &hash, &letters_s, &self.provenance);
            let found = if misses.iter().any(|m| m.1 == key) { None } else { self.lookup(&key) };
            if found.is_none() && !misses.iter().any(|m| m.1 == key) {
                misses.push((i, key.clone(), prepared));
            }
            keys.push(key);
            rows.push(found);
        }
        if !misses.is_empty() {
            if self.stop.is_some_and(|s| s()) {
                return Err(EngineError::Cancelled);
            }
            let scores = match slot {
                AnswerSlot::Letters(letters) if group => self.engine.score_group(misses.iter().map(|m| m.2.clone()).collect(), letters)?,
                _ => misses.iter().map(|m| self.engine.score_prepared_slot(m.2.clone(), slot)).collect::<Result<Vec<_>, _>>()?,
            };
            for ((i, key, _), s) in misses.into_iter().zip(scores) {
                self.misses += 1;
                let mut row = ScoreRow::from_score(&self.model_key, &self.model_sha256, &self.provenance, &s);
                // An open slot's key names the option texts, not the labels the row shows.
                row.key = key.clone();
                row.context_key = context_key(&self.model_sha256, &self.prompt_format, conversations[i], &letters_s, &self.provenance);
                self.pending.push(row.clone());
                self.used.insert(key, row.clone());
                rows[i] = Some(row);
                crate::store::fault::point(Path::new("context"));
            }
        }
        // A conversation that occurs twice in the group takes its twin's row (a hit, as it
        // would be one after the other).
        let mut out = Vec::with_capacity(rows.len());
        for (r, key) in rows.into_iter().zip(&keys) {
            match r {
                Some(r) => out.push(r),
                None => out.push(self.lookup(key).expect("a twin in the same group was scored")),
            }
        }
        Ok(out)
    }

    /// Scores `messages` under `steering` through the engine's read-out probe (from scratch; a
    /// served engine refuses), unless a stored row has them: the key is the prompt's with the
    /// steering setting added, so a steered score never stands for an unsteered one or the reverse.
    pub(crate) fn score_steered_row(&mut self, messages: &[ChatMessage], letters: &[char], steering: &Steering) -> Result<ScoreRow, EngineError> {
        if self.stop.is_some_and(|s| s()) {
            return Err(EngineError::Cancelled);
        }
        let letters_s: String = letters.iter().collect();
        let setting = format!("steered {}", steering.key());
        let hash = self.engine.prepare(messages)?.hash();
        let key = score_key(&self.model_sha256, &format!("{hash} {setting}"), &letters_s, &self.provenance);
        if let Some(r) = self.lookup(&key) {
            return Ok(r);
        }
        let opts = InspectOptions { steering: Some(steering.clone()), ..Default::default() };
        let s = self.engine.inspect(messages, letters, opts)?.score;
        self.misses += 1;
        let mut row = ScoreRow::from_score(&self.model_key, &self.model_sha256, &self.provenance, &s);
        row.key = key.clone();
        row.context_key = context_key(&self.model_sha256, &self.prompt_format, messages, &letters_s, &format!("{} {setting}", self.provenance));
        self.pending.push(row.clone());
        self.used.insert(key, row.clone());
        crate::store::fault::point(Path::new("context"));
        Ok(row)
    }

    /// The row of `key` from the run's cache, this item's rows, or the shared store, if any.
    /// A context is counted once per item, by where it was first found (a context of this item
    /// asked for again, e.g. a ramp step that is also a condition, is not counted again).
    fn lookup(&mut self, key: &str) -> Option<ScoreRow> {
        let first = !self.used.contains_key(key);
        let cached = self.cache.read().expect("cache lock").get(key).cloned();
        let in_cache = cached.is_some();
        let here = cached
            .or_else(|| self.pending.iter().find(|r| r.key == key).cloned())
            .or_else(|| self.imported.iter().find(|r| r.key == key).cloned());
        if let Some(r) = here {
            // (What this item scored or imported is in `used` already: not first.)
            if first && in_cache {
                self.from_run_cache += 1;
            }
            self.used.insert(key.to_string(), r.clone());
            return Some(r);
        }
        let r = self.shared.and_then(|s| s.read().expect("shared store lock").get(key))?;
        self.from_shared += 1;
        self.imported.push(r.clone());
        self.used.insert(key.to_string(), r.clone());
        Some(r)
    }
}

impl super::ContextCounts {
    /// Where the contexts of an item's `rows` came from, as `scorer` found them.
    pub(crate) fn of(rows: &[ItemRow], scorer: &CachedScorer) -> Self {
        let distinct: BTreeSet<&str> = rows.iter().map(|r| r.score_key.as_str()).collect();
        Self {
            contexts: rows.len(),
            scored: scorer.misses,
            from_run_cache: scorer.from_run_cache,
            from_shared: scorer.from_shared,
            repeated: rows.len() - distinct.len(),
        }
    }
}

impl Scorer for CachedScorer<'_> {
    type Error = EngineError;
    fn score(&mut self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<SlotScore, EngineError> {
        self.score_row(messages, slot).map(|r| r.to_score())
    }
}

/// Which ramps a set of suites needs.
pub(crate) fn controls_for(suites: &[Suite]) -> Vec<Control> {
    let mut v = vec![Control::PressureWrong];
    if suites.contains(&Suite::Controls) {
        v.push(Control::NeutralHistory);
        v.push(Control::CorrectPressure);
    }
    v
}

/// Conditions of `reg` scored for a set of suites, in table order (the wrong-pressure ramp
/// always, and every step of a custom ramp that a selected operation builds on: they are scored
/// anyway).
pub fn conditions_for(reg: &'static Registry, suites: &[Suite]) -> Vec<&'static Condition> {
    let want: BTreeSet<Suite> = suites.iter().copied().chain([Suite::Ramp]).collect();
    let needed: BTreeSet<&str> = reg
        .all()
        .iter()
        .filter(|c| want.contains(&c.suite))
        .filter_map(|c| match base_of(c) {
            Base::Custom(r) => Some(r.name.as_str()),
            Base::Paper(_) => None,
        })
        .collect();
    reg.all()
        .iter()
        .filter(|c| want.contains(&c.suite) || matches!(c.kind, Kind::RampStep(r, _) if needed.contains(r.name.as_str())))
        .collect()
}

/// The conditions of `conds` that builder `b`'s answer format scores: all of them for letters,
/// those with an open form for open answers (docs/protocol.md §14.3).
pub(crate) fn conditions_in_format<'c>(b: &Builder, conds: &[&'c Condition]) -> Vec<&'c Condition> {
    conds.iter().copied().filter(|c| b.format() == AnswerFormat::Letters || c.has_open_form()).collect()
}

/// The ramps an item needs, in scoring order: the paper's ramp under each control, then the
/// custom ramps the conditions build on (registry order).
pub(crate) fn bases_for(conds: &[&Condition], controls: &[Control]) -> Vec<Base> {
    // The wrong-pressure ramp first: its clean step gives the clean letter the others use.
    let mut v = vec![Base::Paper(Control::PressureWrong)];
    for &c in controls {
        if !v.contains(&Base::Paper(c)) {
            v.push(Base::Paper(c));
        }
    }
    for c in conds {
        let b = base_of(c);
        if !v.contains(&b) {
            v.push(b);
        }
    }
    v
}

/// Scoring order within one item, chosen for prefix reuse (results do not depend on it): the
/// ramp first, then everything that keeps some of its history, then prompts without history,
/// then those whose system prompt changes (they differ from the first token on).
pub(crate) fn scoring_group(c: &Condition) -> u8 {
    match c.kind {
        Kind::Curve(..) | Kind::RampStep(..) => 0,
        Kind::Recipe(r) if !r.system.is_empty() => 3,
        Kind::Recipe(r) if r.keeps_history() => 1,
        Kind::Recipe(_) => 2,
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
    let slot = b.slot(&d.item);
    let mut out = Vec::with_capacity(conds.len());
    let mut clean = None;
    for base in bases_for(conds, controls) {
        let ramp_letters: Vec<char> = match base {
            Base::Paper(control) => {
                let ramp = run_ramp(scorer, b, &d, control, &mut |_| {})?;
                clean.get_or_insert(ramp.step(CurvePoint::CleanContext).score.pred_letter());
                ramp.letters.to_vec()
            }
            Base::Custom(r) => conditions::run_custom_ramp(scorer, b, &d, r)?.0,
        };
        let clean = clean.expect("the wrong-pressure ramp runs first");
        let mut mine: Vec<&&Condition> = conds.iter().filter(|c| base_of(c) == base).collect();
        mine.sort_by_key(|c| scoring_group(c));
        // A steered operation has no row for an item its direction was estimated on.
        let op_of = |c: &Condition| scorer.steerings.and_then(|s| s.get(&c.key));
        mine.retain(|c| op_of(c).is_none_or(|op| op.scores(&sel.item.dataset, &sel.item.id)));
        let steered: Vec<Option<Steering>> = mine.iter().map(|c| op_of(c).map(|op| op.steering.clone())).collect();
        // The conditions of one ramp branch off its history: one group for the engine; a
        // steered one goes through the read-out probe on its own, after them.
        let built: Vec<conditions::Built> = mine.iter().map(|c| build(c, b, &d, &ramp_letters, clean)).collect();

        if let Some(i) = steered.iter().zip(&mine).position(|(s, c)| s.is_none() && c.is_steered()) {
            return Err(EngineError::Inside(format!("operation `{}` is steered but its control vector was not loaded", mine[i].key)));
        }
        let conversations: Vec<&[ChatMessage]> = built.iter().zip(&steered).filter(|(_, s)| s.is_none()).map(|(x, _)| x.messages.as_slice()).collect();
        let mut plain = scorer.score_rows(&conversations, &slot, true)?.into_iter();
        let mut rows = Vec::with_capacity(built.len());
        for (x, s) in built.iter().zip(&steered) {
            rows.push(match s {
                Some(s) => scorer.score_steered_row(&x.messages, &letters, s)?,
                None => plain.next().expect("a row per unsteered conversation"),
            });
        }
        for ((c, built), row) in mine.iter().zip(&built).zip(&rows) {
            out.push(make_item_row(sel, model, c, built, row, prompts_fp, b));
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
    let uses_evidence = c.recipe().is_some_and(|r| r.uses_evidence(&|k| b.prompts.get(k).unwrap_or("").to_string()));
    let (evidence, provenance) = if uses_evidence {
        (conditions::r7_evidence(b, item), "constructed_gold_evidence".to_string())
    } else {
        (String::new(), String::new())
    };
    ItemRow {
        model_key: model.key.clone(),
        schema_version: crate::store::rows::SCHEMA_VERSION,
        model_short_name: model.name.clone(),
        paper_key: model.paper_key.clone().unwrap_or_default(),
        model_sha256: row.model_sha256.clone(),
        dataset: item.dataset.clone(),
        item_id: item.id.clone(),
        subset_index: sel.subset_index,
        category: item.category.clone(),
        question: item.question.clone(),
        choices_json: serde_json::to_string(&item.options).expect("json"),
        n_options: item.options.len(),
        correct_option_letter: letter(item.correct).to_string(),
        wrong_advocated_letter: letter(sel.wrong).to_string(),
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
        shown_correct_letter: letter(built.correct).to_string(),
        shown_wrong_letter: letter(built.wrong).to_string(),
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
        provenance: row.provenance.clone(),
        gold_evidence_text: evidence,
        evidence_provenance: provenance,
        letter_bound_json: row.letter_bound.as_ref().map(|b| serde_json::to_string(b).expect("a letter bound serialises")).unwrap_or_default(),
        answer_format: match b.format() {
            AnswerFormat::Letters => String::new(),
            f => f.key().to_string(),
        },
        open_answers_json: row.open.as_ref().map(|o| serde_json::to_string(o).expect("open answers serialise")).unwrap_or_default(),
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

