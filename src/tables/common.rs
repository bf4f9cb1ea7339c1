//! Helpers shared by the table builders: the long CI format of docs/protocol.md §9.4 and small reductions.

use serde::Serialize;

use super::format::{Num, PyBool};
use super::index::{dataset_display, PairData};
use crate::metrics::Obs;

/// One row of the long CI format (docs/protocol.md §9.4: Table 2 and the appendix `*_with_ci.csv` files).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct LongRow {
    pub(crate) table_name: String,
    pub(crate) model: String,
    pub(crate) model_key: String,
    /// Display name of `dataset_key`.
    pub(crate) dataset: String,
    pub(crate) dataset_key: String,
    pub(crate) condition_or_operation: String,
    pub(crate) metric: String,
    pub(crate) estimate: Num,
    pub(crate) ci_low: Num,
    pub(crate) ci_high: Num,
    pub(crate) n_items: usize,
    /// Set by [`long_table`].
    pub(crate) bootstrap_samples: usize,
    /// Set by [`long_table`].
    pub(crate) seed: u64,
    pub(crate) informative: PyBool,
    pub(crate) notes: String,
}

impl LongRow {
    pub(crate) fn new(
        table_name: &str,
        p: &PairData,
        condition: &str,
        metric: &str,
        estimate: f64,
        ci: (f64, f64),
        n: usize,
    ) -> LongRow {
        LongRow {
            table_name: table_name.into(),
            model: p.model.clone(),
            model_key: p.model_key.clone(),
            dataset: dataset_display(&p.dataset),
            dataset_key: p.dataset.clone(),
            condition_or_operation: condition.into(),
            metric: metric.into(),
            estimate: Num(estimate),
            ci_low: Num(ci.0),
            ci_high: Num(ci.1),
            n_items: n,
            bootstrap_samples: 0,
            seed: 0,
            informative: PyBool(!estimate.is_nan() && !ci.0.is_nan() && !ci.1.is_nan()),
            notes: String::new(),
        }
    }
    pub(crate) fn notes(mut self, s: String) -> LongRow {
        self.notes = s;
        self
    }
    /// A deterministic quantity (classification, count): no interval, `informative=False`.
    pub(crate) fn deterministic(mut self) -> LongRow {
        self.ci_low = Num(f64::NAN);
        self.ci_high = Num(f64::NAN);
        self.informative = PyBool(false);
        self
    }
}

/// The long table, sorted by its first five columns (stable: metric order is kept), with the
/// bootstrap settings filled in.
pub(crate) fn long_table(mut rows: Vec<LongRow>, samples: usize, seed: u64) -> Vec<LongRow> {
    rows.sort_by(|a, b| {
        let ka = (
            &a.table_name,
            &a.model,
            &a.model_key,
            &a.dataset,
            &a.dataset_key,
        );
        let kb = (
            &b.table_name,
            &b.model,
            &b.model_key,
            &b.dataset,
            &b.dataset_key,
        );
        ka.cmp(&kb)
    });
    for r in &mut rows {
        r.bootstrap_samples = samples;
        r.seed = seed;
    }
    rows
}

pub(crate) fn pw(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.p_wrong).collect()
}
pub(crate) fn pc(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.p_correct).collect()
}
pub(crate) fn correct_flags(o: &[Obs]) -> Vec<bool> {
    o.iter().map(|x| x.correct).collect()
}
pub(crate) fn wf_flags(o: &[Obs]) -> Vec<bool> {
    o.iter().map(|x| x.wrong_follow).collect()
}
pub(crate) fn entropies(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.entropy).collect()
}
pub(crate) fn max_probs(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.max_prob).collect()
}

/// `Σ wᵢ vᵢ / Σ wᵢ` over the non-NaN values (the artifact's `weighted_mean` by n_items).
pub(crate) fn weighted_mean(values: &[(f64, usize)]) -> f64 {
    let (mut s, mut w) = (0.0, 0usize);
    for &(v, n) in values {
        if !v.is_nan() && n > 0 {
            s += v * n as f64;
            w += n;
        }
    }
    if w == 0 {
        f64::NAN
    } else {
        s / w as f64
    }
}

/// Display names of a pair's model and dataset (the `Model` and `Dataset` columns of the
/// Markdown/LaTeX views).
pub(crate) fn model_dataset(p: &PairData) -> (String, String) {
    (p.model.clone(), dataset_display(&p.dataset))
}

/// Sorts display rows by model, then dataset display name (stable).
pub(crate) fn sort_by_model_dataset<R>(rows: &mut [R], key: impl Fn(&R) -> (&String, &String)) {
    rows.sort_by(|a, b| key(a).cmp(&key(b)));
}
