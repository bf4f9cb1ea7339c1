//! Table 23 — representative clean-correct / history-wrong examples.

use super::common::*;
use super::format::*;
use super::index::{letter_index, CLEAN_REF, R0_REF};
use super::{Ctx, Output};

/// Examples per pair (the first by `subset_index`).
pub const EXAMPLES_PER_PAIR: usize = 3;

fn option_text(choices_json: &str, letter: &str) -> String {
    let opts: Vec<String> = serde_json::from_str(choices_json).unwrap_or_default();
    letter_index(letter)
        .and_then(|i| opts.get(i).cloned())
        .unwrap_or_default()
}

pub(super) fn table23(ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "model_key",
        "model_short_name",
        "dataset",
        "subset_index",
        "item_id",
        "question",
        "correct_option_letter",
        "correct_option_text",
        "wrong_advocated_letter",
        "wrong_advocated_text",
        "clean_pred_letter",
        "clean_p_correct",
        "clean_p_wrong",
        "ordinary_reset_pred_letter",
        "ordinary_reset_p_correct",
        "ordinary_reset_p_wrong",
        "hysteresis_gap",
    ]);
    let mut d = Table::new(&[
        "Model",
        "Dataset",
        "Item",
        "Question",
        "Correct",
        "Advocated wrong",
        "Clean pred",
        "p_clean(w)",
        "R0 pred",
        "p_R0(w)",
    ]);
    let mut any_pair = false;
    for p in &ctx.idx.pairs {
        let (Some(clean), Some(r0)) = (p.resolve(&CLEAN_REF), p.resolve(&R0_REF)) else {
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
            t.push(vec![
                txt(p.model_key.clone()),
                txt(p.model.clone()),
                txt(p.dataset.clone()),
                int(c.subset_index),
                txt(c.item_id.clone()),
                txt(c.question.clone()),
                txt(c.correct_option_letter.clone()),
                txt(ct.clone()),
                txt(c.wrong_advocated_letter.clone()),
                txt(wt.clone()),
                txt(c.pred_letter.clone()),
                num(c.p_correct),
                num(c.p_wrong),
                txt(r.pred_letter.clone()),
                num(r.p_correct),
                num(r.p_wrong),
                num(r.p_wrong - c.p_wrong),
            ]);
            let mut cells = pair_cells(p);
            cells.extend([
                txt(c.item_id.clone()),
                txt(shorten(&c.question, 60)),
                txt(format!("{}. {}", c.correct_option_letter, shorten(&ct, 30))),
                txt(format!(
                    "{}. {}",
                    c.wrong_advocated_letter,
                    shorten(&wt, 30)
                )),
                txt(c.pred_letter.clone()),
                num(c.p_wrong),
                txt(r.pred_letter.clone()),
                num(r.p_wrong),
            ]);
            d.push(cells);
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
    vec![Output::from_table(
        "table23_examples",
        "Representative clean-correct / history-wrong examples",
        NO_CRITERION,
        t,
    )
    .with_display_table(d)
    .with_notes(notes)]
}
