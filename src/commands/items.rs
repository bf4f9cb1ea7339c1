//! `hyst-tui items`: the items a dataset spec selects, in the order a run scores them.

use anyhow::Result;

use crate::cli::{ItemsArgs, SelectionArgs};
use hyst_tui::data::{load_selection, Selected};

/// The items of `dataset` that the selection options pick (also what `prompts` looks in).
pub(super) fn selection(dataset: &str, s: &SelectionArgs) -> Result<Vec<Selected>> {
    Ok(load_selection(dataset, &s.options())?)
}

pub fn run(args: &ItemsArgs) -> Result<()> {
    Ok(hyst_tui::data::selection::write_item_list(&selection(&args.dataset, &args.selection)?, std::io::stdout().lock())?)
}
