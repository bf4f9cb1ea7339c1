//! What-if edits of the Dialogue, all of them: any message of a step's dialogue — the system
//! prompt, a user turn (the text before its question block), an assistant letter — selected
//! (`J`/`K`) and edited in place (`E`, or in `$EDITOR` from the editor), exchanges deleted or
//! repeated (`D`/`I`), another option advocated (`w`); each a new version of the whole dialogue
//! (`u` goes back one), kept per item and step for the session, scored at once on the shown
//! model's engine (its prefix cache evaluates only what follows the first changed token) and
//! shown beside the original; the list of an item's edits (`V`); `S` writes the current version
//! as a recovery operation or custom ramp into an experiment file (the schema of
//! `--experiment FILE`) when only a final message is edited, and otherwise as a conversation
//! file for `hyst-tui score --messages`.
//!
//! [`WhatIf`] is the component: its state (the versions and their scores, the editor, the
//! message cursor, `w` in progress), [`WhatIf::update`] for its actions and [`WhatIf::tick`]
//! once a frame, both reading the rest of the explorer through a [`Cx`] and returning
//! [`Event`]s; the views read it through the accessors at the end.
//!
//! - `edit`: edits of a dialogue as text; `editor`: the editor's text and cursor;
//! - `store`: the versions and their scores; `retarget`: `w`; `save`: `S` and the files it
//!   writes.

mod edit;
mod editor;
mod retarget;
mod save;
mod store;

pub(crate) use editor::Editor;
pub(crate) use store::{EditRow, EditScore, WhatIfCurve, WhatIfShown};

use edit::FinalTurn;
use retarget::Retarget;
use store::{Version, WhatIfs};

use super::action::{Action, CursorMove};
use super::event::Event;
use super::item_list::ItemList;
use super::keymap::key_for;
use super::engines::Engines;
use super::parts::{self, Part};
use super::screen::Overlay;
use crate::data::Selected;
use crate::dialogue::conditions::Registry;
use crate::prompts::PromptSet;
use crate::protocol::{letter, ChatMessage, SlotScore};
use super::engine_slot::EngineState;

/// What the what-if component reads of the rest of the explorer.
pub(crate) struct Cx<'a> {
    pub(crate) items: &'a ItemList,
    pub(crate) engines: &'a Engines,
    pub(crate) prompts: &'a PromptSet,
    /// Every step, in cursor order, and the one shown.
    pub(crate) steps: &'a [Part],
    pub(crate) part: Part,
    pub(crate) overlay: Overlay,
    /// The dataset a saved experiment's batch command runs on.
    pub(crate) dataset_spec: &'a str,
}

impl Cx<'_> {
    fn entry(&self, item: usize) -> Option<&Selected> {
        self.items.entry(item)
    }
    fn current_entry(&self) -> Option<(usize, &Selected)> {
        let i = self.items.current()?;
        Some((i, self.entry(i)?))
    }
    /// The original messages of a step (None while an earlier letter is missing).
    fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.engines.messages(self.prompts, self.entry(item)?, part)
    }
    /// The shown model's score of a step.
    fn score(&self, item: usize, part: Part) -> Option<&SlotScore> {
        self.engines.score_of(self.engines.model_key(), self.entry(item)?, part)
    }
    fn model_key(&self) -> &str {
        self.engines.model_key()
    }
    /// The conditions of the run shown.
    fn reg(&self) -> &'static Registry {
        self.engines.scores().reg()
    }
    fn header(&self) -> &str {
        &self.prompts.question_header
    }
}

/// The what-if component.
#[derive(Default)]
pub(crate) struct WhatIf {
    /// What-if versions and their scores.
    store: WhatIfs,
    /// The editor's text while it is open.
    editor: Editor,
    /// The Dialogue's selected message (`J`/`K`; `None` = the final user message).
    msg_cursor: Option<usize>,
    /// Text waiting to be opened in `$EDITOR` (Ctrl-E in the editor; the event loop does it).
    external_edit: Option<String>,
    /// `w` in progress: the ramp being scored under another advocated option.
    retarget: Option<Retarget>,
    /// The step whose new version the status line says is scoring: once it is scored the line
    /// says so.
    scoring_notice: Option<(usize, Part)>,
}

fn notice(text: impl Into<String>) -> Vec<Event> {
    vec![Event::Notice(text.into())]
}

impl WhatIf {
    /// Carries out a what-if action.
    pub(crate) fn update(&mut self, action: Action, cx: &Cx) -> Vec<Event> {
        // A what-if version is scored unsteered: a steering operation's step takes none.
        let edits = matches!(action, Action::StartEdit | Action::DeleteExchange | Action::RepeatExchange | Action::AdvocateNextWrong);
        let steered = matches!(cx.part, Part::Op(k) if cx.reg().find(k).is_some_and(|c| c.is_steered()));
        if edits && steered {
            return notice("a steering operation's step takes no what-if edit (its versions would be scored unsteered): edit the step of its context instead");
        }
        match action {
            Action::StartEdit => self.start_edit(cx),
            Action::MoveMessage(d) => self.move_message(d, cx),
            Action::EditApply => self.apply_edit(cx),
            Action::EditCancel => {
                self.editor = Editor::default();
                vec![Event::Overlay(Overlay::None)]
            }
            Action::EditExternal => {
                if cx.overlay == Overlay::Editor {
                    self.external_edit = Some(self.editor.text.clone());
                }
                Vec::new()
            }
            Action::UndoEdit => self.undo_edit(cx),
            Action::SaveEdit => self.save_edit(cx),
            Action::AdvocateNextWrong => self.retarget(cx),
            Action::OpenEdits => self.open_edits(cx),
            Action::MoveEditsCursor(d) => self.move_edits_cursor(d, cx),
            Action::ShowSelectedEdit => self.show_selected_edit(cx),
            Action::UndoSelectedEdit => self.undo_selected_edit(cx),
            Action::DeleteExchange => self.edit_exchange(false, cx),
            Action::RepeatExchange => self.edit_exchange(true, cx),
            typing => {
                self.type_in_editor(typing);
                Vec::new()
            }
        }
    }

    /// The editor's keys: text and cursor.
    fn type_in_editor(&mut self, action: Action) {
        match action {
            Action::EditType(c) => self.editor.insert(c),
            Action::EditBackspace => self.editor.backspace(),
            Action::EditDelete => self.editor.delete(),
            Action::EditNewline => self.editor.insert('\n'),
            Action::EditClear => self.editor.clear(),
            Action::EditCursor(m) => match m {
                CursorMove::Left => self.editor.left(),
                CursorMove::Right => self.editor.right(),
                CursorMove::Home => self.editor.home(),
                CursorMove::End => self.editor.end(),
                CursorMove::Up => self.editor.up(),
                CursorMove::Down => self.editor.down(),
            },
            _ => {}
        }
    }

    /// Once a frame: takes in scores, says what the version being scored gave, takes `w` a
    /// step further, and asks for the scores of the current item's versions.
    pub(crate) fn tick(&mut self, cx: &Cx) -> Vec<Event> {
        self.store.poll();
        let mut events = self.update_scoring_notice(cx);
        events.extend(self.advance_retarget(cx));
        self.request(cx);
        events
    }

    /// The shown model's engine (re)started: what the old one ran will not answer, and the
    /// letters of another model would mix into the ramp being built.
    pub(crate) fn engine_restarted(&mut self) {
        self.store.forget_running();
        self.retarget = None;
    }

    /// Another step or item: no message is selected.
    pub(crate) fn deselect(&mut self) {
        self.msg_cursor = None;
    }

    /// A key was pressed: the status line no longer waits to say what a version gave.
    pub(crate) fn forget_notice(&mut self) {
        self.scoring_notice = None;
    }

    /// A what-if score is in flight, or `w` is still scoring the ramp under another option.
    pub(crate) fn busy(&self) -> bool {
        self.store.busy() || self.retarget.is_some()
    }

    /// The text to open in `$EDITOR`, once asked for (the event loop suspends the terminal).
    pub(crate) fn take_external_edit(&mut self) -> Option<String> {
        self.external_edit.take()
    }

    /// What `$EDITOR` gave back: the editor's new text (Enter scores it), or why there is none.
    pub(crate) fn finish_external_edit(&mut self, r: Result<String, String>, cx: &Cx) -> Vec<Event> {
        match r {
            Ok(text) if cx.overlay == Overlay::Editor => {
                self.editor.set_text(text);
                notice(format!("the text from $EDITOR is in the editor: {} scores it", key_for(Action::EditApply)))
            }
            Ok(_) => Vec::new(),
            Err(e) => notice(format!("$EDITOR: {e}")),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Versions
    // -----------------------------------------------------------------------------------------

    /// The current item, step and the step's dialogue as shown; Err (a notice saying so) while
    /// the dialogue waits for an earlier letter of the model.
    fn shown_step(&self, cx: &Cx) -> Result<(usize, Part, Vec<ChatMessage>), Vec<Event>> {
        let item = cx.items.current().ok_or_else(Vec::new)?;
        match self.shown_messages(cx, item, cx.part) {
            Some(msgs) => Ok((item, cx.part, msgs)),
            None => Err(notice("this step's dialogue is not known yet (an earlier letter is being scored)")),
        }
    }

    /// `J`/`K` in the Dialogue: the message cursor (unset = the final user message, which `E`
    /// edits then).
    fn move_message(&mut self, d: isize, cx: &Cx) -> Vec<Event> {
        match self.shown_step(cx) {
            Ok((_, _, msgs)) => {
                self.msg_cursor = edit::move_message(&msgs, self.msg_cursor, d);
                Vec::new()
            }
            Err(events) => events,
        }
    }

    /// `D` / `I` in the Dialogue: a new what-if version without the selected exchange of the
    /// history, or with it said once more.
    fn edit_exchange(&mut self, repeat: bool, cx: &Cx) -> Vec<Event> {
        let (item, part, msgs) = match self.shown_step(cx) {
            Ok(s) => s,
            Err(events) => return events,
        };
        let Some(index) = self.msg_cursor else {
            return notice(format!("select an exchange of the history first ({}/{})", key_for(Action::MoveMessage(1)), key_for(Action::MoveMessage(-1))));
        };
        let edited = if repeat { edit::repeat_exchange(&msgs, index) } else { edit::delete_exchange(&msgs, index) };
        match edited {
            Ok(e) => {
                self.msg_cursor = None;
                self.push_version(item, part, e, cx)
            }
            Err(why) => notice(why),
        }
    }

    /// Adds a what-if version of the step (or says it is the original again) and scores it. It
    /// keeps the advocated option of the version it was edited from.
    fn push_version(&mut self, item: usize, part: Part, edited: Vec<ChatMessage>, cx: &Cx) -> Vec<Event> {
        let (Some(original), Some(e)) = (cx.messages(item, part), cx.entry(item)) else { return Vec::new() };
        let (wrong, base) = match self.store.current(item, part) {
            Some(v) => (v.wrong, v.base.clone()),
            None => (e.wrong, original.clone()),
        };
        if edited == original {
            return notice(format!("that is the original dialogue again ({} goes back to it)", key_for(Action::UndoEdit)));
        }
        self.store.push(item, part, Version::new(edited, wrong, base));
        self.request(cx);
        let saves = match part {
            Part::Curve(1..=4) if self.saves_as_operation(item, part, cx) => "saves it as a ramp with R0 after it",
            _ if self.saves_as_operation(item, part, cx) => "saves it as an operation",
            _ => "saves the conversations",
        };
        let waiting = match cx.engines.engine_state() {
            EngineState::Ready(_) => "scoring…".to_string(),
            EngineState::Loading { .. } => "scored once the model has loaded…".to_string(),
            _ => format!("no model to score it: {} loads one", key_for(Action::OpenModels)),
        };
        self.scoring_notice = Some((item, part));
        notice(format!(
            "what-if version {}: {waiting} ({} undoes, {} {saves})",
            self.store.versions(item, part),
            key_for(Action::UndoEdit),
            key_for(Action::SaveEdit)
        ))
    }

    /// Once the version the status line says is scoring is scored, the line says what it gave.
    fn update_scoring_notice(&mut self, cx: &Cx) -> Vec<Event> {
        let Some((item, part)) = self.scoring_notice else { return Vec::new() };
        let Some(wi) = self.shown(cx, item, part) else {
            self.scoring_notice = None;
            return Vec::new();
        };
        let text = match wi.score {
            Some(EditScore::Done(s)) => {
                let orig = cx.score(item, part).and_then(|o| o.prob(wi.wrong));
                format!(
                    "what-if version {} scored: p({}) {} → {} ({} undoes, {} saves)",
                    wi.version,
                    letter(wi.wrong),
                    orig.map_or("?".into(), |p| format!("{p:.3}")),
                    s.prob(wi.wrong).map_or("?".into(), |p| format!("{p:.3}")),
                    key_for(Action::UndoEdit),
                    key_for(Action::SaveEdit)
                )
            }
            Some(EditScore::Failed(e)) => format!("what-if version {}: scoring failed: {e}", wi.version),
            _ => return Vec::new(),
        };
        self.scoring_notice = None;
        notice(text)
    }

    /// Scores the current item's what-if versions on the shown model: the current step's
    /// first, then every other step's (the Trace and the edits list show them all); nothing
    /// for a version scored, being scored, or failed.
    fn request(&mut self, cx: &Cx) {
        let Some(item) = cx.items.current() else { return };
        let Some(letters) = cx.entry(item).map(|e| e.item.letters()) else { return };
        let mut versions: Vec<(Part, Vec<ChatMessage>)> =
            self.store.edited_steps(item).into_iter().map(|(p, v)| (p, v.messages.clone())).collect();
        versions.sort_by_key(|(p, _)| *p != cx.part);
        let Some(e) = cx.engines.engine_ready() else { return };
        for (_, msgs) in versions {
            self.store.request(e, cx.model_key(), &msgs, letters.clone());
        }
    }

    /// The step's current version is an edit of only an operation's final message, with the
    /// item's own advocated option: `S` saves it as a recovery operation.
    fn saves_as_operation(&self, item: usize, part: Part, cx: &Cx) -> bool {
        let (Some(v), Some(original), Some(e)) = (self.store.current(item, part), cx.messages(item, part), cx.entry(item)) else {
            return false;
        };
        matches!(part, Part::Op(_) | Part::Curve(1..=5)) && v.wrong == e.wrong && edit::only_final(&original, &v.messages)
    }

    /// `E`: the editor on the selected message of the step (the final user message when none is
    /// selected), its current what-if version, else the original.
    fn start_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let (item, part, msgs) = match self.shown_step(cx) {
            Ok(s) => s,
            Err(events) => return events,
        };
        let Some(index) = self.msg_cursor.or_else(|| edit::final_user(&msgs)) else { return Vec::new() };
        let Some(text) = edit::editable_text(&msgs, index, cx.header()) else { return Vec::new() };
        self.editor = Editor::new(item, part, index, text);
        vec![Event::Overlay(Overlay::Editor)]
    }

    /// Enter in the editor: the edited message is the step's new version.
    fn apply_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let mut events = vec![Event::Overlay(Overlay::None)];
        let Editor { item, part: Some(part), index, text, .. } = std::mem::take(&mut self.editor) else { return events };
        let Some(shown) = self.shown_messages(cx, item, part) else { return events };
        let edited = edit::with_text(&shown, index, &text, cx.header());
        if edited == shown {
            events.extend(notice("the message is unchanged"));
            return events;
        }
        events.extend(self.push_version(item, part, edited, cx));
        events
    }

    /// Back one version of a step; R0 and the strong reset step (one dialogue) go back together
    /// while their current versions are the same. False when the step had no version.
    fn undo_step(&mut self, item: usize, part: Part) -> bool {
        if let (Some(t), Some(v)) = (edit::r0_twin(part), self.store.current(item, part)) {
            if self.store.current(item, t).is_some_and(|w| w == v) {
                self.store.undo(item, t);
            }
        }
        self.store.undo(item, part)
    }

    /// `u`: back one version of the current step.
    fn undo_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let Some(item) = cx.items.current() else { return Vec::new() };
        let part = cx.part;
        if self.undo_step(item, part) {
            notice(match self.store.versions(item, part) {
                0 => "back to the original dialogue".to_string(),
                n => format!("back to what-if version {n}"),
            })
        } else {
            notice(format!("no what-if edit here ({} edits)", key_for(Action::StartEdit)))
        }
    }

    // -----------------------------------------------------------------------------------------
    // The edits list (`V`)
    // -----------------------------------------------------------------------------------------

    /// `V`: the list of the item's edits (or a notice that there is none).
    fn open_edits(&self, cx: &Cx) -> Vec<Event> {
        let Some(item) = cx.items.current() else { return Vec::new() };
        let rows = self.edit_rows(cx, item);
        if rows.is_empty() {
            return notice(format!(
                "no what-if edit of this item yet ({} edits a message, {} advocates another option)",
                key_for(Action::StartEdit),
                key_for(Action::AdvocateNextWrong)
            ));
        }
        let at = rows.iter().find(|r| r.part == cx.part).unwrap_or(&rows[0]).part;
        vec![Event::Overlay(Overlay::Edits { at })]
    }

    /// j/k in the edits list: the cursor `d` rows down or up, stopping at the ends.
    fn move_edits_cursor(&self, d: isize, cx: &Cx) -> Vec<Event> {
        let (Overlay::Edits { at }, Some(item)) = (cx.overlay, cx.items.current()) else { return Vec::new() };
        let rows = self.edit_rows(cx, item);
        let Some(last) = rows.len().checked_sub(1) else { return Vec::new() };
        let i = rows.iter().position(|r| r.part == at).unwrap_or(0);
        vec![Event::Overlay(Overlay::Edits { at: rows[i.saturating_add_signed(d).min(last)].part })]
    }

    /// The step under the edits list's cursor.
    fn selected_edit(&self, cx: &Cx) -> Option<(usize, Part)> {
        let Overlay::Edits { at } = cx.overlay else { return None };
        let item = cx.items.current()?;
        self.edit_rows(cx, item).iter().any(|r| r.part == at).then_some((item, at))
    }

    /// Enter in the edits list: the Dialogue on that step.
    fn show_selected_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let Some((_, part)) = self.selected_edit(cx) else { return Vec::new() };
        self.msg_cursor = None;
        vec![Event::Overlay(Overlay::None), Event::ShowStep(part)]
    }

    /// `u` in the edits list: back one version of that step (the list closes once empty).
    fn undo_selected_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let Some((item, part)) = self.selected_edit(cx) else { return Vec::new() };
        let before = self.edit_rows(cx, item).iter().position(|r| r.part == part).unwrap_or(0);
        self.undo_step(item, part);
        let rows = self.edit_rows(cx, item);
        let overlay = match rows.iter().find(|r| r.part == part).or_else(|| rows.get(before.min(rows.len().saturating_sub(1)))) {
            Some(r) => Overlay::Edits { at: r.part },
            None => Overlay::None,
        };
        let text = match self.store.versions(item, part) {
            0 => format!("{}: back to the original", parts::part_label(cx.reg(), part)),
            v => format!("{}: back to what-if version {v}", parts::part_label(cx.reg(), part)),
        };
        vec![Event::Overlay(overlay), Event::Notice(text)]
    }

    // -----------------------------------------------------------------------------------------
    // What the views read
    // -----------------------------------------------------------------------------------------

    /// The selected message of the Dialogue (`J`/`K`), if any.
    pub(crate) fn message_cursor(&self) -> Option<usize> {
        self.msg_cursor
    }

    pub(crate) fn editor(&self) -> &Editor {
        &self.editor
    }

    /// The step's dialogue as the Dialogue shows it: its current what-if version, else the
    /// original. The message cursor and every edit refer to it.
    pub(crate) fn shown_messages(&self, cx: &Cx, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.messages(item, part).or_else(|| cx.messages(item, part))
    }

    /// The step's edited conversation, when it has a what-if version.
    pub(crate) fn messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.store.current(item, part).map(|v| v.messages.clone())
    }

    /// The option the user advocates in the step's current what-if version.
    pub(crate) fn advocated(&self, item: usize, part: Part) -> Option<usize> {
        self.store.current(item, part).map(|v| v.wrong)
    }

    /// The step's what-if version as the views show it (see [`WhatIfShown`]).
    pub(crate) fn shown<'a>(&'a self, cx: &Cx, item: usize, part: Part) -> Option<WhatIfShown<'a>> {
        let v = self.store.current(item, part)?;
        Some(WhatIfShown {
            what: edit::what_changed(&v.base, &v.messages, cx.header()),
            version: self.store.versions(item, part),
            score: self.store.score(cx.model_key(), &v.messages),
            saved: self.store.command(item, part),
            wrong: v.wrong,
        })
    }

    /// The done score of the step's current what-if version.
    pub(crate) fn score<'a>(&'a self, cx: &Cx, item: usize, part: Part) -> Option<&'a SlotScore> {
        match self.shown(cx, item, part)?.score? {
            EditScore::Done(s) => Some(s),
            _ => None,
        }
    }

    /// The option the item's what-if versions advocate, as the Trace draws them: the current
    /// step's version's, else that of the first step (in step order) with a version; None when
    /// the item has no version.
    pub(crate) fn wrong(&self, cx: &Cx, item: usize) -> Option<usize> {
        if let Some(v) = self.store.current(item, cx.part) {
            return Some(v.wrong);
        }
        cx.steps.iter().find_map(|&p| self.store.current(item, p)).map(|v| v.wrong)
    }

    /// The what-if curve of the item's ramp for the Trace, or None without any version: p(the
    /// option the versions advocate) at each ramp step (clean … probe), from the step's version
    /// where it has one (R0's for the strong reset step, their dialogue being one), else from
    /// the original step when that advocates the same option (or none: the clean step, the
    /// probe); no value at a step still scoring or advocating the item's own option.
    pub(crate) fn curve(&self, cx: &Cx, item: usize) -> Option<WhatIfCurve> {
        let wrong = self.wrong(cx, item)?;
        let own = cx.entry(item)?.wrong;
        let mut points = Vec::new();
        let mut edited = Vec::new();
        for k in 0..crate::dialogue::CURVE.len() {
            let step = Part::Curve(k);
            let versioned = std::iter::once(step).chain(edit::r0_twin(step)).find(|&p| self.store.current(item, p).is_some());
            let s = match versioned {
                // A version advocating another option than the curve's has no point on it.
                Some(p) if self.advocated(item, p) != Some(wrong) => None,
                Some(p) => self.score(cx, item, p),
                None if wrong == own || k == 0 || k == 6 => cx.score(item, step),
                None => None,
            };
            points.push(s.and_then(|s| s.prob(wrong)));
            edited.push(versioned.is_some());
        }
        Some(WhatIfCurve { wrong, points, edited })
    }

    /// The item's what-if versions, one row a step in step order (the edits list, `V`).
    pub(crate) fn edit_rows(&self, cx: &Cx, item: usize) -> Vec<EditRow> {
        let Some(e) = cx.entry(item) else { return Vec::new() };
        let mut rows: Vec<EditRow> = self
            .store
            .edited_steps(item)
            .into_iter()
            .map(|(part, v)| EditRow {
                part,
                versions: self.store.versions(item, part),
                what: edit::what_changed(&v.base, &v.messages, cx.header()),
                wrong: (v.wrong != e.wrong).then_some(v.wrong),
                p_orig: cx.score(item, part).and_then(|s| s.prob(v.wrong)),
                p_edited: self.score(cx, item, part).and_then(|s| s.prob(v.wrong)),
                saved: self.store.command(item, part).is_some(),
            })
            .collect();
        // The strong reset step and R0 are one dialogue: listed once while their versions agree.
        let current = |p: Part| self.store.current(item, p);
        let step = Part::curve(crate::dialogue::CurvePoint::StrongReset);
        let r0 = edit::r0_twin(step).expect("the strong reset step has R0 as its twin");
        if current(step).is_some() && current(step) == current(r0) {
            rows.retain(|r| r.part != step);
        }
        rows.sort_by_key(|r| cx.steps.iter().position(|&p| p == r.part).unwrap_or(usize::MAX));
        rows
    }

    /// The editor's first line: which message of the step it edits.
    pub(crate) fn editor_heading(&self, cx: &Cx, part_label: &str) -> String {
        let e = &self.editor;
        let Some(msgs) = e.part.and_then(|p| self.shown_messages(cx, e.item, p)) else { return String::new() };
        let name = edit::message_name(&msgs, e.index);
        let has_block = msgs.get(e.index).is_some_and(|m| m.role == "user" && parts::split_user_turn(&m.content, cx.header()).is_some());
        match msgs.get(e.index).map(|m| m.role.as_str()) {
            _ if Some(e.index) == edit::final_user(&msgs) && has_block => {
                format!("The message of the final turn of {part_label} (the question block follows it):")
            }
            Some("user") if has_block => format!("The message of {name} of {part_label} (its question block follows it):"),
            Some("system") => format!("The system prompt of {part_label}:"),
            Some("assistant") => format!("The answer of {name} of {part_label}:"),
            _ => format!("{name} of {part_label}:"),
        }
    }

    /// The step's messages and its final turn split (message, prefix, question block).
    fn final_turn(&self, cx: &Cx, item: usize, part: Part) -> Option<(Vec<ChatMessage>, FinalTurn)> {
        let msgs = cx.messages(item, part)?;
        let t = FinalTurn::of(&msgs, cx.header())?;
        Some((msgs, t))
    }
}

#[cfg(test)]
mod tests;
