//! What the user asks for, independent of the key that asked: the keymap turns keys into
//! [`Action`]s, and [`App::apply`](super::app::App::apply) hands each to the part that carries
//! it out ([`Action::target`]).

use super::screen::View;

/// A move of a cursor along a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Motion {
    /// This many places down (positive) or up (negative), stopping at the ends.
    By(isize),
    First,
    Last,
}

/// A move of the what-if editor's cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CursorMove {
    Left,
    Right,
    /// The start / end of the typed line.
    Home,
    End,
    /// The typed line above / below, keeping the column.
    Up,
    Down,
}

/// A user intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Quit,

    // Views and overlays.
    ShowView(View),
    NextView,
    PreviousView,
    OpenHelp,
    /// Lines down (positive) or up (negative) in the help.
    ScrollHelp(isize),
    OpenModels,
    CloseOverlay,
    /// Moves the model switcher's cursor.
    MoveModelCursor(isize),
    /// Loads the model under the switcher's cursor (in the background) and closes the switcher.
    LoadSelectedModel,
    /// Adds the model under the switcher's cursor to the compared models, or removes it.
    ToggleCompareSelected,

    // The item list.
    MoveItem(Motion),
    CycleSort,
    ReverseSort,
    /// Starts typing a filter.
    EditFilter,
    FilterType(char),
    FilterBackspace,
    /// Stops typing and keeps the filter.
    KeepFilter,
    /// Stops typing and drops the filter.
    ClearFilter,

    // The step cursor of Dialogue, Trace, Slot and Recovery.
    MoveStep(Motion),
    /// Jumps between the ramp and the recovery operations.
    ToggleRampOps,
    /// Shows or hides the repeated question blocks of the Dialogue.
    ToggleQuestionBlocks,
    /// Lines further up (positive) or down (negative) the conversation.
    ScrollDialogue(isize),
    /// Moves the Dialogue's message cursor down (positive) or up (negative) the dialogue.
    MoveMessage(isize),
    /// Opens the what-if editor on the selected message of the step (else its final user
    /// message).
    StartEdit,
    /// Inserts a character at the editor's cursor.
    EditType(char),
    /// Deletes the character before the editor's cursor.
    EditBackspace,
    /// Deletes the character under the editor's cursor.
    EditDelete,
    EditCursor(CursorMove),
    /// Opens the editor's text in `$EDITOR` (the terminal is suspended meanwhile).
    EditExternal,
    EditNewline,
    /// Empties the editor.
    EditClear,
    /// Keeps the edit as the step's new version and scores it.
    EditApply,
    EditCancel,
    /// Back to the step's previous what-if version (the original after the first).
    UndoEdit,
    /// Writes the step's what-if edit as an operation into an experiment file.
    SaveEdit,
    /// A what-if version without the selected exchange of the history.
    DeleteExchange,
    /// A what-if version with the selected exchange of the history said once more.
    RepeatExchange,
    /// A what-if version of the step with the next wrong option advocated (the ramp before it
    /// scored under the new pressure first).
    AdvocateNextWrong,
    /// Opens the list of the item's what-if edits.
    OpenEdits,
    /// Moves the edits list's cursor.
    MoveEditsCursor(isize),
    /// Shows the step under the edits list's cursor in the Dialogue.
    ShowSelectedEdit,
    /// Back one version of the step under the edits list's cursor.
    UndoSelectedEdit,
    /// The model's greedy continuation of the step at the answer slot (Dialogue); stops one
    /// that runs.
    Generate,
    /// Shows or hides the letter lens of the step and its clean counterpart (Slot).
    ToggleLens,
    /// Turns the steering what-if (`--steer`) on or off for the lens (Slot).
    ToggleSteering,
    /// Saves the steering what-if on the current operation as a steering operation (Slot).
    SaveSteering,

    // The table browser and the batch.
    /// The previous (negative) or next (positive) table file.
    MoveTableFile(isize),
    /// Lines down (positive) or up (negative) in the shown table file.
    ScrollTable(isize),
    ScrollTableTop,
    /// Columns to the right (positive) or left (negative).
    PanTable(isize),
    /// Moves the Runs pane's cursor.
    MoveRun(isize),
    /// Opens the run under the Runs pane's cursor (as `--run DIR`).
    OpenSelectedRun,
    StartBatch,
    StopBatch,
}

/// The part of the explorer that carries an action out (the app routes it there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The app itself: views, the item list, the models, opening a run, a batch.
    App,
    /// The overlays: the help and the model switcher's cursor.
    Popups,
    /// The step cursor of the detail views.
    Steps,
    /// The what-if component (the editor, versions, the edits list).
    WhatIf,
    /// The table browser and its Runs pane.
    Tables,
}

impl Action {
    pub(crate) fn target(self) -> Target {
        use Action as A;
        match self {
            A::OpenHelp | A::ScrollHelp(_) | A::OpenModels | A::CloseOverlay | A::MoveModelCursor(_) => Target::Popups,
            A::MoveStep(_) | A::ToggleRampOps | A::ToggleQuestionBlocks | A::ScrollDialogue(_) => Target::Steps,
            A::StartEdit
            | A::EditType(_)
            | A::EditBackspace
            | A::EditDelete
            | A::EditCursor(_)
            | A::EditExternal
            | A::EditNewline
            | A::EditClear
            | A::EditApply
            | A::EditCancel
            | A::MoveMessage(_)
            | A::UndoEdit
            | A::SaveEdit
            | A::DeleteExchange
            | A::RepeatExchange
            | A::AdvocateNextWrong
            | A::OpenEdits
            | A::MoveEditsCursor(_)
            | A::ShowSelectedEdit
            | A::UndoSelectedEdit => Target::WhatIf,
            A::MoveTableFile(_) | A::ScrollTable(_) | A::ScrollTableTop | A::PanTable(_) | A::MoveRun(_) | A::StopBatch => Target::Tables,
            _ => Target::App,
        }
    }
}
