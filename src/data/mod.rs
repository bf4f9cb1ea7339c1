//! Items, datasets, and the paper's deterministic selection.

mod csvfile;
mod item;
pub(crate) mod items;
pub mod parquet;
pub mod pyrandom;
pub mod selection;

use std::path::PathBuf;

pub use item::{DataError, Item};
pub use items::{DatasetSpec, DATASET_SPEC_FORMS};
pub use selection::Selected;

/// The paper's selection seed (subset draw and advocated wrong options).
pub const DEFAULT_SEED: u64 = 42;

/// How the items of a dataset are selected (shared by `items`, `prompts`, batch mode and the
/// explorer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectionOptions {
    /// Items to draw (CPython `random.Random(seed).shuffle`, first N); `None` = all.
    pub n: Option<usize>,
    /// Seed of the subset draw and of the advocated wrong option.
    pub seed: u64,
    /// The paper's released item list and advocated wrong answers (both or neither).
    pub released: Option<ReleasedLists>,
    /// Permute each item's options with this seed before anything else.
    pub shuffle_options: Option<u64>,
}

/// The paper's released `item_subsets/*.csv` and `advocated_wrong_answers/*.csv`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReleasedLists {
    pub subset: PathBuf,
    pub advocated: PathBuf,
}

impl Default for SelectionOptions {
    fn default() -> Self {
        SelectionOptions {
            n: None,
            seed: DEFAULT_SEED,
            released: None,
            shuffle_options: None,
        }
    }
}

/// Loads a dataset spec and selects its items.
pub fn load_selection(spec: &str, opts: &SelectionOptions) -> Result<Vec<Selected>, DataError> {
    let mut items = DatasetSpec::parse(spec)?.load()?;
    if let Some(s) = opts.shuffle_options {
        selection::shuffle_options(&mut items, s);
    }
    Ok(match &opts.released {
        Some(r) => selection::from_released_csvs(&items, &r.subset, &r.advocated)?,
        None => selection::select(&items, opts.n, opts.seed),
    })
}
