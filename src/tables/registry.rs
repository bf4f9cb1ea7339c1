//! The one list of the tables: what each is, which files it writes, what it needs and how it
//! is built. [`super::build_tables`], `summary.md` and the tests all derive from [`TABLES`].

use crate::dialogue::conditions::ids;
use super::output::{Output, EXPERIMENT_ID, SERVED_ID};
use super::{
    cctp, controls, decomposition, definitions, examples, expanded_family, experiments, false_context,
    plausibility, pressure_ramp, r7, relabel, reset_gap, served, truncation, Ctx,
};

/// One table of the paper (or an auxiliary table).
pub(crate) struct TableSpec {
    /// `Table 2`, … or `Aux`.
    pub(crate) id: &'static str,
    /// Short title (the summary lists it with `needs` when the table is not written).
    pub(crate) title: &'static str,
    /// What the table needs from the run.
    pub(crate) needs: &'static str,
    /// The file stems the table writes (all of them when its conditions are present).
    pub(crate) stems: &'static [&'static str],
    /// Builds the table's outputs; none when the rows lack its conditions.
    pub(crate) build: fn(&Ctx) -> Vec<Output>,
}

impl TableSpec {
    /// Runs the builder; every output gets this table's id and must use one of its stems. An
    /// output of no rows is dropped (`Output::new`).
    pub(crate) fn run(&self, ctx: &Ctx) -> Vec<Output> {
        let mut out = (self.build)(ctx);
        out.retain(Output::is_written);
        for o in &mut out {
            assert!(
                self.stems.contains(&o.stem.as_str()),
                "{} wrote {}, which the registry does not list",
                self.id,
                o.stem
            );
            o.id = self.id;
        }
        out
    }

    /// Whether this table is among the outputs.
    pub(crate) fn written(&self, outputs: &[Output]) -> bool {
        outputs
            .iter()
            .any(|o| self.stems.contains(&o.stem.as_str()))
    }
}

/// Every table, in the paper's order (the summary lists missing tables in this order; the files
/// are written in stem order).
pub(crate) static TABLES: &[TableSpec] = &[
    TableSpec {
        id: "Table 1",
        title: "Recovery operations (definitions)",
        needs: "nothing (condition registry)",
        stems: &["table01_recovery_operations"],
        build: definitions::table01,
    },
    TableSpec {
        id: "Table 2",
        title: "Pressure ramp",
        needs: "clean_context (or clean_context_probe), strong_pressure, strong_reset",
        stems: &["table02_pressure_ramp"],
        build: pressure_ramp::table02,
    },
    TableSpec {
        id: "Table 3",
        title: "Behavioural controls summary",
        needs: "clean, R0 (ordinary_strong_reset or strong_reset), and neutral_history:strong_reset + neutral_history:clean_context_probe and/or correct_pressure:strong_reset",
        stems: &[
            "table03_controls",
            "table03_controls_by_dataset",
            "table03_controls_by_pair",
        ],
        build: controls::table03,
    },
    TableSpec {
        id: "Table 3",
        title: "Controls summary (the paper's five rows)",
        needs: "any of: the behavioural controls (as above), clean + R0, the false-context conditions, option_relabel_shuffle_reset",
        stems: &["table03_controls_summary"],
        build: controls::table03_summary,
    },
    TableSpec {
        id: "Table 4",
        title: "Recovered pairs per operation",
        needs: "clean + R0 + at least one hierarchy operation",
        stems: &["table04_recovery_counts"],
        build: |ctx| ctx.hierarchy().table04(),
    },
    TableSpec {
        id: "Table 5",
        title: "Truncation boundary",
        needs: "clean + truncation conditions (full_history_reset ... fresh_context)",
        stems: &["table05_truncation_summary", "table05_truncation_boundary"],
        build: truncation::table05,
    },
    TableSpec {
        id: "Table 6",
        title: "R0 vs R7 trusted evidence",
        needs: "clean + evidence_grounded_recovery (+ R0, R5, R3a rows when present)",
        stems: &["table06_r7_evidence", "table06_r7_evidence_by_pair"],
        build: r7::table06,
    },
    TableSpec {
        id: "Table 7",
        title: "Behavioural controls per pair",
        needs: "as Table 3",
        stems: &[
            "table07_behavioral_controls",
            "table07_behavioral_controls_pooled",
        ],
        build: controls::table07,
    },
    TableSpec {
        id: "Table 8",
        title: "Expanded family ramp",
        needs: "strong_pressure + full_history_reset (or R0) + fresh_context (or clean)",
        stems: &["table08_expanded_family_ramp"],
        build: expanded_family::table08,
    },
    TableSpec {
        id: "Table 9",
        title: "Ordinary-reset gap per pair",
        needs: "clean + R0",
        stems: &["table09_ordinary_reset_gap"],
        build: reset_gap::table09,
    },
    TableSpec {
        id: "Table 10",
        title: "Failure decomposition on R0",
        needs: "clean + R0",
        stems: &["table10_failure_decomposition", "table10_decomposition_counts"],
        build: decomposition::table10,
    },
    TableSpec {
        id: "Table 11",
        title: "Plausibility tertiles",
        needs: "clean + R0",
        stems: &["table11_plausibility_tertiles", "table11_plausibility_by_pair"],
        build: plausibility::table11,
    },
    TableSpec {
        id: "Table 12",
        title: "Pressure vs false context",
        needs: "clean + clean_no_mention / neutral_wrong_mention / explicit_false_wrong_mention / quoted_false_claim (+ user_pressure or R0)",
        stems: &[
            "table12_pressure_vs_false_context",
            "table12_pressure_vs_false_context_by_dataset",
            "table12_pressure_vs_false_context_by_pair",
        ],
        build: false_context::table12,
    },
    TableSpec {
        id: "Table 13",
        title: "Relabel restoration metrics",
        needs: "baseline_strong_reset + another relabel condition",
        stems: &["table13_relabel_restoration"],
        build: relabel::table13,
    },
    TableSpec {
        id: "Table 14",
        title: "Relabel outcome metrics",
        needs: "baseline_strong_reset + another relabel condition",
        stems: &["table14_relabel_outcome"],
        build: relabel::table14,
    },
    TableSpec {
        id: "Table 15",
        title: "Semantic vs letter following",
        needs: ids::RELABEL_SHUFFLE,
        stems: &["table15_semantic_vs_letter", "table15_relabel_with_ci"],
        build: relabel::table15,
    },
    TableSpec {
        id: "Table 16",
        title: "Recovery counts, strict vs MRO rule",
        needs: "clean + R0 + at least one hierarchy operation",
        stems: &["table16_strict_vs_mro"],
        build: |ctx| ctx.hierarchy().table16(),
    },
    TableSpec {
        id: "Table 17",
        title: "Minimal recovery operation per pair",
        needs: "clean + R0 + at least one hierarchy operation",
        stems: &[
            "table17_minimal_recovery_operation",
            "table17_minimal_recovery_operation_with_ci",
        ],
        build: |ctx| ctx.hierarchy().table17(),
    },
    TableSpec {
        id: "Table 18",
        title: "Full truncation boundary per pair",
        needs: "as Table 5",
        stems: &["table18_truncation_by_pair"],
        build: truncation::table18,
    },
    TableSpec {
        id: "Table 19",
        title: "Dataset-level change R0 -> R7",
        needs: "clean + R0 + evidence_grounded_recovery",
        stems: &["table19_r0_to_r7_by_dataset"],
        build: r7::table19,
    },
    TableSpec {
        id: "Table 20",
        title: "CCTP clean-tube criterion (definition)",
        needs: "nothing (metrics constants)",
        stems: &["table20_cctp_tube_definition", "table20_cctp_variants"],
        build: definitions::table20,
    },
    TableSpec {
        id: "Table 21",
        title: "CCTP summary",
        needs: "clean + R0 option log-scores (correct_pressure:strong_reset optional)",
        stems: &["table21_cctp_summary", "table21_cctp_by_dataset"],
        build: cctp::table21,
    },
    TableSpec {
        id: "Table 22",
        title: "Clean-restoration tolerance families (definition)",
        needs: "nothing (metrics constants)",
        stems: &["table22_criterion_families"],
        build: definitions::table22,
    },
    TableSpec {
        id: "Table 23",
        title: "Clean-correct / history-wrong examples",
        needs: "clean + R0 with a clean-correct item that follows the wrong answer at R0",
        stems: &["table23_examples"],
        build: examples::table23,
    },
    TableSpec {
        id: "Aux",
        title: "Recovery hierarchy summary",
        needs: "clean + R0 + at least one hierarchy operation",
        stems: &["aux_recovery_hierarchy_summary"],
        build: |ctx| ctx.hierarchy().aux_summary(),
    },
    TableSpec {
        id: "Aux",
        title: "Recovery operations with paired item bootstrap CIs",
        needs: "clean + R0 + at least one main hierarchy operation",
        stems: &["aux_recovery_operations_with_ci"],
        build: |ctx| ctx.hierarchy().aux_operations_with_ci(),
    },
    TableSpec {
        id: "Aux",
        title: "Threshold sweep of the clean-context-like criterion",
        needs: "clean + R0 + at least one main hierarchy operation",
        stems: &["aux_threshold_sweep"],
        build: |ctx| ctx.hierarchy().aux_threshold_sweep(),
    },
    // hyst-tui's own tables of experiment operations: written only when a run has them, and
    // never listed as missing in summary.md.
    TableSpec {
        id: EXPERIMENT_ID,
        title: "Experiment operations against clean and against R0",
        needs: "clean + R0 + an operation of an experiment file",
        stems: &["experiment_operations"],
        build: experiments::experiment_operations,
    },
    TableSpec {
        id: EXPERIMENT_ID,
        title: "Custom pressure ramps",
        needs: "clean + a custom ramp ([[ramp]]) of an experiment file",
        stems: &["experiment_ramps"],
        build: experiments::experiment_ramps,
    },
    TableSpec {
        id: EXPERIMENT_ID,
        title: "Self-consistency decoupling",
        needs: "clean + R0 + the self-consistency suite",
        stems: &["self_consistency"],
        build: experiments::self_consistency,
    },
    TableSpec {
        id: EXPERIMENT_ID,
        title: "Construction-seed sensitivity",
        needs: "a --seeds run (two or more seeds)",
        stems: &["seed_sensitivity"],
        build: experiments::seed_sensitivity,
    },
    TableSpec {
        id: SERVED_ID,
        title: "Served models: letter coverage",
        needs: "scores from a served model (models.toml `endpoint`)",
        stems: &["aux_served_letter_coverage"],
        build: served::served_coverage,
    },
];


#[cfg(test)]
mod tests {
    use super::TABLES;

    #[test]
    fn stems_are_unique_and_named_after_their_table() {
        let mut seen = std::collections::BTreeSet::new();
        for t in TABLES {
            assert!(!t.stems.is_empty(), "{} has no stems", t.id);
            let prefix = match t.id.strip_prefix("Table ") {
                Some(n) => format!("table{:02}_", n.parse::<u32>().expect("table number")),
                None if t.id == super::EXPERIMENT_ID => String::new(),
                None if t.id == super::SERVED_ID => "aux_".to_string(),
                None => "aux_".to_string(),
            };
            for s in t.stems {
                assert!(seen.insert(*s), "{s} listed twice");
                assert!(s.starts_with(&prefix), "{s} does not belong to {}", t.id);
            }
        }
    }
}
