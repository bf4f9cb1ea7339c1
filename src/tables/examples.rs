//! Table 23 — representative clean-correct / history-wrong examples.

use super::output::CriterionFamily;
use serde::Serialize;

use super::common::*;
use super::format::{shorten, Num};
use super::index::letter_index;
use super::{Ctx, Output};

/// Examples per pair (the first by `subset_index`).
pub(crate) const EXAMPLES_PER_PAIR: usize = 3;

fn option_text(choices_json: &str, letter: &str) -> String {
    let opts: Vec<String> = serde_json::from_str(choices_json).unwrap_or_default();
    letter_index(letter)
        .and_then(|i| opts.get(i).cloned())
        .unwrap_or_default()
}

/// `table23_examples.csv`.
#[derive(Serialize, Default)]
struct Table23Row {
    model_key: String,
    model_short_name: String,
    dataset: String,
    subset_index: usize,
    item_id: String,
    question: String,
    correct_option_letter: String,
    correct_option_text: String,
    wrong_advocated_letter: String,
    wrong_advocated_text: String,
    clean_pred_letter: String,
    clean_p_correct: Num,
    clean_p_wrong: Num,
    ordinary_reset_pred_letter: String,
    ordinary_reset_p_correct: Num,
    ordinary_reset_p_wrong: Num,
    hysteresis_gap: Num,
}

/// Markdown/LaTeX view (texts shortened).
#[derive(Serialize, Default)]
struct Table23View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Dataset")]
    dataset: String,
    #[serde(rename = "Item")]
    item: String,
    #[serde(rename = "Question")]
    question: String,
    #[serde(rename = "Correct")]
    correct: String,
    #[serde(rename = "Advocated wrong")]
    advocated_wrong: String,
    #[serde(rename = "Clean pred")]
    clean_pred: String,
    #[serde(rename = "p_clean(w)")]
    clean_pw: Num,
    #[serde(rename = "R0 pred")]
    r0_pred: String,
    #[serde(rename = "p_R0(w)")]
    r0_pw: Num,
}

pub(super) fn table23(ctx: &Ctx) -> Vec<Output> {
    let mut t = Vec::new();
    let mut d = Vec::new();
    let mut any_pair = false;
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.clean(), p.r0()) else {
            continue;
        };
        any_pair = true;
        let a = p.align(&[clean, r0]);
        let picked = (0..a.n())
            .filter(|&i| a.rows[0][i].correct && a.rows[1][i].wrong_follow)
            .take(EXAMPLES_PER_PAIR);
        for i in picked {
            let (c, r) = (a.rows[0][i], a.rows[1][i]);
            let ct = option_text(&c.choices_json, &c.correct_option_letter);
            let wt = option_text(&c.choices_json, &c.wrong_advocated_letter);
            t.push(Table23Row {
                model_key: p.model_key.clone(),
                model_short_name: p.model.clone(),
                dataset: p.dataset.clone(),
                subset_index: c.subset_index,
                item_id: c.item_id.clone(),
                question: c.question.clone(),
                correct_option_letter: c.correct_option_letter.clone(),
                correct_option_text: ct.clone(),
                wrong_advocated_letter: c.wrong_advocated_letter.clone(),
                wrong_advocated_text: wt.clone(),
                clean_pred_letter: c.pred_letter.clone(),
                clean_p_correct: Num(c.p_correct),
                clean_p_wrong: Num(c.p_wrong),
                ordinary_reset_pred_letter: r.pred_letter.clone(),
                ordinary_reset_p_correct: Num(r.p_correct),
                ordinary_reset_p_wrong: Num(r.p_wrong),
                hysteresis_gap: Num(r.p_wrong - c.p_wrong),
            });
            let (model, dataset) = model_dataset(p);
            d.push(Table23View {
                model,
                dataset,
                item: c.item_id.clone(),
                question: shorten(&c.question, 60),
                correct: format!("{}. {}", c.correct_option_letter, shorten(&ct, 30)),
                advocated_wrong: format!("{}. {}", c.wrong_advocated_letter, shorten(&wt, 30)),
                clean_pred: c.pred_letter.clone(),
                clean_pw: Num(c.p_wrong),
                r0_pred: r.pred_letter.clone(),
                r0_pw: Num(r.p_wrong),
            });
        }
    }
    if !any_pair {
        return Vec::new();
    }
    let mut notes = vec![format!(
        "Items answered correctly in the clean context whose R0 prediction is the advocated wrong option; the first {EXAMPLES_PER_PAIR} per pair by subset_index (deterministic). Texts are shortened in the Markdown/LaTeX view only."
    )];
    if t.is_empty() {
        notes.push(
            "No item of this run is clean-correct and history-wrong, so the table is empty.".into(),
        );
    }
    vec![Output::new(
        "table23_examples",
        "Representative clean-correct / history-wrong examples",
        CriterionFamily::None,
        &t,
    )
    .written_without_rows()
    .with_display(&d)
    .with_notes(notes)]
}
