//! `doctor --hf-tokenizer`: llama.cpp vs the Hugging Face `tokenizers` crate, with tokenizer.json
//! files converted offline from the GGUFs (scripts/fetch-test-models.sh makes them).

#![cfg(feature = "hf-tokenizer")]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn doctor(key: &str) -> (bool, String) {
    let tok = hyst_tui::config::models_dir().join("tokenizers").join(key).join("tokenizer.json");
    assert!(tok.exists(), "{} missing: run `bash scripts/fetch-test-models.sh`", tok.display());
    let o = Command::new(BIN)
        .args(["--threads", "2", "doctor", "--model", key, "--hf-tokenizer", tok.to_str().unwrap()])
        .output()
        .unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn smollm2_and_qwen_tokenize_like_hugging_face() {
    for key in ["smollm2-135m", "qwen2.5-coder-0.5b"] {
        let (ok, out) = doctor(key);
        assert!(ok, "{key}: {out}");
        assert!(out.contains("agree on all 54 probes"), "{key}: {out}");
    }
}

#[test]
fn a_disagreement_is_reported_with_the_first_differing_token() {
    // The Gemma-3 tokenizer.json converted from GGUF metadata splits "user" after
    // <start_of_turn> differently from llama.cpp: doctor must say where, with context.
    let (ok, out) = doctor("gemma3-270m");
    assert!(!ok);
    assert!(out.contains("first difference at token 2"), "{out}");
    assert!(out.contains("\"<start_of_turn>\""), "{out}");
    // letter variants still agree, so only the rendered prompts are reported
    assert!(!out.contains("letter"), "{out}");
}
