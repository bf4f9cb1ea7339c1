//! The threshold sweep of the clean-context-like criterion (docs/protocol.md §6.4): the three families, then the
//! main family with every threshold scaled by λ.

use crate::tables::output::CriterionFamily;
use std::sync::LazyLock;

use serde::ser::{SerializeStruct, Serializer};
use serde::Serialize;

use super::Hierarchy;
use crate::dialogue::ops_text::ops_text;
use crate::metrics::criteria::{
    threshold_sweep, CondAgg, Criterion, Family, SweepRow, main_ops, SWEEP_LAMBDAS,
};
use crate::tables::format::{fmt_float, Join, Num, PyBool};
use crate::tables::Output;

/// `<op>_recovered` column names, [`MAIN_OPS`] order.
static RECOVERED_COLUMNS: LazyLock<Vec<String>> = LazyLock::new(|| {
    main_ops()
        .iter()
        .map(|o| format!("{}_recovered", o.sweep_stem))
        .collect()
});
/// `mro_<op>` column names, [`MAIN_OPS`] order.
static MRO_COLUMNS: LazyLock<Vec<String>> = LazyLock::new(|| {
    main_ops()
        .iter()
        .map(|o| format!("mro_{}", o.sweep_stem))
        .collect()
});

/// One count column per main operation.
fn op_columns<S: Serializer>(
    s: S,
    names: impl Iterator<Item = &'static str>,
    counts: &[usize],
) -> Result<S::Ok, S::Error> {
    let mut st = s.serialize_struct("OpCounts", counts.len())?;
    for (name, k) in names.zip(counts) {
        st.serialize_field(name, k)?;
    }
    st.end()
}

/// Pairs recovered per main operation (`<op>_recovered` columns).
#[derive(Default)]
struct Recovered(Vec<usize>);

impl Serialize for Recovered {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        op_columns(s, RECOVERED_COLUMNS.iter().map(String::as_str), &self.0)
    }
}

/// Pairs whose minimal recovery operation is each main operation (`mro_<op>` columns).
#[derive(Default)]
struct Mro(Vec<usize>);

impl Serialize for Mro {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        op_columns(s, MRO_COLUMNS.iter().map(String::as_str), &self.0)
    }
}

/// Pairs recovered per main operation under the operations' short names (the view).
#[derive(Default)]
struct RecoveredShort(Vec<usize>);

impl Serialize for RecoveredShort {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        op_columns(s, main_ops().iter().map(|o| o.short), &self.0)
    }
}

/// The columns of `aux_threshold_sweep.csv` before the per-operation counts.
#[derive(Serialize, Default)]
struct SweepHead {
    threshold_family: String,
    lambda: Num,
    gap_threshold: Num,
    accuracy_slack: Num,
    p_correct_slack: Num,
    entropy_slack: Num,
    max_prob_slack: Num,
    n_pairs: usize,
}

/// The columns of `aux_threshold_sweep.csv` after the per-operation counts.
#[derive(Serialize, Default)]
struct SweepTail {
    mro_not_restored: usize,
    mro_distribution: String,
    instruction_best_recovered: usize,
    dialogue_state_best_recovered: usize,
    qualitative_conclusion_holds: PyBool,
    instruction_level_max: usize,
    state_changing_max: usize,
    neutral_or_reconstruction_max: usize,
    qualitative_ordering_stable: PyBool,
}

/// Markdown/LaTeX view: the columns before the recovered counts.
#[derive(Serialize, Default)]
struct ViewHead {
    #[serde(rename = "Family")]
    family: String,
    lambda: Num,
    #[serde(rename = "Gap thr.")]
    gap_threshold: Num,
}

/// Markdown/LaTeX view: the columns after the recovered counts.
#[derive(Serialize, Default)]
struct ViewTail {
    #[serde(rename = "Not restored")]
    not_restored: usize,
    #[serde(rename = "Ordering stable")]
    ordering_stable: PyBool,
}

impl Hierarchy<'_, '_> {
    pub(crate) fn aux_threshold_sweep(&self) -> Vec<Output> {
        let aggs: Vec<Vec<CondAgg>> = self
            .pairs
            .iter()
            .map(|hp| hp.cond_aggs())
            .filter(|a| !a.is_empty())
            .collect();
        if aggs.is_empty() {
            return Vec::new();
        }
        let mut rows: Vec<(String, SweepRow)> = Vec::new();
        for f in Family::ALL {
            let mut r = threshold_sweep(&aggs, &f.criterion(), &[1.0]);
            rows.push((f.name().to_string(), r.remove(0)));
        }
        for r in threshold_sweep(&aggs, &Criterion::MAIN, &SWEEP_LAMBDAS) {
            rows.push((
                format!("main_lambda_{}", fmt_float(r.lambda, 2).unwrap_or_default()),
                r,
            ));
        }
        let (mut t, mut d) = (Vec::new(), Vec::new());
        for (name, r) in &rows {
            let c = &r.criterion;
            let recovered: Vec<usize> = r.recovered.iter().map(|(_, k)| *k).collect();
            let head = SweepHead {
                threshold_family: name.clone(),
                lambda: Num(r.lambda),
                gap_threshold: Num(c.wrong_gap),
                accuracy_slack: Num(c.accuracy_slack),
                p_correct_slack: Num(c.p_correct_slack),
                entropy_slack: Num(c.entropy_slack),
                max_prob_slack: Num(c.max_prob_slack),
                n_pairs: r.n_pairs,
            };
            let tail = SweepTail {
                mro_not_restored: r.mro_not_restored,
                mro_distribution: r.mro_distribution.clone(),
                instruction_best_recovered: r.instruction_best_recovered,
                dialogue_state_best_recovered: r.dialogue_state_best_recovered,
                qualitative_conclusion_holds: PyBool(
                    r.dialogue_state_best_recovered >= r.instruction_best_recovered,
                ),
                instruction_level_max: r.instruction_level_max,
                state_changing_max: r.state_changing_max,
                neutral_or_reconstruction_max: r.neutral_or_reconstruction_max,
                qualitative_ordering_stable: PyBool(r.qualitative_ordering_stable),
            };
            t.push(Join(
                Join(head, Recovered(recovered.clone())),
                Join(Mro(r.mro.iter().map(|(_, k)| *k).collect()), tail),
            ));
            let view_head = ViewHead {
                family: name.clone(),
                lambda: Num(r.lambda),
                gap_threshold: Num(c.wrong_gap),
            };
            let view_tail = ViewTail {
                not_restored: r.mro_not_restored,
                ordering_stable: PyBool(r.qualitative_ordering_stable),
            };
            d.push(Join(Join(view_head, RecoveredShort(recovered)), view_tail));
        }
        vec![Output::new("aux_threshold_sweep", "Threshold sweep of the clean-context-like criterion", CriterionFamily::Several("strict / main / loose, then main x lambda"), &t)
            .with_display(&d)
            .with_notes(vec![
                "Rows strict/main/loose are the three families; main_lambda_L multiplies every main threshold by L (configs/threshold_sweep.yaml lambdas).".into(),
                ops_text("qualitative_ordering_stable = max({ordering_state_changing}) >= max({ordering_neutral_or_reconstruction}) >= max({ordering_instruction_level}); instruction_best_recovered = max({family_instruction}), dialogue_state_best_recovered = max({family_state}) [inferred]; qualitative_conclusion_holds = dialogue_state_best_recovered >= instruction_best_recovered (decision: the released aggregator's rule is not available)."),
            ])]
    }
}
