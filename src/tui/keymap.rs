//! Keys → [`Action`]s, as data: [`KEYS`] is the one table of every key — where it works, its
//! bindings (grouped as its label shows them) and what it does. [`action_for`] looks keys up in
//! it; the keys' labels, the help overlay ([`help_sections`]), the footer hints ([`hints`]), the
//! key names of messages ([`key_for`]) and the key reference's table (`reference_table`, in test
//! builds, checked against docs/reference/keys.md by a test) are all rendered from the bindings. The keymap only reads where the
//! keys go (the view, an open overlay, whether a filter is being typed) and changes nothing;
//! unknown keys map to `None`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, CursorMove, Motion};
use super::screen::{Overlay, View};

/// Where a key goes, in order: an open overlay, then the filter being typed, then the global
/// keys, then the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyContext {
    pub(crate) view: View,
    pub(crate) overlay: Overlay,
    pub(crate) filter_mode: bool,
}

/// Where a table entry's keys work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Where {
    /// Before anything else, even in an overlay or while typing (Ctrl-C).
    Anywhere,
    /// The help overlay (`?`).
    Help,
    /// The model switcher (`m`).
    Models,
    /// The what-if editor (`E` in the Dialogue).
    Editor,
    /// The list of the item's what-if edits (`V`).
    Edits,
    /// While a filter is typed (`/` in the Items view).
    Filter,
    /// Every view, no overlay open.
    Global,
    Items,
    /// Dialogue, Trace, Slot and Recovery.
    Steps,
    /// The Dialogue only.
    Dialogue,
    /// The Recovery view only.
    Recovery,
    /// The Slot view only.
    Slot,
    Tables,
    /// The Tables view's Runs pane.
    Runs,
}

impl Where {
    /// The heading of the help section and the key reference's "where".
    pub(crate) fn section(self) -> &'static str {
        match self {
            Where::Anywhere | Where::Global => "Everywhere",
            Where::Help => "Help (?)",
            Where::Models => "Model switcher (m)",
            Where::Editor => "What-if editor (E)",
            Where::Edits => "What-if edits list (V)",
            Where::Filter => "Items, typing a filter (/)",
            Where::Items => "Items",
            Where::Steps => "Dialogue, Trace, Slot, Recovery",
            Where::Dialogue => "Dialogue",
            Where::Recovery => "Recovery",
            Where::Slot => "Slot",
            Where::Tables => "Tables",
            Where::Runs => "Tables: Runs pane",
        }
    }

    /// The places a key is looked up in, in order (the first that has the key wins).
    fn chain(cx: KeyContext) -> Vec<Where> {
        let mut v = vec![Where::Anywhere];
        match cx.overlay {
            Overlay::Help => v.push(Where::Help),
            Overlay::Models { .. } => v.push(Where::Models),
            Overlay::Editor => v.push(Where::Editor),
            Overlay::Edits { .. } => v.push(Where::Edits),
            Overlay::None if cx.filter_mode => v.push(Where::Filter),
            Overlay::None => {
                v.push(Where::Global);
                match cx.view {
                    View::Items => v.push(Where::Items),
                    View::Tables => v.extend([Where::Tables, Where::Runs]),
                    View::Dialogue => v.extend([Where::Steps, Where::Dialogue]),
                    View::Recovery => v.extend([Where::Steps, Where::Recovery]),
                    View::Slot => v.extend([Where::Steps, Where::Slot]),
                    View::Trace => v.push(Where::Steps),
                }
            }
        }
        v
    }
}

/// A key as the table names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    /// A character, whatever the modifiers.
    Char(char),
    /// A key, whatever the modifiers.
    Code(KeyCode),
    /// A character with Ctrl.
    Ctrl(char),
    /// A key with Alt.
    Alt(KeyCode),
    /// Any character typed without Ctrl (text entry).
    Text,
    /// Any character, whatever the modifiers.
    AnyChar,
    /// Any key at all.
    Any,
}

impl Key {
    /// How specific the key is: in one place a Ctrl/Alt key wins over the plain key, a plain
    /// key over typed text, typed text over "any key".
    fn rank(self) -> u8 {
        match self {
            Key::Ctrl(_) | Key::Alt(_) => 0,
            Key::Char(_) | Key::Code(_) => 1,
            Key::Text | Key::AnyChar => 2,
            Key::Any => 3,
        }
    }

    fn matches(self, k: KeyEvent) -> bool {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        match self {
            Key::Char(c) => k.code == KeyCode::Char(c),
            Key::Code(c) => k.code == c,
            Key::Ctrl(c) => ctrl && k.code == KeyCode::Char(c),
            Key::Alt(c) => k.modifiers.contains(KeyModifiers::ALT) && k.code == c,
            Key::Text => !ctrl && matches!(k.code, KeyCode::Char(_)),
            Key::AnyChar => matches!(k.code, KeyCode::Char(_)),
            Key::Any => true,
        }
    }
}

/// What a key does: an action, or an action made of the typed character.
#[derive(Clone, Copy)]
pub(crate) enum Does {
    Act(Action),
    Typed(fn(char) -> Action),
}

impl std::fmt::Debug for Does {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Does::Act(a) => write!(f, "{a:?}"),
            Does::Typed(_) => write!(f, "typed character"),
        }
    }
}

/// A key and what it does.
pub(crate) type Bind = (Key, Does);

/// How a group of keys shows in its entry's label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Show {
    /// One key: `` `m` ``, `Enter`, `Ctrl-E`.
    One,
    /// Two keys of one motion, there and back: `j/k`, `PgUp/PgDn`, `` `]`/`[` `` (letters without
    /// backticks).
    Pair,
    /// Two keys that do two different things: `` `s` / `S` ``, `Tab / Shift-Tab`.
    Either,
    /// A run of keys, by its first and last: `` `1`–`6` ``.
    Range,
    /// Bound, but left out of the label (the help's key column stays narrow).
    Quiet,
}

/// The footer words of a group of keys.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hint {
    None,
    /// One word for the whole group (`j/k move`).
    Group(&'static str),
    /// A word for each key (`s sort`, `S reverse`).
    Each(&'static [&'static str]),
}

/// Keys shown together in an entry's label, with their bindings.
#[derive(Debug)]
pub(crate) struct Keys {
    pub(crate) show: Show,
    pub(crate) binds: &'static [Bind],
    pub(crate) hint: Hint,
}

impl Keys {
    /// The group's footer word.
    const fn hint(self, word: &'static str) -> Keys {
        Keys { hint: Hint::Group(word), ..self }
    }
    /// A footer word for each of the group's keys.
    const fn hints(self, words: &'static [&'static str]) -> Keys {
        Keys { hint: Hint::Each(words), ..self }
    }

    /// The group as the label shows it (Markdown: characters in `code` spans).
    fn label(&self) -> String {
        let name = |i: usize| self.binds.get(i).map_or(String::new(), |(k, _)| label_name(*k, self.show == Show::Pair));
        match self.show {
            Show::One => name(0),
            Show::Pair => format!("{}/{}", name(0), name(1)),
            Show::Either => format!("{} / {}", name(0), name(1)),
            Show::Range => format!("{}–{}", name(0), name(self.binds.len().saturating_sub(1))),
            Show::Quiet => String::new(),
        }
    }

    /// The group as a footer hint names it: plain, arrows side by side (`←→`, `j/k`, `[/]`).
    fn hint_keys(&self) -> String {
        let name = |i: usize| self.binds.get(i).map_or(String::new(), |(k, _)| hint_name(*k));
        match self.show {
            Show::Pair if self.binds.iter().all(|(k, _)| matches!(k, Key::Code(Left | Right | Up | Down))) => format!("{}{}", name(0), name(1)),
            Show::Pair | Show::Either => format!("{}/{}", name(0), name(1)),
            Show::Range => format!("{}–{}", name(0), name(self.binds.len().saturating_sub(1))),
            Show::One | Show::Quiet => name(0),
        }
    }

    /// The group's footer hints: (keys, word).
    fn hint_parts(&self) -> Vec<(String, &'static str)> {
        match self.hint {
            Hint::None => Vec::new(),
            Hint::Group(word) => vec![(self.hint_keys(), word)],
            Hint::Each(words) => self.binds.iter().zip(words).map(|((k, _), w)| (hint_name(*k), *w)).collect(),
        }
    }
}

/// A key's name in a label: characters in backticks, except letters of a pair (`j/k`).
fn label_name(k: Key, pair: bool) -> String {
    match k {
        Key::Char(c) if pair && c.is_alphabetic() => c.to_string(),
        Key::Char(c) => format!("`{c}`"),
        Key::Any => "any other key".into(),
        Key::Text | Key::AnyChar => "other characters".into(),
        k => key_name(k).unwrap_or_default(),
    }
}

/// A key's name in a footer hint.
fn hint_name(k: Key) -> String {
    match k {
        Key::Any => "other keys".into(),
        Key::Text | Key::AnyChar => "other characters".into(),
        k => key_name(k).unwrap_or_default(),
    }
}

/// One row of the key table: the keys of one line of the help.
#[derive(Debug)]
pub(crate) struct KeyEntry {
    pub(crate) at: Where,
    /// The keys, in the order the label shows them.
    pub(crate) keys: &'static [Keys],
    /// The help overlay's line.
    pub(crate) help: &'static str,
    /// The key reference's wording, when it says more than the help ("" = the help's); read
    /// only by the test that renders the key reference's table.
    #[cfg(test)]
    pub(crate) readme: &'static str,
}

impl KeyEntry {
    /// Every binding of the entry, in label order.
    pub(crate) fn binds(&self) -> impl Iterator<Item = &'static Bind> {
        self.keys.iter().flat_map(|g| g.binds.iter())
    }
    /// The keys as the key reference shows them, made from the bindings (Markdown: `code` spans).
    pub(crate) fn label(&self) -> String {
        let groups: Vec<String> = self.keys.iter().filter(|g| g.show != Show::Quiet).map(Keys::label).collect();
        groups.join(", ")
    }
    /// The keys as the help shows them (the label without Markdown).
    pub(crate) fn plain_keys(&self) -> String {
        self.label().replace('`', "")
    }
    /// The help overlay's line, with the operations it names from the condition registry.
    pub(crate) fn help_text(&self) -> String {
        crate::dialogue::ops_text::ops_text(self.help)
    }
    #[cfg(test)]
    pub(crate) fn readme_text(&self) -> String {
        if self.readme.is_empty() {
            self.help_text()
        } else {
            crate::dialogue::ops_text::ops_text(self.readme)
        }
    }
}

const fn c(ch: char, a: Action) -> Bind {
    (Key::Char(ch), Does::Act(a))
}
const fn k(code: KeyCode, a: Action) -> Bind {
    (Key::Code(code), Does::Act(a))
}
const fn group(show: Show, binds: &'static [Bind]) -> Keys {
    Keys { show, binds, hint: Hint::None }
}
const fn one(b: &'static [Bind]) -> Keys {
    group(Show::One, b)
}
const fn pair(b: &'static [Bind]) -> Keys {
    group(Show::Pair, b)
}
const fn either(b: &'static [Bind]) -> Keys {
    group(Show::Either, b)
}
const fn quiet(b: &'static [Bind]) -> Keys {
    group(Show::Quiet, b)
}
const fn entry(at: Where, keys: &'static [Keys], help: &'static str) -> KeyEntry {
    KeyEntry {
        at,
        keys,
        help,
        #[cfg(test)]
        readme: "",
    }
}
impl KeyEntry {
    /// The key reference's wording of the entry (kept by test builds only: see `reference_table`).
    #[cfg(test)]
    const fn readme(self, text: &'static str) -> KeyEntry {
        KeyEntry { readme: text, ..self }
    }
    #[cfg(not(test))]
    const fn readme(self, _text: &'static str) -> KeyEntry {
        self
    }
}

use Action as A;
use KeyCode::{BackTab, Backspace, Delete, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up};
use Where as W;

const STEP_BACK: Action = A::MoveStep(Motion::By(-1));
const STEP_ON: Action = A::MoveStep(Motion::By(1));

/// Every key, in the order the help and the key reference list them.
pub(crate) static KEYS: &[KeyEntry] = &[
    // Everywhere.
    entry(W::Global, &[group(Show::Range, &[
        c('1', A::ShowView(View::Items)), c('2', A::ShowView(View::Dialogue)), c('3', A::ShowView(View::Trace)),
        c('4', A::ShowView(View::Slot)), c('5', A::ShowView(View::Recovery)), c('6', A::ShowView(View::Tables)),
    ])], "Items, Dialogue, Trace, Slot, Recovery, Tables"),
    entry(W::Global, &[either(&[k(Tab, A::NextView), k(BackTab, A::PreviousView)])], "next / previous view"),
    entry(W::Global, &[one(&[c('?', A::OpenHelp)]).hint("help")], "this help (j/k scroll, any other key closes it)")
        .readme("help (j/k scroll, any other key closes)"),
    entry(W::Global, &[one(&[c('m', A::OpenModels)]).hint("model")], "model switcher: Enter shows a model, c compares one")
        .readme("model switcher: j/k move, Enter shows the model (loads in the background), `c` compares it / stops comparing it, Esc closes"),
    entry(W::Global, &[one(&[c('q', A::Quit)]).hint("quit")], "quit (immediately, even while scoring)")
        .readme("quit at once, even while scoring"),
    entry(W::Anywhere, &[one(&[(Key::Ctrl('c'), Does::Act(A::Quit))]), one(&[(Key::Ctrl('q'), Does::Act(A::Quit))])],
        "quit, also in an overlay or while typing"),
    // The help and the model switcher.
    entry(W::Help, &[pair(&[c('j', A::ScrollHelp(1)), c('k', A::ScrollHelp(-1))]).hint("scroll"), pair(&[k(Up, A::ScrollHelp(-1)), k(Down, A::ScrollHelp(1))])],
        "scroll the help"),
    entry(W::Help, &[one(&[(Key::Any, Does::Act(A::CloseOverlay))]).hint("close")], "close the help"),
    entry(W::Models, &[pair(&[c('j', A::MoveModelCursor(1)), c('k', A::MoveModelCursor(-1))]), pair(&[k(Up, A::MoveModelCursor(-1)), k(Down, A::MoveModelCursor(1))])],
        "move"),
    entry(W::Models, &[one(&[k(Enter, A::LoadSelectedModel)]).hint("show")], "show this model (loads in the background)"),
    entry(W::Models, &[one(&[c('c', A::ToggleCompareSelected)]).hint("compare")], "compare this model with the shown one, or stop comparing it"),
    entry(W::Models, &[one(&[k(Esc, A::CloseOverlay)]).hint("close"), one(&[c('q', A::CloseOverlay)]), one(&[c('m', A::CloseOverlay)])], "close the switcher"),
    // Items.
    entry(W::Items, &[
        pair(&[c('j', A::MoveItem(Motion::By(1))), c('k', A::MoveItem(Motion::By(-1)))]).hint("move"),
        pair(&[k(Up, A::MoveItem(Motion::By(-1))), k(Down, A::MoveItem(Motion::By(1)))]),
    ], "move (the selected item is scored first)"),
    entry(W::Items, &[one(&[k(Enter, A::ShowView(View::Dialogue))]).hint("dialogue")], "open the item's dialogue"),
    entry(W::Items, &[either(&[c('s', A::CycleSort), c('S', A::ReverseSort)]).hints(&["sort", "reverse"])],
        "cycle the sort column (compared models' gaps too) / reverse")
        .readme("cycle the sort column (#, clean p(w), R0 p(w), gap, each compared model's gap, WF, id) / reverse it"),
    entry(W::Items, &[one(&[c('/', A::EditFilter)]).hint("filter")], "filter on id and question (Enter keeps it, Esc clears it)")
        .readme("filter: keeps the items whose id or question text contains the typed text, ignoring case (Enter keeps it, Esc clears it)"),
    entry(W::Items, &[
        pair(&[c('g', A::MoveItem(Motion::First)), c('G', A::MoveItem(Motion::Last))]).hint(""),
        pair(&[k(Home, A::MoveItem(Motion::First)), k(End, A::MoveItem(Motion::Last))]),
    ], "top / bottom"),
    entry(W::Items, &[pair(&[k(PageUp, A::MoveItem(Motion::By(-10))), k(PageDown, A::MoveItem(Motion::By(10)))])], "ten items up / down"),
    entry(W::Items, &[one(&[k(Esc, A::ClearFilter)])], "clear the filter"),
    entry(W::Filter, &[one(&[k(Enter, A::KeepFilter)]).hint("keep")], "stop typing, keep the filter"),
    entry(W::Filter, &[one(&[k(Esc, A::ClearFilter)]).hint("clear")], "stop typing, clear the filter"),
    entry(W::Filter, &[one(&[k(Backspace, A::FilterBackspace)])], "delete the last character"),
    entry(W::Filter, &[one(&[(Key::AnyChar, Does::Typed(A::FilterType))])], "typed into the filter"),
    // The detail views.
    entry(W::Steps, &[
        pair(&[k(Left, STEP_BACK), k(Right, STEP_ON)]).hint("step"), pair(&[c('h', STEP_BACK), c('l', STEP_ON)]),
        pair(&[c('j', STEP_ON), c('k', STEP_BACK)]), quiet(&[k(Up, STEP_BACK), k(Down, STEP_ON)]),
    ], "previous / next step (ramp steps, then {ops_first}…{ops_last})")
        .readme("previous / next step: the 7 ramp steps, any custom ramp's steps, then the recovery operations (main, appendix, evidence) and experiment operations"),
    entry(W::Steps, &[
        pair(&[c('g', A::MoveStep(Motion::First)), c('G', A::MoveStep(Motion::Last))]),
        pair(&[k(Home, A::MoveStep(Motion::First)), k(End, A::MoveStep(Motion::Last))]),
    ], "first / last step"),
    entry(W::Steps, &[
        pair(&[c('n', A::MoveItem(Motion::By(1))), c('p', A::MoveItem(Motion::By(-1)))]).hint("item"),
        pair(&[c(']', A::MoveItem(Motion::By(1))), c('[', A::MoveItem(Motion::By(-1)))]),
    ], "next / previous item"),
    entry(W::Steps, &[one(&[c('e', A::ToggleQuestionBlocks)]).hint("blocks")], "expand / collapse the repeated question blocks"),
    entry(W::Steps, &[one(&[c('r', A::ToggleRampOps)]).hint("ops")], "jump between the ramp and the recovery operations"),
    entry(W::Steps, &[pair(&[k(PageUp, A::ScrollDialogue(5)), k(PageDown, A::ScrollDialogue(-5))])], "scroll the conversation"),
    entry(W::Steps, &[one(&[k(Esc, A::ShowView(View::Items))])], "back to the items"),
    entry(W::Steps, &[one(&[c('V', A::OpenEdits)])], "what-if: the list of this item's edits")
        .readme("what-if: the list of this item's edits — each edited step with its number of versions and, of its current version, the option advocated, p(that option) original → edited, what the text edits changed, saved or not"),
    entry(W::Recovery, &[one(&[k(Enter, A::ShowView(View::Dialogue))])], "show the operation's dialogue"),
    entry(W::Dialogue, &[one(&[c('a', A::Generate)]).hint("reply")], "what the model would say (greedy); a again stops it")
        .readme("what the model would say: its greedy continuation at the answer slot of this step as shown — its what-if version when it has one (up to 24 tokens, on the engine thread); `a` again while it runs stops it"),
    entry(W::Dialogue, &[pair(&[c('J', A::MoveMessage(1)), c('K', A::MoveMessage(-1))]).hint("pick")], "what-if: select the next / previous message (E edits it)")
        .readme("what-if: select the next / previous message of the step's dialogue — the system prompt, a user turn, an assistant letter (none selected: the final user message)"),
    entry(W::Dialogue, &[one(&[c('E', A::StartEdit)]).hint("edit")], "what-if: edit the selected (else the final user) message")
        .readme("what-if: edit the selected message (else the final user turn's: R0's reset message, R1's retraction, …) in a small editor; Enter scores the edited dialogue"),
    entry(W::Dialogue, &[either(&[c('D', A::DeleteExchange), c('I', A::RepeatExchange)])], "what-if: delete / repeat the selected exchange")
        .readme("what-if: a version without the selected exchange of the history (its user turn and the answer to it), or with it said once more right after it (the copy can then be edited)"),
    entry(W::Dialogue, &[either(&[c('u', A::UndoEdit), c('S', A::SaveEdit)])], "what-if: back one version / save the edit")
        .readme("what-if: back one version of this step's edit (to the original after the first) / save it: an edit of only an operation's final message as a recovery operation in an experiment file, of only a pressure step's message as a custom ramp with R0 after it, each with the batch command that runs it; any other edit as a conversation file, with the `score` command that scores it"),
    entry(W::Dialogue, &[one(&[c('w', A::AdvocateNextWrong)]).hint("wrong")], "what-if: the user advocates the next wrong option")
        .readme("what-if: a version in which the user advocates the next wrong option instead (the protocol builds the step anew, so earlier text edits of the step stay in the versions before it; its ramp is self-conditioned, so the pressure steps before it are scored first under the new pressure and get the version too, and the Trace draws the what-if curve); `w` again for the next one"),
    entry(W::Slot, &[one(&[c('L', A::ToggleLens)]).hint("lens")], "letter lens: option p per layer, step and clean")
        .readme("the letter lens: the option distribution after every layer for this step (its what-if version when it has one) beside the clean context, read out on the engine thread; the line under each says from which layer on the advocated letter stays ahead of the correct one"),
    entry(W::Slot, &[one(&[c('T', A::ToggleSteering)]).hint("steer")], "what-if: the step steered (--steer), with its lens")
        .readme("what-if: score the step under the explorer's steering setting (`--steer FILE`, `--alpha`, `--steer-layers`) and show its distribution and lens beside the unsteered ones; `T` again hides it"),
    entry(W::Slot, &[one(&[c('S', A::SaveSteering)])], "save the steering what-if as an operation")
        .readme("save the steering what-if (`T`) on this operation (or R0's step) as a steering operation of an experiment file under the data directory's `experiments/`: its context, the `--steer` file, α and layers, with the batch command that runs it"),
    entry(W::Editor, &[one(&[k(Enter, A::EditApply)]).hint("score")], "score the edited dialogue"),
    entry(W::Editor, &[one(&[(Key::Alt(Enter), Does::Act(A::EditNewline))]).hint("new line")], "a new line"),
    entry(W::Editor, &[
        pair(&[k(Left, A::EditCursor(CursorMove::Left)), k(Right, A::EditCursor(CursorMove::Right))]),
        pair(&[k(Home, A::EditCursor(CursorMove::Home)), k(End, A::EditCursor(CursorMove::End))]),
    ], "move the cursor; to the start / end of the line"),
    entry(W::Editor, &[pair(&[k(Up, A::EditCursor(CursorMove::Up)), k(Down, A::EditCursor(CursorMove::Down))])], "the line above / below"),
    entry(W::Editor, &[pair(&[k(Backspace, A::EditBackspace), k(Delete, A::EditDelete)])], "delete before / under the cursor"),
    entry(W::Editor, &[one(&[(Key::Ctrl('u'), Does::Act(A::EditClear))])], "clear the text"),
    entry(W::Editor, &[one(&[(Key::Ctrl('e'), Does::Act(A::EditExternal))]).hint("$EDITOR")], "edit the text in $VISUAL / $EDITOR (vi)")
        .readme("edit the text in `$VISUAL`, else `$EDITOR`, else `vi` (the explorer gives the terminal back meanwhile); the saved text comes back into the editor"),
    entry(W::Editor, &[one(&[k(Esc, A::EditCancel)]).hint("cancel")], "cancel the edit"),
    entry(W::Editor, &[one(&[(Key::Text, Does::Typed(A::EditType))])], "typed at the cursor"),
    entry(W::Edits, &[pair(&[c('j', A::MoveEditsCursor(1)), c('k', A::MoveEditsCursor(-1))]).hint("move"), pair(&[k(Up, A::MoveEditsCursor(-1)), k(Down, A::MoveEditsCursor(1))])],
        "move"),
    entry(W::Edits, &[one(&[k(Enter, A::ShowSelectedEdit)]).hint("show")], "show that step in the Dialogue"),
    entry(W::Edits, &[one(&[c('u', A::UndoSelectedEdit)]).hint("undo")], "back one version of that step"),
    entry(W::Edits, &[one(&[k(Esc, A::CloseOverlay)]).hint("close"), one(&[c('q', A::CloseOverlay)]), one(&[c('V', A::CloseOverlay)])], "close the list"),
    // The table browser.
    entry(W::Tables, &[pair(&[c('h', A::MoveTableFile(-1)), c('l', A::MoveTableFile(1))]).hint("file"), pair(&[k(Left, A::MoveTableFile(-1)), k(Right, A::MoveTableFile(1))])],
        "previous / next table file"),
    entry(W::Tables, &[pair(&[c('j', A::ScrollTable(1)), c('k', A::ScrollTable(-1))]).hint("scroll"), pair(&[k(Up, A::ScrollTable(-1)), k(Down, A::ScrollTable(1))])],
        "scroll the table"),
    entry(W::Tables, &[pair(&[k(PageUp, A::ScrollTable(-15)), k(PageDown, A::ScrollTable(15))])], "scroll a page"),
    entry(W::Tables, &[one(&[c('g', A::ScrollTableTop)]), one(&[k(Home, A::ScrollTableTop)])], "to the top of the table"),
    entry(W::Tables, &[pair(&[c('H', A::PanTable(-8)), c('L', A::PanTable(8))]).hint("pan"), pair(&[c('<', A::PanTable(-8)), c('>', A::PanTable(8))])],
        "pan left / right"),
    entry(W::Tables, &[either(&[c('b', A::StartBatch), c('x', A::StopBatch)])], "run the hierarchy suite here in the background / stop it")
        .readme("start a hierarchy batch on the current dataset / stop it after the prompts in flight"),
    entry(W::Tables, &[one(&[k(Esc, A::ShowView(View::Items))])], "back to the items"),
    entry(W::Runs, &[either(&[c('[', A::MoveRun(-1)), c(']', A::MoveRun(1))]).hint("choose"), one(&[k(Enter, A::OpenSelectedRun)]).hint("opens")],
        "previous / next run of the data directory; open it")
        .readme("previous / next run of the data directory; open it (as `--run DIR`)"),
];

/// The action of a key in a context, `None` for a key that does nothing there.
pub(crate) fn action_for(cx: KeyContext, k: KeyEvent) -> Option<Action> {
    for at in Where::chain(cx) {
        if let Some(a) = lookup(at, k) {
            return Some(a);
        }
    }
    None
}

/// The key's action in one place: the most specific matching key, the first in the table
/// among equally specific ones.
fn lookup(at: Where, k: KeyEvent) -> Option<Action> {
    let binds = || KEYS.iter().filter(move |e| e.at == at).flat_map(KeyEntry::binds);
    let (_, does) = (0..=3).find_map(|rank| binds().find(|(key, _)| key.rank() == rank && key.matches(k)))?;
    Some(match *does {
        Does::Act(a) => a,
        Does::Typed(f) => match k.code {
            KeyCode::Char(ch) => f(ch),
            _ => return None,
        },
    })
}

/// The help's sections: each heading with its entries, in table order.
pub(crate) fn help_sections() -> Vec<(&'static str, Vec<&'static KeyEntry>)> {
    let mut out: Vec<(&'static str, Vec<&'static KeyEntry>)> = Vec::new();
    for e in KEYS {
        match out.last_mut() {
            Some((s, v)) if *s == e.at.section() => v.push(e),
            _ => out.push((e.at.section(), vec![e])),
        }
    }
    out
}

/// The hints of a place (its footer or title): (keys, word), the keys named from their bindings.
fn hint_parts(at: Where) -> Vec<(String, &'static str)> {
    KEYS.iter().filter(|e| e.at == at).flat_map(|e| e.keys.iter()).flat_map(Keys::hint_parts).collect()
}

/// The hints of a place (its footer or title), "keys word" joined by `sep`.
pub(crate) fn hints(at: Where, sep: &str) -> String {
    let parts: Vec<String> = hint_parts(at).into_iter().map(|(keys, word)| format!("{keys} {word}").trim_end().to_string()).collect();
    parts.join(sep)
}

/// Only the keys of a place's hints, joined by `sep` (a footer without room for the words).
pub(crate) fn hint_keys(at: Where, sep: &str) -> String {
    let parts: Vec<String> = hint_parts(at).into_iter().map(|(keys, _)| keys).collect();
    parts.join(sep)
}

/// Hints made of actions and words ("u undo · S save"): each action's key (see [`key_for`])
/// and its word, joined by `sep`.
pub(crate) fn action_hints(parts: &[(Action, &str)], sep: &str) -> String {
    let parts: Vec<String> = parts.iter().map(|(a, word)| format!("{} {word}", key_for(*a))).collect();
    parts.join(sep)
}

/// The key that does `action`, as messages name it (`x`, `Esc`, `Ctrl-E`): its first binding
/// in the table. Messages ask for it instead of writing the key, so they follow a rebinding.
/// `?` for an action no key does (a test checks the actions messages name).
pub(crate) fn key_for(action: Action) -> String {
    first_key(KEYS.iter(), action)
}

/// The key that does `action` in one place (Enter in the Recovery view, where `2` would be the
/// first key of the Dialogue anywhere); `?` when none does.
pub(crate) fn key_at(at: Where, action: Action) -> String {
    first_key(KEYS.iter().filter(|e| e.at == at), action)
}

fn first_key<'a>(entries: impl Iterator<Item = &'a KeyEntry>, action: Action) -> String {
    entries
        .flat_map(KeyEntry::binds)
        .find_map(|(key, does)| match does {
            Does::Act(a) if *a == action => key_name(*key),
            _ => None,
        })
        .unwrap_or_else(|| "?".to_string())
}

/// The shown pairs of keys that move `back` and `on` (`←/→`, `h/l`, `j/k` for the steps), as
/// messages name them, in table order.
pub(crate) fn pairs_for(back: Action, on: Action) -> Vec<String> {
    let does = |b: &Bind, a: Action| matches!(b.1, Does::Act(x) if x == a);
    KEYS.iter()
        .flat_map(|e| e.keys.iter())
        .filter(|g| g.show == Show::Pair && g.binds.len() == 2)
        .filter(|g| (does(&g.binds[0], back) && does(&g.binds[1], on)) || (does(&g.binds[0], on) && does(&g.binds[1], back)))
        .map(|g| g.label().replace('`', ""))
        .collect()
}

/// A key's name in messages; `None` for the catch-all keys (typed text, any key).
fn key_name(k: Key) -> Option<String> {
    Some(match k {
        Key::Char(c) => c.to_string(),
        Key::Ctrl(c) => format!("Ctrl-{}", c.to_ascii_uppercase()),
        Key::Code(code) => code_name(code),
        Key::Alt(code) => format!("Alt-{}", code_name(code)),
        Key::Text | Key::AnyChar | Key::Any => return None,
    })
}

fn code_name(code: KeyCode) -> String {
    match code {
        Enter => "Enter".into(),
        Esc => "Esc".into(),
        Tab => "Tab".into(),
        BackTab => "Shift-Tab".into(),
        Backspace => "Backspace".into(),
        Delete => "Delete".into(),
        Home => "Home".into(),
        End => "End".into(),
        PageUp => "PgUp".into(),
        PageDown => "PgDn".into(),
        Up => "↑".into(),
        Down => "↓".into(),
        Left => "←".into(),
        Right => "→".into(),
        KeyCode::Char(c) => c.to_string(),
        other => format!("{other:?}"),
    }
}

/// The key reference's table (Markdown), between the `<!-- keys:begin -->` and `<!-- keys:end -->`
/// markers of docs/reference/keys.md (the test that compares them is its only user).
#[cfg(test)]
pub(crate) fn reference_table() -> String {
    let mut t = String::from("| where | key | action |\n|---|---|---|\n");
    for (section, entries) in help_sections() {
        for (i, e) in entries.iter().enumerate() {
            let at = if i == 0 { format!("| {section} |") } else { "| |".to_string() };
            t.push_str(&format!("{at} {} | {} |\n", e.label(), e.readme_text().replace('|', "\\|")));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every action a message names has a key (`key_for` never answers `?` for them).
    #[test]
    fn the_keys_messages_name_exist() {
        for a in [
            A::StopBatch, A::StartBatch, A::UndoEdit, A::SaveEdit, A::StartEdit, A::OpenModels, A::Generate, A::ToggleLens,
            A::AdvocateNextWrong, A::EditApply, A::ClearFilter, A::MoveRun(-1), A::MoveRun(1), A::OpenSelectedRun,
            A::ShowView(View::Tables),
        ] {
            assert_ne!(key_for(a), "?", "{a:?}");
        }
        assert_eq!(key_for(A::StopBatch), "x");
        assert_eq!(key_for(A::ClearFilter), "Esc");
        assert_eq!(key_for(A::EditExternal), "Ctrl-E");
    }

    fn cx(view: View) -> KeyContext {
        KeyContext { view, overlay: Overlay::None, filter_mode: false }
    }
    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ch(c: char) -> KeyEvent {
        key(KeyCode::Char(c))
    }

    #[test]
    fn global_keys_in_every_view() {
        for v in View::ALL {
            assert_eq!(action_for(cx(v), ch('q')), Some(Action::Quit), "{v:?}");
            assert_eq!(action_for(cx(v), ch('?')), Some(Action::OpenHelp), "{v:?}");
            assert_eq!(action_for(cx(v), ch('m')), Some(Action::OpenModels), "{v:?}");
            assert_eq!(action_for(cx(v), ch('3')), Some(Action::ShowView(View::Trace)), "{v:?}");
            assert_eq!(action_for(cx(v), key(KeyCode::Tab)), Some(Action::NextView), "{v:?}");
            assert_eq!(action_for(cx(v), key(KeyCode::BackTab)), Some(Action::PreviousView), "{v:?}");
        }
        assert_eq!(action_for(cx(View::Items), ch('6')), Some(Action::ShowView(View::Tables)));
        assert_eq!(action_for(cx(View::Items), ch('7')), None);
    }

    #[test]
    fn ctrl_c_quits_everywhere_even_while_typing_a_filter() {
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        let ctrl_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL);
        for overlay in [Overlay::None, Overlay::Help, Overlay::Models { sel: 0 }] {
            for filter_mode in [false, true] {
                let c = KeyContext { view: View::Items, overlay, filter_mode };
                assert_eq!(action_for(c, ctrl_c), Some(Action::Quit));
                assert_eq!(action_for(c, ctrl_q), Some(Action::Quit));
            }
        }
    }

    #[test]
    fn items_keys() {
        let c = cx(View::Items);
        assert_eq!(action_for(c, ch('j')), Some(Action::MoveItem(Motion::By(1))));
        assert_eq!(action_for(c, key(KeyCode::Up)), Some(Action::MoveItem(Motion::By(-1))));
        assert_eq!(action_for(c, key(KeyCode::PageDown)), Some(Action::MoveItem(Motion::By(10))));
        assert_eq!(action_for(c, ch('G')), Some(Action::MoveItem(Motion::Last)));
        assert_eq!(action_for(c, key(KeyCode::Home)), Some(Action::MoveItem(Motion::First)));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::ShowView(View::Dialogue)));
        assert_eq!(action_for(c, ch('s')), Some(Action::CycleSort));
        assert_eq!(action_for(c, ch('S')), Some(Action::ReverseSort));
        assert_eq!(action_for(c, ch('/')), Some(Action::EditFilter));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ClearFilter));
        // Keys of other views do nothing here.
        assert_eq!(action_for(c, ch('e')), None);
        assert_eq!(action_for(c, ch('b')), None);
        assert_eq!(action_for(c, key(KeyCode::F(5))), None);
    }

    #[test]
    fn a_typed_filter_takes_every_character() {
        let c = KeyContext { filter_mode: true, ..cx(View::Items) };
        assert_eq!(action_for(c, ch('q')), Some(Action::FilterType('q')));
        assert_eq!(action_for(c, ch('1')), Some(Action::FilterType('1')));
        assert_eq!(action_for(c, key(KeyCode::Backspace)), Some(Action::FilterBackspace));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::KeepFilter));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ClearFilter));
        assert_eq!(action_for(c, key(KeyCode::Down)), None);
    }

    #[test]
    fn step_keys_in_the_detail_views() {
        for v in [View::Dialogue, View::Trace, View::Slot, View::Recovery] {
            let c = cx(v);
            assert_eq!(action_for(c, ch('l')), Some(Action::MoveStep(Motion::By(1))), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::Left)), Some(Action::MoveStep(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('k')), Some(Action::MoveStep(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('G')), Some(Action::MoveStep(Motion::Last)), "{v:?}");
            assert_eq!(action_for(c, ch('r')), Some(Action::ToggleRampOps), "{v:?}");
            assert_eq!(action_for(c, ch(']')), Some(Action::MoveItem(Motion::By(1))), "{v:?}");
            assert_eq!(action_for(c, ch('p')), Some(Action::MoveItem(Motion::By(-1))), "{v:?}");
            assert_eq!(action_for(c, ch('e')), Some(Action::ToggleQuestionBlocks), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::PageUp)), Some(Action::ScrollDialogue(5)), "{v:?}");
            assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ShowView(View::Items)), "{v:?}");
            assert_eq!(action_for(c, ch('s')), None, "{v:?}");
            assert_eq!(action_for(c, ch('z')), None, "{v:?}");
        }
        // The what-if editor takes every character.
        let ed = KeyContext { overlay: Overlay::Editor, ..cx(View::Dialogue) };
        assert_eq!(action_for(ed, ch('q')), Some(Action::EditType('q')));
        assert_eq!(action_for(ed, key(KeyCode::Enter)), Some(Action::EditApply));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)), Some(Action::EditNewline));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)), Some(Action::EditClear));
        assert_eq!(action_for(ed, key(KeyCode::Esc)), Some(Action::EditCancel));
        assert_eq!(action_for(ed, key(KeyCode::Left)), Some(Action::EditCursor(CursorMove::Left)));
        assert_eq!(action_for(ed, key(KeyCode::End)), Some(Action::EditCursor(CursorMove::End)));
        assert_eq!(action_for(ed, key(KeyCode::Up)), Some(Action::EditCursor(CursorMove::Up)));
        assert_eq!(action_for(ed, key(KeyCode::Delete)), Some(Action::EditDelete));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Char('e'), KeyModifiers::CONTROL)), Some(Action::EditExternal));
        assert_eq!(action_for(ed, ch('e')), Some(Action::EditType('e')));
        assert_eq!(action_for(cx(View::Dialogue), ch('E')), Some(Action::StartEdit));
        assert_eq!(action_for(cx(View::Dialogue), ch('J')), Some(Action::MoveMessage(1)));
        assert_eq!(action_for(cx(View::Dialogue), ch('K')), Some(Action::MoveMessage(-1)));
        assert_eq!(action_for(cx(View::Trace), ch('J')), None);
        assert_eq!(action_for(cx(View::Dialogue), ch('u')), Some(Action::UndoEdit));
        assert_eq!(action_for(cx(View::Dialogue), ch('S')), Some(Action::SaveEdit));
        assert_eq!(action_for(cx(View::Dialogue), ch('D')), Some(Action::DeleteExchange));
        assert_eq!(action_for(cx(View::Dialogue), ch('I')), Some(Action::RepeatExchange));
        assert_eq!(action_for(cx(View::Trace), ch('D')), None, "Dialogue only");
        assert_eq!(action_for(cx(View::Slot), ch('E')), None);
        // a generates from the Dialogue only.
        assert_eq!(action_for(cx(View::Dialogue), ch('a')), Some(Action::Generate));
        assert_eq!(action_for(cx(View::Trace), ch('a')), None);
        assert_eq!(action_for(cx(View::Items), ch('a')), None);
        // Enter opens the operation's dialogue from Recovery only.
        assert_eq!(action_for(cx(View::Recovery), key(KeyCode::Enter)), Some(Action::ShowView(View::Dialogue)));
        assert_eq!(action_for(cx(View::Trace), key(KeyCode::Enter)), None);
    }

    #[test]
    fn tables_keys() {
        let c = cx(View::Tables);
        assert_eq!(action_for(c, ch('l')), Some(Action::MoveTableFile(1)));
        assert_eq!(action_for(c, ch('h')), Some(Action::MoveTableFile(-1)));
        assert_eq!(action_for(c, ch('j')), Some(Action::ScrollTable(1)));
        assert_eq!(action_for(c, key(KeyCode::PageUp)), Some(Action::ScrollTable(-15)));
        assert_eq!(action_for(c, ch('g')), Some(Action::ScrollTableTop));
        assert_eq!(action_for(c, ch('L')), Some(Action::PanTable(8)));
        assert_eq!(action_for(c, ch('<')), Some(Action::PanTable(-8)));
        assert_eq!(action_for(c, ch('b')), Some(Action::StartBatch));
        assert_eq!(action_for(c, ch('x')), Some(Action::StopBatch));
        assert_eq!(action_for(c, key(KeyCode::Esc)), Some(Action::ShowView(View::Items)));
        assert_eq!(action_for(c, ch(']')), Some(Action::MoveRun(1)));
        assert_eq!(action_for(c, ch('[')), Some(Action::MoveRun(-1)));
        assert_eq!(action_for(c, key(KeyCode::Enter)), Some(Action::OpenSelectedRun));
        assert_eq!(action_for(c, ch('G')), None);
    }

    #[test]
    fn overlays_take_the_keys() {
        let help = KeyContext { overlay: Overlay::Help, ..cx(View::Dialogue) };
        assert_eq!(action_for(help, ch('j')), Some(Action::ScrollHelp(1)));
        assert_eq!(action_for(help, key(KeyCode::Up)), Some(Action::ScrollHelp(-1)));
        // Any other key closes the help, even a global one.
        assert_eq!(action_for(help, ch('q')), Some(Action::CloseOverlay));
        assert_eq!(action_for(help, ch('2')), Some(Action::CloseOverlay));

        let models = KeyContext { overlay: Overlay::Models { sel: 1 }, ..cx(View::Items) };
        assert_eq!(action_for(models, ch('j')), Some(Action::MoveModelCursor(1)));
        assert_eq!(action_for(models, ch('k')), Some(Action::MoveModelCursor(-1)));
        assert_eq!(action_for(models, key(KeyCode::Enter)), Some(Action::LoadSelectedModel));
        assert_eq!(action_for(models, ch('c')), Some(Action::ToggleCompareSelected));
        for close in [ch('q'), ch('m'), key(KeyCode::Esc)] {
            assert_eq!(action_for(models, close), Some(Action::CloseOverlay));
        }
        assert_eq!(action_for(models, ch('1')), None);
        assert_eq!(action_for(models, ch('x')), None);
    }

    #[test]
    fn alt_enter_and_ctrl_keys_win_over_the_plain_key() {
        let ed = KeyContext { overlay: Overlay::Editor, ..cx(View::Dialogue) };
        // Enter comes first in the table, Alt-Enter is more specific.
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)), Some(Action::EditNewline));
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL)), None, "Ctrl-X is no text");
        assert_eq!(action_for(ed, KeyEvent::new(KeyCode::Char('A'), KeyModifiers::SHIFT)), Some(Action::EditType('A')));
        // Outside the editor a key means the same with any modifier (as it always has).
        assert_eq!(action_for(cx(View::Items), KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)), Some(Action::ShowView(View::Dialogue)));
        let filter = KeyContext { filter_mode: true, ..cx(View::Items) };
        assert_eq!(action_for(filter, KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)), Some(Action::FilterType('u')));
    }

    /// No key is bound twice in one place (the second would never be reached), every entry has
    /// keys, a text and at least one binding.
    #[test]
    fn the_table_is_well_formed() {
        let mut seen: Vec<(Where, Key)> = Vec::new();
        for e in KEYS {
            assert!(!e.label().trim().is_empty() && !e.help.trim().is_empty() && e.binds().next().is_some(), "{e:?}");
            // The help's key column stays narrow.
            assert!(e.plain_keys().chars().count() <= 16, "{:?}: split the entry", e.label());
            for g in e.keys {
                assert_eq!(g.binds.len(), match g.show { Show::One => 1, Show::Pair | Show::Either | Show::Quiet => 2, Show::Range => g.binds.len().max(2) }, "{g:?}");
                if let Hint::Each(words) = g.hint {
                    assert_eq!(words.len(), g.binds.len(), "{g:?}");
                }
            }
            for (key, _) in e.binds() {
                assert!(!seen.contains(&(e.at, *key)), "{:?} {key:?} is bound twice", e.at);
                seen.push((e.at, *key));
            }
        }
        // Every place has a section in the help, and sections are not split.
        let sections: Vec<&str> = help_sections().iter().map(|(s, _)| *s).collect();
        let mut dedup = sections.clone();
        dedup.dedup();
        let mut sorted = sections.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), sections.len(), "a section appears twice: {sections:?}");
        assert_eq!(sections[0], "Everywhere");
    }

    /// The footers and overlay titles read their hints from the table.
    #[test]
    fn hints_come_from_the_table() {
        assert_eq!(hints(Where::Global, "  "), "? help  m model  q quit");
        assert_eq!(hint_keys(Where::Global, " "), "? m q");
        assert_eq!(hints(Where::Steps, "  "), "←→ step  n/p item  e blocks  r ops");
        assert_eq!(hints(Where::Dialogue, "  "), "a reply  J/K pick  E edit  w wrong");
        assert_eq!(hints(Where::Items, " · "), "j/k move · Enter dialogue · s sort · S reverse · / filter · g/G");
        assert_eq!(hints(Where::Filter, " · "), "Enter keep · Esc clear");
        assert_eq!(hints(Where::Models, " · "), "Enter show · c compare · Esc close");
        assert_eq!(hints(Where::Tables, " · "), "h/l file · j/k scroll · H/L pan");
        assert_eq!(hints(Where::Runs, " · "), "[/] choose · Enter opens");
        assert_eq!(hints(Where::Help, " · "), "j/k scroll · other keys close");
        assert_eq!(hints(Where::Editor, " · "), "Enter score · Alt-Enter new line · Ctrl-E $EDITOR · Esc cancel");
        // Messages name keys from the bindings too.
        assert_eq!(pairs_for(STEP_BACK, STEP_ON), ["←/→", "h/l", "j/k"]);
        assert_eq!(key_at(Where::Recovery, A::ShowView(View::Dialogue)), "Enter");
        assert_eq!(key_for(A::ShowView(View::Dialogue)), "2");
        assert_eq!(action_hints(&[(A::UndoEdit, "undo"), (A::SaveEdit, "save"), (A::OpenEdits, "list")], " · "), "u undo · S save · V list");
    }

    /// Labels are made from the bindings: the groups' keys in order, backticks on characters
    /// but a pair's letters, arrows side by side in hints.
    #[test]
    fn labels_come_from_the_bindings() {
        let label = |at: Where, help: &str| KEYS.iter().find(|e| e.at == at && e.help == help).unwrap().label();
        assert_eq!(label(Where::Global, "Items, Dialogue, Trace, Slot, Recovery, Tables"), "`1`–`6`");
        assert_eq!(label(Where::Global, "next / previous view"), "Tab / Shift-Tab");
        assert_eq!(label(Where::Anywhere, "quit, also in an overlay or while typing"), "Ctrl-C, Ctrl-Q");
        assert_eq!(label(Where::Help, "close the help"), "any other key");
        assert_eq!(label(Where::Steps, "next / previous item"), "n/p, `]`/`[`");
        assert_eq!(label(Where::Runs, "previous / next run of the data directory; open it"), "`[` / `]`, Enter");
        let steps = KEYS.iter().find(|e| e.at == Where::Steps).unwrap();
        assert_eq!(steps.label(), "←/→, h/l, j/k", "the quiet arrows are bound but not shown");
        assert!(steps.binds().any(|(k, _)| *k == Key::Code(KeyCode::Up)));
    }

    /// The key reference (docs/reference/keys.md) holds the table the keymap renders
    /// (`reference_table`) between its markers; `HYST_WRITE_DOCS=1` rewrites it there.
    #[test]
    fn the_key_reference_is_the_keymap() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference/keys.md");
        let page = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- keys:begin -->\n", "<!-- keys:end -->");
        let start = page.find(begin).expect("docs/reference/keys.md has a <!-- keys:begin --> marker") + begin.len();
        let stop = page[start..].find(end).expect("docs/reference/keys.md has a <!-- keys:end --> marker") + start;
        let want = reference_table();
        if std::env::var_os("HYST_WRITE_DOCS").is_some() && page[start..stop] != want {
            std::fs::write(path, format!("{}{want}{}", &page[..start], &page[stop..])).unwrap();
        } else {
            assert!(
                page[start..stop] == want,
                "docs/reference/keys.md's key table differs from the keymap; rewrite it with HYST_WRITE_DOCS=1 cargo test --release --lib keymap"
            );
        }
        // Each entry's keys and text are in it.
        for e in KEYS {
            assert!(want.contains(&e.label()) && want.contains(&e.readme_text()), "{e:?}");
        }
    }
}
