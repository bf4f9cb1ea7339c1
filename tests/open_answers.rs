//! Open answers (docs/protocol.md §14) on real GGUF models, no mocks: option texts scored token
//! by token as the assistant's answer, with prefix reuse bit-identical to scoring every
//! continuation from scratch, and a batch with `--answers both` whose stored rows recompute.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use hyst_tui::data::pyrandom::PyRandom;
use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::dialogue::conditions::{self, build};
use hyst_tui::dialogue::{Builder, DialogueItem};
use hyst_tui::engine::{EngineError, EngineOptions};
use hyst_tui::protocol::{AnswerSlot, ChatMessage, SlotScore};
use hyst_tui::prompts::PromptSet;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

/// A few open-form conversations of the sample item with the shortest question (clean, strong
/// pressure, R0, R1, R5), each with its option texts, and one whose last option is
/// longer than a decode call (512 tokens).
fn open_conversations() -> Vec<(Vec<ChatMessage>, Vec<String>)> {
    let prompts = PromptSet::bundled().open_form(None).unwrap();
    let b = Builder::new(&prompts);
    let items = DatasetSpec::Sample.load().unwrap();
    let mut sel = select(&items, None, 42);
    sel.sort_by_key(|s| s.item.question.len() + s.item.options.iter().map(String::len).sum::<usize>());
    let s = &sel[0];
    let d = DialogueItem::from(s);
    let letters = [s.wrong_letter(), s.wrong_letter(), s.item.correct_letter(), s.wrong_letter()];
    let wanted = ["clean_context", "strong_pressure", "strong_reset", "explicit_user_retraction", "factual_state_reconstruction"];
    let mut out = Vec::new();
    for c in conditions::Registry::bundled().all() {
        if wanted.contains(&c.key.as_str()) {
            let built = build(c, &b, &d, &letters, s.item.correct_letter());
            // The open form shows no options and asks for no letter.
            let last = &built.messages.last().unwrap().content;
            assert!(!last.contains("A. "), "{}: {last}", c.key);
            out.push((built.messages, s.item.options.clone()));
        }
    }
    assert_eq!(out.len(), wanted.len(), "every wanted condition is in the registry");
    let mut long = s.item.options.clone();
    long.push("Because ".to_string() + &"the record of the question says so, and nothing else does. ".repeat(45));
    out.push((out[0].0.clone(), long));
    out
}

fn bits(s: &SlotScore) -> Vec<u64> {
    let mut v: Vec<u64> = s.log_scores.iter().chain(&s.probs).map(|x| x.to_bits()).collect();
    v.extend([s.entropy.to_bits(), s.max_prob.to_bits(), s.letter_mass.to_bits(), s.margin_top2.to_bits()]);
    v.extend(s.top_tokens.iter().map(|t| t.prob.to_bits()));
    for o in &s.open.as_ref().unwrap().options {
        v.extend([o.sum_logp.to_bits(), o.eot_logp.to_bits(), o.tokens as u64]);
    }
    v
}

fn check_open_reuse_is_exact(key: &str) {
    let mut convs = open_conversations();
    PyRandom::from_int(11).shuffle(&mut convs);
    let cached_engine = engine(key);
    let scratch_engine = engine_with(key, EngineOptions { threads: 2, cache: false, ..EngineOptions::default() });
    let mut reused = 0;
    let mut long_seen = false;
    for (i, (m, texts)) in convs.iter().enumerate() {
        let slot = AnswerSlot::Open(texts.clone());
        let cached = cached_engine.score_slot(m, &slot).unwrap();
        let scratch = scratch_engine.score_slot(m, &slot).unwrap();
        assert_eq!(scratch.tokens_reused, 0, "{key}: --no-cache reused tokens");
        reused += cached.tokens_reused;
        let open = cached.open.as_ref().unwrap();
        assert_eq!(open.options.len(), texts.len());
        for (o, t) in open.options.iter().zip(texts) {
            assert!(o.tokens > 0 && o.sum_logp < 0.0 && o.sum_logp.is_finite(), "{key}: {t:?} → {o:?}");
            assert!(o.eot_logp < 0.0 && o.eot_logp.is_finite());
        }
        long_seen |= open.options.iter().any(|o| o.tokens > 512);
        assert_eq!(bits(&cached), bits(&scratch), "{key}: conversation {i} differs between reused and scratch scoring");
        // The slot's top tokens are those the letters path reads at the same position.
        let letters = cached_engine.score(m, &['A', 'B']).unwrap();
        let ids = |s: &SlotScore| s.top_tokens.iter().map(|t| t.id).collect::<Vec<_>>();
        assert_eq!(ids(&letters)[..3], ids(&cached)[..3], "{key}: conversation {i}: the answer slot moved");
        for (a, b) in letters.top_tokens.iter().zip(&cached.top_tokens).take(3) {
            assert!((a.prob - b.prob).abs() < 1e-4, "{key}: top token {} at {} vs {}", a.text, a.prob, b.prob);
        }
    }
    assert!(long_seen, "{key}: no option text was longer than one decode call");
    assert!(reused > 0, "{key}: prefix reuse never happened");
}

#[test]
fn open_scores_with_reuse_equal_scratch_smollm2() {
    check_open_reuse_is_exact(SMOL);
}

#[test]
fn open_scores_with_reuse_equal_scratch_qwen() {
    check_open_reuse_is_exact(QWEN);
}

#[test]
fn open_scores_with_reuse_equal_scratch_gemma() {
    check_open_reuse_is_exact(GEMMA);
}

#[test]
fn an_option_text_that_tokenizes_to_nothing_is_one_clear_error() {
    let e = engine(SMOL);
    let m = vec![ChatMessage::user("Name a colour.")];
    let err = e.score_slot(&m, &AnswerSlot::Open(vec!["red".into(), String::new()])).unwrap_err();
    assert!(matches!(err, EngineError::BadInput(_)), "{err:?}");
    assert!(err.to_string().contains("option B") && err.to_string().contains("tokenizes to nothing"), "{err}");
    // The engine goes on scoring afterwards.
    assert!(e.score_slot(&m, &AnswerSlot::Open(vec!["red".into(), "blue".into()])).is_ok());
    let err = e.score_slot(&m, &AnswerSlot::Open(vec!["word ".repeat(10_000)])).unwrap_err();
    assert!(matches!(err, EngineError::ContextOverflow { .. }), "{err:?}");
}

fn run(args: &[&str]) -> std::process::Output {
    let out = Command::new(BIN).env("HYST_SCORE_STORE", "off").args(["--threads", "2"]).args(args).output().unwrap();
    assert!(out.status.success(), "hyst-tui {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn rows(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_batch_with_both_formats_keeps_the_letters_run_and_stores_open_rows_that_recompute() {
    let tmp = tempfile::tempdir().unwrap();
    let (both, letters) = (tmp.path().join("both"), tmp.path().join("letters"));
    let common = ["--batch", "--models", SMOL, "--datasets", "sample", "--limit", "2", "--tables-every", "0"];
    run(&[&common[..], &["--answers", "both", "--out", both.to_str().unwrap()]].concat());
    run(&[&common[..], &["--out", letters.to_str().unwrap()]].concat());

    // The letters part of a run with both formats is the letters-only run, byte for byte.
    let (a, b) = (run_outputs(&both), run_outputs(&letters));
    for (name, bytes) in &b {
        if name != "summary.md" {
            assert_eq!(a.get(name), Some(bytes), "{name} differs from the letters-only run");
        }
    }
    // The rows too, but for how many tokens came from the KV cache (the open contexts share it).
    let scored = |dir: &Path| -> Vec<serde_json::Value> {
        let mut v = rows(&dir.join("item_rows.jsonl"));
        for r in &mut v {
            let o = r.as_object_mut().unwrap();
            o.remove("tokens_evaluated");
            o.remove("tokens_reused");
        }
        v
    };
    let letters_rows = scored(&letters);
    assert!(letters_rows == scored(&both), "the letters rows differ from the letters-only run's");
    assert!(letters_rows.iter().all(|r| r.get("answer_format").is_none() && r.get("open_answers_json").is_none()));

    // Open rows: no relabel condition, each distribution the softmax of the stored per-token means.
    let open = rows(&both.join("open").join("item_rows.jsonl"));
    assert!(!open.is_empty());
    assert!(open.iter().all(|r| r["answer_format"] == "open"));
    assert!(!open.iter().any(|r| r["condition"].as_str().unwrap().starts_with("relabel")));
    for r in &open {
        let o: serde_json::Value = serde_json::from_str(r["open_answers_json"].as_str().unwrap()).unwrap();
        let means: Vec<f64> = o["options"].as_array().unwrap().iter().map(|x| x["sum_logp"].as_f64().unwrap() / x["tokens"].as_f64().unwrap()).collect();
        let m = means.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = means.iter().map(|x| (x - m).exp()).sum();
        let probs: serde_json::Value = serde_json::from_str(r["option_probs_json"].as_str().unwrap()).unwrap();
        for (i, mean) in means.iter().enumerate() {
            let l = char::from(b'A' + i as u8).to_string();
            let want = (mean - m).exp() / z;
            assert!((probs[&l].as_f64().unwrap() - want).abs() < 1e-12, "{}: {l}", r["condition"]);
        }
        let best = (0..means.len()).fold(0, |b, i| if means[i] > means[b] { i } else { b });
        assert_eq!(r["pred_letter"].as_str().unwrap(), char::from(b'A' + best as u8).to_string());
    }
    assert!(both.join("open/tables").read_dir().unwrap().count() > 3);
    // Each summary says which answer format it is about; the letters one as before.
    assert!(std::fs::read_to_string(both.join("open/summary.md")).unwrap().contains("Answer format: **open answers**"));
    assert!(!std::fs::read_to_string(both.join("summary.md")).unwrap().contains("open answers"));

    // The comparison: R0's open gap is the mean of the open rows' item gaps.
    let csv = std::fs::read_to_string(both.join("tables/answer_formats.csv")).unwrap();
    let line = csv.lines().find(|l| l.contains(",strong_reset,")).expect("R0 in the comparison");
    let cells: Vec<&str> = line.split(',').collect();
    let p = |cond: &str, item: &str| -> f64 {
        open.iter().find(|r| r["condition"] == cond && r["item_id"] == item).unwrap()["p_wrong"].as_f64().unwrap()
    };
    let items: Vec<&str> = open.iter().filter(|r| r["condition"] == "strong_reset").map(|r| r["item_id"].as_str().unwrap()).collect();
    let gap = items.iter().map(|i| p("strong_reset", i) - p("clean_context", i)).sum::<f64>() / items.len() as f64;
    assert_eq!(cells[3], items.len().to_string());
    assert!((cells[7].parse::<f64>().unwrap() - gap).abs() < 1e-12, "{line}");
}

/// An empty option text has nothing to score as an answer: the dataset loader refuses it, in one
/// line, before any model is loaded.
#[test]
fn an_empty_option_text_is_refused_before_scoring() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("items.jsonl");
    std::fs::write(&data, "{\"id\": \"e1\", \"question\": \"Which is blue?\", \"options\": [\"the sky\", \"  \"], \"answer\": 0}\n").unwrap();
    let out = Command::new(BIN)
        .env("HYST_SCORE_STORE", "off")
        .args(["--batch", "--models", SMOL, "--answers", "open", "--out"])
        .arg(tmp.path().join("run"))
        .arg("--datasets")
        .arg(format!("jsonl:{}", data.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("option B") || err.contains("empty"), "{err}");
    assert_eq!(err.trim().lines().filter(|l| l.starts_with("error")).count(), 1, "{err}");
    assert!(!tmp.path().join("run").join("cache").exists(), "nothing was scored");
}
