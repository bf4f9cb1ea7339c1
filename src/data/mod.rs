//! Items, datasets, and the paper's deterministic selection.

mod csvfile;
pub mod items;
pub mod parquet;
pub mod pyrandom;
pub mod selection;

pub use items::{DataError, DatasetSpec, Item};
pub use selection::Selected;
