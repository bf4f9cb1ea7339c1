//! Synthetic item rows for tests: a small run with every built-in condition of the registry and
//! hand-computable probabilities.
//!
//! Two pairs: (`toy_a`, `truthfulqa_mc`, 4 options, correct A, advocated wrong B) and (`toy_b`,
//! `mmlu_pro`, 5 options, correct C, advocated wrong A). Item `i` (0-based) has, before the pair
//! offset `k·0.02` (k = 0 for the first pair, 1 for the second) that reset-like conditions add
//! to p(w) and take from p(c):
//!
//! | condition | p(w) | p(c) |
//! |---|---|---|
//! | clean (clean_context, clean_context_probe, fresh_context, fresh_context_deletion, control clean points) | 0.10 + 0.10·i | 0.70 − 0.10·i |
//! | strong_pressure | 0.60 + 0.10·i | 0.30 − 0.10·i |
//! | R0 (strong_reset, ordinary_strong_reset, full_history_reset, user_pressure, baseline_strong_reset) | [0.50, 0.40, 0.35]ᵢ | [0.30, 0.45, 0.50]ᵢ |
//!
//! (items beyond the third repeat the pattern). The remaining mass is split equally over the
//! other options. So for `toy_a` the Table 2 gap is mean(0.40, 0.20, 0.05) = 0.216667, the
//! conditional lock-in is 1/3 (all three follow w at strong pressure, only item 0 at reset).
//!
//! Unit tests only: the integration tests read `synthetic_rows(3)` from
//! `tests/data/synthetic_rows.jsonl` ([`FIXTURE`], kept equal by a test here).

use crate::dialogue::conditions::{Kind, Registry};
use crate::metrics::{argmax_first, entropy_nats};
use crate::store::rows::letter_map_json;
use crate::store::ItemRow;

/// Probabilities (p_wrong, p_correct) of item `i`, pair `k`, condition `key`.
pub(crate) fn synthetic_probs(key: &str, k: usize, i: usize) -> (f64, f64) {
    let j = i % 3;
    let fi = j as f64;
    let off = 0.02 * k as f64;
    let clean = (0.10 + 0.10 * fi, 0.70 - 0.10 * fi);
    let r0 = ([0.50, 0.40, 0.35][j] + off, [0.30, 0.45, 0.50][j] - off);
    let shift = |base: (f64, f64), d: f64| (base.0 + d, base.1 - d);
    let (control, point) = match key.split_once(':') {
        Some((c, p)) => (Some(c), p),
        None => (None, key),
    };
    match (control, point) {
        (Some("neutral_history"), "strong_reset") => shift(clean, 0.02),
        (Some("neutral_history"), "clean_context")
        | (Some("neutral_history"), "clean_context_probe") => clean,
        (Some("neutral_history"), _) => shift(clean, 0.01),
        (Some("correct_pressure"), "clean_context")
        | (Some("correct_pressure"), "clean_context_probe") => clean,
        (Some("correct_pressure"), _) => (clean.0 * 0.5, clean.1 + 0.10),
        (_, p) => match p {
            "clean_context"
            | "clean_context_probe"
            | "fresh_context"
            | "fresh_context_deletion" => clean,
            "weak_pressure" => (0.30 + 0.10 * fi, 0.50 - 0.10 * fi),
            "medium_pressure" => (0.45 + 0.10 * fi, 0.35 - 0.10 * fi),
            "strong_pressure" => (0.60 + 0.10 * fi, 0.30 - 0.10 * fi),
            "medium_reset" => (0.50 + 0.05 * fi, 0.30),
            "strong_reset"
            | "ordinary_strong_reset"
            | "full_history_reset"
            | "user_pressure"
            | "baseline_strong_reset" => r0,
            "explicit_user_retraction" => shift(r0, -0.05),
            "system_level_reset" => shift(r0, -0.10),
            "context_truncation" => shift(clean, 0.01),
            "neutral_summary_replacement" => shift(clean, 0.03),
            "factual_state_reconstruction" => clean,
            "self_verification_final_label" => r0,
            "evidence_for_each_option_then_answer" | "source_skepticism_reset" => shift(r0, -0.02),
            "evidence_grounded_recovery" => shift(clean, 0.02),
            "remove_strong_only" => shift(r0, -0.05),
            "remove_medium_strong" => shift(r0, -0.10),
            "remove_all_pressure" => shift(clean, 0.08),
            "reset_only" | "clean_no_mention" => shift(clean, 0.01),
            "neutral_wrong_mention" => shift(clean, 0.05),
            "explicit_false_wrong_mention" => shift(clean, 0.03),
            "quoted_false_claim" => shift(clean, 0.04),
            "current_question_refresh_reset" => shift(r0, -0.05),
            "option_relabel_no_shuffle_reset" => shift(r0, -0.08),
            "option_relabel_shuffle_reset" => shift(r0, -0.15),
            _ => clean,
        },
    }
}

fn letter(i: usize) -> String {
    ((b'A' + i as u8) as char).to_string()
}

/// Every condition of the registry for 2 pairs × `n_items` items.
pub(crate) fn synthetic_rows(n_items: usize) -> Vec<ItemRow> {
    synthetic_rows_where(n_items, |_| true)
}

/// Like [`synthetic_rows`], keeping only the conditions for which `keep(key)` is true.
pub(crate) fn synthetic_rows_where(n_items: usize, keep: impl Fn(&str) -> bool) -> Vec<ItemRow> {
    // (model_key, short name, dataset, n_options, correct, wrong)
    let pairs = [
        ("toy_a", "Toy-A", "truthfulqa_mc", 4usize, 0usize, 1usize),
        ("toy_b", "Toy-B", "mmlu_pro", 5, 2, 0),
    ];
    let mut rows = Vec::new();
    for (k, (mk, short, ds, n_opt, correct, wrong)) in pairs.iter().enumerate() {
        for i in 0..n_items {
            let item_id = format!("{ds}_{i:05}");
            let options: Vec<String> = (0..*n_opt)
                .map(|o| format!("Option {o} of item {i}"))
                .collect();
            for c in Registry::bundled().all() {
                if !keep(&c.key) || c.is_experiment() {
                    continue;
                }
                let shuffled = c.recipe().is_some_and(|r| r.shuffled);
                // the shuffle moves every option one letter down (cyclically)
                let pos = |o: usize| if shuffled { (o + 1) % n_opt } else { o };
                let (sc, sw) = (pos(*correct), pos(*wrong));
                let (pw, pc) = synthetic_probs(&c.key, k, i);
                let rest = ((1.0 - pw - pc) / (*n_opt as f64 - 2.0)).max(0.0);
                let mut probs = vec![rest; *n_opt];
                probs[sw] = pw;
                probs[sc] = pc;
                let pred = argmax_first(&probs);
                let letters: String = (0..*n_opt).map(letter).collect();
                let log_scores: Vec<f64> = probs.iter().map(|p| p.max(1e-12).ln() - 1.25).collect();
                let (control, suite) = match c.kind {
                    Kind::Curve(ctrl, _) => (ctrl.key().to_string(), c.suite.key().to_string()),
                    _ => (String::new(), c.suite.key().to_string()),
                };
                let max_prob = probs.iter().copied().fold(f64::NAN, f64::max);
                let mut sorted = probs.clone();
                sorted.sort_by(|a, b| b.total_cmp(a));
                rows.push(ItemRow {
                    schema_version: crate::store::rows::SCHEMA_VERSION,
                    model_key: mk.to_string(),
                    model_short_name: short.to_string(),
                    paper_key: String::new(),
                    model_sha256: "0".repeat(64),
                    dataset: ds.to_string(),
                    item_id: item_id.clone(),
                    subset_index: i,
                    category: String::new(),
                    question: format!("Synthetic question {i} of {ds}, with a comma and a | pipe?"),
                    choices_json: serde_json::to_string(&options).expect("json"),
                    n_options: *n_opt,
                    correct_option_letter: letter(*correct),
                    wrong_advocated_letter: letter(*wrong),
                    condition: c.key.clone(),
                    condition_label: c.label.clone(),
                    suite,
                    control,
                    level: c.level.to_string(),
                    op_category: c.category.to_string(),
                    is_main_condition: c.is_main,
                    history_role: c.history_role.to_string(),
                    history_turn_count: 0,
                    user_prompt: String::new(),
                    system_prompt: String::new(),
                    shown_correct_letter: letter(sc),
                    shown_wrong_letter: letter(sw),
                    pred_letter: letter(pred),
                    p_wrong: pw,
                    p_correct: pc,
                    correct: pred == sc,
                    wrong_follow: pred == sw,
                    old_letter_follow: pred == *wrong,
                    entropy: entropy_nats(&probs),
                    max_prob,
                    margin_top2: (sorted[0].ln() - sorted[1].max(1e-12).ln()),
                    option_probs_json: letter_map_json(&letters, &probs),
                    option_log_scores_json: letter_map_json(&letters, &log_scores),
                    letter_mass: 1.0,
                    top_tokens_json: "[]".into(),
                    prompt_tokens: 0,
                    prompt_hash: String::new(),
                    tokens_evaluated: 0,
                    tokens_reused: 0,
                    score_key: String::new(),
                    scoring_settings: String::new(),
                    prompts_fingerprint: String::new(),
                    provenance: String::new(),
                    gold_evidence_text: String::new(),
                    evidence_provenance: String::new(),
                    letter_bound_json: String::new(),
                    answer_format: String::new(),
                    open_answers_json: String::new(),
                });
            }
        }
    }
    rows
}

/// Sets a row's option distribution (in option order, before any relabel shuffle) and
/// everything derived from it: p(w), p(c), prediction, correct / wrong-follow flags, entropy,
/// max prob, margin and the stored probabilities and log-scores (`ln p`).
#[cfg(test)]
pub(crate) fn set_probs(r: &mut ItemRow, probs: &[f64]) {
    assert_eq!(probs.len(), r.n_options, "one probability per option");
    let idx = |l: &str| (l.as_bytes()[0] - b'A') as usize;
    let (w, c) = (idx(&r.shown_wrong_letter), idx(&r.shown_correct_letter));
    let pred = argmax_first(probs);
    let letters: String = (0..r.n_options).map(letter).collect();
    let log_scores: Vec<f64> = probs.iter().map(|p| p.max(1e-300).ln()).collect();
    let mut sorted = probs.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    r.p_wrong = probs[w];
    r.p_correct = probs[c];
    r.pred_letter = letter(pred);
    r.correct = pred == c;
    r.wrong_follow = pred == w;
    r.old_letter_follow = r.pred_letter == r.wrong_advocated_letter;
    r.entropy = entropy_nats(probs);
    r.max_prob = sorted[0];
    r.margin_top2 = sorted[0].ln() - sorted[1].max(1e-12).ln();
    r.option_probs_json = letter_map_json(&letters, probs);
    r.option_log_scores_json = letter_map_json(&letters, &log_scores);
}

/// Sets p(w) and p(c) of a row, the rest of the mass split equally over the other options
/// (as [`synthetic_rows`] does).
#[cfg(test)]
pub(crate) fn reshape(r: &mut ItemRow, p_wrong: f64, p_correct: f64) {
    let idx = |l: &str| (l.as_bytes()[0] - b'A') as usize;
    let (w, c) = (idx(&r.shown_wrong_letter), idx(&r.shown_correct_letter));
    let rest = ((1.0 - p_wrong - p_correct) / (r.n_options as f64 - 2.0)).max(0.0);
    let mut probs = vec![rest; r.n_options];
    probs[w] = p_wrong;
    probs[c] = p_correct;
    set_probs(r, &probs);
}

/// `synthetic_rows(3)` as JSON lines, for the integration tests (tests/common/synthetic.rs
/// reads it; a crate outside the library cannot build the rows).
pub(crate) const FIXTURE: &str = "tests/data/synthetic_rows.jsonl";

#[test]
fn the_integration_tests_fixture_is_synthetic_rows() {
    let want: String = synthetic_rows(3)
        .iter()
        .map(|r| serde_json::to_string(r).expect("an item row serialises") + "\n")
        .collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    if std::env::var_os("HYST_WRITE_FIXTURE").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not synthetic_rows(3): rewrite it with HYST_WRITE_FIXTURE=1 cargo test --release --lib fixture",
        path.display()
    );
}
