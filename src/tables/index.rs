//! Indexes a run's item rows by (model, dataset) pair and condition, and aligns items across
//! conditions (paired analyses use the items present in every condition they need).

use std::collections::{BTreeMap, BTreeSet};

use crate::dialogue::conditions::Registry;
use crate::metrics::Obs;
use crate::store::ItemRow;

// Clean reference of the hierarchy and most tables: the clean probe (docs/protocol.md §3.10: the
// raw row's `clean_*` fields come from `clean_context_probe`), else the identical `clean_context`
// (`Registry::clean_ref`). The ordinary reset R0: the hierarchy condition, else the identical
// ramp capture step (`Registry::r0_ref`). A condition's rows, else those of the conditions
// declared the same: `Registry::sources`. Every pair carries the registry of its run.

/// Paper model keys in the artifact's fixed pair order (bootstrap streams are consumed in this
/// order); other models follow, sorted by key. A pair is placed by its paper key
/// (`ItemRow::paper_key`, models.toml `paper_key`) when the rows carry one, else by its run
/// model key (rows of older runs), so two runs of the same paper models give the same digits
/// whatever their models.toml keys.
pub(crate) const PAPER_MODEL_ORDER: [&str; 8] = [
    "qwen25_15b",
    "qwen25_7b",
    "qwen25_14b",
    "mistral7b_v03",
    "mistral_7b",
    "llama31_8b",
    "gemma2_2b",
    "gemma2_9b",
];
/// Dataset order within a model: TruthfulQA-MC, then MMLU-Pro, then others by key.
pub(crate) const DATASET_ORDER: [&str; 2] = ["truthfulqa_mc", "mmlu_pro"];

/// Display name of a dataset key (`TruthfulQA-MC`, `MMLU-Pro`, else the key).
pub(crate) fn dataset_display(key: &str) -> String {
    match key {
        "truthfulqa_mc" => "TruthfulQA-MC".into(),
        "mmlu_pro" => "MMLU-Pro".into(),
        k => k.into(),
    }
}

/// Short dataset name of the relabel tables (`TQA`, `MMLU`, else the key).
pub(crate) fn dataset_short(key: &str) -> String {
    match key {
        "truthfulqa_mc" => "TQA".into(),
        "mmlu_pro" => "MMLU".into(),
        k => k.into(),
    }
}

/// Sort key of a dataset in the fixed order.
pub(crate) fn dataset_rank(key: &str) -> (usize, String) {
    (
        DATASET_ORDER
            .iter()
            .position(|d| *d == key)
            .unwrap_or(DATASET_ORDER.len()),
        key.to_string(),
    )
}

fn model_rank(key: &str) -> (usize, String) {
    (
        PAPER_MODEL_ORDER
            .iter()
            .position(|m| *m == key)
            .unwrap_or(PAPER_MODEL_ORDER.len()),
        key.to_string(),
    )
}

/// Item key: (subset_index, item_id) — the order items are listed and resampled in.
pub(crate) type ItemKey = (usize, String);

/// All rows of one model × dataset pair.
#[derive(Clone, Debug)]
pub(crate) struct PairData<'a> {
    pub(crate) model_key: String,
    /// The paper's model key (first non-empty `paper_key` of the pair's rows; empty = unknown).
    pub(crate) paper_key: String,
    /// Display name (`model_short_name`, else the key).
    pub(crate) model: String,
    pub(crate) dataset: String,
    pub(crate) conds: BTreeMap<String, BTreeMap<ItemKey, &'a ItemRow>>,
    /// The conditions of the run the rows come from.
    pub(crate) reg: &'static Registry,
}

/// Rows of several conditions for the items present in all of them, in item order:
/// `rows[c][i]` is item `i` in condition `c` (the order of the request).
#[derive(Debug)]
pub(crate) struct Aligned<'a> {
    pub(crate) keys: Vec<ItemKey>,
    pub(crate) rows: Vec<Vec<&'a ItemRow>>,
}

impl<'a> Aligned<'a> {
    pub(crate) fn n(&self) -> usize {
        self.keys.len()
    }
    pub(crate) fn obs(&self, c: usize) -> Vec<Obs> {
        self.rows[c].iter().map(|r| obs(r)).collect()
    }
}

/// The metrics view of one row.
pub(crate) fn obs(r: &ItemRow) -> Obs {
    Obs {
        p_wrong: r.p_wrong,
        p_correct: r.p_correct,
        correct: r.correct,
        wrong_follow: r.wrong_follow,
        entropy: r.entropy,
        max_prob: r.max_prob,
    }
}

impl<'a> PairData<'a> {
    /// The key that places the pair in the fixed order: the paper key when known, else the
    /// run's model key.
    pub(crate) fn order_key(&self) -> &str {
        if self.paper_key.is_empty() {
            &self.model_key
        } else {
            &self.paper_key
        }
    }
    pub(crate) fn has(&self, cond: &str) -> bool {
        self.conds.get(cond).is_some_and(|m| !m.is_empty())
    }
    /// The pair's clean reference condition, if it has one ([`Registry::clean_ref`]).
    pub(crate) fn clean(&self) -> Option<&'static str> {
        self.resolve(self.reg.clean_ref())
    }
    /// The pair's R0 condition, if it has one ([`Registry::r0_ref`]).
    pub(crate) fn r0(&self) -> Option<&'static str> {
        self.resolve(self.reg.r0_ref())
    }
    /// First present condition among `candidates`.
    pub(crate) fn resolve<'k>(&self, candidates: &[&'k str]) -> Option<&'k str> {
        candidates.iter().copied().find(|c| self.has(c))
    }
    /// Items present in every requested condition (duplicates allowed in `conds`).
    pub(crate) fn align(&self, conds: &[&str]) -> Aligned<'a> {
        let maps: Vec<Option<&BTreeMap<ItemKey, &'a ItemRow>>> =
            conds.iter().map(|c| self.conds.get(*c)).collect();
        if conds.is_empty() || maps.iter().any(|m| m.is_none()) {
            return Aligned {
                keys: Vec::new(),
                rows: vec![Vec::new(); conds.len()],
            };
        }
        let maps: Vec<&BTreeMap<ItemKey, &'a ItemRow>> = maps.into_iter().flatten().collect();
        let keys: Vec<ItemKey> = maps[0]
            .keys()
            .filter(|k| maps.iter().all(|m| m.contains_key(*k)))
            .cloned()
            .collect();
        let rows = maps
            .iter()
            .map(|m| keys.iter().map(|k| m[k]).collect())
            .collect();
        Aligned { keys, rows }
    }
}

/// The whole run, pairs in the fixed order.
#[derive(Debug)]
pub(crate) struct RunIndex<'a> {
    pub(crate) pairs: Vec<PairData<'a>>,
    pub(crate) n_rows: usize,
    /// Rows whose (pair, condition, item) repeated an earlier row; the first one is kept.
    pub(crate) duplicates: usize,
    /// The conditions of the run the rows come from.
    pub(crate) reg: &'static Registry,
    /// The rows are open answers (docs/protocol.md §14), not letters.
    pub(crate) open_answers: bool,
}

impl<'a> RunIndex<'a> {
    pub(crate) fn new(rows: &'a [ItemRow], reg: &'static Registry) -> RunIndex<'a> {
        let mut map: BTreeMap<(String, String), PairData<'a>> = BTreeMap::new();
        let mut duplicates = 0;
        for r in rows {
            let p = map
                .entry((r.model_key.clone(), r.dataset.clone()))
                .or_insert_with(|| PairData {
                    model_key: r.model_key.clone(),
                    paper_key: String::new(),
                    model: String::new(),
                    dataset: r.dataset.clone(),
                    conds: BTreeMap::new(),
                    reg,
                });
            if p.model.is_empty() && !r.model_short_name.is_empty() {
                p.model = r.model_short_name.clone();
            }
            if p.paper_key.is_empty() && !r.paper_key.is_empty() {
                p.paper_key = r.paper_key.clone();
            }
            let m = p.conds.entry(r.condition.clone()).or_default();
            let k = (r.subset_index, r.item_id.clone());
            match m.entry(k) {
                std::collections::btree_map::Entry::Occupied(_) => duplicates += 1,
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(r);
                }
            }
        }
        let mut pairs: Vec<PairData<'a>> = map.into_values().collect();
        for p in &mut pairs {
            if p.model.is_empty() {
                p.model = p.model_key.clone();
            }
        }
        pairs.sort_by_key(|p| {
            (
                model_rank(p.order_key()),
                p.model_key.clone(),
                dataset_rank(&p.dataset),
            )
        });
        RunIndex {
            pairs,
            n_rows: rows.len(),
            duplicates,
            reg,
            open_answers: rows.iter().any(|r| r.answer_format() == crate::protocol::AnswerFormat::Open),
        }
    }

    /// The index of the pairs in `scope` ((model key, dataset key) of the run), in the same
    /// order: what a table with a run-plan scope pools.
    pub(crate) fn restrict(&self, scope: &BTreeSet<(String, String)>) -> RunIndex<'a> {
        let pairs: Vec<PairData<'a>> = self
            .pairs
            .iter()
            .filter(|p| scope.contains(&(p.model_key.clone(), p.dataset.clone())))
            .cloned()
            .collect();
        let n_rows = pairs
            .iter()
            .flat_map(|p| p.conds.values())
            .map(|m| m.len())
            .sum();
        RunIndex {
            pairs,
            n_rows,
            duplicates: 0,
            reg: self.reg,
            open_answers: self.open_answers,
        }
    }

    /// The pairs with clean and R0 rows and at least one item in both, in pair order: the pair,
    /// the R0 condition used, and the items aligned (condition 0 clean, condition 1 R0).
    pub(crate) fn clean_r0_pairs(
        &self,
    ) -> impl Iterator<Item = (&PairData<'a>, &'static str, Aligned<'a>)> + '_ {
        self.pairs.iter().filter_map(|p| {
            let (clean, r0) = (p.clean()?, p.r0()?);
            let a = p.align(&[clean, r0]);
            (a.n() > 0).then_some((p, r0, a))
        })
    }

    /// Dataset keys present, in the fixed order.
    pub(crate) fn datasets(&self) -> Vec<String> {
        let mut d: Vec<String> = self.pairs.iter().map(|p| p.dataset.clone()).collect();
        d.sort_by_key(|k| dataset_rank(k));
        d.dedup();
        d
    }
}

/// Paper label of a condition key (from the condition registry), else the key.
pub(crate) fn condition_label(reg: &Registry, key: &str) -> String {
    reg.find(key).map_or_else(|| key.to_string(), |c| c.label.clone())
}

/// Option index of a letter (`A` = 0); `None` for anything else.
pub(crate) fn letter_index(l: &str) -> Option<usize> {
    let mut it = l.chars();
    match (it.next(), it.next()) {
        (Some(c), None) if c.is_ascii_uppercase() => Some((c as u8 - b'A') as usize),
        _ => None,
    }
}
