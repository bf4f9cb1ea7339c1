//! Run plans: the bundled paper plan's scopes through `--dry-run --json` (no model is loaded),
//! a plan of our own, and the plan's errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hyst_tui::data::parquet::{write_mmlu_pro_parquet, write_truthfulqa_parquet};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).env("HYST_SCORE_STORE", "off").args(args).output().unwrap()
}

/// Small TruthfulQA-MC and MMLU-Pro parquet files of the real schemas (the real datasets cannot
/// be downloaded here).
fn datasets(dir: &Path) -> (PathBuf, PathBuf) {
    let tqa = dir.join("tqa.parquet");
    let rows: Vec<(String, Vec<String>, Vec<i32>)> = (0..6)
        .map(|i| {
            (
                format!("Synthetic misconception question number {i}?"),
                vec![format!("true answer {i}"), format!("myth {i}"), format!("other myth {i}")],
                vec![1, 0, 0],
            )
        })
        .collect();
    write_truthfulqa_parquet(&tqa, &rows).unwrap();
    let mmlu = dir.join("mmlu.parquet");
    let rows: Vec<(i64, String, Vec<String>, i64, String)> = (0..6)
        .map(|i| {
            (
                100 + i,
                format!("Synthetic exam question {i}: which option is right?"),
                (0..5).map(|k| format!("option {k} of {i}")).collect(),
                i % 5,
                "math".to_string(),
            )
        })
        .collect();
    write_mmlu_pro_parquet(&mmlu, &rows).unwrap();
    (tqa, mmlu)
}

fn dry_json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn pairs_with(v: &Value, suite: &str) -> Vec<(String, String)> {
    v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["suites"].as_array().unwrap().iter().any(|s| s == suite))
        .map(|p| (p["model"].as_str().unwrap().to_string(), p["dataset"].as_str().unwrap().to_string()))
        .collect()
}

fn scope(v: &Value, table: &str) -> Vec<(String, String)> {
    v["tables"][table]
        .as_array()
        .unwrap_or_else(|| panic!("no scope for {table}"))
        .iter()
        .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
        .collect()
}

fn pair(m: &str, d: &str) -> (String, String) {
    (m.to_string(), d.to_string())
}

#[test]
fn the_paper_plan_has_the_paper_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let (tqa, mmlu) = datasets(dir.path());
    let ds = format!("truthfulqa:{},mmlu_pro:{}", tqa.display(), mmlu.display());
    let v = dry_json(&["--batch", "--plan", "paper", "--datasets", &ds, "--n", "3", "--dry-run", "--json"]);
    let (tq, mm) = ("truthfulqa_mc", "mmlu_pro");
    let original = ["qwen2.5-1.5b", "qwen2.5-7b", "qwen2.5-14b", "mistral-7b-v0.3"];
    let expanded = ["llama-3.1-8b", "gemma-2-2b", "gemma-2-9b"];
    let all: Vec<(String, String)> = original.iter().chain(&expanded).flat_map(|m| [pair(m, tq), pair(m, mm)]).collect();
    // 14 pairs in the paper's order, each with 3 items.
    let listed: Vec<(String, String)> =
        v["pairs"].as_array().unwrap().iter().map(|p| pair(p["model"].as_str().unwrap(), p["dataset"].as_str().unwrap())).collect();
    assert_eq!(listed, all);
    assert!(v["pairs"].as_array().unwrap().iter().all(|p| p["items"] == 3));
    for s in ["hierarchy", "r7", "controls", "false-context"] {
        assert_eq!(pairs_with(&v, s), all, "{s}");
    }
    let truncation = vec![pair(original[0], tq), pair(original[0], mm), pair(original[2], mm), pair(original[3], tq), pair(original[3], mm)];
    assert_eq!(pairs_with(&v, "truncation"), truncation);
    let relabel = vec![pair(original[0], tq), pair(original[0], mm), pair(original[1], mm), pair(original[2], mm), pair(original[3], tq), pair(original[3], mm)];
    assert_eq!(pairs_with(&v, "relabel"), relabel);
    let sorted = |mut x: Vec<(String, String)>| {
        x.sort();
        x
    };
    let orig_pairs: Vec<(String, String)> = original.iter().flat_map(|m| [pair(m, tq), pair(m, mm)]).collect();
    let exp_pairs: Vec<(String, String)> = expanded.iter().flat_map(|m| [pair(m, tq), pair(m, mm)]).collect();
    assert_eq!(scope(&v, "Table 2"), sorted(orig_pairs.clone()));
    assert_eq!(scope(&v, "Table 10"), sorted(orig_pairs));
    assert_eq!(scope(&v, "Table 8"), sorted(exp_pairs));
    for t in ["Table 4", "Table 6", "Table 9", "Table 21"] {
        assert_eq!(scope(&v, t), sorted(all.clone()), "{t}");
    }
    assert_eq!(scope(&v, "Table 5"), sorted(truncation.clone()));
    assert_eq!(scope(&v, "Table 18"), sorted(truncation));
    assert_eq!(scope(&v, "Table 13"), sorted(relabel));
    // Work estimates: contexts per item depend on the suites; reuse saves tokens.
    let p0 = &v["pairs"][0];
    let p_exp = v["pairs"].as_array().unwrap().iter().find(|p| p["model"] == "gemma-2-2b").unwrap();
    assert!(p0["contexts"].as_u64().unwrap() > p_exp["contexts"].as_u64().unwrap(), "truncation and relabel add contexts");
    for p in v["pairs"].as_array().unwrap() {
        let (with, without) = (p["tokens_estimate"].as_u64().unwrap(), p["tokens_estimate_without_reuse"].as_u64().unwrap());
        assert!(with > 0 && with < without, "{p}");
    }
    assert_eq!(v["items"], 14 * 3);
    // No model file was needed, and no run directory was made.
    assert!(!Path::new(v["out"].as_str().unwrap()).exists());
}

#[test]
fn a_plan_of_our_own_and_its_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.toml");
    let tiny = format!("jsonl:{}/tests/data/tiny.jsonl", env!("CARGO_MANIFEST_DIR"));
    std::fs::write(
        &plan,
        format!(
            "[datasets]\nsample = \"sample\"\ntiny = \"{tiny}\"\n\n\
             [[run]]\nmodels = [\"smollm2-135m\"]\nsuites = [\"hierarchy\"]\ntables = [\"Table 4\"]\n\n\
             [[run]]\npairs = [[\"smollm2-135m\", \"tiny\"]]\nsuites = [\"truncation\"]\ntables = [\"5\"]\n"
        ),
    )
    .unwrap();
    let p = plan.to_str().unwrap();
    let v = dry_json(&["--batch", "--plan", p, "--limit", "2", "--dry-run", "--json"]);
    assert_eq!(pairs_with(&v, "hierarchy"), vec![pair("smollm2-135m", "sample"), pair("smollm2-135m", "tiny")]);
    assert_eq!(pairs_with(&v, "truncation"), vec![pair("smollm2-135m", "tiny")]);
    assert_eq!(scope(&v, "Table 5"), vec![pair("smollm2-135m", "tiny")]);
    assert!(v["pairs"].as_array().unwrap().iter().all(|p| p["items"] == 2));
    // The text form names the pairs and the scopes.
    let o = run(&["--batch", "--plan", p, "--limit", "2", "--dry-run"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Table 5 pools 1 pairs: smollm2-135m/tiny"), "{text}");
    // Mistakes: one error line, exit 1 (usage errors: 2).
    let fails = |args: &[&str], code: i32, needle: &str| {
        let o = run(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(needle), "{e}");
    };
    fails(&["--batch", "--plan", p, "--models", "smollm2-135m", "--dry-run"], 2, "cannot be used with");
    fails(&["--batch", "--plan", "/no/such/plan.toml", "--dry-run"], 1, "cannot read run plan");
    fails(&["--batch", "--plan", p, "--datasets", "mmlu_pro:x.parquet", "--dry-run"], 1, "has no dataset mmlu_pro");
    std::fs::write(&plan, "[[run]]\nmodels = [\"smollm2-135m\"]\nsuites = [\"bogus\"]\n").unwrap();
    fails(&["--batch", "--plan", p, "--dry-run"], 1, "unknown suite \"bogus\"");
}
