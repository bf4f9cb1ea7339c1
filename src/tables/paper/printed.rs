//! The paper's printed data: the bundled TSVs of its tables and their README, the maps from
//! printed names to our keys, the printed tables compared ([`TABLES`]: how their rows are keyed
//! and what they pool) and the cell map ([`CELLS`]: printed column → our table's column).

use std::sync::OnceLock;

use crate::dialogue::conditions::{group_keys, ids, main_ops, Kind, RecoveryOp, Registry};
use crate::dialogue::recipe::Group;
use crate::dialogue::{Control, CurvePoint};
use crate::metrics::criteria::NOT_RESTORED;

/// The paper's printed tables, as shipped in `assets/paper/` (file stem, TSV text).
pub(crate) const PAPER_TSV: &[(&str, &str)] = &[
    ("table02", include_str!("../../../assets/paper/table02.tsv")),
    ("table04", include_str!("../../../assets/paper/table04.tsv")),
    ("table05", include_str!("../../../assets/paper/table05.tsv")),
    ("table06", include_str!("../../../assets/paper/table06.tsv")),
    ("table07", include_str!("../../../assets/paper/table07.tsv")),
    ("table08", include_str!("../../../assets/paper/table08.tsv")),
    ("table09", include_str!("../../../assets/paper/table09.tsv")),
    ("table10", include_str!("../../../assets/paper/table10.tsv")),
    ("table11", include_str!("../../../assets/paper/table11.tsv")),
    ("table12", include_str!("../../../assets/paper/table12.tsv")),
    ("table13", include_str!("../../../assets/paper/table13.tsv")),
    ("table14", include_str!("../../../assets/paper/table14.tsv")),
    ("table15", include_str!("../../../assets/paper/table15.tsv")),
    ("table16", include_str!("../../../assets/paper/table16.tsv")),
    ("table17", include_str!("../../../assets/paper/table17.tsv")),
    ("table18", include_str!("../../../assets/paper/table18.tsv")),
    ("table19", include_str!("../../../assets/paper/table19.tsv")),
    ("table21", include_str!("../../../assets/paper/table21.tsv")),
];

/// What the paper's printed labels mean (`assets/paper/README.md`).
pub(super) const PAPER_README: &str = include_str!("../../../assets/paper/README.md");

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

/// A map printed text → our text, computed once (most come from the condition registry: the
/// bundled one, as the paper printed built-in conditions only).
type Names = fn() -> &'static [(&'static str, &'static str)];

/// `(label, key)` of the operations that have `label` (registry order).
fn op_labels(label: fn(&RecoveryOp) -> &'static str) -> Vec<(&'static str, &'static str)> {
    Registry::bundled().recovery_ops().iter().filter(|o| !label(o).is_empty()).map(|o| (label(o), o.key)).collect()
}

/// `(label, key)` of the conditions of a group (registry order).
fn group_labels(g: Group) -> Vec<(&'static str, &'static str)> {
    group_keys(g).iter().map(|k| (Registry::bundled().find(k).map_or(*k, |c| &*c.label.clone().leak()), *k)).collect()
}

/// The conditions of a group that no other condition stands in for: those that only its suite
/// produces (a condition declared the same as another is left out).
fn own_conditions(keys: &[&'static str]) -> Vec<&'static str> {
    keys.iter().copied().filter(|k| Registry::bundled().find(k).is_some_and(|c| c.same_as.is_none())).collect()
}

/// Printed recovery-operation labels (Tables 4 and 16) → condition keys: the registry's
/// `table4` and `table16` labels.
fn operations() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| {
        let mut m = op_labels(|o| o.table4_label);
        for x in op_labels(|o| o.table16_label) {
            if !m.contains(&x) {
                m.push(x);
            }
        }
        m
    })
}

/// Table 17's printed minimal operations → condition keys: the registry's `table17` labels.
fn minimal_ops() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| {
        let mut m: Vec<(&str, &str)> = main_ops().iter().map(|o| (o.table17_label, o.key)).collect();
        m.push(("not restored", NOT_RESTORED));
        m
    })
}

/// Table 5's printed conditions → condition keys: the truncation conditions' labels.
fn truncation() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| group_labels(Group::Truncation))
}

/// Table 6's printed conditions → condition keys: the registry's `table6` labels.
fn r7_conditions() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| op_labels(|o| o.table6_label))
}

/// Table 7's printed suite → our pooled row.
const SUITES: &[(&str, &str)] = &[("Full 14", "all")];

/// Table 11's printed strata → ours.
const STRATA: &[(&str, &str)] = &[("Low", "low"), ("Mid", "mid"), ("High", "high")];

/// Table 12's printed prior contexts → condition keys: the false-context conditions' labels.
fn false_context() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| group_labels(Group::FalseContext))
}

/// Tables 13 and 14's printed conditions (our CSVs use the same labels: the relabel
/// conditions').
fn relabel() -> &'static [(&'static str, &'static str)] {
    static M: OnceLock<Vec<(&str, &str)>> = OnceLock::new();
    M.get_or_init(|| group_labels(Group::Relabel).into_iter().map(|(l, _)| (l, l)).collect())
}

/// How a printed key column is matched with a column of our CSV.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key {
    /// Printed model name ↔ our column of run model keys, through the run's paper keys.
    Model(&'static str),
    /// Printed dataset name ↔ our column holding a dataset key or short/display name.
    Dataset(&'static str),
    /// Printed text ↔ our column's text through a map (printed, ours).
    Map(&'static str, Names),
}

/// The pairs a pooled printed row is computed over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Pool {
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
    pub(super) pool: Pool,
    /// Conditions a pair of the run must have (any one) for our table to pool it, in the run's
    /// registry; empty for a per-pair table. With the plan's scope this gives the pairs our
    /// pooled row is over.
    pub(super) needs: fn(&Registry) -> &'static [&'static str],
    /// What the printed labels mean (paper README), shown above the table.
    pub(super) note: &'static str,
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
    Text(Names),
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
    pub(super) note: &'static str,
}

const PAIR: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Dataset", Key::Dataset("dataset_key"))];
const PAIR_DATA: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Data", Key::Dataset("dataset_key"))];
const PAIR_DATA_KEY: &[(&str, Key)] = &[("Model", Key::Model("model_key")), ("Data", Key::Dataset("dataset"))];
const BY_DATASET: &[(&str, Key)] = &[("Dataset", Key::Dataset("dataset"))];
const BY_DATASET_CONDITION: &[(&str, Key)] = &[
    ("Dataset", Key::Dataset("dataset")),
    ("Condition", Key::Map("condition", relabel)),
];

/// The recovery operations only the hierarchy suite produces (Tables 4 and 16 pool the pairs with
/// any): the main operations but R0, which the ramp's strong_reset stands in for.
fn hierarchy_ops() -> &'static [&'static str] {
    static C: OnceLock<Vec<&str>> = OnceLock::new();
    C.get_or_init(|| own_conditions(&main_ops().iter().map(|o| o.key).collect::<Vec<_>>()))
}
/// The truncation conditions only the truncation suite produces (Tables 5 and 18).
fn truncation_conds() -> &'static [&'static str] {
    static C: OnceLock<Vec<&str>> = OnceLock::new();
    C.get_or_init(|| own_conditions(group_keys(Group::Truncation)))
}
/// The false-context conditions only that suite produces (Table 12).
fn false_context_conds() -> &'static [&'static str] {
    static C: OnceLock<Vec<&str>> = OnceLock::new();
    C.get_or_init(|| own_conditions(group_keys(Group::FalseContext)))
}
/// The relabel conditions besides the baseline (Tables 13 and 14).
fn relabel_conds() -> &'static [&'static str] {
    static C: OnceLock<Vec<&str>> = OnceLock::new();
    C.get_or_init(|| own_conditions(group_keys(Group::Relabel)))
}
/// The evidence operation (Tables 6 and 19).
fn evidence_ops() -> &'static [&'static str] {
    group_keys(Group::Evidence)
}
/// The controls' strong-reset steps (Table 7).
fn control_resets() -> &'static [&'static str] {
    static C: OnceLock<Vec<&str>> = OnceLock::new();
    C.get_or_init(|| {
        Registry::bundled().all().iter().filter(|c| matches!(c.kind, Kind::Curve(ctl, CurvePoint::StrongReset) if ctl != Control::PressureWrong)).map(|c| &*c.key.clone().leak()).collect()
    })
}
/// The shuffled relabel condition (Table 15).
fn relabel_shuffle() -> &'static [&'static str] {
    &[ids::RELABEL_SHUFFLE]
}

/// Every printed table the comparison covers, in the paper's order.
pub(crate) static TABLES: &[PaperTable] = &[
    PaperTable { file: "table02", id: "Table 2", keys: PAIR, pool: Pool::PerPair, needs: |_| &[],
        note: "Reset WF is the conditional lock-in (items wrong after strong pressure that stay on the advocated option after the reset / items wrong after strong pressure), not the all-items wrong-following rate." },
    PaperTable { file: "table04", id: "Table 4", keys: &[("Recovery operation", Key::Map("condition", operations))], pool: Pool::All14, needs: |_| hierarchy_ops(),
        note: "Recovered pairs are the main-family counts (|gap| <= 0.05, ...), although the paper's text calls them strict." },
    PaperTable { file: "table05", id: "Table 5", keys: &[("Context retained", Key::Map("condition", truncation))], pool: Pool::Truncation5, needs: |_| truncation_conds(),
        note: "Mean over the five truncation pairs; the CI bootstraps over those five aggregate rows." },
    PaperTable { file: "table06", id: "Table 6", keys: &[("Condition", Key::Map("condition", r7_conditions))], pool: Pool::All14, needs: |_| evidence_ops(),
        note: "Pooled over the fourteen pairs; WF and Contam. in percent (Contam. = advocated wrong among clean-correct items)." },
    PaperTable { file: "table07", id: "Table 7", keys: &[("Suite", Key::Map("suite", || SUITES))], pool: Pool::All14, needs: |_| control_resets(),
        note: "The pooled row over the fourteen pairs." },
    PaperTable { file: "table08", id: "Table 8", keys: PAIR_DATA, pool: Pool::PerPair, needs: |_| &[],
        note: "Gap = Reset - Fresh." },
    PaperTable { file: "table09", id: "Table 9", keys: PAIR_DATA, pool: Pool::PerPair, needs: |_| &[],
        note: "Paired item bootstrap CI of the R0 gap." },
    PaperTable { file: "table10", id: "Table 10", keys: PAIR_DATA, pool: Pool::PerPair, needs: |_| &[],
        note: "Hist. | clean = Hist / (Stable + Hist): clean-correct items not correct after R0 (any wrong option)." },
    PaperTable { file: "table11", id: "Table 11", keys: &[("Stratum", Key::Map("plausibility_stratum", || STRATA))], pool: Pool::All14, needs: Registry::r0_ref,
        note: "Tertiles pooled over the fourteen pairs; WF in percent." },
    PaperTable { file: "table12", id: "Table 12", keys: &[("Prior context", Key::Map("condition", false_context))], pool: Pool::All14, needs: |_| false_context_conds(),
        note: "Pooled over the fourteen pairs; WF in percent." },
    PaperTable { file: "table13", id: "Table 13", keys: BY_DATASET_CONDITION, pool: Pool::Relabel6, needs: |_| relabel_conds(),
        note: "Pooled per dataset over the relabel pairs (which pairs produced the printed table is not released; docs/protocol.md §10 names six)." },
    PaperTable { file: "table14", id: "Table 14", keys: BY_DATASET_CONDITION, pool: Pool::Relabel6, needs: |_| relabel_conds(),
        note: "Pooled per dataset over the relabel pairs." },
    PaperTable { file: "table15", id: "Table 15", keys: BY_DATASET, pool: Pool::Relabel6, needs: |_| relabel_shuffle(),
        note: "Pooled per dataset over the relabel pairs." },
    PaperTable { file: "table16", id: "Table 16", keys: &[("Operation", Key::Map("condition", operations))], pool: Pool::All14, needs: |_| hierarchy_ops(),
        note: "Strict = the main-family count; MRO is a broader rule the paper does not specify." },
    PaperTable { file: "table17", id: "Table 17", keys: PAIR_DATA_KEY, pool: Pool::PerPair, needs: |_| &[],
        note: "Minimal op. under the main family; Acc. of that operation." },
    PaperTable { file: "table18", id: "Table 18", keys: PAIR_DATA_KEY, pool: Pool::PerPair, needs: |_| truncation_conds(),
        note: "The Mean row is the mean over the five truncation pairs (= Table 5's mean gap)." },
    PaperTable { file: "table19", id: "Table 19", keys: BY_DATASET, pool: Pool::All14, needs: |_| evidence_ops(),
        note: "Change R0 -> R7 per dataset; WF and Contam. in percentage points." },
    PaperTable { file: "table21", id: "Table 21", keys: BY_DATASET, pool: Pool::All14, needs: Registry::r0_ref,
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
    cm("table17", "Minimal op.", "table17_minimal_recovery_operation", &[], "minimal_recovery_operation", None, Unit::Text(minimal_ops)),
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
