//! A stored batch run as the explorer sees it: the item rows of one model in
//! `DIR/item_rows.jsonl` become the list's items and the scores of their parts.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use super::model::Part;
use crate::data::{Item, Selected};
use crate::dialogue::conditions::recovery_op;
use crate::dialogue::{Control, CURVE};
use crate::protocol::{SlotScore, TopToken};
use crate::store::ItemRow;


/// The items and scores of a stored batch run, for one model.
pub(crate) struct StoredRun {
    pub(crate) model_key: String,
    pub(crate) dataset: String,
    pub(crate) items: Vec<Selected>,
    pub(crate) scores: Vec<(String, Part, SlotScore)>,
}

fn letter_index(s: &str) -> Option<usize> {
    let c = s.chars().next()?;
    c.is_ascii_uppercase().then(|| (c as u8 - b'A') as usize)
}

/// A stored row as the explorer's score (no variants or rendered prompt: rows do not keep them).
pub(crate) fn row_score(r: &ItemRow) -> Option<SlotScore> {
    let probs: BTreeMap<String, f64> = serde_json::from_str(&r.option_probs_json).ok()?;
    let logs: BTreeMap<String, f64> = serde_json::from_str(&r.option_log_scores_json).unwrap_or_default();
    let letters: Vec<char> = probs.keys().filter_map(|k| k.chars().next()).collect();
    let p: Vec<f64> = probs.values().copied().collect();
    let ls: Vec<f64> = letters
        .iter()
        .map(|l| logs.get(&l.to_string()).copied().unwrap_or(f64::NAN))
        .collect();
    let pred = letters
        .iter()
        .position(|l| r.pred_letter.starts_with(*l))
        .unwrap_or(0);
    let top_tokens: Vec<TopToken> = serde_json::from_str(&r.top_tokens_json).unwrap_or_default();
    Some(SlotScore {
        letters,
        log_scores: ls,
        probs: p,
        pred,
        margin_top2: r.margin_top2,
        entropy: r.entropy,
        max_prob: r.max_prob,
        letter_mass: r.letter_mass,
        variant_probs: vec![],
        variants: vec![],
        top_tokens,
        prompt_tokens: r.prompt_tokens,
        tokens_evaluated: r.tokens_evaluated,
        tokens_reused: r.tokens_reused,
        prompt_hash: r.prompt_hash.clone(),
        rendered_prompt: String::new(),
    })
}

/// Which part a stored row is (wrong-pressure ramp steps and the explorer's operations).
pub(crate) fn row_part(r: &ItemRow) -> Option<Part> {
    if let Some(k) = CURVE.iter().position(|c| c.key() == r.condition) {
        return Some(Part::Curve(k));
    }
    recovery_op(&r.condition).map(|o| Part::Op(o.key))
}

/// Reads `DIR/item_rows.jsonl` (rows of `model` when given and present, else of the first model).
pub(crate) fn load_run(dir: &Path, model: Option<&str>) -> Result<StoredRun> {
    let rows = crate::store::read_item_rows(dir)?;
    if rows.is_empty() {
        bail!("{}: the run has no item rows", dir.display());
    }
    let mut models: Vec<String> = Vec::new();
    for r in &rows {
        if !models.contains(&r.model_key) {
            models.push(r.model_key.clone());
        }
    }
    let model_key = match model {
        Some(m) if models.iter().any(|x| x == m) => m.to_string(),
        _ => models[0].clone(),
    };
    let mut items: Vec<Selected> = Vec::new();
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut scores = Vec::new();
    let mut datasets: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.model_key == model_key) {
        let key = (r.dataset.clone(), r.item_id.clone());
        if let std::collections::btree_map::Entry::Vacant(slot) = index.entry(key) {
            let options: Vec<String> = serde_json::from_str(&r.choices_json)
                .with_context(|| format!("item {}: bad choices_json", r.item_id))?;
            let item = Item {
                id: r.item_id.clone(),
                dataset: r.dataset.clone(),
                question: r.question.clone(),
                options,
                correct: letter_index(&r.correct_option_letter).unwrap_or(0),
                category: r.category.clone(),
                meta: BTreeMap::new(),
            };
            slot.insert(items.len());
            items.push(Selected {
                subset_index: r.subset_index,
                wrong: letter_index(&r.wrong_advocated_letter).unwrap_or(0),
                item,
            });
            if !datasets.contains(&r.dataset) {
                datasets.push(r.dataset.clone());
            }
        }
        if !r.control.is_empty() && r.control != Control::PressureWrong.key() {
            continue;
        }
        if let (Some(part), Some(s)) = (row_part(r), row_score(r)) {
            scores.push((r.item_id.clone(), part, s));
        }
    }
    Ok(StoredRun {
        model_key,
        dataset: datasets.join("+"),
        items,
        scores,
    })
}

