//! Table 17: the minimal recovery operation per pair (and its paired CIs).

use crate::tables::output::CriterionFamily;
use serde::Serialize;

use super::{ci_label, Hierarchy};
use crate::dialogue::ops_text::ops_text;
use crate::metrics::criteria::{main_op, minimal_recovery_level, Family, NOT_RESTORED};
use crate::metrics::intervention_hysteresis_gap;
use crate::tables::common::{long_table, LongRow};
use crate::tables::format::{Num, PyBool};
use crate::tables::index::dataset_short;
use crate::tables::Output;

/// `table17_minimal_recovery_operation.csv`; the metrics of the main-family MRO are blank when
/// the pair is not restored.
#[derive(Serialize, Default)]
struct Table17Row {
    model_key: String,
    model_short_name: String,
    dataset: String,
    minimal_recovery_operation: &'static str,
    minimal_recovery_level: &'static str,
    evaluated_n: usize,
    restoration_ratio: Option<Num>,
    restoration_ratio_informative: Option<PyBool>,
    intervention_hysteresis_gap: Option<Num>,
    accuracy: Option<Num>,
    repair_classification: Option<&'static str>,
    strict_minimal_recovery_operation: &'static str,
    loose_minimal_recovery_operation: &'static str,
}

/// Markdown/LaTeX view of Table 17: the paper's columns (`Minimal op.`, `Acc.` as a fraction),
/// then the level, n, the MRO's metrics and the MRO under the other two families.
#[derive(Serialize, Default)]
struct Table17View {
    #[serde(rename = "Model")]
    model: String,
    #[serde(rename = "Data")]
    dataset: String,
    #[serde(rename = "Minimal op.")]
    mro_main: &'static str,
    #[serde(rename = "Acc.")]
    accuracy: Option<Num>,
    #[serde(rename = "Level")]
    level: &'static str,
    n: usize,
    #[serde(rename = "Rest.")]
    restoration: Option<Num>,
    #[serde(rename = "Gap")]
    gap: Option<Num>,
    #[serde(rename = "Classification")]
    classification: Option<&'static str>,
    #[serde(rename = "MRO (strict family)")]
    mro_strict: &'static str,
    #[serde(rename = "MRO (loose family)")]
    mro_loose: &'static str,
}

/// The paper's short name of an operation in Table 17 (`R3a deletion`, `R0 reset`, …;
/// `not restored` when none).
pub(crate) fn paper_op_name(k: Option<&'static str>) -> &'static str {
    match k.and_then(main_op) {
        Some(op) => op.table17_label,
        None if k.is_some() => short(k),
        None => "not restored",
    }
}

/// An MRO as a key (`not_restored` when none).
fn key(k: Option<&'static str>) -> &'static str {
    k.unwrap_or(NOT_RESTORED)
}

/// An MRO by its short name (`R3a`, …; `not_restored` when none).
fn short(k: Option<&'static str>) -> &'static str {
    k.map_or(NOT_RESTORED, |k| main_op(k).map_or(k, |o| o.short))
}

impl Hierarchy<'_, '_> {
    pub(crate) fn table17(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let (mut t, mut d) = (Vec::new(), Vec::new());
        let mut long = Vec::new();
        for hp in &self.pairs {
            let [s, m, l] = Family::ALL.map(|f| hp.mro(&f.criterion()));
            let mut row = Table17Row {
                model_key: hp.p.model_key.clone(),
                model_short_name: hp.p.model.clone(),
                dataset: hp.p.dataset.clone(),
                minimal_recovery_operation: key(m),
                minimal_recovery_level: minimal_recovery_level(m),
                evaluated_n: hp.ops.first().map_or(0, |o| o.n),
                strict_minimal_recovery_operation: key(s),
                loose_minimal_recovery_operation: key(l),
                ..Table17Row::default()
            };
            let mut view = Table17View {
                model: hp.p.model.clone(),
                dataset: dataset_short(&hp.p.dataset),
                mro_main: paper_op_name(m),
                level: minimal_recovery_level(m),
                n: row.evaluated_n,
                mro_strict: paper_op_name(s),
                mro_loose: paper_op_name(l),
                ..Table17View::default()
            };
            if let Some(o) = m.and_then(|k| hp.op(k)) {
                let rest = if o.restoration.informative {
                    o.restoration.ratio
                } else {
                    f64::NAN
                };
                let gap = intervention_hysteresis_gap(&o.clean, &o.x);
                row.evaluated_n = o.n;
                row.restoration_ratio = Some(Num(rest));
                row.restoration_ratio_informative = Some(PyBool(o.restoration.informative));
                row.intervention_hysteresis_gap = Some(Num(gap));
                row.accuracy = Some(Num(o.x.accuracy));
                row.repair_classification = Some(o.class.as_str());
                view.n = o.n;
                view.restoration = Some(Num(rest));
                view.gap = Some(Num(gap));
                view.accuracy = Some(Num(o.x.accuracy));
                view.classification = Some(o.class.as_str());
                for metric in ["accuracy", "restoration_ratio", "hysteresis_gap"] {
                    if let Some(&(e, lo, hi)) =
                        self.cis
                            .get(&(hp.p.model_key.clone(), hp.p.dataset.clone(), o.key, metric))
                    {
                        let mut r = LongRow::new(
                            "minimal_recovery_operation",
                            hp.p,
                            ci_label(self.reg, o.key),
                            metric,
                            e,
                            (lo, hi),
                            o.n,
                        );
                        if metric == "restoration_ratio" && !o.restoration.informative {
                            r = r
                                .notes("not informative: |R0 gap| < 0.05".into())
                                .deterministic();
                        }
                        long.push(r);
                    }
                }
            }
            t.push(row);
            d.push(view);
        }
        let mut out = vec![Output::new("table17_minimal_recovery_operation", "Minimal successful recovery operation per pair", CriterionFamily::Main("strict and loose MRO in labelled columns"), &t)
            .with_display(&d)
            .with_notes(vec![
                ops_text("MRO = first operation in the order {main_ops} that passes the criterion; not_restored if none. Metrics (restoration, gap, accuracy, classification) are those of the main-family MRO; blank when not restored."),
                "restoration_ratio is blank when not informative (|R0 gap| < 0.05).".into(),
            ])];
        out.push(
            Output::new("table17_minimal_recovery_operation_with_ci", "Minimal recovery operation with paired CIs", CriterionFamily::Main(""), &long_table(long, self.samples, self.seed))
                .with_notes(vec![format!(
                    "Intervals are those of the operation in aux_recovery_operations_with_ci (one matrix per pair x operation from default_rng({}) = base seed + 4).",
                    self.seed
                )]),
        );
        out
    }
}
