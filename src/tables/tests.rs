//! Tests of the table writer on the synthetic run of [`super::testutil`].

use std::collections::BTreeMap;
use std::path::Path;

use super::index::RunIndex;
use super::registry::TABLES;
use super::testutil::{synthetic_rows, synthetic_rows_where};
use super::{build_tables, write_tables, TableOptions};

fn opts() -> TableOptions {
    TableOptions {
        bootstrap_samples: 2000,
        seed: 12345,
        ..TableOptions::default()
    }
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// All files under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for sub in ["", "tables"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap().flatten() {
            if e.path().is_file() {
                let rel = format!("{sub}/{}", e.file_name().to_string_lossy());
                m.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    m
}

/// The CSV row (as fields) whose fields contain all of `needles`.
fn csv_row(csv: &str, needles: &[&str]) -> Vec<String> {
    for line in csv.lines() {
        let fields = split_csv(line);
        if needles.iter().all(|n| fields.iter().any(|f| f == n)) {
            return fields;
        }
    }
    panic!("no row with {needles:?} in\n{csv}");
}

fn split_csv(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, q) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => q = !q,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn field(csv: &str, row: &[String], name: &str) -> String {
    let header = split_csv(csv.lines().next().unwrap());
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    row[i].clone()
}

/// Every file stem of the registry.
fn all_stems() -> Vec<&'static str> {
    TABLES
        .iter()
        .flat_map(|t| t.stems.iter().copied())
        .collect()
}

/// Asserts that a stem named by a test is one of the registry's.
fn registered(stem: &str) -> &str {
    assert!(all_stems().contains(&stem), "{stem} is not in the registry");
    stem
}

#[test]
fn every_expected_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let rows = synthetic_rows(3);
    let written = write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    // Every paper table: the synthetic rows hold no experiment operations (their tables are
    // tested in tables/experiments.rs and tests/experiments.rs).
    let experiment: Vec<&str> = TABLES.iter().filter(|t| t.id == super::output::EXPERIMENT_ID || t.id == super::output::SERVED_ID).flat_map(|t| t.stems.iter().copied()).collect();
    let all: Vec<&str> = all_stems().into_iter().filter(|s| !experiment.contains(s)).collect();
    for stem in &all {
        for ext in ["csv", "md", "tex"] {
            let p = dir.path().join("tables").join(format!("{stem}.{ext}"));
            assert!(p.is_file(), "missing {}", p.display());
            assert!(written.contains(&p), "not reported: {}", p.display());
        }
    }
    let figures = std::fs::read_dir(dir.path().join("figures"))
        .unwrap()
        .count();
    // + summary.md, reproduction.md, reproduction.csv
    assert_eq!(written.len(), all.len() * 3 + figures + 3, "{written:#?}");
    for f in ["summary.md", "reproduction.md", "reproduction.csv"] {
        let p = dir.path().join(f);
        assert!(p.is_file() && written.contains(&p), "{f} not written or not reported");
    }
    let summary = read(dir.path(), "summary.md");
    for stem in &all {
        assert!(
            summary.contains(&format!("tables/{stem}.csv")),
            "summary lacks {stem}"
        );
    }
    assert!(
        summary.contains("None: every table had the data it needs."),
        "{summary}"
    );
    assert!(summary.contains("strict") && summary.contains("main") && summary.contains("loose"));
    // LaTeX is a booktabs tabular with escaped text
    let tex = read(dir.path(), "tables/table02_pressure_ramp.tex");
    assert!(
        tex.contains("\\begin{tabular}")
            && tex.contains("\\toprule")
            && tex.contains("\\midrule")
            && tex.contains("\\bottomrule"),
        "{tex}"
    );
    let tex = read(dir.path(), "tables/table23_examples.tex");
    assert!(tex.contains("truthfulqa\\_mc"), "{tex}");
    let tex = read(dir.path(), "tables/aux_recovery_hierarchy_summary.tex");
    assert!(tex.contains("restored\\_clean\\_context\\_like"), "{tex}");
}

#[test]
fn hand_computed_numbers() {
    let dir = tempfile::tempdir().unwrap();
    write_tables(&synthetic_rows(3), crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let t2 = read(dir.path(), "tables/table02_pressure_ramp.csv");
    assert!(t2.starts_with("table_name,model,model_key,dataset,dataset_key,condition_or_operation,metric,estimate,ci_low,ci_high,n_items,bootstrap_samples,seed,informative,notes\n"));
    // toy_a: reset p(w) 0.50/0.40/0.35, clean probe 0.10/0.20/0.30 → gap 0.216667
    let r = csv_row(&t2, &["toy_a", "hysteresis_gap"]);
    assert_eq!(field(&t2, &r, "estimate"), "0.216667");
    assert_eq!(field(&t2, &r, "n_items"), "3");
    assert_eq!(field(&t2, &r, "seed"), "12346");
    assert_eq!(field(&t2, &r, "dataset"), "TruthfulQA-MC");
    // toy_b adds 0.02 to every reset p(w) → 0.236667
    let r = csv_row(&t2, &["toy_b", "hysteresis_gap"]);
    assert_eq!(field(&t2, &r, "estimate"), "0.236667");
    let r = csv_row(&t2, &["toy_a", "press_pw_mean"]);
    assert_eq!(field(&t2, &r, "estimate"), "0.700000");
    let r = csv_row(&t2, &["toy_a", "lock_in"]);
    assert_eq!(field(&t2, &r, "estimate"), "0.333333");
    assert_eq!(field(&t2, &r, "notes"), "pressure_wrong_denominator=3");
    let r = csv_row(&t2, &["toy_a", "positive_hysteresis_rate"]);
    assert_eq!(field(&t2, &r, "estimate"), "1.000000");
    // the bootstrap interval brackets the estimate
    let r = csv_row(&t2, &["toy_a", "hysteresis_gap"]);
    let (lo, hi): (f64, f64) = (
        field(&t2, &r, "ci_low").parse().unwrap(),
        field(&t2, &r, "ci_high").parse().unwrap(),
    );
    assert!(
        lo <= 0.216667 && 0.216667 <= hi && lo >= 0.05 - 1e-9 && hi <= 0.40 + 1e-9,
        "{lo} {hi}"
    );

    // Table 10: clean all correct; R0 follows w on item 0 only
    let t10 = read(dir.path(), "tables/table10_decomposition_counts.csv");
    let r = csv_row(&t10, &["toy_a"]);
    assert_eq!(field(&t10, &r, "stable_correct_count"), "2");
    assert_eq!(field(&t10, &r, "history_contamination_count"), "1");
    assert_eq!(
        field(&t10, &r, "clean_correct_to_history_wrong_rate"),
        "0.333333"
    );

    // Table 4: per pair, R3a (= clean), R3b (clean + 0.01), R5 (= clean) pass every family;
    // R4 (clean + 0.03) passes main and loose but not strict; R0/R1/R2/R6 pass none.
    let t4 = read(dir.path(), "tables/table04_recovery_counts.csv");
    for (cond, strict, main, loose) in [
        ("ordinary_strong_reset", "0", "0", "0"),
        ("fresh_context_deletion", "2", "2", "2"),
        ("context_truncation", "2", "2", "2"),
        ("neutral_summary_replacement", "0", "2", "2"),
        ("factual_state_reconstruction", "2", "2", "2"),
    ] {
        let r = csv_row(&t4, &[cond]);
        assert_eq!(field(&t4, &r, "computed_value"), main, "{cond}");
        assert_eq!(field(&t4, &r, "strict_computed_value"), strict, "{cond}");
        assert_eq!(field(&t4, &r, "loose_computed_value"), loose, "{cond}");
        assert_eq!(field(&t4, &r, "n_pairs"), "2");
    }
    // Table 17: the first passing main op is R3a
    let t17 = read(dir.path(), "tables/table17_minimal_recovery_operation.csv");
    let r = csv_row(&t17, &["toy_a"]);
    assert_eq!(
        field(&t17, &r, "minimal_recovery_operation"),
        "fresh_context_deletion"
    );
    assert_eq!(field(&t17, &r, "minimal_recovery_level"), "R3");

    // Table 5: remove_all_pressure gap = +0.08, fresh gap 0
    let t5 = read(dir.path(), "tables/table05_truncation_summary.csv");
    let r = csv_row(&t5, &["Toy-A", "remove_all_pressure"]);
    assert_eq!(field(&t5, &r, "hysteresis_gap_mean"), "0.080000");
    let r = csv_row(&t5, &["Toy-A", "fresh_context"]);
    assert_eq!(field(&t5, &r, "hysteresis_gap_mean"), "0.000000");
    // aggregate row: mean of the two pairs' full-history gaps (0.216667, 0.236667)
    let t5b = read(dir.path(), "tables/table05_truncation_boundary.csv");
    let r = csv_row(&t5b, &["full_history_reset"]);
    assert_eq!(field(&t5b, &r, "mean_gap"), "0.226667");
    assert_eq!(field(&t5b, &r, "n_pairs"), "2");

    // Table 12: explicit false mention = clean + 0.03 exactly
    let t12 = read(dir.path(), "tables/table12_pressure_vs_false_context.csv");
    let r = csv_row(&t12, &["explicit_false_wrong_mention"]);
    assert_eq!(field(&t12, &r, "mean_hysteresis_gap"), "0.030000");
    assert_eq!(field(&t12, &r, "n_items"), "6");
    let r = csv_row(&t12, &["user_pressure"]);
    assert_eq!(field(&t12, &r, "conditional_lock_in_n"), "6");

    // Table 15: shuffle keeps 0.35/0.25/0.20 (+k·0.02) on the new wrong letter
    let t15 = read(dir.path(), "tables/table15_semantic_vs_letter.csv");
    let r = csv_row(&t15, &["TQA"]);
    assert_eq!(field(&t15, &r, "chance_old_letter"), "0.250000");
    let r = csv_row(&t15, &["MMLU"]);
    assert_eq!(field(&t15, &r, "chance_old_letter"), "0.200000");

    // Table 21: CCTP runs for both pressure types of both pairs and the pooled row
    let t21 = read(dir.path(), "tables/table21_cctp_summary.csv");
    let r = csv_row(&t21, &["toy_a", "cctp_logit_linear_min_alpha", "wrong"]);
    assert_eq!(
        field(&t21, &r, "implementation_guarantee_pass_rate"),
        "1.000000"
    );
    assert_eq!(field(&t21, &r, "n_items"), "3");
    assert_eq!(field(&t21, &r, "R0_gap"), "0.216667");
    csv_row(&t21, &["all", "cctp_logit_linear_min_alpha", "correct"]);

    // Table 23: one clean-correct / R0-wrong item per pair (item 0)
    let t23 = read(dir.path(), "tables/table23_examples.csv");
    assert_eq!(t23.lines().count(), 3, "{t23}");

    // Markdown: NA for missing values, aligned pipes
    let md = read(dir.path(), "tables/table04_recovery_counts.md");
    assert!(md.starts_with("# Table 4: "), "{md}");
}

#[test]
fn writes_are_byte_identical() {
    let rows = synthetic_rows(4);
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), a.path(), &opts()).unwrap();
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), b.path(), &opts()).unwrap();
    let (sa, sb) = (snapshot(a.path()), snapshot(b.path()));
    assert_eq!(sa.keys().collect::<Vec<_>>(), sb.keys().collect::<Vec<_>>());
    for (k, v) in &sa {
        assert!(v == &sb[k], "{k} differs");
    }
    // rewriting into the same directory changes nothing
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), a.path(), &opts()).unwrap();
    assert_eq!(sa, snapshot(a.path()));
    // row order does not matter
    let mut rev = rows.clone();
    rev.reverse();
    let c = tempfile::tempdir().unwrap();
    write_tables(&rev, crate::dialogue::conditions::Registry::bundled(), c.path(), &opts()).unwrap();
    assert_eq!(sa, snapshot(c.path()));
}

#[test]
fn tables_without_their_conditions_are_not_written() {
    let ramp = [
        "clean_context",
        "weak_pressure",
        "medium_pressure",
        "strong_pressure",
        "medium_reset",
        "strong_reset",
        "clean_context_probe",
    ];
    let rows = synthetic_rows_where(3, |k| ramp.contains(&k));
    let dir = tempfile::tempdir().unwrap();
    let written = write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    let stems: Vec<String> = written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    for want in [
        "table01_recovery_operations",
        "table02_pressure_ramp",
        "table08_expanded_family_ramp",
        "table09_ordinary_reset_gap",
        "table10_failure_decomposition",
        "table11_plausibility_tertiles",
        "table20_cctp_tube_definition",
        "table21_cctp_summary",
        "table22_criterion_families",
        "table23_examples",
    ] {
        assert!(
            stems.iter().any(|s| s == registered(want)),
            "{want} missing from {stems:?}"
        );
    }
    for absent in [
        "table03_controls",
        "table04_recovery_counts",
        "table05_truncation_summary",
        "table05_truncation_boundary",
        "table06_r7_evidence",
        "table07_behavioral_controls",
        "table12_pressure_vs_false_context",
        "table13_relabel_restoration",
        "table14_relabel_outcome",
        "table15_semantic_vs_letter",
        "table16_strict_vs_mro",
        "table17_minimal_recovery_operation",
        "table18_truncation_by_pair",
        "table19_r0_to_r7_by_dataset",
        "aux_recovery_hierarchy_summary",
        "aux_threshold_sweep",
    ] {
        assert!(
            !stems.iter().any(|s| s == registered(absent)),
            "{absent} written without its conditions"
        );
        assert!(!dir
            .path()
            .join("tables")
            .join(format!("{absent}.md"))
            .exists());
    }
    let summary = read(dir.path(), "summary.md");
    assert!(
        summary.contains("## Not written")
            && summary.contains("Truncation boundary")
            && summary.contains("R0 vs R7"),
        "{summary}"
    );

    // writing the ramp-only run over a full run removes the stale table files
    let full = tempfile::tempdir().unwrap();
    write_tables(&synthetic_rows(3), crate::dialogue::conditions::Registry::bundled(), full.path(), &opts()).unwrap();
    assert!(full
        .path()
        .join("tables/table05_truncation_summary.csv")
        .exists());
    write_tables(&rows, crate::dialogue::conditions::Registry::bundled(), full.path(), &opts()).unwrap();
    assert!(!full
        .path()
        .join("tables/table05_truncation_summary.csv")
        .exists());
    assert_eq!(snapshot(full.path()), snapshot(dir.path()));
}

#[test]
fn single_pair_truncation_ci_is_flagged_degenerate() {
    let rows: Vec<_> = synthetic_rows(3)
        .into_iter()
        .filter(|r| r.model_key == "toy_a")
        .collect();
    let out = build_tables(&RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled()), &opts());
    let t = out
        .iter()
        .find(|o| o.stem == "table05_truncation_boundary")
        .expect("table 5");
    let csv = t.csv.clone();
    let r = csv_row(&csv, &["full_history_reset"]);
    assert_eq!(field(&csv, &r, "ci_low"), field(&csv, &r, "ci_high"));
    assert!(field(&csv, &r, "notes").contains("degenerate"));
    assert!(t.notes.iter().any(|n| n.contains("degenerate")));
}

#[test]
fn empty_run_writes_definitions_and_summary() {
    let dir = tempfile::tempdir().unwrap();
    let written = write_tables(&[], crate::dialogue::conditions::Registry::bundled(), dir.path(), &opts()).unwrap();
    assert!(dir.path().join("summary.md").is_file());
    assert!(dir
        .path()
        .join("tables/table22_criterion_families.csv")
        .is_file());
    assert!(
        written.iter().all(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n == "summary.md"
                || n == "reproduction.md"
                || n == "reproduction.csv"
                || n.starts_with("table01")
                || n.starts_with("table20")
                || n.starts_with("table22")
        }),
        "{written:?}"
    );
}

#[test]
fn zero_replicates_give_blank_intervals() {
    let rows = synthetic_rows(2);
    let out = build_tables(
        &RunIndex::new(&rows, crate::dialogue::conditions::Registry::bundled()),
        &TableOptions {
            bootstrap_samples: 0,
            seed: 1,
            ..TableOptions::default()
        },
    );
    let t2 = out
        .iter()
        .find(|o| o.stem == "table02_pressure_ramp")
        .unwrap()
        .csv
        .clone();
    let r = csv_row(&t2, &["toy_a", "hysteresis_gap"]);
    assert_eq!(field(&t2, &r, "ci_low"), "");
    assert_eq!(field(&t2, &r, "informative"), "False");
    assert_eq!(field(&t2, &r, "estimate"), "0.300000");
}
