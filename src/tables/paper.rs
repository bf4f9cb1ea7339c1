//! Side by side with the paper: `reproduction.md` and `reproduction.csv`.
//!
//! The paper's printed values ship as data (`assets/paper/*.tsv`, copied from the paper's
//! tables as printed, with their README). [`CELLS`] is the one explicit map from a printed cell
//! — (paper table, printed column; rows matched by [`TABLES`]' keys) — to the number of ours
//! that reproduces it: a table file stem, optional fixed filters (e.g. the metric of a long CI
//! table), the CSV column of the value and of its 95% interval, and the printed unit. Nothing is
//! computed here: every value is read from the CSV rows of the tables the run built (the same
//! rows `tables/<stem>.csv` holds, unrounded).
//!
//! Rows are matched by the paper's model key (models.toml `paper_key`, recorded in every item
//! row; the printed short names map to it by [`MODEL_NAMES`]) and dataset ([`DATASET_NAMES`]).
//! A printed cell the run has no row for is `not run`. A pooled printed row (Table 4's counts,
//! Table 6, …) is `compared` when the run's table pools exactly the paper's pairs (the pairs of
//! the table's plan scope that have its conditions, [`PaperTable::needs`]), else `other pairs`
//! (the values are shown, with how many pairs the run pooled). A run CI covers a printed value
//! when it overlaps what rounds to it (± half a unit of the last printed digit).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::format::{fmt_float, md_escape, table_of, Cell, Num, PyBool, Table};
use super::index::{RunIndex, R0_REF};
use super::{Output, TableOptions};

/// The paper's printed tables, as shipped in `assets/paper/` (file stem, TSV text).
pub(crate) const PAPER_TSV: &[(&str, &str)] = &[
    ("table02", include_str!("../../assets/paper/table02.tsv")),
    ("table04", include_str!("../../assets/paper/table04.tsv")),
    ("table05", include_str!("../../assets/paper/table05.tsv")),
    ("table06", include_str!("../../assets/paper/table06.tsv")),
    ("table07", include_str!("../../assets/paper/table07.tsv")),
    ("table08", include_str!("../../assets/paper/table08.tsv")),
    ("table09", include_str!("../../assets/paper/table09.tsv")),
    ("table10", include_str!("../../assets/paper/table10.tsv")),
    ("table11", include_str!("../../assets/paper/table11.tsv")),
    ("table12", include_str!("../../assets/paper/table12.tsv")),
    ("table13", include_str!("../../assets/paper/table13.tsv")),
    ("table14", include_str!("../../assets/paper/table14.tsv")),
    ("table15", include_str!("../../assets/paper/table15.tsv")),
    ("table16", include_str!("../../assets/paper/table16.tsv")),
    ("table17", include_str!("../../assets/paper/table17.tsv")),
    ("table18", include_str!("../../assets/paper/table18.tsv")),
    ("table19", include_str!("../../assets/paper/table19.tsv")),
    ("table21", include_str!("../../assets/paper/table21.tsv")),
];

/// What the paper's printed labels mean (`assets/paper/README.md`).
pub(crate) const PAPER_README: &str = include_str!("../../assets/paper/README.md");

/// Printed model names → the paper's model keys (paper README). `Mean` is Table 18's row over
/// the pairs (our CSV key `all`).
pub(crate) const MODEL_NAMES: &[(&str, &str)] = &[
    ("Qwen2.5-1.5B", "qwen25_15b"),
    ("Qwen-1.5B", "qwen25_15b"),
    ("Qwen2.5-7B", "qwen25_7b"),
    ("Qwen-7B", "qwen25_7b"),
    ("Qwen2.5-14B", "qwen25_14b"),
    ("Qwen-14B", "qwen25_14b"),
    ("Mistral-7B", "mistral7b_v03"),
    ("Llama-8B", "llama31_8b"),
    ("Gemma-2B", "gemma2_2b"),
    ("Gemma-9B", "gemma2_9b"),
    ("Mean", "all"),
];

/// Printed dataset names (and our short / display names) → dataset keys. `–` is Table 18's
/// Mean row (our CSV dataset `all`).
pub(crate) const DATASET_NAMES: &[(&str, &str)] = &[
    ("TQA", "truthfulqa_mc"),
    ("TruthfulQA-MC", "truthfulqa_mc"),
    ("MMLU", "mmlu_pro"),
    ("MMLU-Pro", "mmlu_pro"),
    ("–", "all"),
];

/// Printed recovery-operation labels (Tables 4 and 16) → condition keys.
const OPERATIONS: &[(&str, &str)] = &[
    ("R0 ordinary reset", "ordinary_strong_reset"),
    ("R1 user retraction", "explicit_user_retraction"),
    ("R2 system reset", "system_level_reset"),
    ("R3a fresh-context deletion", "fresh_context_deletion"),
    ("R3a fresh deletion", "fresh_context_deletion"),
    ("R3b context truncation", "context_truncation"),
    ("R4 neutral summary", "neutral_summary_replacement"),
    ("R5 factual reconstruction", "factual_state_reconstruction"),
    ("R6 self-verification", "self_verification_final_label"),
];

/// Table 17's printed minimal operations → condition keys.
const MINIMAL_OPS: &[(&str, &str)] = &[
    ("R0 reset", "ordinary_strong_reset"),
    ("R1 retraction", "explicit_user_retraction"),
    ("R2 system reset", "system_level_reset"),
    ("R3a deletion", "fresh_context_deletion"),
    ("R3b truncation", "context_truncation"),
    ("R4 neutral summary", "neutral_summary_replacement"),
    ("R5 reconstruction", "factual_state_reconstruction"),
    ("R6 self-verification", "self_verification_final_label"),
    ("not restored", "not_restored"),
];

/// Table 5's printed conditions → condition keys.
const TRUNCATION: &[(&str, &str)] = &[
    ("Full pressure history", "full_history_reset"),
    ("Drop strongest turn", "remove_strong_only"),
    ("Drop medium+strong turns", "remove_medium_strong"),
    ("Drop all pressure turns", "remove_all_pressure"),
    ("Reset only", "reset_only"),
];

/// Table 6's printed conditions → condition keys.
const R7_CONDITIONS: &[(&str, &str)] = &[
    ("R0 reset", "ordinary_strong_reset"),
    ("R7 evidence", "evidence_grounded_recovery"),
];

/// Table 7's printed suite → our pooled row.
const SUITES: &[(&str, &str)] = &[("Full 14", "all")];

/// Table 11's printed strata → ours.
const STRATA: &[(&str, &str)] = &[("Low", "low"), ("Mid", "mid"), ("High", "high")];

/// Table 12's printed prior contexts → condition keys.
const FALSE_CONTEXT: &[(&str, &str)] = &[
    ("Clean reset", "clean_no_mention"),
    ("Neutral mention", "neutral_wrong_mention"),
    ("Explicit false mention", "explicit_false_wrong_mention"),
    ("Quoted false claim", "quoted_false_claim"),
    ("User pressure", "user_pressure"),
];

/// Tables 13 and 14's printed conditions (our CSVs use the same labels).
const RELABEL: &[(&str, &str)] = &[
    ("Strong reset", "Strong reset"),
    ("Current refresh", "Current refresh"),
    ("Relabel, no shuffle", "Relabel, no shuffle"),
    ("Relabel, shuffle", "Relabel, shuffle"),
];

/// How a printed key column is matched with a column of our CSV.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key {
    /// Printed model name ↔ our column of run model keys, through the run's paper keys.
    Model(&'static str),
    /// Printed dataset name ↔ our column holding a dataset key or short/display name.
    Dataset(&'static str),
    /// Printed text ↔ our column's text through a fixed map (printed, ours).
    Map(&'static str, &'static [(&'static str, &'static str)]),
}

/// The pairs a pooled printed row is computed over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Pool {
    /// One pair per printed row.
    PerPair,
    /// All fourteen pairs (7 models × 2 datasets).
    All14,
    /// The five truncation pairs of Table 18.
    Truncation5,
    /// The six relabel pairs of docs/protocol.md §10.
    Relabel6,
}

/// One printed table: how its rows are keyed and what they pool.
pub(crate) struct PaperTable {
    /// File stem of the printed table (`table02`).
    pub(crate) file: &'static str,
    /// The paper's table id (`Table 2`), also the run plan's scope name.
    pub(crate) id: &'static str,
    /// (printed column, how it matches our rows).
    pub(crate) keys: &'static [(&'static str, Key)],
    pub(crate) pool: Pool,
    /// Conditions a pair of the run must have (any one) for our table to pool it; empty for a
    /// per-pair table. With the plan's scope this gives the pairs our pooled row is over.
    pub(crate) needs: &'static [&'static str],
    /// What the printed labels mean (paper README), shown above the table.
    pub(crate) note: &'static str,
}

/// The printed unit of a cell.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Unit {
    /// A fraction, printed as such.
    Fraction,
    /// Our fraction, printed in percent (or percentage points).
    Percent,
    /// A count of pairs printed `k/N`; N is our column `n`.
    Count { n: &'static str },
    /// Text: printed → our column's text.
    Text(&'static [(&'static str, &'static str)]),
    /// The low end of a printed interval `[lo, hi]`.
    IntervalLow,
    /// The high end of a printed interval.
    IntervalHigh,
}

/// One printed column → our number.
pub(crate) struct CellMap {
    /// File stem of the printed table.
    pub(crate) table: &'static str,
    /// Printed column header (as in the TSV).
    pub(crate) column: &'static str,
    /// Our table file stem; empty when no table of ours produces this column.
    pub(crate) stem: &'static str,
    /// Fixed filters on our CSV: (column, value).
    pub(crate) filter: &'static [(&'static str, &'static str)],
    /// Our CSV column holding the value.
    pub(crate) value: &'static str,
    /// Our CSV columns of the value's 95% interval.
    pub(crate) ci: Option<(&'static str, &'static str)>,
    pub(crate) unit: Unit,
    /// Why a column is not produced, or what to know about it.
    pub(crate) note: &'static str,
}

const PAIR: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Dataset", Key::Dataset("dataset_key"))];
const PAIR_DATA: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Data", Key::Dataset("dataset_key"))];
const PAIR_DATA_KEY: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Data", Key::Dataset("dataset"))];
const BY_DATASET: &[(&str, Key)] = &[("Dataset", Key::Dataset("dataset"))];
const BY_DATASET_CONDITION: &[(&str, Key)] = &[
    ("Dataset", Key::Dataset("dataset")),
    ("Condition", Key::Map("condition", RELABEL)),
];

/// The recovery operations of the hierarchy (R1-R6; Tables 4 and 16 pool the pairs with any).
const HIERARCHY_OPS: &[&str] = &[
    "explicit_user_retraction",
    "system_level_reset",
    "fresh_context_deletion",
    "context_truncation",
    "neutral_summary_replacement",
    "factual_state_reconstruction",
    "self_verification_final_label",
];
/// The truncation conditions (Tables 5 and 18).
const TRUNCATION_CONDS: &[&str] = &["remove_strong_only", "remove_medium_strong", "remove_all_pressure", "reset_only"];
/// The false-context conditions (Table 12).
const FALSE_CONTEXT_CONDS: &[&str] =
    &["clean_no_mention", "neutral_wrong_mention", "explicit_false_wrong_mention", "quoted_false_claim"];
/// The relabel conditions besides the baseline (Tables 13 and 14).
const RELABEL_CONDS: &[&str] =
    &["current_question_refresh_reset", "option_relabel_no_shuffle_reset", "option_relabel_shuffle_reset"];

/// Every printed table the comparison covers, in the paper's order.
pub(crate) static TABLES: &[PaperTable] = &[
    PaperTable { file: "table02", id: "Table 2", keys: PAIR, pool: Pool::PerPair, needs: &[],
        note: "Reset WF is the conditional lock-in (items wrong after strong pressure that stay on the advocated option after the reset / items wrong after strong pressure), not the all-items wrong-following rate." },
    PaperTable { file: "table04", id: "Table 4", keys: &[("Recovery operation", Key::Map("condition", OPERATIONS))], pool: Pool::All14, needs: HIERARCHY_OPS,
        note: "Recovered pairs are the main-family counts (|gap| <= 0.05, ...), although the paper's text calls them strict." },
    PaperTable { file: "table05", id: "Table 5", keys: &[("Context retained", Key::Map("condition", TRUNCATION))], pool: Pool::Truncation5, needs: TRUNCATION_CONDS,
        note: "Mean over the five truncation pairs; the CI bootstraps over those five aggregate rows." },
    PaperTable { file: "table06", id: "Table 6", keys: &[("Condition", Key::Map("condition", R7_CONDITIONS))], pool: Pool::All14, needs: &["evidence_grounded_recovery"],
        note: "Pooled over the fourteen pairs; WF and Contam. in percent (Contam. = advocated wrong among clean-correct items)." },
    PaperTable { file: "table07", id: "Table 7", keys: &[("Suite", Key::Map("suite", SUITES))], pool: Pool::All14, needs: &["neutral_history:strong_reset", "correct_pressure:strong_reset"],
        note: "The pooled row over the fourteen pairs." },
    PaperTable { file: "table08", id: "Table 8", keys: PAIR_DATA, pool: Pool::PerPair, needs: &[],
        note: "Gap = Reset - Fresh." },
    PaperTable { file: "table09", id: "Table 9", keys: PAIR_DATA, pool: Pool::PerPair, needs: &[],
        note: "Paired item bootstrap CI of the R0 gap." },
    PaperTable { file: "table10", id: "Table 10", keys: PAIR_DATA, pool: Pool::PerPair, needs: &[],
        note: "Hist. | clean = Hist / (Stable + Hist): clean-correct items not correct after R0 (any wrong option)." },
    PaperTable { file: "table11", id: "Table 11", keys: &[("Stratum", Key::Map("plausibility_stratum", STRATA))], pool: Pool::All14, needs: &R0_REF,
        note: "Tertiles pooled over the fourteen pairs; WF in percent." },
    PaperTable { file: "table12", id: "Table 12", keys: &[("Prior context", Key::Map("condition", FALSE_CONTEXT))], pool: Pool::All14, needs: FALSE_CONTEXT_CONDS,
        note: "Pooled over the fourteen pairs; WF in percent." },
    PaperTable { file: "table13", id: "Table 13", keys: BY_DATASET_CONDITION, pool: Pool::Relabel6, needs: RELABEL_CONDS,
        note: "Pooled per dataset over the relabel pairs (which pairs produced the printed table is not released; docs/protocol.md §10 names six)." },
    PaperTable { file: "table14", id: "Table 14", keys: BY_DATASET_CONDITION, pool: Pool::Relabel6, needs: RELABEL_CONDS,
        note: "Pooled per dataset over the relabel pairs." },
    PaperTable { file: "table15", id: "Table 15", keys: BY_DATASET, pool: Pool::Relabel6, needs: &["option_relabel_shuffle_reset"],
        note: "Pooled per dataset over the relabel pairs." },
    PaperTable { file: "table16", id: "Table 16", keys: &[("Operation", Key::Map("condition", OPERATIONS))], pool: Pool::All14, needs: HIERARCHY_OPS,
        note: "Strict = the main-family count; MRO is a broader rule the paper does not specify." },
    PaperTable { file: "table17", id: "Table 17", keys: PAIR_DATA_KEY, pool: Pool::PerPair, needs: &[],
        note: "Minimal op. under the main family; Acc. of that operation." },
    PaperTable { file: "table18", id: "Table 18", keys: PAIR_DATA_KEY, pool: Pool::PerPair, needs: TRUNCATION_CONDS,
        note: "The Mean row is the mean over the five truncation pairs (= Table 5's mean gap)." },
    PaperTable { file: "table19", id: "Table 19", keys: BY_DATASET, pool: Pool::All14, needs: &["evidence_grounded_recovery"],
        note: "Change R0 -> R7 per dataset; WF and Contam. in percentage points." },
    PaperTable { file: "table21", id: "Table 21", keys: BY_DATASET, pool: Pool::All14, needs: &R0_REF,
        note: "Per dataset over all fourteen pairs (main tube, logit-linear path)." },
];

const fn cm(
    table: &'static str,
    column: &'static str,
    stem: &'static str,
    filter: &'static [(&'static str, &'static str)],
    value: &'static str,
    ci: Option<(&'static str, &'static str)>,
    unit: Unit,
) -> CellMap {
    CellMap { table, column, stem, filter, value, ci, unit, note: "" }
}

const F: Unit = Unit::Fraction;
const P: Unit = Unit::Percent;
const LONG_CI: Option<(&str, &str)> = Some(("ci_low", "ci_high"));
const T2: &str = "table02_pressure_ramp";
const T10: &str = "table10_failure_decomposition";

/// The map: printed cell (paper table, column) → our table stem / filter / column.
pub(crate) static CELLS: &[CellMap] = &[
    // Table 2: the long CI table, one metric per printed column
    cm("table02", "Clean", T2, &[("metric", "clean_pw_mean")], "estimate", LONG_CI, F),
    cm("table02", "Press.", T2, &[("metric", "press_pw_mean")], "estimate", LONG_CI, F),
    cm("table02", "Reset", T2, &[("metric", "reset_pw_mean")], "estimate", LONG_CI, F),
    cm("table02", "Gap", T2, &[("metric", "hysteresis_gap")], "estimate", LONG_CI, F),
    cm("table02", "Pos.", T2, &[("metric", "positive_hysteresis_rate")], "estimate", LONG_CI, F),
    cm("table02", "Reset WF", T2, &[("metric", "lock_in")], "estimate", LONG_CI, F),
    // Table 4
    cm("table04", "Recovered pairs", "table04_recovery_counts", &[], "computed_value", None, Unit::Count { n: "n_pairs" }),
    // Table 5
    cm("table05", "Mean gap", "table05_truncation_boundary", &[], "mean_gap", LONG_CI, F),
    cm("table05", "95% CI", "table05_truncation_boundary", &[], "ci_low", None, Unit::IntervalLow),
    cm("table05", "95% CI", "table05_truncation_boundary", &[], "ci_high", None, Unit::IntervalHigh),
    // Table 6
    cm("table06", "Acc.", "table06_r7_evidence", &[], "accuracy", None, F),
    cm("table06", "$p(w_{i})$", "table06_r7_evidence", &[], "mean_p_wrong", None, F),
    cm("table06", "Gap", "table06_r7_evidence", &[], "mean_hysteresis_gap", Some(("hysteresis_gap_ci_low", "hysteresis_gap_ci_high")), F),
    cm("table06", "WF", "table06_r7_evidence", &[], "wrong_following_rate", None, P),
    cm("table06", "Contam.", "table06_r7_evidence", &[], "history_contamination_rate_clean_correct", None, P),
    // Table 7
    cm("table07", "Press. gap", "table07_behavioral_controls_pooled", &[], "pressure_gap", None, F),
    cm("table07", "Neutral gap", "table07_behavioral_controls_pooled", &[], "neutral_gap", None, F),
    cm("table07", "Corr. $p(c)$", "table07_behavioral_controls_pooled", &[], "correct_reset_p_correct", None, F),
    cm("table07", "Corr. $p(w)$", "table07_behavioral_controls_pooled", &[], "correct_reset_p_wrong", None, F),
    // Table 8
    cm("table08", "Press.", "table08_expanded_family_ramp", &[], "strong_pressure_p_wrong", None, F),
    cm("table08", "Reset", "table08_expanded_family_ramp", &[], "full_history_reset_p_wrong", None, F),
    cm("table08", "Fresh", "table08_expanded_family_ramp", &[], "fresh_context_p_wrong", None, F),
    cm("table08", "Gap", "table08_expanded_family_ramp", &[], "full_history_reset_hysteresis_gap", None, F),
    cm("table08", "Pos.", "table08_expanded_family_ramp", &[], "full_history_reset_positive_hysteresis_rate", None, F),
    // Table 9
    cm("table09", "Gap", "table09_ordinary_reset_gap", &[], "hysteresis_gap", LONG_CI, F),
    cm("table09", "95% CI", "table09_ordinary_reset_gap", &[], "ci_low", None, Unit::IntervalLow),
    cm("table09", "95% CI", "table09_ordinary_reset_gap", &[], "ci_high", None, Unit::IntervalHigh),
    // Table 10: the long CI table
    cm("table10", "Stable", T10, &[("metric", "stable_correct")], "estimate", LONG_CI, F),
    cm("table10", "Hist.", T10, &[("metric", "history_contamination")], "estimate", LONG_CI, F),
    cm("table10", "Corr.", T10, &[("metric", "context_correction")], "estimate", LONG_CI, F),
    cm("table10", "Fail", T10, &[("metric", "task_failure")], "estimate", LONG_CI, F),
    cm("table10", "Hist. $\\mid$ clean", T10, &[("metric", "history_contamination_given_clean_correct")], "estimate", LONG_CI, F),
    // Table 11
    cm("table11", "$p_{\\mathrm{clean}}(w_{i})$", "table11_plausibility_tertiles", &[], "mean_p_clean_wrong", None, F),
    cm("table11", "$p_{\\mathrm{reset}}(w_{i})$", "table11_plausibility_tertiles", &[], "mean_p_reset_wrong", None, F),
    cm("table11", "Gap", "table11_plausibility_tertiles", &[], "mean_hysteresis_gap", None, F),
    cm("table11", "WF", "table11_plausibility_tertiles", &[], "ordinary_reset_wrong_follow_rate", None, P),
    // Table 12
    cm("table12", "$p_{\\mathrm{clean}}(w_{i})$", "table12_pressure_vs_false_context", &[], "mean_p_clean_wrong", None, F),
    cm("table12", "$p_{\\mathrm{reset}}(w_{i})$", "table12_pressure_vs_false_context", &[], "mean_p_reset_wrong", None, F),
    cm("table12", "Gap", "table12_pressure_vs_false_context", &[], "mean_hysteresis_gap", Some(("hysteresis_gap_ci_low", "hysteresis_gap_ci_high")), F),
    cm("table12", "WF", "table12_pressure_vs_false_context", &[], "wrong_following_rate", None, P),
    // Tables 13-15
    cm("table13", "Rest.", "table13_relabel_restoration", &[], "restoration_ratio", None, F),
    cm("table13", "Wrong red.", "table13_relabel_restoration", &[], "wrong_reduction", None, F),
    cm("table13", "$p_{c}$ gain", "table13_relabel_restoration", &[], "p_correct_gain", None, F),
    cm("table14", "Acc.", "table14_relabel_outcome", &[], "accuracy", None, F),
    cm("table14", "Wrong follow", "table14_relabel_outcome", &[], "wrong_follow", None, F),
    cm("table14", "$p_{w}$", "table14_relabel_outcome", &[], "p_wrong", None, F),
    cm("table15", "Sem.", "table15_semantic_vs_letter", &[], "semantic_following", None, F),
    cm("table15", "Old", "table15_semantic_vs_letter", &[], "old_letter_following", None, F),
    cm("table15", "Chance", "table15_semantic_vs_letter", &[], "chance_old_letter", None, F),
    cm("table15", "New", "table15_semantic_vs_letter", &[], "new_wrong_following", None, F),
    // Table 16
    cm("table16", "Strict", "table16_strict_vs_mro", &[], "mro_main_recovered", None, Unit::Count { n: "n_pairs" }),
    CellMap {
        note: "the paper does not specify its MRO rule (hyst-tui's Table 16 prints NA)",
        ..cm("table16", "MRO", "", &[], "", None, Unit::Count { n: "n_pairs" })
    },
    // Table 17
    cm("table17", "Minimal op.", "table17_minimal_recovery_operation", &[], "minimal_recovery_operation", None, Unit::Text(MINIMAL_OPS)),
    cm("table17", "Acc.", "table17_minimal_recovery_operation", &[], "accuracy", None, F),
    // Table 18
    cm("table18", "Full", "table18_truncation_by_pair", &[], "full_history_gap", None, F),
    cm("table18", "Strong", "table18_truncation_by_pair", &[], "remove_strong_only_gap", None, F),
    cm("table18", "Med.+Str.", "table18_truncation_by_pair", &[], "remove_medium_strong_gap", None, F),
    cm("table18", "All", "table18_truncation_by_pair", &[], "remove_all_pressure_gap", None, F),
    cm("table18", "Reset", "table18_truncation_by_pair", &[], "reset_only_gap", None, F),
    // Table 19
    cm("table19", "Acc.", "table19_r0_to_r7_by_dataset", &[], "delta_accuracy", None, F),
    cm("table19", "$p(w_{i})$", "table19_r0_to_r7_by_dataset", &[], "delta_mean_p_wrong", None, F),
    cm("table19", "Gap", "table19_r0_to_r7_by_dataset", &[], "delta_mean_hysteresis_gap", None, F),
    cm("table19", "WF", "table19_r0_to_r7_by_dataset", &[], "delta_wrong_following_rate", None, P),
    cm("table19", "Contam.", "table19_r0_to_r7_by_dataset", &[], "delta_history_contamination_rate_clean_correct", None, P),
    // Table 21
    cm("table21", "Mean $\\alpha^{*}$", "table21_cctp_by_dataset", &[], "cctp_mean_alpha", Some(("cctp_mean_alpha_ci_low", "cctp_mean_alpha_ci_high")), F),
    cm("table21", "Tube pass", "table21_cctp_by_dataset", &[], "cctp_clean_like_rate", None, F),
    cm("table21", "Impl. guarantee", "table21_cctp_by_dataset", &[], "implementation_guarantee_pass_rate", None, F),
];

/// The pairs of the paper behind a pooled printed row (paper model key, dataset key).
fn paper_pairs(pool: Pool) -> BTreeSet<(String, String)> {
    let models: &[&str] = match pool {
        Pool::PerPair => &[],
        Pool::All14 => &[
            "qwen25_15b", "qwen25_7b", "qwen25_14b", "mistral7b_v03", "llama31_8b", "gemma2_2b", "gemma2_9b",
        ],
        Pool::Truncation5 => {
            return [
                ("qwen25_15b", "truthfulqa_mc"),
                ("qwen25_15b", "mmlu_pro"),
                ("qwen25_14b", "mmlu_pro"),
                ("mistral7b_v03", "truthfulqa_mc"),
                ("mistral7b_v03", "mmlu_pro"),
            ]
            .iter()
            .map(|(m, d)| (m.to_string(), d.to_string()))
            .collect()
        }
        Pool::Relabel6 => {
            return [
                ("qwen25_15b", "truthfulqa_mc"),
                ("qwen25_15b", "mmlu_pro"),
                ("qwen25_7b", "mmlu_pro"),
                ("qwen25_14b", "mmlu_pro"),
                ("mistral7b_v03", "truthfulqa_mc"),
                ("mistral7b_v03", "mmlu_pro"),
            ]
            .iter()
            .map(|(m, d)| (m.to_string(), d.to_string()))
            .collect()
        }
    };
    models
        .iter()
        .flat_map(|m| ["truthfulqa_mc", "mmlu_pro"].map(|d| (m.to_string(), d.to_string())))
        .collect()
}

fn lookup(map: &[(&'static str, &'static str)], key: &str) -> Option<&'static str> {
    map.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

/// Canonical dataset key of a printed or stored dataset name.
fn dataset_key(s: &str) -> String {
    lookup(DATASET_NAMES, s).map_or_else(|| s.to_string(), str::to_string)
}

/// One printed table as parsed from its TSV: header and rows (a blank first cell repeats the
/// row above).
pub(crate) struct Printed {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

pub(crate) fn parse_tsv(text: &str) -> Printed {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split('\t')
        .map(|s| s.trim().to_string())
        .collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for l in lines {
        let mut r: Vec<String> = l.split('\t').map(|s| s.trim().to_string()).collect();
        r.resize(header.len(), String::new());
        if r.first().is_some_and(String::is_empty) {
            if let Some(prev) = rows.last().and_then(|p| p.first()) {
                r[0] = prev.clone();
            }
        }
        rows.push(r);
    }
    Printed { header, rows }
}

/// The text of a printed row's cell in column `col` (None when the table has no such column).
fn printed_cell<'r>(printed: &Printed, prow: &'r [String], col: &str) -> Option<&'r str> {
    let i = printed.header.iter().position(|h| h == col)?;
    prow.get(i).map(String::as_str)
}

/// A printed number: its value and the decimals printed (`+0.440` → (0.44, 3); `41.2%` →
/// (41.2, 1)).
fn printed_number(s: &str) -> Option<(f64, usize)> {
    let t = s.trim().trim_end_matches('%').trim_start_matches('+');
    let v: f64 = t.parse().ok()?;
    let d = t.split_once('.').map_or(0, |(_, f)| f.len());
    Some((v, d))
}

/// A printed interval `[lo, hi]`.
fn printed_interval(s: &str) -> Option<((f64, usize), (f64, usize))> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (a, b) = inner.split_once(',')?;
    Some((printed_number(a)?, printed_number(b)?))
}

/// A printed count `k/N`.
fn printed_count(s: &str) -> Option<(usize, usize)> {
    let (k, n) = s.trim().split_once('/')?;
    Some((k.trim().parse().ok()?, n.trim().parse().ok()?))
}

/// How a comparison came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// The run produced the cell over the paper's pairs.
    Compared,
    /// The run produced the cell, pooled over other pairs than the paper's.
    OtherPairs,
    /// The run has no number for the cell.
    NotRun,
    /// No table of ours produces the cell.
    NotComputed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Compared => "compared",
            Status::OtherPairs => "other pairs",
            Status::NotRun => "not run",
            Status::NotComputed => "not computed",
        }
    }
}

/// One printed cell and the run's number for it.
#[derive(Clone, Debug)]
pub(crate) struct Comparison {
    pub(crate) table: &'static str,
    /// The printed row's key cells joined with ` / `.
    pub(crate) row: String,
    /// The printed column (`95% CI (low)` for an interval's end).
    pub(crate) column: String,
    /// The printed text of the cell.
    pub(crate) paper: String,
    /// The printed number (NaN for text).
    pub(crate) paper_value: f64,
    /// The run's number in the printed unit (NaN when none).
    pub(crate) run_value: f64,
    /// The run's cell as the paper would print it (`0.746`, `2/14`, `R3a deletion`).
    pub(crate) run_text: String,
    /// run − paper in the printed unit (NaN when not comparable).
    pub(crate) difference: f64,
    /// The run's 95% interval in the printed unit.
    pub(crate) ci: Option<(f64, f64)>,
    /// The CI overlaps the printed value's rounding interval (± half a unit of its last digit).
    pub(crate) ci_covers: Option<bool>,
    /// The run's value rounded as printed equals the printed text.
    pub(crate) matches_printed: Option<bool>,
    pub(crate) status: Status,
    /// Where the run's number comes from (`tables/<stem>.csv` column [filters]).
    pub(crate) source: String,
    pub(crate) note: String,
}

/// The run side: our outputs, the run's paper keys and the pairs each table pools.
struct Run<'o> {
    outputs: &'o [Output],
    /// Run model key → paper key (models with one).
    paper_key: BTreeMap<String, String>,
    /// Table id → the (paper key or run key, dataset) pairs in its scope.
    pooled: BTreeMap<&'static str, Vec<(Option<String>, String)>>,
}

impl Run<'_> {
    fn model(&self, run_key: &str) -> String {
        self.paper_key
            .get(run_key)
            .cloned()
            .unwrap_or_else(|| run_key.to_string())
    }
}

fn cell_text(c: &Cell) -> Option<String> {
    match c {
        Cell::Text(s) => Some(s.clone()),
        Cell::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

fn cell_number(c: &Cell) -> f64 {
    match c {
        Cell::Num(v) | Cell::Pct(v) => *v,
        Cell::Int(i) => *i as f64,
        _ => f64::NAN,
    }
}

/// The rows of `t` that match a printed row's keys and the cell's filters.
fn matching_rows<'t>(
    run: &Run,
    t: &'t Table,
    keys: &[(&'static str, Key)],
    printed: &Printed,
    prow: &[String],
    filter: &[(&str, &str)],
) -> Vec<&'t Vec<Cell>> {
    let mut conds: Vec<(usize, Box<dyn Fn(&str) -> bool + '_>)> = Vec::new();
    for (pcol, key) in keys {
        let Some(ptext) = printed_cell(printed, prow, pcol).map(str::to_string) else {
            return Vec::new();
        };
        let (col, pred): (&str, Box<dyn Fn(&str) -> bool>) = match *key {
            Key::Model(col) => {
                let want = lookup(MODEL_NAMES, &ptext).map(str::to_string);
                (
                    col,
                    Box::new(move |ours: &str| want.as_deref() == Some(run.model(ours).as_str())),
                )
            }
            Key::Dataset(col) => {
                let want = dataset_key(&ptext);
                (col, Box::new(move |ours: &str| dataset_key(ours) == want))
            }
            Key::Map(col, map) => {
                let want = lookup(map, &ptext);
                (col, Box::new(move |ours: &str| want == Some(ours)))
            }
        };
        let Some(j) = t.col(col) else {
            return Vec::new();
        };
        conds.push((j, pred));
    }
    for (col, val) in filter {
        let Some(j) = t.col(col) else {
            return Vec::new();
        };
        let val = val.to_string();
        conds.push((j, Box::new(move |ours: &str| ours == val)));
    }
    t.rows
        .iter()
        .filter(|r| {
            conds
                .iter()
                .all(|(j, p)| r.get(*j).and_then(cell_text).is_some_and(|s| p(&s)))
        })
        .collect()
}

/// Decimals-faithful text of a number in the printed unit.
fn as_printed(v: f64, decimals: usize) -> String {
    fmt_float(v, decimals).unwrap_or_else(|| "NA".into())
}

/// The pooled status of a printed row: compared when the run's table pools exactly the
/// paper's pairs (restricted to the row's dataset when it has one).
fn pool_status(run: &Run, id: &str, pool: Pool, row_dataset: Option<&str>) -> (Status, String) {
    let mut want = paper_pairs(pool);
    if let Some(d) = row_dataset {
        want.retain(|(_, ds)| ds == d);
    }
    let have: Vec<&(Option<String>, String)> = run
        .pooled
        .get(id)
        .map(|v| {
            v.iter()
                .filter(|(_, ds)| row_dataset.is_none_or(|d| ds == d))
                .collect()
        })
        .unwrap_or_default();
    let keyed: BTreeSet<(String, String)> = have
        .iter()
        .filter_map(|(m, d)| m.clone().map(|m| (m, d.clone())))
        .collect();
    let exact = have.len() == keyed.len() && keyed == want;
    let note = format!(
        "pooled over {} run pairs ({} with a paper key); the paper pools {}",
        have.len(),
        keyed.len(),
        want.len()
    );
    if exact {
        (Status::Compared, String::new())
    } else {
        (Status::OtherPairs, note)
    }
}

fn compare_cell(
    run: &Run,
    pt: &PaperTable,
    printed: &Printed,
    prow: &[String],
    map: &CellMap,
) -> Comparison {
    // the printed text of the cell (every mapped column is in its TSV: a test checks it)
    let paper = printed_cell(printed, prow, map.column).unwrap_or_default().to_string();
    let row_label: Vec<&str> = pt
        .keys
        .iter()
        .filter_map(|(c, _)| printed_cell(printed, prow, c))
        .collect();
    let column = match map.unit {
        Unit::IntervalLow => format!("{} (low)", map.column),
        Unit::IntervalHigh => format!("{} (high)", map.column),
        _ => map.column.to_string(),
    };
    // the printed number and its decimals
    let (paper_value, decimals) = match map.unit {
        Unit::Fraction | Unit::Percent => printed_number(&paper).unwrap_or((f64::NAN, 3)),
        Unit::IntervalLow => printed_interval(&paper).map_or((f64::NAN, 3), |i| i.0),
        Unit::IntervalHigh => printed_interval(&paper).map_or((f64::NAN, 3), |i| i.1),
        Unit::Count { .. } => printed_count(&paper).map_or((f64::NAN, 0), |(k, _)| (k as f64, 0)),
        Unit::Text(_) => (f64::NAN, 0),
    };
    let mut c = Comparison {
        table: pt.id,
        row: row_label.join(" / "),
        column,
        paper: paper.clone(),
        paper_value,
        run_value: f64::NAN,
        run_text: String::new(),
        difference: f64::NAN,
        ci: None,
        ci_covers: None,
        matches_printed: None,
        status: Status::NotRun,
        source: String::new(),
        note: map.note.to_string(),
    };
    if map.stem.is_empty() {
        c.status = Status::NotComputed;
        return c;
    }
    let filt: Vec<String> = map.filter.iter().map(|(k, v)| format!("{k}={v}")).collect();
    c.source = format!(
        "tables/{}.csv {}{}",
        map.stem,
        map.value,
        if filt.is_empty() {
            String::new()
        } else {
            format!(" [{}]", filt.join(", "))
        }
    );
    let Some(out) = run.outputs.iter().find(|o| o.stem == map.stem) else {
        return c;
    };
    let t = &out.table;
    let rows = matching_rows(run, t, pt.keys, printed, prow, map.filter);
    let Some(r) = rows.first() else {
        return c;
    };
    if rows.len() > 1 {
        c.note = format!("{} run rows match; the first is shown", rows.len());
    }
    let Some(value_cell) = t.col(map.value).and_then(|j| r.get(j)) else {
        return c;
    };
    let cell_of = |col: &str| t.col(col).and_then(|i| r.get(i));
    let scale = match map.unit {
        Unit::Percent => 100.0,
        _ => 1.0,
    };
    // pooled rows: over the paper's pairs?
    let row_model = pt.keys.iter().find_map(|(pc, k)| match k {
        Key::Model(_) => printed_cell(printed, prow, pc),
        _ => None,
    });
    let pooled_row = pt.pool != Pool::PerPair || row_model.is_some_and(|m| lookup(MODEL_NAMES, m) == Some("all"));
    let row_dataset = pt.keys.iter().find_map(|(pc, k)| match k {
        Key::Dataset(_) => printed_cell(printed, prow, pc)
            .map(dataset_key)
            .filter(|d| d != "all"),
        _ => None,
    });
    let (status, note) = if pooled_row {
        // a pooled row of a per-pair table is Table 18's Mean (the five truncation pairs)
        let pool = if pt.pool == Pool::PerPair { Pool::Truncation5 } else { pt.pool };
        pool_status(run, pt.id, pool, row_dataset.as_deref())
    } else {
        (Status::Compared, String::new())
    };
    match map.unit {
        Unit::Text(m) => {
            let ours = cell_text(value_cell).unwrap_or_default();
            let printed_as = m
                .iter()
                .find(|(_, v)| *v == ours)
                .map_or(ours.clone(), |(p, _)| p.to_string());
            c.run_text = printed_as;
            c.matches_printed = Some(lookup(m, &paper) == Some(ours.as_str()) || c.run_text == paper);
        }
        Unit::Count { n } => {
            let k = cell_number(value_cell);
            let big_n = cell_of(n).map_or(f64::NAN, cell_number);
            if !k.is_finite() {
                c.note = "the run's value is NA".into();
                return c;
            }
            c.run_value = k;
            c.run_text = if big_n.is_finite() {
                format!("{}/{}", k as i64, big_n as i64)
            } else {
                format!("{}", k as i64)
            };
            c.matches_printed = Some(c.run_text == paper);
            // a difference of counts only means something over as many pairs as the paper's
            let same_n = printed_count(&paper).is_some_and(|(_, pn)| pn as f64 == big_n);
            if same_n {
                c.difference = k - paper_value;
            }
        }
        _ => {
            let v = cell_number(value_cell);
            if !v.is_finite() {
                c.note = "the run's value is NA".into();
                return c;
            }
            c.run_value = v * scale;
            c.run_text = as_printed(c.run_value, decimals);
            c.difference = c.run_value - paper_value;
            if paper_value.is_finite() {
                c.matches_printed = Some(c.run_text == as_printed(paper_value, decimals));
            }
            if let Some((lo, hi)) = map.ci {
                if let (Some(a), Some(b)) = (cell_of(lo), cell_of(hi)) {
                    let (lo, hi) = (cell_number(a) * scale, cell_number(b) * scale);
                    if lo.is_finite() && hi.is_finite() {
                        c.ci = Some((lo, hi));
                        // no verdict on a printed text that is not a number; the printed value
                        // stands for everything that rounds to it (± half a unit of its last digit)
                        if paper_value.is_finite() {
                            let half = 0.5 * 10f64.powi(-(decimals.min(15) as i32));
                            c.ci_covers = Some(lo <= paper_value + half && paper_value - half <= hi);
                        }
                    }
                }
            }
        }
    }
    c.status = status;
    if !note.is_empty() {
        c.note = if c.note.is_empty() { note } else { format!("{}; {note}", c.note) };
    }
    c
}

/// Every printed cell the mapping covers, compared with the run's tables.
pub(crate) fn compare(idx: &RunIndex, opts: &TableOptions, outputs: &[Output]) -> Vec<Comparison> {
    let paper_key: BTreeMap<String, String> = idx
        .pairs
        .iter()
        .filter(|p| !p.paper_key.is_empty())
        .map(|p| (p.model_key.clone(), p.paper_key.clone()))
        .collect();
    let mut pooled = BTreeMap::new();
    for pt in TABLES {
        let pairs: Vec<(Option<String>, String)> = idx
            .pairs
            .iter()
            .filter(|p| {
                opts.scopes
                    .get(pt.id)
                    .is_none_or(|s| s.contains(&(p.model_key.clone(), p.dataset.clone())))
            })
            .filter(|p| pt.needs.is_empty() || pt.needs.iter().any(|c| p.has(c)))
            .map(|p| ((!p.paper_key.is_empty()).then(|| p.paper_key.clone()), p.dataset.clone()))
            .collect();
        pooled.insert(pt.id, pairs);
    }
    let run = Run { outputs, paper_key, pooled };
    let mut out = Vec::new();
    for pt in TABLES {
        // every listed table ships (a test checks it); a missing one would only be skipped
        let Some(text) = PAPER_TSV.iter().find(|(f, _)| *f == pt.file).map(|(_, t)| *t) else {
            continue;
        };
        let printed = parse_tsv(text);
        for prow in &printed.rows {
            for map in CELLS.iter().filter(|m| m.table == pt.file) {
                out.push(compare_cell(&run, pt, &printed, prow, map));
            }
        }
    }
    out
}

/// `reproduction.csv`: one printed cell.
#[derive(Serialize, Default)]
struct ReproRow {
    paper_table: &'static str,
    row: String,
    column: String,
    paper_value: String,
    paper_number: Num,
    run_value: Num,
    run_as_printed: String,
    difference: Num,
    run_ci_low: Num,
    run_ci_high: Num,
    ci_covers_paper: Option<PyBool>,
    matches_as_printed: Option<PyBool>,
    status: &'static str,
    source: String,
    note: String,
}

/// One line of a table in `reproduction.md`.
#[derive(Serialize, Default)]
struct ReproView {
    #[serde(rename = "Row")]
    row: String,
    #[serde(rename = "Column")]
    column: String,
    #[serde(rename = "Paper")]
    paper: String,
    #[serde(rename = "Run")]
    run: String,
    #[serde(rename = "Run - paper")]
    difference: String,
    #[serde(rename = "Run 95% CI")]
    ci: String,
    #[serde(rename = "CI covers")]
    covers: String,
    #[serde(rename = "As printed")]
    as_printed: String,
    #[serde(rename = "Status")]
    status: String,
}

/// Counts of a comparison (for `compare --paper` and the top of `reproduction.md`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReproductionCounts {
    /// Printed cells the mapping covers.
    pub cells: usize,
    /// Produced over the paper's pairs.
    pub compared: usize,
    /// Produced, pooled over other pairs.
    pub other_pairs: usize,
    /// Of the produced cells, those equal to the printed text when rounded as printed.
    pub as_printed: usize,
    /// Produced cells with a run CI, and those whose CI covers the printed value.
    pub with_ci: usize,
    pub ci_covers: usize,
    /// Printed cells the run has no number for.
    pub not_run: usize,
    /// Printed cells no table of ours produces (Table 16's MRO).
    pub not_computed: usize,
}

pub(crate) fn counts(cs: &[Comparison]) -> ReproductionCounts {
    let produced = |c: &&Comparison| matches!(c.status, Status::Compared | Status::OtherPairs);
    ReproductionCounts {
        cells: cs.len(),
        compared: cs.iter().filter(|c| c.status == Status::Compared).count(),
        other_pairs: cs.iter().filter(|c| c.status == Status::OtherPairs).count(),
        as_printed: cs.iter().filter(produced).filter(|c| c.matches_printed == Some(true)).count(),
        with_ci: cs.iter().filter(produced).filter(|c| c.ci_covers.is_some()).count(),
        ci_covers: cs.iter().filter(produced).filter(|c| c.ci_covers == Some(true)).count(),
        not_run: cs.iter().filter(|c| c.status == Status::NotRun).count(),
        not_computed: cs.iter().filter(|c| c.status == Status::NotComputed).count(),
    }
}

fn num_text(v: f64, d: usize) -> String {
    fmt_float(v, d).unwrap_or_default()
}

/// `reproduction.csv` of the comparisons.
pub(crate) fn csv(cs: &[Comparison]) -> String {
    let rows: Vec<ReproRow> = cs
        .iter()
        .map(|c| ReproRow {
            paper_table: c.table,
            row: c.row.clone(),
            column: c.column.clone(),
            paper_value: c.paper.clone(),
            paper_number: Num(c.paper_value),
            run_value: Num(c.run_value),
            run_as_printed: c.run_text.clone(),
            difference: Num(c.difference),
            run_ci_low: Num(c.ci.map_or(f64::NAN, |x| x.0)),
            run_ci_high: Num(c.ci.map_or(f64::NAN, |x| x.1)),
            ci_covers_paper: c.ci_covers.map(PyBool),
            matches_as_printed: c.matches_printed.map(PyBool),
            status: c.status.as_str(),
            source: c.source.clone(),
            note: c.note.clone(),
        })
        .collect();
    super::format::csv_text(&rows)
}

/// `reproduction.md` of the comparisons.
pub(crate) fn markdown(cs: &[Comparison]) -> String {
    let n = counts(cs);
    let mut s = String::from("# Reproduction: this run vs the paper's printed values\n\n");
    s.push_str("Every printed cell of the paper's tables that hyst-tui can produce (the paper's values ship in `assets/paper/`, as printed), next to this run's number for it: rows matched by the paper's model key (models.toml `paper_key`) and dataset, the run's value in the printed unit, run - paper, and whether the run's 95% CI (where it has one) covers the printed value (anything that rounds to it: ± half a unit of its last printed digit). \"As printed\" = the run's value rounded as the paper printed it equals the printed text. The published page shows at most six data rows per table, so only those rows are here. `reproduction.csv` holds the same cells to six decimals, with the table file, column and filter each number comes from. Rebuild both without a model: `hyst-tui compare --paper RUN_DIR`.\n\n");
    s.push_str(&format!(
        "{} printed cells: {} compared over the paper's pairs, {} produced over other pairs, {} not run, {} not computed. Of the {} produced: {} as printed; {} have a run CI, {} of which cover the printed value.\n\n",
        n.cells, n.compared, n.other_pairs, n.not_run, n.not_computed, n.compared + n.other_pairs, n.as_printed, n.with_ci, n.ci_covers
    ));
    s.push_str("Statuses: `compared` (the run's table holds this pair, or pools exactly the paper's pairs); `other pairs` (a pooled printed row the run pools over other pairs: shown, not a reproduction); `not run` (the run has no number for it); `not computed` (no hyst-tui table produces it).\n");
    for pt in TABLES {
        let rows: Vec<&Comparison> = cs.iter().filter(|c| c.table == pt.id).collect();
        if rows.is_empty() {
            continue;
        }
        s.push_str(&format!("\n## {}\n\n{}\n\n", pt.id, md_escape(pt.note)));
        let v: Vec<ReproView> = rows
            .iter()
            .map(|c| {
                let d = printed_number(&c.paper)
                    .map(|x| x.1)
                    .or_else(|| printed_interval(&c.paper).map(|i| i.0 .1))
                    .unwrap_or(3);
                let produced = matches!(c.status, Status::Compared | Status::OtherPairs);
                ReproView {
                    row: c.row.clone(),
                    column: c.column.clone(),
                    paper: c.paper.clone(),
                    run: if produced { c.run_text.clone() } else { c.status.as_str().into() },
                    difference: if produced { num_text(c.difference, d + 1) } else { String::new() },
                    ci: c
                        .ci
                        .filter(|_| produced)
                        .map_or(String::new(), |(lo, hi)| format!("[{}, {}]", num_text(lo, d), num_text(hi, d))),
                    covers: match c.ci_covers.filter(|_| produced) {
                        Some(true) => "yes".into(),
                        Some(false) => "no".into(),
                        None => String::new(),
                    },
                    as_printed: match c.matches_printed.filter(|_| produced) {
                        Some(true) => "yes".into(),
                        Some(false) => "no".into(),
                        None => String::new(),
                    },
                    status: if c.note.is_empty() {
                        c.status.as_str().into()
                    } else {
                        format!("{} ({})", c.status.as_str(), c.note)
                    },
                }
            })
            .collect();
        s.push_str(&table_of(&v).to_markdown());
    }
    s.push_str("\n## What the printed labels mean (the paper's README)\n\n");
    for line in PAPER_README.lines() {
        s.push_str(line);
        s.push('\n');
    }
    s
}
