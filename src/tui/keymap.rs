//! Keys → [`Action`]s, as data: [`KEYS`] is the one table of every key — where it works, the
//! keys, what they do, and the text the help overlay, the footers and the README's key table
//! show for it. [`action_for`] looks keys up in it; the help overlay
//! ([`help_sections`]), the footer hints ([`hints`]) and the README's table (`readme_table`, in test builds,
//! checked against README.md by a test) are rendered from it. The keymap only reads where the
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
    Tables,
    /// The Tables view's Runs pane.
    Runs,
}

impl Where {
    /// The heading of the help section and the README table's "where".
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
                    View::Trace | View::Slot => v.push(Where::Steps),
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

/// One row of the key table: the keys of one line of the help.
#[derive(Debug)]
pub(crate) struct KeyEntry {
    pub(crate) at: Where,
    /// The keys as the help and the README show them (Markdown: `code` spans; the help drops the
    /// backticks).
    pub(crate) keys: &'static str,
    pub(crate) binds: &'static [Bind],
    /// The help overlay's line.
    pub(crate) help: &'static str,
    /// The README's wording, when it says more than the help ("" = the help's); read only by
    /// the test that renders the README's table.
    #[cfg(test)]
    pub(crate) readme: &'static str,
    /// The short hints of the place's footer or title: (keys, word).
    pub(crate) hints: &'static [(&'static str, &'static str)],
}

impl KeyEntry {
    /// The keys without Markdown.
    pub(crate) fn plain_keys(&self) -> String {
        self.keys.replace('`', "")
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
const fn entry(at: Where, keys: &'static str, binds: &'static [Bind], help: &'static str) -> KeyEntry {
    KeyEntry {
        at,
        keys,
        binds,
        help,
        #[cfg(test)]
        readme: "",
        hints: &[],
    }
}
impl KeyEntry {
    /// The README's wording of the entry (kept by test builds only: see `readme_table`).
    #[cfg(test)]
    const fn readme(self, text: &'static str) -> KeyEntry {
        KeyEntry { readme: text, ..self }
    }
    #[cfg(not(test))]
    const fn readme(self, _text: &'static str) -> KeyEntry {
        self
    }
    const fn hints(self, hints: &'static [(&'static str, &'static str)]) -> KeyEntry {
        KeyEntry { hints, ..self }
    }
}

use Action as A;
use KeyCode::{BackTab, Backspace, Delete, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up};
use Where as W;

const STEP_BACK: Action = A::MoveStep(Motion::By(-1));
const STEP_ON: Action = A::MoveStep(Motion::By(1));

/// Every key, in the order the help and the README list them.
pub(crate) static KEYS: &[KeyEntry] = &[
    // Everywhere.
    entry(W::Global, "`1`–`6`", &[
        c('1', A::ShowView(View::Items)), c('2', A::ShowView(View::Dialogue)), c('3', A::ShowView(View::Trace)),
        c('4', A::ShowView(View::Slot)), c('5', A::ShowView(View::Recovery)), c('6', A::ShowView(View::Tables)),
    ], "Items, Dialogue, Trace, Slot, Recovery, Tables"),
    entry(W::Global, "Tab / Shift-Tab", &[k(Tab, A::NextView), k(BackTab, A::PreviousView)], "next / previous view"),
    entry(W::Global, "`?`", &[c('?', A::OpenHelp)], "this help (j/k scroll, any other key closes it)")
        .readme("help (j/k scroll, any other key closes)")
        .hints(&[("?", "help")]),
    entry(W::Global, "`m`", &[c('m', A::OpenModels)], "model switcher: Enter shows a model, c compares one")
        .readme("model switcher: j/k move, Enter shows the model (loads in the background), `c` compares it / stops comparing it, Esc closes")
        .hints(&[("m", "model")]),
    entry(W::Global, "`q`", &[c('q', A::Quit)], "quit (immediately, even while scoring)")
        .readme("quit at once, even while scoring")
        .hints(&[("q", "quit")]),
    entry(W::Anywhere, "Ctrl-C, Ctrl-Q", &[(Key::Ctrl('c'), Does::Act(A::Quit)), (Key::Ctrl('q'), Does::Act(A::Quit))],
        "quit, also in an overlay or while typing"),
    // The help and the model switcher.
    entry(W::Help, "j/k, ↑/↓", &[k(Down, A::ScrollHelp(1)), c('j', A::ScrollHelp(1)), k(Up, A::ScrollHelp(-1)), c('k', A::ScrollHelp(-1))],
        "scroll the help")
        .hints(&[("j/k", "scroll")]),
    entry(W::Help, "any other key", &[(Key::Any, Does::Act(A::CloseOverlay))], "close the help")
        .hints(&[("other keys", "close")]),
    entry(W::Models, "j/k, ↑/↓", &[k(Down, A::MoveModelCursor(1)), c('j', A::MoveModelCursor(1)), k(Up, A::MoveModelCursor(-1)), c('k', A::MoveModelCursor(-1))],
        "move"),
    entry(W::Models, "Enter", &[k(Enter, A::LoadSelectedModel)], "show this model (loads in the background)")
        .hints(&[("Enter", "show")]),
    entry(W::Models, "`c`", &[c('c', A::ToggleCompareSelected)], "compare this model with the shown one, or stop comparing it")
        .hints(&[("c", "compare")]),
    entry(W::Models, "Esc, `q`, `m`", &[k(Esc, A::CloseOverlay), c('q', A::CloseOverlay), c('m', A::CloseOverlay)], "close the switcher")
        .hints(&[("Esc", "close")]),
    // Items.
    entry(W::Items, "j/k, ↑/↓", &[
        k(Down, A::MoveItem(Motion::By(1))), c('j', A::MoveItem(Motion::By(1))),
        k(Up, A::MoveItem(Motion::By(-1))), c('k', A::MoveItem(Motion::By(-1))),
    ], "move (the selected item is scored first)")
        .hints(&[("j/k", "move")]),
    entry(W::Items, "Enter", &[k(Enter, A::ShowView(View::Dialogue))], "open the item's dialogue")
        .hints(&[("Enter", "dialogue")]),
    entry(W::Items, "`s` / `S`", &[c('s', A::CycleSort), c('S', A::ReverseSort)],
        "cycle the sort column (compared models' gaps too) / reverse")
        .readme("cycle the sort column (#, clean p(w), R0 p(w), gap, each compared model's gap, WF, id) / reverse it")
        .hints(&[("s", "sort"), ("S", "reverse")]),
    entry(W::Items, "`/`", &[c('/', A::EditFilter)], "filter on id and question (Enter keeps it, Esc clears it)")
        .readme("filter: keeps the items whose id or question text contains the typed text, ignoring case (Enter keeps it, Esc clears it)")
        .hints(&[("/", "filter")]),
    entry(W::Items, "g/G, Home/End", &[
        c('g', A::MoveItem(Motion::First)), k(Home, A::MoveItem(Motion::First)),
        c('G', A::MoveItem(Motion::Last)), k(End, A::MoveItem(Motion::Last)),
    ], "top / bottom")
        .hints(&[("g/G", "")]),
    entry(W::Items, "PgUp/PgDn", &[k(PageUp, A::MoveItem(Motion::By(-10))), k(PageDown, A::MoveItem(Motion::By(10)))], "ten items up / down"),
    entry(W::Items, "Esc", &[k(Esc, A::ClearFilter)], "clear the filter"),
    entry(W::Filter, "Enter", &[k(Enter, A::KeepFilter)], "stop typing, keep the filter").hints(&[("Enter", "keep")]),
    entry(W::Filter, "Esc", &[k(Esc, A::ClearFilter)], "stop typing, clear the filter").hints(&[("Esc", "clear")]),
    entry(W::Filter, "Backspace", &[k(Backspace, A::FilterBackspace)], "delete the last character"),
    entry(W::Filter, "other characters", &[(Key::AnyChar, Does::Typed(A::FilterType))], "typed into the filter"),
    // The detail views.
    entry(W::Steps, "←/→, h/l, j/k", &[
        k(Left, STEP_BACK), c('h', STEP_BACK), k(Up, STEP_BACK), c('k', STEP_BACK),
        k(Right, STEP_ON), c('l', STEP_ON), k(Down, STEP_ON), c('j', STEP_ON),
    ], "previous / next step (ramp steps, then {ops_first}…{ops_last})")
        .readme("previous / next step: the 7 ramp steps, any custom ramp's steps, then the recovery operations (main, appendix, evidence) and experiment operations")
        .hints(&[("←→", "step")]),
    entry(W::Steps, "g/G, Home/End", &[
        c('g', A::MoveStep(Motion::First)), k(Home, A::MoveStep(Motion::First)),
        c('G', A::MoveStep(Motion::Last)), k(End, A::MoveStep(Motion::Last)),
    ], "first / last step"),
    entry(W::Steps, "n/p, `]`/`[`", &[
        c('n', A::MoveItem(Motion::By(1))), c(']', A::MoveItem(Motion::By(1))),
        c('p', A::MoveItem(Motion::By(-1))), c('[', A::MoveItem(Motion::By(-1))),
    ], "next / previous item")
        .hints(&[("n/p", "item")]),
    entry(W::Steps, "`e`", &[c('e', A::ToggleQuestionBlocks)], "expand / collapse the repeated question blocks")
        .hints(&[("e", "blocks")]),
    entry(W::Steps, "`r`", &[c('r', A::ToggleRampOps)], "jump between the ramp and the recovery operations")
        .hints(&[("r", "ops")]),
    entry(W::Steps, "PgUp/PgDn", &[k(PageUp, A::ScrollDialogue(5)), k(PageDown, A::ScrollDialogue(-5))], "scroll the conversation"),
    entry(W::Steps, "Esc", &[k(Esc, A::ShowView(View::Items))], "back to the items"),
    entry(W::Steps, "`V`", &[c('V', A::OpenEdits)], "what-if: the list of this item's edits")
        .readme("what-if: the list of this item's edits — each edited step with its number of versions and, of its current version, the option advocated, p(that option) original → edited, what the text edits changed, saved or not"),
    entry(W::Recovery, "Enter", &[k(Enter, A::ShowView(View::Dialogue))], "show the operation's dialogue"),
    entry(W::Dialogue, "`a`", &[c('a', A::Generate)], "what the model would say (greedy); a again stops it")
        .readme("what the model would say: its greedy continuation at the answer slot of this step as shown — its what-if version when it has one (up to 24 tokens, on the engine thread); `a` again while it runs stops it")
        .hints(&[("a", "reply")]),
    entry(W::Dialogue, "J/K", &[c('J', A::MoveMessage(1)), c('K', A::MoveMessage(-1))], "what-if: select the next / previous message (E edits it)")
        .hints(&[("J/K", "pick")])
        .readme("what-if: select the next / previous message of the step's dialogue — the system prompt, a user turn, an assistant letter (none selected: the final user message)"),
    entry(W::Dialogue, "`E`", &[c('E', A::StartEdit)], "what-if: edit the selected (else the final user) message")
        .hints(&[("E", "edit")])
        .readme("what-if: edit the selected message (else the final user turn's: R0's reset message, R1's retraction, …) in a small editor; Enter scores the edited dialogue"),
    entry(W::Dialogue, "`D` / `I`", &[c('D', A::DeleteExchange), c('I', A::RepeatExchange)], "what-if: delete / repeat the selected exchange")
        .readme("what-if: a version without the selected exchange of the history (its user turn and the answer to it), or with it said once more right after it (the copy can then be edited)"),
    entry(W::Dialogue, "`u` / `S`", &[c('u', A::UndoEdit), c('S', A::SaveEdit)], "what-if: back one version / save the edit")
        .readme("what-if: back one version of this step's edit (to the original after the first) / save it: an edit of only an operation's final message as a recovery operation in an experiment file, of only a pressure step's message as a custom ramp with R0 after it, each with the batch command that runs it; any other edit as a conversation file, with the `score` command that scores it"),
    entry(W::Dialogue, "`w`", &[c('w', A::AdvocateNextWrong)], "what-if: the user advocates the next wrong option")
        .hints(&[("w", "wrong")])
        .readme("what-if: a version in which the user advocates the next wrong option instead (the protocol builds the step anew, so earlier text edits of the step stay in the versions before it; its ramp is self-conditioned, so the pressure steps before it are scored first under the new pressure and get the version too, and the Trace draws the what-if curve); `w` again for the next one"),
    entry(W::Editor, "Enter", &[k(Enter, A::EditApply)], "score the edited dialogue").hints(&[("Enter", "score")]),
    entry(W::Editor, "Alt-Enter", &[(Key::Alt(Enter), Does::Act(A::EditNewline))], "a new line").hints(&[("Alt-Enter", "new line")]),
    entry(W::Editor, "←/→, Home/End", &[
        k(Left, A::EditCursor(CursorMove::Left)), k(Right, A::EditCursor(CursorMove::Right)),
        k(Home, A::EditCursor(CursorMove::Home)), k(End, A::EditCursor(CursorMove::End)),
    ], "move the cursor; to the start / end of the line"),
    entry(W::Editor, "↑/↓", &[k(Up, A::EditCursor(CursorMove::Up)), k(Down, A::EditCursor(CursorMove::Down))], "the line above / below"),
    entry(W::Editor, "Backspace/Delete", &[k(Backspace, A::EditBackspace), k(Delete, A::EditDelete)], "delete before / under the cursor"),
    entry(W::Editor, "Ctrl-U", &[(Key::Ctrl('u'), Does::Act(A::EditClear))], "clear the text"),
    entry(W::Editor, "Ctrl-E", &[(Key::Ctrl('e'), Does::Act(A::EditExternal))], "edit the text in $VISUAL / $EDITOR (vi)")
        .readme("edit the text in `$VISUAL`, else `$EDITOR`, else `vi` (the explorer gives the terminal back meanwhile); the saved text comes back into the editor")
        .hints(&[("Ctrl-E", "$EDITOR")]),
    entry(W::Editor, "Esc", &[k(Esc, A::EditCancel)], "cancel the edit").hints(&[("Esc", "cancel")]),
    entry(W::Editor, "other characters", &[(Key::Text, Does::Typed(A::EditType))], "typed at the cursor"),
    entry(W::Edits, "j/k, ↑/↓", &[k(Down, A::MoveEditsCursor(1)), c('j', A::MoveEditsCursor(1)), k(Up, A::MoveEditsCursor(-1)), c('k', A::MoveEditsCursor(-1))],
        "move")
        .hints(&[("j/k", "move")]),
    entry(W::Edits, "Enter", &[k(Enter, A::ShowSelectedEdit)], "show that step in the Dialogue").hints(&[("Enter", "show")]),
    entry(W::Edits, "`u`", &[c('u', A::UndoSelectedEdit)], "back one version of that step").hints(&[("u", "undo")]),
    entry(W::Edits, "Esc, `q`, `V`", &[k(Esc, A::CloseOverlay), c('q', A::CloseOverlay), c('V', A::CloseOverlay)], "close the list")
        .hints(&[("Esc", "close")]),
    // The table browser.
    entry(W::Tables, "h/l, ←/→", &[k(Left, A::MoveTableFile(-1)), c('h', A::MoveTableFile(-1)), k(Right, A::MoveTableFile(1)), c('l', A::MoveTableFile(1))],
        "previous / next table file")
        .hints(&[("h/l", "file")]),
    entry(W::Tables, "j/k, ↑/↓", &[k(Down, A::ScrollTable(1)), c('j', A::ScrollTable(1)), k(Up, A::ScrollTable(-1)), c('k', A::ScrollTable(-1))],
        "scroll the table")
        .hints(&[("j/k", "scroll")]),
    entry(W::Tables, "PgUp/PgDn", &[k(PageDown, A::ScrollTable(15)), k(PageUp, A::ScrollTable(-15))], "scroll a page"),
    entry(W::Tables, "`g`, Home", &[c('g', A::ScrollTableTop), k(Home, A::ScrollTableTop)], "to the top of the table"),
    entry(W::Tables, "H/L, `<`/`>`", &[c('L', A::PanTable(8)), c('>', A::PanTable(8)), c('H', A::PanTable(-8)), c('<', A::PanTable(-8))],
        "pan left / right")
        .hints(&[("H/L", "pan")]),
    entry(W::Tables, "`b` / `x`", &[c('b', A::StartBatch), c('x', A::StopBatch)], "run the hierarchy suite here in the background / stop it")
        .readme("start a hierarchy batch on the current dataset / stop it after the item in flight"),
    entry(W::Tables, "Esc", &[k(Esc, A::ShowView(View::Items))], "back to the items"),
    entry(W::Runs, "`[` / `]`, Enter", &[c('[', A::MoveRun(-1)), c(']', A::MoveRun(1)), k(Enter, A::OpenSelectedRun)],
        "previous / next run of the data directory; open it")
        .readme("previous / next run of the data directory; open it (as `--run DIR`)")
        .hints(&[("[/]", "choose"), ("Enter", "opens")]),
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
    let binds = || KEYS.iter().filter(move |e| e.at == at).flat_map(|e| e.binds.iter());
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

/// The hints of a place (its footer or title), "keys word" joined by `sep`.
pub(crate) fn hints(at: Where, sep: &str) -> String {
    let parts: Vec<String> = KEYS
        .iter()
        .filter(|e| e.at == at)
        .flat_map(|e| e.hints.iter())
        .map(|(keys, word)| format!("{keys} {word}").trim_end().to_string())
        .collect();
    parts.join(sep)
}

/// Only the keys of a place's hints, joined by `sep` (a footer without room for the words).
pub(crate) fn hint_keys(at: Where, sep: &str) -> String {
    let parts: Vec<&str> = KEYS.iter().filter(|e| e.at == at).flat_map(|e| e.hints.iter()).map(|(keys, _)| *keys).collect();
    parts.join(sep)
}

/// The key that does `action`, as messages name it (`x`, `Esc`, `Ctrl-E`): its first binding
/// in the table. Messages ask for it instead of writing the key, so they follow a rebinding.
/// `?` for an action no key does (a test checks the actions messages name).
pub(crate) fn key_for(action: Action) -> String {
    KEYS.iter()
        .flat_map(|e| e.binds.iter())
        .find_map(|(key, does)| match does {
            Does::Act(a) if *a == action => key_name(*key),
            _ => None,
        })
        .unwrap_or_else(|| "?".to_string())
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

/// The README's key table (Markdown), between its `<!-- keys:begin -->` and `<!-- keys:end -->`
/// markers (the test that compares them is its only user).
#[cfg(test)]
pub(crate) fn readme_table() -> String {
    let mut t = String::from("| where | key | action |\n|---|---|---|\n");
    for (section, entries) in help_sections() {
        for (i, e) in entries.iter().enumerate() {
            let at = if i == 0 { format!("| {section} |") } else { "| |".to_string() };
            t.push_str(&format!("{at} {} | {} |\n", e.keys, e.readme_text().replace('|', "\\|")));
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
            A::StopBatch, A::StartBatch, A::UndoEdit, A::SaveEdit, A::StartEdit, A::OpenModels, A::Generate,
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
            assert!(!e.keys.trim().is_empty() && !e.help.trim().is_empty() && !e.binds.is_empty(), "{e:?}");
            // The help's key column stays narrow.
            assert!(e.plain_keys().chars().count() <= 16, "{:?}: split the entry", e.keys);
            for (key, _) in e.binds {
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
    }

    /// The README's key table is the one the keymap renders (`readme_table`): change the table
    /// in keymap.rs, then paste the output of this test's expected text between the markers.
    #[test]
    fn the_readme_key_table_is_the_keymap() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        let (begin, end) = ("<!-- keys:begin -->\n", "<!-- keys:end -->");
        let start = readme.find(begin).expect("README.md has a <!-- keys:begin --> marker") + begin.len();
        let stop = readme[start..].find(end).expect("README.md has a <!-- keys:end --> marker") + start;
        let want = readme_table();
        assert!(
            readme[start..stop] == want,
            "README.md's key table differs from the keymap; put this between the markers:\n{want}"
        );
        // Each entry's keys and text are in it.
        for e in KEYS {
            assert!(want.contains(e.keys) && want.contains(&e.readme_text()), "{e:?}");
        }
    }
}
