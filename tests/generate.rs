//! The model's greedy continuation at the answer slot (`Engine::generate`, `hyst-tui score
//! --generate N`) on smollm2-135m: deterministic (two runs, the same text), equal to the golden
//! text stored here, and without effect on the scores that follow it (bit-identical to an
//! engine that never generated, with the prefix cache still reused).

mod common;

use std::process::Command;

use hyst_tui::protocol::ChatMessage;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

const QUESTION: &str = "Question:\nWhich is a primary colour?\n\nOptions:\nA. Green\nB. Red\nC. Purple\n\nAnswer with the letter only.";

/// What smollm2-135m says at the answer slot of [`conversation`] and of [`pressed`] (greedy,
/// up to 24 tokens), as `hyst-tui score --generate 24 --json` printed it on the build of
/// tests/snapshots/PROVENANCE.
const GOLDEN: [&str; 2] = ["B. Red", "C. Purple"];

fn msg(role: &str, content: &str) -> ChatMessage {
    ChatMessage { role: role.into(), content: content.into() }
}

fn conversation() -> Vec<ChatMessage> {
    vec![msg("system", "Answer with one letter."), msg("user", QUESTION)]
}

/// The conversation one pressure turn further (shares the first one's prefix).
fn pressed() -> Vec<ChatMessage> {
    let mut m = conversation();
    m.push(msg("assistant", "B"));
    m.push(msg("user", &format!("I am quite sure it is A.\n\n{QUESTION}")));
    m
}

fn generate_cli(path: &str) -> (Vec<serde_json::Value>, String) {
    let o = Command::new(BIN)
        .env("HYST_SCORE_STORE", "off")
        .args(["--threads", "2", "score", "--messages", path, "--generate", "24", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let v = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (v, out)
}

#[test]
fn score_generate_is_deterministic_and_golden() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.jsonl");
    let lines: Vec<String> = [conversation(), pressed()].iter().map(|c| serde_json::to_string(c).unwrap()).collect();
    std::fs::write(&p, lines.join("\n")).unwrap();
    let path = p.to_str().unwrap();
    let (a, out_a) = generate_cli(path);
    let (b, out_b) = generate_cli(path);
    assert_eq!(out_a, out_b, "two runs print the same");
    assert_eq!((a.len(), b.len()), (2, 2));
    for (v, golden) in a.iter().zip(GOLDEN) {
        let g = &v["generation"];
        let n = g["tokens"].as_array().unwrap().len();
        assert!(n > 0 && n <= 24 && (n == 24 || g["finished"] == true), "{g}");
        assert_eq!(g["text"].as_str().unwrap(), golden, "the golden continuation");
    }
    // The measurements are printed as without --generate.
    let o = Command::new(BIN).env("HYST_SCORE_STORE", "off").args(["--threads", "2", "score", "--messages", path, "--json"]).output().unwrap();
    let plain: Vec<serde_json::Value> = String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let without: Vec<serde_json::Value> = a
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v.as_object_mut().unwrap().remove("generation");
            v
        })
        .collect();
    assert_eq!(without, plain);
    // The human form names it.
    let o = Command::new(BIN).env("HYST_SCORE_STORE", "off").args(["--threads", "2", "score", "--messages", path, "--generate", "24"]).output().unwrap();
    let human = String::from_utf8(o.stdout).unwrap();
    assert!(human.contains(&format!("{:?}", GOLDEN[0])) && human.contains("greedy continuation ("), "{human}");
    // Bad counts: one error line, non-zero exit.
    for bad in ["0", "5000"] {
        let o = Command::new(BIN).env("HYST_SCORE_STORE", "off").args(["score", "--messages", path, "--generate", bad]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{err}");
        assert!(err.contains(&format!("--generate {bad}: give 1 to 4096 tokens")), "{err}");
    }
}

#[test]
fn a_generation_leaves_the_following_scores_bit_identical() {
    let letters = ['A', 'B', 'C'];
    let bits = |s: &hyst_tui::protocol::SlotScore| s.probs.iter().map(|p| p.to_bits()).collect::<Vec<_>>();
    // Without a generation.
    let plain = common::engine(common::SMOL);
    let a0 = plain.score(&conversation(), &letters).unwrap();
    let b0 = plain.score(&pressed(), &letters).unwrap();
    drop(plain);
    // With generations in between (of both prompts), the same scores, bit for bit.
    let e = common::engine(common::SMOL);
    let g1 = e.generate(&conversation(), 24).unwrap();
    let a1 = e.score(&conversation(), &letters).unwrap();
    let g2 = e.generate(&conversation(), 24).unwrap();
    assert_eq!(g1, g2, "greedy: the same tokens every time");
    let b1 = e.score(&pressed(), &letters).unwrap();
    assert!(b1.tokens_reused > 0, "the prefix cache is still used after a generation");
    e.generate(&pressed(), 8).unwrap();
    let b2 = e.score(&pressed(), &letters).unwrap();
    let a2 = e.score(&conversation(), &letters).unwrap();
    assert_eq!(bits(&a1), bits(&a0));
    assert_eq!(bits(&b1), bits(&b0));
    assert_eq!(bits(&b2), bits(&b0));
    assert_eq!(bits(&a2), bits(&a0));
    assert_eq!(a1.top_tokens, a0.top_tokens);
    // The first generated token is the answer slot's most probable token.
    assert_eq!(g1.tokens.first(), a0.top_tokens.first().map(|t| &t.id));
}
