//! The grouping most tables report: pooled over their pairs, by dataset, by pair.
//!
//! A table picks its pairs and what each contributes (observations, per-pair metrics, or
//! nothing), puts them in [`Groups`], and asks for the groups it reports; each [`Group`] holds
//! its members in the run's pair order, so pooling a group's contributions concatenates them
//! in the fixed order. The key columns the grouped CSVs and views share are here too.

use serde::Serialize;

use super::format::Shown;
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
    /// Its column in a projected view (`format::Shown`): the dataset's display name.
    pub(crate) const SHOWN: [Shown; 1] = [Shown::Text("dataset", "Dataset", dataset_display)];

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
    /// Its columns in a projected view (`format::Shown`): the display names of the model and
    /// the dataset, as [`ModelDataset`].
    pub(crate) const SHOWN: [Shown; 2] = [
        Shown::As("model", "Model"),
        Shown::Text("dataset", "Dataset", dataset_display),
    ];

    pub(crate) fn of(p: &PairData) -> PairKey {
        PairKey {
            model_key: p.model_key.clone(),
            model: p.model.clone(),
            dataset: p.dataset.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialogue::conditions::Registry;
    use crate::store::ItemRow;
    use crate::tables::format::{csv_text, Join, Num};
    use crate::tables::index::RunIndex;
    use crate::tables::testutil::synthetic_rows;

    /// Four pairs over three datasets: toy_a / TruthfulQA-MC and toy_b / MMLU-Pro (the
    /// synthetic run), toy_c / MMLU-Pro and toy_d / another dataset (copies of toy_a's rows).
    fn rows() -> Vec<ItemRow> {
        let base = synthetic_rows(1);
        let mut rows = base.clone();
        for (model, dataset) in [("toy_c", "mmlu_pro"), ("toy_d", "another")] {
            rows.extend(base.iter().filter(|r| r.model_key == "toy_a").map(|r| ItemRow {
                model_key: model.into(),
                model_short_name: model.into(),
                dataset: dataset.into(),
                ..r.clone()
            }));
        }
        rows
    }

    fn keys<T>(groups: &[Group<T>]) -> Vec<String> {
        groups
            .iter()
            .map(|g| match g.key {
                GroupKey::Pooled => "pooled".to_string(),
                GroupKey::Dataset(d) => d.to_string(),
                GroupKey::Pair(p) => format!("{}/{}", p.model_key, p.dataset),
            })
            .collect()
    }

    #[test]
    fn groups_pool_all_pairs_then_each_dataset_in_the_fixed_order_then_each_pair() {
        let rows = rows();
        let idx = RunIndex::new(&rows, Registry::bundled());
        let groups = Groups::new(idx.pairs.iter().enumerate().map(|(i, p)| (p, i)));

        let pooled = groups.pooled();
        assert!(matches!(pooled.key, GroupKey::Pooled));
        assert_eq!(pooled.values().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!((pooled.n_pairs(), pooled.dataset(), pooled.pair().is_none()), (4, None, true));

        // TruthfulQA-MC before MMLU-Pro (not alphabetical), others after; members in pair order
        let by_dataset = groups.by_dataset();
        assert_eq!(keys(&by_dataset), ["truthfulqa_mc", "mmlu_pro", "another"]);
        let values: Vec<Vec<usize>> =
            by_dataset.iter().map(|g| g.values().copied().collect()).collect();
        assert_eq!(values, [vec![0], vec![1, 2], vec![3]]);
        let mmlu: Vec<&str> = by_dataset[1].pairs().map(|p| p.model_key.as_str()).collect();
        assert_eq!(mmlu, ["toy_b", "toy_c"]);

        let by_pair = groups.by_pair();
        assert_eq!(
            keys(&by_pair),
            ["toy_a/truthfulqa_mc", "toy_b/mmlu_pro", "toy_c/mmlu_pro", "toy_d/another"]
        );
        for (i, g) in by_pair.iter().enumerate() {
            assert_eq!(g.values().copied().collect::<Vec<_>>(), [i]);
            assert_eq!(g.dataset(), Some(idx.pairs[i].dataset.as_str()));
        }

        let none = Groups::of_pairs(idx.pairs.iter().filter(|p| p.dataset == "absent"));
        assert!(none.is_empty() && none.by_dataset().is_empty() && none.by_pair().is_empty());
    }

    #[derive(Serialize, Default)]
    struct Value {
        value: Num,
    }

    #[test]
    fn the_shared_key_columns_lead_the_grouped_rows() {
        let rows = rows();
        let idx = RunIndex::new(&rows, Registry::bundled());
        let p = &idx.pairs[0];
        let v = || Value { value: Num(0.5) };
        assert_eq!(
            csv_text(&[Join(PairKey::of(p), v())]),
            "model_key,model,dataset,value\ntoy_a,Toy-A,truthfulqa_mc,0.500000\n"
        );
        assert_eq!(
            csv_text(&[Join(DatasetKey::of("mmlu_pro"), v())]),
            "dataset,value\nmmlu_pro,0.500000\n"
        );
        assert_eq!(
            csv_text(&[Join(ModelDataset::of(p), v())]),
            "Model,Dataset,value\nToy-A,TruthfulQA-MC,0.500000\n"
        );
    }
}
