//! The grouping most tables report: pooled over their pairs, by dataset, by pair.
//!
//! A table picks its pairs and what each contributes (observations, per-pair metrics, or
//! nothing), puts them in [`Groups`], and asks for the groups it reports; each [`Group`] holds
//! its members in the run's pair order, so pooling a group's contributions concatenates them
//! in the fixed order. The key columns the grouped CSVs and views share are here too.

use serde::Serialize;

use super::index::{dataset_display, dataset_rank, PairData};

/// What a group pools.
#[derive(Clone, Copy, Debug)]
pub(crate) enum GroupKey<'g, 'p, 'a> {
    /// Every pair of the table.
    Pooled,
    /// The pairs of one dataset (its key).
    Dataset(&'g str),
    /// One pair.
    Pair(&'p PairData<'a>),
}

/// One group of a table's pairs: its key and its members (a pair and what it contributes), in
/// the run's pair order.
pub(crate) struct Group<'g, 'p, 'a, T> {
    pub(crate) key: GroupKey<'g, 'p, 'a>,
    members: Vec<&'g (&'p PairData<'a>, T)>,
}

impl<'g, 'p, 'a, T> Group<'g, 'p, 'a, T> {
    /// The members' contributions, in pair order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &'g T> + '_ {
        self.members.iter().map(|m| &m.1)
    }
    /// The members' pairs, in pair order.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = &'p PairData<'a>> + '_ {
        self.members.iter().map(|m| m.0)
    }
    /// How many pairs the group pools.
    pub(crate) fn n_pairs(&self) -> usize {
        self.members.len()
    }
    /// The pair of a by-pair group.
    pub(crate) fn pair(&self) -> Option<&'p PairData<'a>> {
        match self.key {
            GroupKey::Pair(p) => Some(p),
            _ => None,
        }
    }
    /// The dataset key of a by-dataset group or a pair group (`None` for the pooled group).
    pub(crate) fn dataset(&self) -> Option<&str> {
        match self.key {
            GroupKey::Pooled => None,
            GroupKey::Dataset(d) => Some(d),
            GroupKey::Pair(p) => Some(&p.dataset),
        }
    }
}

/// A table's pairs, each with what it contributes, in the run's pair order.
pub(crate) struct Groups<'p, 'a, T> {
    members: Vec<(&'p PairData<'a>, T)>,
}

impl<'p, 'a> Groups<'p, 'a, ()> {
    /// Pairs that contribute only themselves (the table computes from the group's pairs).
    pub(crate) fn of_pairs(pairs: impl IntoIterator<Item = &'p PairData<'a>>) -> Self {
        Groups::new(pairs.into_iter().map(|p| (p, ())))
    }
}

impl<'p, 'a, T> Groups<'p, 'a, T> {
    /// `members` in the order given (the run's pair order, as the index lists its pairs).
    pub(crate) fn new(members: impl IntoIterator<Item = (&'p PairData<'a>, T)>) -> Self {
        Groups {
            members: members.into_iter().collect(),
        }
    }
    /// Each pair with what it contributes, in pair order.
    pub(crate) fn members(&self) -> impl Iterator<Item = (&'p PairData<'a>, &T)> + '_ {
        self.members.iter().map(|m| (m.0, &m.1))
    }
    /// Whether the table has no pairs.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
    /// Every pair in one group.
    pub(crate) fn pooled(&self) -> Group<'_, 'p, 'a, T> {
        Group {
            key: GroupKey::Pooled,
            members: self.members.iter().collect(),
        }
    }
    /// One group per dataset that has pairs, in the fixed dataset order (TruthfulQA-MC, then
    /// MMLU-Pro, then by key).
    pub(crate) fn by_dataset(&self) -> Vec<Group<'_, 'p, 'a, T>> {
        let mut datasets: Vec<&str> = self.members.iter().map(|m| m.0.dataset.as_str()).collect();
        datasets.sort_by_key(|d| dataset_rank(d));
        datasets.dedup();
        datasets
            .into_iter()
            .map(|d| Group {
                key: GroupKey::Dataset(d),
                members: self.members.iter().filter(|m| m.0.dataset == d).collect(),
            })
            .collect()
    }
    /// One group per pair, in pair order.
    pub(crate) fn by_pair(&self) -> Vec<Group<'_, 'p, 'a, T>> {
        self.members
            .iter()
            .map(|m| Group {
                key: GroupKey::Pair(m.0),
                members: vec![m],
            })
            .collect()
    }
}

/// The key column of a by-dataset CSV: the dataset key.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct DatasetKey {
    pub(crate) dataset: String,
}

impl DatasetKey {
    pub(crate) fn of(dataset: &str) -> DatasetKey {
        DatasetKey {
            dataset: dataset.to_string(),
        }
    }
}

/// The key columns of a by-pair CSV: model key, display name, dataset key.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct PairKey {
    pub(crate) model_key: String,
    pub(crate) model: String,
    pub(crate) dataset: String,
}

impl PairKey {
    pub(crate) fn of(p: &PairData) -> PairKey {
        PairKey {
            model_key: p.model_key.clone(),
            model: p.model.clone(),
            dataset: p.dataset.clone(),
        }
    }
}

/// The `Dataset` column of a by-dataset view (display name).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct DatasetView {
    #[serde(rename = "Dataset")]
    pub(crate) dataset: String,
}

impl DatasetView {
    pub(crate) fn of(dataset: &str) -> DatasetView {
        DatasetView {
            dataset: dataset_display(dataset),
        }
    }
}

/// The `Model` and `Dataset` columns of a pair in the Markdown/LaTeX views (display names).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ModelDataset {
    #[serde(rename = "Model")]
    pub(crate) model: String,
    #[serde(rename = "Dataset")]
    pub(crate) dataset: String,
}

impl ModelDataset {
    pub(crate) fn of(p: &PairData) -> ModelDataset {
        ModelDataset {
            model: p.model.clone(),
            dataset: dataset_display(&p.dataset),
        }
    }
}
