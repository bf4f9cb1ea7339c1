//! Helpers shared by the table builders: the long CI format of §8.1 and small reductions.

use super::format::{boolc, int, num, txt, uint, Cell, Table};
use super::index::{dataset_display, PairData};
use crate::metrics::Obs;

/// Criterion family of the tables that use no clean-context-like criterion.
pub const NO_CRITERION: &str = "none";

/// Columns of the long `*_with_ci.csv` format (§8.1, Table 2 and the appendix CI files).
pub const LONG_COLUMNS: [&str; 15] = [
    "table_name",
    "model",
    "model_key",
    "dataset",
    "dataset_key",
    "condition_or_operation",
    "metric",
    "estimate",
    "ci_low",
    "ci_high",
    "n_items",
    "bootstrap_samples",
    "seed",
    "informative",
    "notes",
];

/// One row of the long CI format.
#[derive(Clone, Debug)]
pub struct LongRow {
    pub table_name: String,
    pub model: String,
    pub model_key: String,
    pub dataset_key: String,
    pub condition: String,
    pub metric: String,
    pub estimate: f64,
    pub ci: (f64, f64),
    pub n_items: usize,
    pub informative: bool,
    pub notes: String,
}

impl LongRow {
    pub fn new(
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
            dataset_key: p.dataset.clone(),
            condition: condition.into(),
            metric: metric.into(),
            estimate,
            informative: !estimate.is_nan() && !ci.0.is_nan() && !ci.1.is_nan(),
            ci,
            n_items: n,
            notes: String::new(),
        }
    }
    pub fn notes(mut self, s: String) -> LongRow {
        self.notes = s;
        self
    }
    /// A deterministic quantity (classification, count): no interval, `informative=False`.
    pub fn deterministic(mut self) -> LongRow {
        self.ci = (f64::NAN, f64::NAN);
        self.informative = false;
        self
    }
}

/// The long table, sorted by its first five columns (stable: metric order is kept).
pub fn long_table(mut rows: Vec<LongRow>, samples: usize, seed: u64) -> Table {
    rows.sort_by(|a, b| {
        let ka = (
            &a.table_name,
            &a.model,
            &a.model_key,
            dataset_display(&a.dataset_key),
            &a.dataset_key,
        );
        let kb = (
            &b.table_name,
            &b.model,
            &b.model_key,
            dataset_display(&b.dataset_key),
            &b.dataset_key,
        );
        ka.cmp(&kb)
    });
    let mut t = Table::new(&LONG_COLUMNS);
    for r in rows {
        t.push(vec![
            txt(r.table_name),
            txt(r.model),
            txt(r.model_key),
            txt(dataset_display(&r.dataset_key)),
            txt(r.dataset_key),
            txt(r.condition),
            txt(r.metric),
            num(r.estimate),
            num(r.ci.0),
            num(r.ci.1),
            int(r.n_items),
            int(samples),
            uint(seed),
            boolc(r.informative),
            txt(r.notes),
        ]);
    }
    t
}

pub fn pw(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.p_wrong).collect()
}
pub fn pc(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.p_correct).collect()
}
pub fn correct_flags(o: &[Obs]) -> Vec<bool> {
    o.iter().map(|x| x.correct).collect()
}
pub fn wf_flags(o: &[Obs]) -> Vec<bool> {
    o.iter().map(|x| x.wrong_follow).collect()
}
pub fn entropies(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.entropy).collect()
}
pub fn max_probs(o: &[Obs]) -> Vec<f64> {
    o.iter().map(|x| x.max_prob).collect()
}

/// `Σ wᵢ vᵢ / Σ wᵢ` over the non-NaN values (the artifact's `weighted_mean` by n_items).
pub fn weighted_mean(values: &[(f64, usize)]) -> f64 {
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

/// `Model` and `Dataset` display cells of a pair.
pub fn pair_cells(p: &PairData) -> Vec<Cell> {
    vec![txt(p.model.clone()), txt(dataset_display(&p.dataset))]
}
