//! What the explorer's parts tell the app: the engines (with their schedulers and the shared store),
//! the what-if editor and the table browser return [`Event`]s from their updates, and the app
//! routes them — to the status line, the item list, the overlays, the other parts. No part
//! writes another's state.

use super::parts::Part;
use super::screen::Overlay;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Event {
    /// A line for the status bar.
    Notice(String),
    /// Scores arrived (from an engine, the shared store, a stored run's other model): lists
    /// sorted by a score sort again.
    ScoresChanged,
    /// A model finished loading.
    ModelLoaded(String),
    /// The shown model's engine was (re)started: what the old one was running will not answer.
    ShownEngineRestarted,
    /// The shown or compared models changed: the list's columns, the store's lookups and the
    /// scheduling follow.
    ModelsChanged,
    /// A compared model went; this many are left (its sort column goes with it).
    CompareRemoved(usize),
    /// Open this overlay (`Overlay::None` closes the open one).
    Overlay(Overlay),
    /// Show this step of the current item in the Dialogue.
    ShowStep(Part),
}
