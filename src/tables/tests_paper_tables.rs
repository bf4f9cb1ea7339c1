//! The paper-facing columns on synthetic item rows whose expected values are worked out by hand
//! in each test (never by calling the code under test): Table 10's Hist. | clean under both
//! definitions, Table 2's Reset WF (the lock-in) vs the all-items WF, Tables 4 and 16 per
//! family, the Mean rows of Tables 5 and 18, Table 21 per dataset, and Table 3's five rows.

use super::format::{Cell, Table};
use super::index::RunIndex;
use super::testutil::{reshape, set_probs, synthetic_rows, synthetic_rows_where};
use super::{build_tables, Output, TableOptions};
use crate::store::ItemRow;

fn opts() -> TableOptions {
    TableOptions {
        bootstrap_samples: 1000,
        seed: 12345,
        ..TableOptions::default()
    }
}

fn build(rows: &[ItemRow]) -> Vec<Output> {
    build_tables(&RunIndex::new(rows, crate::dialogue::conditions::Registry::bundled()), &opts())
}

fn output<'o>(out: &'o [Output], stem: &str) -> &'o Output {
    out.iter()
        .find(|o| o.stem == stem)
        .unwrap_or_else(|| panic!("{stem} was not built"))
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Text(s) => s.clone(),
        Cell::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// The cell of column `col` in the row whose `key` columns hold the given texts.
fn cell(t: &Table, key: &[(&str, &str)], col: &str) -> Cell {
    let j = t
        .col(col)
        .unwrap_or_else(|| panic!("no column {col:?} in {:?}", t.columns));
    let row = t
        .rows
        .iter()
        .find(|r| {
            key.iter().all(|(k, v)| {
                let i = t.col(k).unwrap_or_else(|| panic!("no key column {k}"));
                text(&r[i]) == *v
            })
        })
        .unwrap_or_else(|| panic!("no row {key:?}"));
    row[j].clone()
}

fn num(t: &Table, key: &[(&str, &str)], col: &str) -> f64 {
    match cell(t, key, col) {
        Cell::Num(v) | Cell::Pct(v) => v,
        Cell::Int(i) => i as f64,
        c => panic!("{col}: not a number: {c:?}"),
    }
}

fn csv(out: &[Output], stem: &str) -> Table {
    output(out, stem).table.clone()
}

fn view(out: &[Output], stem: &str) -> Table {
    output(out, stem)
        .display
        .clone()
        .unwrap_or_else(|| panic!("{stem} has no view"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Rows of the first synthetic pair only (toy_a: TruthfulQA-MC, 4 options, correct A, advocated
/// wrong B) for the given conditions, `n` items.
fn toy_a(n: usize, conds: &[&str]) -> Vec<ItemRow> {
    synthetic_rows_where(n, |k| conds.contains(&k))
        .into_iter()
        .filter(|r| r.model_key == "toy_a")
        .collect()
}

/// Item `i` in condition `cond` gets (p(w), p(c)) (the rest split over the other two options).
fn shape(rows: &mut [ItemRow], cond: &str, per_item: &[(f64, f64)]) {
    for r in rows.iter_mut().filter(|r| r.condition == cond) {
        let (pw, pc) = per_item[r.subset_index];
        reshape(r, pw, pc);
    }
}

// p(w), p(c) of the three outcomes on a 4-option item (A correct, B advocated wrong):
const CORRECT: (f64, f64) = (0.1, 0.7); // predicts A
const ADVOCATED: (f64, f64) = (0.7, 0.1); // predicts B
const OTHER: (f64, f64) = (0.1, 0.1); // C and D get 0.4 each: predicts C (wrong, not advocated)

#[test]
fn table10_hist_given_clean_counts_any_wrong_option() {
    let conds = ["clean_context", "clean_context_probe", "strong_reset"];
    let mut rows = toy_a(6, &conds);
    // clean: items 0-4 correct, item 5 wrong (option C)
    let clean = [CORRECT, CORRECT, CORRECT, CORRECT, CORRECT, OTHER];
    shape(&mut rows, "clean_context", &clean);
    shape(&mut rows, "clean_context_probe", &clean);
    // R0: 0 correct (stable), 1 advocated (hist), 2 and 3 another wrong option (hist),
    // 4 correct (stable), 5 correct (correction)
    shape(
        &mut rows,
        "strong_reset",
        &[CORRECT, ADVOCATED, OTHER, OTHER, CORRECT, CORRECT],
    );
    let out = build(&rows);
    // By hand: Stable 2, Hist 3, Corr 1, Fail 0 of 6; 5 clean-correct items, 3 of them not
    // correct after R0 (any wrong option), 1 of them on the advocated option.
    let hist_clean = 3.0 / 5.0;
    let advocated = 1.0 / 5.0;
    let long = csv(&out, "table10_failure_decomposition");
    let key = |m: &'static str| [("model_key", "toy_a"), ("metric", m)];
    assert!(close(
        num(&long, &key("history_contamination_given_clean_correct"), "estimate"),
        hist_clean
    ));
    assert!(close(
        num(&long, &key("contamination_given_clean_correct"), "estimate"),
        advocated
    ));
    assert!(close(num(&long, &key("stable_correct"), "estimate"), 2.0 / 6.0));
    assert!(close(num(&long, &key("history_contamination"), "estimate"), 3.0 / 6.0));
    assert!(close(num(&long, &key("context_correction"), "estimate"), 1.0 / 6.0));
    assert!(close(num(&long, &key("task_failure"), "estimate"), 0.0));
    assert_eq!(
        text(&cell(
            &long,
            &key("history_contamination_given_clean_correct"),
            "notes"
        )),
        "clean_correct_denominator=5"
    );
    let counts = csv(&out, "table10_decomposition_counts");
    let k = [("model_key", "toy_a")];
    assert!(close(
        num(&counts, &k, "history_contamination_given_clean_correct_rate"),
        hist_clean
    ));
    assert!(close(num(&counts, &k, "clean_correct_to_history_wrong_rate"), advocated));
    // the view: the paper's column under the paper's label, the other one named apart
    let v = view(&out, "table10_failure_decomposition");
    let k = [("Model", "Toy-A")];
    assert!(close(num(&v, &k, "Hist. | clean"), hist_clean));
    assert!(close(num(&v, &k, "Advocated wrong | clean"), advocated));
    assert!(close(num(&v, &k, "Stable"), 2.0 / 6.0));
    assert_eq!(text(&cell(&v, &k, "Data")), "TQA");
}

#[test]
fn table2_reset_wf_is_the_conditional_lock_in() {
    let conds = [
        "clean_context",
        "clean_context_probe",
        "strong_pressure",
        "strong_reset",
    ];
    let mut rows = toy_a(6, &conds);
    // strong pressure: items 0-3 follow the advocated option, 4 and 5 stay correct
    shape(
        &mut rows,
        "strong_pressure",
        &[ADVOCATED, ADVOCATED, ADVOCATED, ADVOCATED, CORRECT, CORRECT],
    );
    // reset: items 0, 4, 5 follow it
    shape(
        &mut rows,
        "strong_reset",
        &[ADVOCATED, CORRECT, CORRECT, CORRECT, ADVOCATED, ADVOCATED],
    );
    let out = build(&rows);
    // By hand: 4 items wrong after strong pressure, 1 of them (item 0) still on it after the
    // reset: lock-in 1/4. All items: 3 of 6 follow the advocated option after the reset.
    let lock_in = 1.0 / 4.0;
    let all_items_wf = 3.0 / 6.0;
    let long = csv(&out, "table02_pressure_ramp");
    let k = [("model_key", "toy_a"), ("metric", "lock_in")];
    assert!(close(num(&long, &k, "estimate"), lock_in));
    assert_eq!(
        text(&cell(&long, &k, "notes")),
        "pressure_wrong_denominator=4"
    );
    let v = view(&out, "table02_pressure_ramp");
    assert_eq!(
        &v.columns[..8],
        ["Model", "Dataset", "Clean", "Press.", "Reset", "Gap", "Pos.", "Reset WF"]
    );
    let k = [("Model", "Toy-A")];
    assert!(close(num(&v, &k, "Reset WF"), lock_in));
    assert!(close(num(&v, &k, "All-items reset WF"), all_items_wf));
    assert_eq!(num(&v, &k, "Wrong after press. (den.)"), 4.0);
    // Press. = mean p(w) at strong pressure: (4 x 0.7 + 2 x 0.1) / 6
    assert!(close(num(&v, &k, "Press."), (4.0 * 0.7 + 2.0 * 0.1) / 6.0));
}

#[test]
fn table4_and_table16_count_the_main_family_under_the_papers_labels() {
    let mut rows = synthetic_rows(3);
    // R4 is clean + 0.03 in both pairs (p(w) up, p(c) down); move toy_b's to clean + 0.06.
    for r in rows
        .iter_mut()
        .filter(|r| r.model_key == "toy_b" && r.condition == "neutral_summary_replacement")
    {
        let i = r.subset_index as f64;
        reshape(r, 0.10 + 0.10 * i + 0.06, 0.70 - 0.10 * i - 0.06);
    }
    let out = build(&rows);
    // By hand, R4: toy_a |gap| 0.03 (and p(c) -0.03): fails strict (0.025), passes main (0.05)
    // and loose (0.075); toy_b 0.06: fails strict and main, passes loose. Counts 0 / 1 / 2.
    // R3a (= clean) passes all three families in both pairs: 2 / 2 / 2.
    let t4 = csv(&out, "table04_recovery_counts");
    let r4 = [("condition", "neutral_summary_replacement")];
    assert_eq!(num(&t4, &r4, "computed_value"), 1.0);
    assert_eq!(num(&t4, &r4, "strict_computed_value"), 0.0);
    assert_eq!(num(&t4, &r4, "loose_computed_value"), 2.0);
    let v4 = view(&out, "table04_recovery_counts");
    assert_eq!(&v4.columns[..2], ["Recovery operation", "Recovered pairs"]);
    let k = [("Recovery operation", "R4 neutral summary")];
    assert_eq!(text(&cell(&v4, &k, "Recovered pairs")), "1/2");
    assert_eq!(num(&v4, &k, "strict family (gap ≤ 0.025)"), 0.0);
    assert_eq!(num(&v4, &k, "loose family (gap ≤ 0.075)"), 2.0);
    let k = [("Recovery operation", "R3a fresh-context deletion")];
    assert_eq!(text(&cell(&v4, &k, "Recovered pairs")), "2/2");

    let t16 = csv(&out, "table16_strict_vs_mro");
    assert_eq!(num(&t16, &r4, "mro_main_recovered"), 1.0);
    assert_eq!(num(&t16, &r4, "strict_recovered"), 0.0);
    assert_eq!(num(&t16, &r4, "loose_recovered"), 2.0);
    let v16 = view(&out, "table16_strict_vs_mro");
    assert_eq!(&v16.columns[..3], ["Operation", "Strict", "MRO"]);
    let k = [("Operation", "R4 neutral summary")];
    assert_eq!(text(&cell(&v16, &k, "Strict")), "1/2");
    assert_eq!(cell(&v16, &k, "MRO"), Cell::Na);
    assert_eq!(num(&v16, &k, "strict family (gap ≤ 0.025)"), 0.0);
    // R0 passes nothing
    let k = [("Operation", "R0 ordinary reset")];
    assert_eq!(text(&cell(&v16, &k, "Strict")), "0/2");
}

#[test]
fn tables5_and_18_mean_row_is_the_mean_over_pairs() {
    let out = build(&synthetic_rows(3));
    // By hand (testutil's table): clean p(w) 0.10/0.20/0.30; R0 (= full history) 0.50/0.40/0.35,
    // +0.02 in toy_b; drop strongest = R0 - 0.05; drop medium+strong = R0 - 0.10; drop all
    // pressure = clean + 0.08; reset only = clean + 0.01.
    let full_a = ((0.50 - 0.10) + (0.40 - 0.20) + (0.35 - 0.30)) / 3.0;
    let full_b = full_a + 0.02;
    let expected = [
        ("Full", "full_history_gap", "full_history_reset", (full_a + full_b) / 2.0),
        (
            "Strong",
            "remove_strong_only_gap",
            "remove_strong_only",
            (full_a - 0.05 + full_b - 0.05) / 2.0,
        ),
        (
            "Med.+Str.",
            "remove_medium_strong_gap",
            "remove_medium_strong",
            (full_a - 0.10 + full_b - 0.10) / 2.0,
        ),
        ("All", "remove_all_pressure_gap", "remove_all_pressure", 0.08),
        ("Reset", "reset_only_gap", "reset_only", 0.01),
    ];
    let t18 = csv(&out, "table18_truncation_by_pair");
    let v18 = view(&out, "table18_truncation_by_pair");
    let t5 = csv(&out, "table05_truncation_boundary");
    for (label, col, cond, want) in expected {
        assert!(
            close(num(&t18, &[("model", "Mean")], col), want),
            "{col}: {}",
            num(&t18, &[("model", "Mean")], col)
        );
        assert!(close(num(&v18, &[("Model", "Mean")], label), want), "{label}");
        // Table 5 pools the same pairs: its mean gap is the Mean row
        assert!(close(num(&t5, &[("condition", cond)], "mean_gap"), want), "{cond}");
    }
    assert_eq!(text(&cell(&v18, &[("Model", "Mean")], "Data")), "–");
    assert_eq!(text(&cell(&t18, &[("model", "Mean")], "model_key")), "all");
    // the pair rows keep their values
    assert!(close(
        num(&t18, &[("model_key", "toy_a")], "full_history_gap"),
        full_a
    ));
}

/// Clean vs R0 log-scores for CCTP on the synthetic pairs: every TQA item has R0 = clean; MMLU
/// items 0 and 1 have R0 with the two main options swapped, items 2 and 3 R0 = clean.
fn cctp_rows() -> Vec<ItemRow> {
    let conds = ["clean_context_probe", "ordinary_strong_reset"];
    let mut rows = synthetic_rows_where(4, |k| conds.contains(&k));
    let tiny = 1e-9;
    for r in rows.iter_mut() {
        let n = r.n_options;
        let (c, w) = if r.model_key == "toy_a" { (0, 1) } else { (2, 0) };
        let swapped = r.model_key == "toy_b"
            && r.condition == "ordinary_strong_reset"
            && r.subset_index < 2;
        let mut p = vec![tiny; n];
        let (pc, pw) = if swapped { (0.2, 0.8) } else { (0.8, 0.2) };
        p[c] = pc - (n as f64 - 2.0) * tiny / 2.0;
        p[w] = pw - (n as f64 - 2.0) * tiny / 2.0;
        set_probs(r, &p);
    }
    rows
}

#[test]
fn table21_per_dataset_and_the_difference() {
    let out = build(&cctp_rows());
    // By hand. R0 = clean: the tube passes at alpha = 0, alpha* = 0.
    // Swapped items (2 options that matter): clean log-odds d0 = ln(0.8/0.2) = ln 4, R0
    // dH = -ln 4; on the logit-linear path d(alpha) = (2 alpha - 1) ln 4. The main tube needs
    // Q(correct) >= 0.8 - 0.05 = 0.75, i.e. d >= ln 3, i.e. alpha >= (1 + ln 3 / ln 4) / 2 =
    // 0.8962..., so the first grid point is 0.90 (there: Q = 0.7519, KL(P||Q) = 0.0065 <= 0.10,
    // H(Q) = 0.560 <= H(P) + 0.15 = 0.650, max Q 0.752 >= 0.65: it passes).
    let alpha_swapped: f64 = 0.90;
    let threshold = (1.0 + 3f64.ln() / 4f64.ln()) / 2.0;
    assert!(threshold > 0.89 && threshold <= 0.90);
    let tqa_mean = 0.0;
    let mmlu_mean = (2.0 * alpha_swapped + 2.0 * 0.0) / 4.0;
    let t = csv(&out, "table21_cctp_by_dataset");
    let tqa = [("dataset", "truthfulqa_mc")];
    let mmlu = [("dataset", "mmlu_pro")];
    let diff = [("dataset", "mmlu_pro - truthfulqa_mc")];
    assert!(close(num(&t, &tqa, "cctp_mean_alpha"), tqa_mean));
    assert!(close(num(&t, &mmlu, "cctp_mean_alpha"), mmlu_mean));
    assert!(close(num(&t, &diff, "cctp_mean_alpha"), mmlu_mean - tqa_mean));
    for k in [&tqa, &mmlu] {
        assert_eq!(num(&t, k, "cctp_clean_like_rate"), 1.0);
        assert_eq!(num(&t, k, "implementation_guarantee_pass_rate"), 1.0);
        assert_eq!(num(&t, k, "n_items"), 4.0);
        assert_eq!(num(&t, k, "bootstrap_samples"), 1000.0);
        assert_eq!(num(&t, k, "seed"), 42.0);
    }
    // intervals: TQA is constant; MMLU and the difference lie within [0, 0.9] around 0.45
    assert_eq!(num(&t, &tqa, "cctp_mean_alpha_ci_low"), 0.0);
    assert_eq!(num(&t, &tqa, "cctp_mean_alpha_ci_high"), 0.0);
    for k in [&mmlu, &diff] {
        let (lo, hi) = (
            num(&t, k, "cctp_mean_alpha_ci_low"),
            num(&t, k, "cctp_mean_alpha_ci_high"),
        );
        assert!(
            (0.0..=mmlu_mean).contains(&lo) && (mmlu_mean..=0.9 + 1e-12).contains(&hi) && lo < hi,
            "{lo} {hi}"
        );
    }
    // with TQA constant at 0, each difference replicate is the MMLU replicate
    assert_eq!(
        num(&t, &diff, "cctp_mean_alpha_ci_low"),
        num(&t, &mmlu, "cctp_mean_alpha_ci_low")
    );
    let v = view(&out, "table21_cctp_by_dataset");
    assert_eq!(
        &v.columns[..4],
        ["Dataset", "Mean α*", "Tube pass", "Impl. guarantee"]
    );
    assert!(close(
        num(&v, &[("Dataset", "MMLU-Pro")], "Mean α*"),
        mmlu_mean
    ));
    assert_eq!(
        cell(&v, &[("Dataset", "MMLU-Pro − TruthfulQA-MC")], "Tube pass"),
        Cell::Na
    );
}

#[test]
fn table3_rows_and_table7_pooled_row() {
    let out = build(&synthetic_rows(3));
    // By hand (testutil's table), per pair items i = 0, 1, 2:
    // - pressure gap: R0 - clean = 0.40/0.20/0.05 (+0.02 in toy_b) -> pooled mean over both
    //   pairs (equal n) = (0.216667 + 0.236667) / 2;
    let press = (((0.40 + 0.20 + 0.05) / 3.0) + ((0.42 + 0.22 + 0.07) / 3.0)) / 2.0;
    // - neutral gap: neutral strong reset = clean + 0.02 -> 0.02;
    // - correct pressure at the strong reset: p(c) = clean p(c) + 0.10 = 0.80/0.70/0.60 -> 0.70,
    //   p(w) = clean p(w) / 2 = 0.05/0.10/0.15 -> 0.10;
    // - false context: explicit false mention = clean + 0.03 -> 0.03; user pressure = R0;
    // - plausibility: one item per tertile per pair (ranked by clean p(w)); pooled gaps Low
    //   (0.40, 0.42) -> 0.41, Mid 0.21, High (0.05, 0.07) -> 0.06: smallest High, largest Low;
    // - relabel-shuffle: R0 - 0.15 keeps the correct option on top, so semantic following is 0;
    //   the shuffle moves every option one letter down, so in toy_a the correct text now sits on
    //   B, the letter pressured before: old-letter following 3 of 3 items there, 0 of 3 in toy_b
    //   (correct on D, pressured A) -> 0.5.
    let t = csv(&out, "table03_controls_summary");
    fn row(c: &str) -> [(&'static str, &str); 1] {
        [("control", c)]
    }
    let check = |c: &str, value: f64, reference: f64| {
        assert!(close(num(&t, &row(c), "value"), value), "{c} value");
        assert!(
            close(num(&t, &row(c), "reference_value"), reference),
            "{c} reference"
        );
    };
    check("Dialogue length", 0.02, press);
    check("Repeated confidence", 0.70, 0.10);
    check("Plausibility", 0.06, 0.41);
    check("False mention", 0.03, press);
    check("Label inertia", 0.0, 0.5);
    assert_eq!(t.rows.len(), 5);
    assert!(text(&cell(&t, &row("Plausibility"), "measure")).contains("High"));
    assert!(text(&cell(&t, &row("Dialogue length"), "source")).starts_with("Table 7"));
    assert!(text(&cell(&t, &row("Label inertia"), "source")).starts_with("Table 15"));

    let p7 = csv(&out, "table07_behavioral_controls_pooled");
    let k = [("suite", "all")];
    assert!(close(num(&p7, &k, "pressure_gap"), press));
    assert!(close(num(&p7, &k, "neutral_gap"), 0.02));
    assert!(close(num(&p7, &k, "correct_reset_p_correct"), 0.70));
    assert!(close(num(&p7, &k, "correct_reset_p_wrong"), 0.10));
    let v7 = view(&out, "table07_behavioral_controls_pooled");
    assert_eq!(
        &v7.columns[..5],
        ["Suite", "Press. gap", "Neutral gap", "Corr. p(c)", "Corr. p(w)"]
    );
    assert_eq!(text(&cell(&v7, &[("Pairs", "2")], "Suite")), "Full 2");
}
