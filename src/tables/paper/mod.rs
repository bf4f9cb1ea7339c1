//! Side by side with the paper: `reproduction.md` and `reproduction.csv`.
//!
//! The paper's printed values ship as data (`assets/paper/*.tsv`, copied from the paper's
//! tables as printed, with their README). [`printed::CELLS`] is the one explicit map from a
//! printed cell — (paper table, printed column; rows matched by [`printed::TABLES`]' keys) — to
//! the number of ours that reproduces it: a table file stem, optional fixed filters (e.g. the
//! metric of a long CI table), the CSV column of the value and of its 95% interval, and the
//! printed unit. Nothing is computed here: every value is read from the CSV rows of the tables
//! the run built (the same rows `tables/<stem>.csv` holds, unrounded).
//!
//! Rows are matched by the paper's model key (models.toml `paper_key`, recorded in every item
//! row; the printed short names map to it by [`printed::MODEL_NAMES`]) and dataset
//! ([`printed::DATASET_NAMES`]). A printed cell the run has no row for is `not run`. A pooled
//! printed row (Table 4's counts, Table 6, …) is `compared` when the run's table pools exactly
//! the paper's pairs (the pairs of the table's plan scope that have its conditions,
//! [`printed::PaperTable::needs`]), else `other pairs` (the values are shown, with how many
//! pairs the run pooled). A run CI covers a printed value when it overlaps what rounds to it
//! (± half a unit of the last printed digit).
//!
//! Layout: [`printed`] holds the printed data (the bundled TSVs, the name maps, the table list
//! and the cell map), [`parse`] reads the printed TSVs and cells, [`mod@compare`] matches
//! printed rows to the run's rows and compares each cell, and [`render`] writes the Markdown
//! and the CSV. This file is only the face the rest of `tables` uses.

mod compare;
mod parse;
mod printed;
mod render;

pub use compare::ReproductionCounts;
pub(crate) use compare::{compare, counts};
pub(crate) use render::{csv, markdown};

// what the reproduction tests (`tables::tests_reproduction`) read besides the above
#[cfg(test)]
pub(crate) use compare::{Comparison, Status};
#[cfg(test)]
pub(crate) use parse::parse_tsv;
#[cfg(test)]
pub(crate) use printed::{Key, Unit, CELLS, DATASET_NAMES, MODEL_NAMES, PAPER_TSV, TABLES};
