//! `bench batch` on a real model (SmolLM2, one item): the sequential, packed and from-scratch
//! runs with their matched raw anchors, the scores' identity line, the time split of each run
//! (its measured parts sum to the wall time within 5%), the throughput curve and its figure.
//! No timing is asserted: only that the bench measured what it says and that it adds up.

use std::process::Command;

fn number_before(line: &str, unit: &str) -> f64 {
    let at = line.find(unit).unwrap_or_else(|| panic!("no {unit:?} in {line:?}"));
    line[..at].split_whitespace().last().unwrap().parse().unwrap_or_else(|_| panic!("no number before {unit:?} in {line:?}"))
}

#[test]
fn bench_batch_packs_exactly_and_its_time_split_adds_up() {
    let dir = tempfile::tempdir().unwrap();
    let figure = dir.path().join("curve.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_hyst-tui"))
        .args(["bench", "batch", "--limit", "1", "--pack", "4", "--curve", "1,4", "--workers", "1", "--figure"])
        .arg(&figure)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "bench batch failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));

    assert!(
        text.contains("packed vs sequential bit-identical; sequential vs from scratch bit-identical"),
        "scores differ:\n{text}"
    );
    // One row per run, each with a matched raw anchor that ran.
    let row = |label: &str| text.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label:?} row:\n{text}"));
    let per_call = |l: &str| l.split_whitespace().rev().nth(5).unwrap().parse::<f64>().unwrap();
    for label in ["sequential (pack 1)", "packed (pack 4)", "from scratch"] {
        let l = row(label);
        assert!(number_before(l, "s ") > 0.0 && per_call(l) > 0.0, "{l}");
    }
    assert!(
        per_call(row("packed (pack 4)")) > per_call(row("sequential (pack 1)")),
        "packing put no more tokens into a decode call:\n{text}"
    );
    assert!(text.contains("position-0 anchor"), "{text}");

    // Each split: eleven measured parts, and their sum is the wall time within 5%.
    let sums: Vec<f64> = text.lines().filter(|l| l.contains("sum of the parts")).map(|l| number_before(l, "% of the wall time")).collect();
    assert_eq!(sums.len(), 2, "{text}");
    for s in sums {
        assert!((95.0..=105.0).contains(&s), "the measured parts are {s}% of the wall time:\n{text}");
    }
    for part in ["model loading", "llama.cpp decode", "KV copy and restore", "logits → letters", "score store and manifest"] {
        assert_eq!(text.lines().filter(|l| l.trim_start().starts_with(part)).count(), 2, "{part}:\n{text}");
    }

    // The curve reuses the two runs, and its figure names both points.
    assert!(text.lines().any(|l| l.split_whitespace().next() == Some("4") && l.ends_with("identical")), "{text}");
    let svg = std::fs::read_to_string(&figure).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("pack 1") && svg.contains("pack 4"), "{svg}");
}
