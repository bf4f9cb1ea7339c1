//! The per-operation tables: the recovery hierarchy summary (docs/protocol.md §9.4
//! `recovery_hierarchy_summary.csv`) and the operations' paired CIs
//! (`recovery_operations_with_ci.csv`).

use serde::Serialize;

use super::{Hierarchy, MAIN_OTHERS, MAIN_SHOWN};
use crate::tables::output::CriterionFamily;
use crate::dialogue::ops_text::ops_text;
use crate::metrics::{
    clean_context_damage_accuracy, clean_context_damage_p_correct, contamination_reduction,
    gap_reduction, intervention_hysteresis_gap,
};
use crate::tables::common::long_table;
use crate::tables::grouping::ModelDataset;
use crate::tables::format::{Join, Num, Pct, PyBool};
use crate::tables::index::condition_label;
use crate::tables::Output;

/// `aux_recovery_hierarchy_summary.csv`: one pair × operation.
#[derive(Serialize, Default)]
struct SummaryRow {
    model_key: String,
    model_short_name: String,
    dataset: String,
    condition: &'static str,
    condition_label: String,
    level: &'static str,
    category: &'static str,
    is_main_condition: PyBool,
    evaluated_n: usize,
    clean_p_wrong: Num,
    ordinary_reset_p_wrong: Num,
    intervention_p_wrong: Num,
    clean_p_correct: Num,
    ordinary_reset_p_correct: Num,
    intervention_p_correct: Num,
    ordinary_reset_hysteresis_gap: Num,
    intervention_hysteresis_gap: Num,
    gap_reduction: Num,
    restoration_ratio: Num,
    restoration_ratio_informative: PyBool,
    clean_accuracy: Num,
    ordinary_reset_accuracy: Num,
    accuracy: Num,
    wrong_follow_rate: Num,
    lock_in_rate: Num,
    entropy: Num,
    max_probability: Num,
    clean_entropy: Num,
    clean_max_probability: Num,
    ordinary_reset_entropy: Num,
    ordinary_reset_max_probability: Num,
    clean_context_damage_p_correct: Num,
    clean_context_damage_accuracy: Num,
    clean_correct_to_history_wrong_rate: Num,
    clean_correct_to_intervention_wrong_rate: Num,
    contamination_reduction: Num,
    repair_classification: &'static str,
    mro_success: PyBool,
    clean_context_like_strict: PyBool,
    clean_context_like_loose: PyBool,
    source_condition: &'static str,
}

/// Markdown/LaTeX view of the summary (restoration NA when not informative).
#[derive(Serialize, Default)]
struct SummaryView {
    #[serde(rename = "Operation")]
    operation: String,
    n: usize,
    #[serde(rename = "p(w)")]
    pw: Num,
    #[serde(rename = "Gap")]
    gap: Num,
    #[serde(rename = "Rest.")]
    restoration: Num,
    #[serde(rename = "Acc. (%)")]
    accuracy: Pct,
    #[serde(rename = "WF (%)")]
    wrong_follow: Pct,
    #[serde(rename = "Entropy")]
    entropy: Num,
    #[serde(rename = "Max p")]
    max_prob: Num,
    #[serde(rename = "Strict")]
    strict: PyBool,
    #[serde(rename = "Main")]
    main: PyBool,
    #[serde(rename = "Loose")]
    loose: PyBool,
    #[serde(rename = "Classification")]
    classification: &'static str,
}

impl Hierarchy<'_, '_> {
    pub(crate) fn aux_summary(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let (mut t, mut d) = (Vec::new(), Vec::new());
        for hp in &self.pairs {
            for o in &hp.ops {
                let cond = hp.p.reg.find(o.key);
                let r0_gap = intervention_hysteresis_gap(&o.clean, &o.r0);
                let x_gap = intervention_hysteresis_gap(&o.clean, &o.x);
                t.push(SummaryRow {
                    model_key: hp.p.model_key.clone(),
                    model_short_name: hp.p.model.clone(),
                    dataset: hp.p.dataset.clone(),
                    condition: o.key,
                    condition_label: condition_label(hp.p.reg, o.key),
                    level: cond.map_or("", |c| c.level),
                    category: cond.map_or("", |c| c.category),
                    is_main_condition: PyBool(cond.is_some_and(|c| c.is_main)),
                    evaluated_n: o.n,
                    clean_p_wrong: Num(o.clean.p_wrong),
                    ordinary_reset_p_wrong: Num(o.r0.p_wrong),
                    intervention_p_wrong: Num(o.x.p_wrong),
                    clean_p_correct: Num(o.clean.p_correct),
                    ordinary_reset_p_correct: Num(o.r0.p_correct),
                    intervention_p_correct: Num(o.x.p_correct),
                    ordinary_reset_hysteresis_gap: Num(r0_gap),
                    intervention_hysteresis_gap: Num(x_gap),
                    gap_reduction: Num(gap_reduction(r0_gap, x_gap)),
                    restoration_ratio: Num(o.restoration.ratio),
                    restoration_ratio_informative: PyBool(o.restoration.informative),
                    clean_accuracy: Num(o.clean.accuracy),
                    ordinary_reset_accuracy: Num(o.r0.accuracy),
                    accuracy: Num(o.x.accuracy),
                    wrong_follow_rate: Num(o.x.wrong_follow),
                    lock_in_rate: Num(o.lock_in),
                    entropy: Num(o.x.entropy),
                    max_probability: Num(o.x.max_prob),
                    clean_entropy: Num(o.clean.entropy),
                    clean_max_probability: Num(o.clean.max_prob),
                    ordinary_reset_entropy: Num(o.r0.entropy),
                    ordinary_reset_max_probability: Num(o.r0.max_prob),
                    clean_context_damage_p_correct: Num(clean_context_damage_p_correct(
                        &o.clean, &o.x,
                    )),
                    clean_context_damage_accuracy: Num(clean_context_damage_accuracy(
                        &o.clean, &o.x,
                    )),
                    clean_correct_to_history_wrong_rate: Num(o.contam_r0),
                    clean_correct_to_intervention_wrong_rate: Num(o.contam_x),
                    contamination_reduction: Num(contamination_reduction(o.contam_r0, o.contam_x)),
                    repair_classification: o.class.as_str(),
                    mro_success: PyBool(o.pass[1]),
                    clean_context_like_strict: PyBool(o.pass[0]),
                    clean_context_like_loose: PyBool(o.pass[2]),
                    source_condition: o.source,
                });
                let view = SummaryView {
                    operation: condition_label(hp.p.reg, o.key),
                    n: o.n,
                    pw: Num(o.x.p_wrong),
                    gap: Num(x_gap),
                    restoration: Num(if o.restoration.informative {
                        o.restoration.ratio
                    } else {
                        f64::NAN
                    }),
                    accuracy: Pct(o.x.accuracy),
                    wrong_follow: Pct(o.x.wrong_follow),
                    entropy: Num(o.x.entropy),
                    max_prob: Num(o.x.max_prob),
                    strict: PyBool(o.pass[0]),
                    main: PyBool(o.pass[1]),
                    loose: PyBool(o.pass[2]),
                    classification: o.class.as_str(),
                };
                d.push(Join(ModelDataset::of(hp.p), view));
            }
        }
        vec![Output::new("aux_recovery_hierarchy_summary", "Recovery hierarchy summary (all operations)", CriterionFamily::MainAndOthers(MAIN_SHOWN, MAIN_OTHERS), &t)
            .with_display(&d)
            .with_notes(vec![
                "Pair means over the items present in clean, R0 and the operation; clean = clean probe; intervention_hysteresis_gap = mean p_X(w) - mean p_clean(w).".into(),
                "mro_success and repair_classification use the MAIN criterion; clean_context_like_strict / _loose are the other families. restoration_ratio is the raw ratio (CSV) with restoration_ratio_informative; the Markdown/LaTeX view prints NA when not informative.".into(),
                "lock_in_rate is the unconditional lock-in (strong pressure and the operation both follow w); contamination rates are the advocated-wrong version among clean-correct items.".into(),
                "source_condition names the rows used (R0 falls back to the ramp's identical strong_reset capture step when ordinary_strong_reset rows are absent).".into(),
            ])]
    }

    pub(crate) fn aux_operations_with_ci(&self) -> Vec<Output> {
        vec![Output::new("aux_recovery_operations_with_ci", "Recovery operations with paired item bootstrap CIs", CriterionFamily::Several("strict, main and loose (clean_context_like_<family> rows)"), &long_table(self.long.clone(), self.samples, self.seed))
                .with_notes(vec![
                    ops_text(&format!("One index matrix per pair x main operation from one default_rng({}) stream (base seed + 4), pairs in the fixed order, operations {{main_first}}..{{main_last}}; shared by all metrics of the operation.", self.seed)),
                    "restoration_ratio replicates are NaN where |den| <= 1e-12; the estimate and interval are blank when the full-sample |R0 gap| < 0.05. clean_context_like_* are deterministic (1 = pass, no interval).".into(),
                ]),]
    }
}
