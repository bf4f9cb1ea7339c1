//! What the views read from the [`App`]: items, scores, summaries, recovery rows, generations
//! and the what-if state (nothing here changes the app).

use std::borrow::Cow;

use super::App;
use crate::data::Selected;
use crate::protocol::{ChatMessage, SlotScore};
use crate::tui::generations::GenState;
use crate::tui::item_list::ItemSummary;
use crate::tui::parts::Part;
use crate::tui::recovery_rows::RecoveryRows;
use crate::tui::whatif::{EditRow, Editor, WhatIfCurve, WhatIfShown};

impl App {
    /// Number of items (visible or not).
    pub fn item_count(&self) -> usize {
        self.items.entries().len()
    }
    /// The shown items, filtered and sorted, as item indices.
    pub fn visible_items(&self) -> &[usize] {
        self.items.visible()
    }
    /// The selected item (an item index).
    pub fn current(&self) -> Option<usize> {
        self.items.current()
    }
    pub fn entry(&self, item: usize) -> Option<&Selected> {
        self.items.entry(item)
    }
    /// The selected item and its entry.
    pub(crate) fn current_entry(&self) -> Option<(usize, &Selected)> {
        let i = self.current()?;
        Some((i, self.entry(i)?))
    }
    pub fn current_part(&self) -> Part {
        self.cursor.part()
    }

    /// The shown model's score of a part.
    pub fn score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        self.score_of(self.model_key(), item, part)
    }
    /// A model's score of a part (the shown model, a compared one, or any other scored before).
    pub fn score_of(&self, model: &str, item: usize, part: Part) -> Option<&SlotScore> {
        self.engines.score_of(model, self.entry(item)?, part)
    }
    /// A model's letters at ramp steps 1..=4 (its own self-conditioned ramp), as far as known.
    pub(crate) fn ramp_letters_of(&self, model: &str, item: usize) -> [Option<char>; 4] {
        match self.entry(item) {
            Some(e) => self.engines.scores().ramp_letters(model, &e.item.id),
            None => [None; 4],
        }
    }
    pub(crate) fn error(&self, item: usize, part: Part) -> Option<&str> {
        self.engines.scores().error(self.model_key(), &self.entry(item)?.item.id, part)
    }
    /// The messages of a part (None while an earlier letter is missing).
    pub(crate) fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.engines.messages(&self.cfg.prompts, self.entry(item)?, part)
    }
    /// The values of the item list's row of `item`.
    pub(crate) fn summary(&self, item: usize) -> ItemSummary {
        self.summary_of_model(self.model_key(), item)
    }
    /// The values of the item list's row of `item` for `model`.
    pub(crate) fn summary_of_model(&self, model: &str, item: usize) -> ItemSummary {
        self.entry(item).map(|e| ItemSummary::of(self.engines.scores(), model, e)).unwrap_or_default()
    }
    /// The current item's recovery rows: those computed when the scores, the item or the
    /// models last changed (computed here only if something changed since without a refresh).
    pub(crate) fn recovery_rows(&self) -> Cow<'_, RecoveryRows> {
        let key = self.rows_key();
        if self.rows.key == key {
            Cow::Borrowed(&self.rows)
        } else {
            Cow::Owned(RecoveryRows::compute(key, self.engines.scores(), self.current_entry().map(|(_, e)| e)))
        }
    }
    /// The shown model's greedy continuation of a step, asked for or done.
    pub(crate) fn generation(&self, item: usize, part: Part) -> Option<&GenState> {
        self.engines.generation(&self.shown_messages(item, part)?)
    }

    // What-if (see [`WhatIf`]).
    pub(crate) fn message_cursor(&self) -> Option<usize> {
        self.what_if.message_cursor()
    }
    pub(crate) fn editor(&self) -> &Editor {
        self.what_if.editor()
    }
    /// The step's dialogue as the Dialogue shows it: its current what-if version, else the
    /// original.
    pub(crate) fn shown_messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.what_if.shown_messages(&self.cx(), item, part)
    }
    /// The step's edited conversation, when it has a what-if version.
    pub fn whatif_messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.what_if.messages(item, part)
    }
    /// The option the user advocates in the step's current what-if version.
    pub fn whatif_advocated(&self, item: usize, part: Part) -> Option<usize> {
        self.what_if.advocated(item, part)
    }
    pub(crate) fn whatif(&self, item: usize, part: Part) -> Option<WhatIfShown<'_>> {
        self.what_if.shown(&self.cx(), item, part)
    }
    /// The done score of the step's current what-if version.
    pub fn whatif_score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        self.what_if.score(&self.cx(), item, part)
    }
    pub(crate) fn whatif_curve(&self, item: usize) -> Option<WhatIfCurve> {
        self.what_if.curve(&self.cx(), item)
    }
    pub(crate) fn edit_rows(&self, item: usize) -> Vec<EditRow> {
        self.what_if.edit_rows(&self.cx(), item)
    }
    pub(crate) fn editor_heading(&self, part_label: &str) -> String {
        self.what_if.editor_heading(&self.cx(), part_label)
    }
}
