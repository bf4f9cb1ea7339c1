//! The what-if side of the explorer's router: the Dialogue's message cursor, the editor, new
//! versions of a step's dialogue (an edited message, a deleted or repeated exchange, another
//! option advocated), undo, and saving a version as an operation or as conversations.

use std::path::Path;

use super::App;
use crate::dialogue::conditions::{self, base_of, Base};
use crate::dialogue::Builder;
use crate::protocol::{letter, ChatMessage};
use crate::tui::action::Action;
use crate::tui::engine_slot::EngineState;
use crate::tui::keymap::key_for;
use crate::tui::model::{self, Part};
use crate::tui::screen::Overlay;
use crate::tui::whatif::{self, experiment_toml, EditRow, EditScore, Editor, FinalTurn, Retarget, SavedOp, Version, WhatIfCurve, WhatIfShown};

impl App {
    /// The step's messages and its final turn split (message, prefix, question block).
    fn final_turn(&self, item: usize, part: Part) -> Option<(Vec<ChatMessage>, FinalTurn)> {
        let msgs = self.messages(item, part)?;
        let t = FinalTurn::of(&msgs, &self.cfg.prompts.question_header)?;
        Some((msgs, t))
    }

    /// The current item, step and the step's dialogue as shown; None (and a notice saying so)
    /// while the dialogue waits for an earlier letter of the model.
    fn shown_step(&mut self) -> Option<(usize, Part, Vec<ChatMessage>)> {
        let item = self.current()?;
        let part = self.current_part();
        match self.shown_messages(item, part) {
            Some(msgs) => Some((item, part, msgs)),
            None => {
                self.notice = Some("this step's dialogue is not known yet (an earlier letter is being scored)".into());
                None
            }
        }
    }

    /// `J`/`K` in the Dialogue: the message cursor (unset = the final user message, which `E`
    /// edits then).
    pub(super) fn move_message(&mut self, d: isize) {
        let Some((_, _, msgs)) = self.shown_step() else { return };
        self.msg_cursor = whatif::move_message(&msgs, self.msg_cursor, d);
    }

    /// The step's dialogue as the Dialogue shows it: its current what-if version, else the
    /// original. The message cursor and every edit refer to it.
    pub(crate) fn shown_messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.whatif_messages(item, part).or_else(|| self.messages(item, part))
    }

    /// `D` / `I` in the Dialogue: a new what-if version without the selected exchange of the
    /// history, or with it said once more.
    pub(super) fn edit_exchange(&mut self, repeat: bool) {
        let Some((item, part, msgs)) = self.shown_step() else { return };
        let Some(index) = self.msg_cursor else {
            self.notice = Some(format!("select an exchange of the history first ({}/{})", key_for(Action::MoveMessage(1)), key_for(Action::MoveMessage(-1))));
            return;
        };
        let edited = if repeat { whatif::repeat_exchange(&msgs, index) } else { whatif::delete_exchange(&msgs, index) };
        match edited {
            Ok(e) => {
                self.msg_cursor = None;
                self.push_version(item, part, e);
            }
            Err(why) => self.notice = Some(why.to_string()),
        }
    }

    /// Adds a what-if version of the step (or says it is the original again) and scores it. It
    /// keeps the advocated option of the version it was edited from.
    fn push_version(&mut self, item: usize, part: Part, edited: Vec<ChatMessage>) {
        let (Some(original), Some(e)) = (self.messages(item, part), self.entry(item)) else { return };
        let (wrong, base) = match self.whatifs.current(item, part) {
            Some(v) => (v.wrong, v.base.clone()),
            None => (e.wrong, original.clone()),
        };
        if edited == original {
            self.notice = Some(format!("that is the original dialogue again ({} goes back to it)", key_for(Action::UndoEdit)));
            return;
        }
        self.whatifs.push(item, part, Version::new(edited, wrong, base));
        self.request_whatif();
        let saves = match part {
            Part::Curve(1..=4) if self.saves_as_operation(item, part) => "saves it as a ramp with R0 after it",
            _ if self.saves_as_operation(item, part) => "saves it as an operation",
            _ => "saves the conversations",
        };
        let waiting = match self.engine_state() {
            EngineState::Ready(_) => "scoring…".to_string(),
            EngineState::Loading { .. } => "scored once the model has loaded…".to_string(),
            _ => format!("no model to score it: {} loads one", key_for(Action::OpenModels)),
        };
        self.notice = Some(format!(
            "what-if version {}: {waiting} ({} undoes, {} {saves})",
            self.whatifs.versions(item, part),
            key_for(Action::UndoEdit),
            key_for(Action::SaveEdit)
        ));
        self.whatif_notice = Some((item, part));
    }

    /// Once the version the status line says is scoring is scored, the line says what it gave.
    pub(super) fn update_whatif_notice(&mut self) {
        let Some((item, part)) = self.whatif_notice else { return };
        let Some(wi) = self.whatif(item, part) else {
            self.whatif_notice = None;
            return;
        };
        let text = match wi.score {
            Some(EditScore::Done(s)) => {
                let orig = self.score(item, part).and_then(|o| o.prob(wi.wrong));
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
            _ => return,
        };
        self.notice = Some(text);
        self.whatif_notice = None;
    }

    /// The step's current version is an edit of only an operation's final message, with the
    /// item's own advocated option: `S` saves it as a recovery operation.
    fn saves_as_operation(&self, item: usize, part: Part) -> bool {
        let (Some(v), Some(original), Some(e)) = (self.whatifs.current(item, part), self.messages(item, part), self.entry(item)) else {
            return false;
        };
        matches!(part, Part::Op(_) | Part::Curve(1..=5)) && v.wrong == e.wrong && whatif::only_final(&original, &v.messages)
    }

    /// `w` in the Dialogue: a version of the step in which the user advocates the next wrong
    /// option (after the one the current version advocates). The protocol builds the step anew
    /// with it; the ramp being self-conditioned, the pressure steps before the step are scored
    /// first under the new pressure and get the same version, so the Trace shows the whole
    /// what-if curve.
    pub(super) fn retarget(&mut self) {
        let Some((item, e)) = self.current_entry() else { return };
        let part = self.current_part();
        let custom = match part {
            Part::Step(_) => true,
            Part::Op(k) => conditions::find(k).is_some_and(|c| matches!(base_of(c), Base::Custom(_))),
            Part::Curve(_) => false,
        };
        if custom {
            self.notice = Some(format!("{}: another advocated option works on the paper's ramp and the operations after it, not on a custom ramp", key_for(Action::AdvocateNextWrong)));
            return;
        }
        if let Some(rt) = &self.retarget {
            let id = self.entry(rt.item).map_or("?", |e| e.item.id.as_str());
            self.notice = Some(format!("{}: still scoring {} with {} advocated ({id}); try again when it is done", key_for(Action::AdvocateNextWrong), model::part_label(rt.part), letter(rt.wrong)));
            return;
        }
        let from = self.whatifs.current(item, part).map_or(e.wrong, |v| v.wrong);
        let Some(wrong) = whatif::next_wrong(e.item.options.len(), e.item.correct, e.wrong, from) else {
            self.notice = Some(format!("{}: this item has no other wrong option to advocate ({} goes back to {})", key_for(Action::AdvocateNextWrong), key_for(Action::UndoEdit), letter(e.wrong)));
            return;
        };
        let mut d = crate::dialogue::DialogueItem::from(e);
        d.wrong = wrong;
        let b = Builder::new(&self.cfg.prompts);
        let original = self.messages(item, part);
        let same = original.is_some() && self.scores.messages(&b, self.model_key(), &d, part) == original;
        if same {
            self.notice = Some(format!("{}: this step's dialogue does not name the advocated option", key_for(Action::AdvocateNextWrong)));
            return;
        }
        // An operation that repeats the clean answer needs it before anything is scored.
        let clean = self.scores.clean_letter(self.model_key(), &e.item.id);
        if model::messages_for(&b, &d, part, &[Some('A'); 4], clean, &|_| None).is_none() {
            self.notice = Some(format!("{}: this step needs the model's clean answer first; try again once it is scored", key_for(Action::AdvocateNextWrong)));
            return;
        }
        self.retarget = Some(Retarget { item, part, wrong, from, letters: Vec::new() });
        self.msg_cursor = None;
        self.advance_retarget();
    }

    /// Takes `w` one step further: scores the next ramp step under the new pressure, or, once
    /// the model's letters before the step are known, adds the step's version. Runs each frame.
    pub(super) fn advance_retarget(&mut self) {
        while let Some(rt) = self.retarget.clone() {
            let Some(mut d) = self.dialogue_item(rt.item) else {
                self.retarget = None;
                return;
            };
            d.wrong = rt.wrong;
            let b = Builder::new(&self.cfg.prompts);
            let known: Vec<Option<char>> = rt.letters.iter().copied().map(Some).collect();
            let model = self.model_key().to_string();
            let clean = self.scores.clean_letter(&model, &d.item.id);
            let no_steps = |_: &'static str| None;
            if let Some(msgs) = model::messages_for(&b, &d, rt.part, &known, clean, &no_steps) {
                self.retarget = None;
                // R0 and the strong reset step are one dialogue: both get the version.
                for p in std::iter::once(rt.part).chain(whatif::r0_twin(rt.part)) {
                    self.push_retargeted(rt.item, p, msgs.clone(), rt.wrong);
                }
                let letters = d.item.letters();
                if let Some(eng) = self.lanes[0].engine.ready() {
                    self.whatifs.request(eng, &model, &msgs, letters);
                }
                let ramp = if rt.letters.is_empty() { String::new() } else { format!(" (and the {} ramp steps before it)", rt.letters.len()) };
                self.notice = Some(format!(
                    "what-if version {} of {}: the user advocates {} instead of {}{ramp}, built anew from the protocol · {} undoes",
                    self.whatifs.versions(rt.item, rt.part),
                    d.item.id,
                    letter(rt.wrong),
                    letter(rt.from),
                    key_for(Action::UndoEdit)
                ));
                return;
            }
            let step = Part::Curve(rt.letters.len() + 1);
            let msgs = match model::messages_for(&b, &d, step, &known, clean, &no_steps) {
                Some(m) if rt.letters.len() < 4 => m,
                _ => {
                    self.retarget = None;
                    self.notice = Some(format!("{}: this step needs the model's clean answer first; try again once it is scored", key_for(Action::AdvocateNextWrong)));
                    return;
                }
            };
            match self.whatifs.score(&model, &msgs) {
                Some(EditScore::Done(s)) => {
                    let l = s.pred_letter();
                    self.push_retargeted(rt.item, step, msgs.clone(), rt.wrong);
                    if let Some(r) = self.retarget.as_mut() {
                        r.letters.push(l);
                    }
                }
                Some(EditScore::Failed(err)) => {
                    self.retarget = None;
                    self.notice = Some(format!("{}: scoring {} failed: {err}", key_for(Action::AdvocateNextWrong), model::part_label(step)));
                    return;
                }
                Some(EditScore::Running) => return,
                None => {
                    let letters = d.item.letters();
                    let waiting = match self.engine_state() {
                        EngineState::Ready(_) => "scoring",
                        EngineState::Loading { .. } => "waiting for the model to score",
                        _ => {
                            self.retarget = None;
                            self.notice = Some(format!(
                                "{}: no model to score the ramp under another option ({} loads one)",
                                key_for(Action::AdvocateNextWrong),
                                key_for(Action::OpenModels)
                            ));
                            return;
                        }
                    };
                    if let Some(eng) = self.lanes[0].engine.ready() {
                        self.whatifs.request(eng, &model, &msgs, letters);
                    }
                    self.notice = Some(format!("{}: {waiting} the ramp of {} with {} advocated: {}…", key_for(Action::AdvocateNextWrong), d.item.id, letter(rt.wrong), model::part_label(step)));
                    return;
                }
            }
        }
    }

    /// A version of the step built by the protocol with another option advocated, unless the
    /// step's current version is that already.
    fn push_retargeted(&mut self, item: usize, part: Part, msgs: Vec<ChatMessage>, wrong: usize) {
        if self.whatifs.current(item, part).is_some_and(|v| v.messages == msgs) || self.messages(item, part).is_some_and(|m| m == msgs) {
            return;
        }
        self.whatifs.push(item, part, Version::new(msgs.clone(), wrong, msgs));
    }

    /// `E`: the editor on the selected message of the step (the final user message when none is
    /// selected), its current what-if version, else the original.
    pub(super) fn start_edit(&mut self) {
        let Some((item, part, msgs)) = self.shown_step() else { return };
        let Some(index) = self.msg_cursor.or_else(|| whatif::final_user(&msgs)) else { return };
        let Some(text) = whatif::editable_text(&msgs, index, &self.cfg.prompts.question_header) else { return };
        self.editor = Editor::new(item, part, index, text);
        self.overlay = Overlay::Editor;
    }

    pub(super) fn apply_edit(&mut self) {
        self.overlay = Overlay::None;
        let Editor { item, part: Some(part), index, text, .. } = std::mem::take(&mut self.editor) else { return };
        let Some(shown) = self.shown_messages(item, part) else { return };
        let header = &self.cfg.prompts.question_header;
        let edited = whatif::with_text(&shown, index, &text, header);
        if edited == shown {
            self.notice = Some("the message is unchanged".into());
            return;
        }
        self.push_version(item, part, edited);
    }

    /// Ctrl-E in the editor: asks the event loop to open the text in `$EDITOR`.
    pub(super) fn request_external_edit(&mut self) {
        if self.overlay == Overlay::Editor {
            self.external_edit = Some(self.editor.text.clone());
        }
    }

    /// The text to open in `$EDITOR`, once asked for (the event loop suspends the terminal).
    pub(crate) fn take_external_edit(&mut self) -> Option<String> {
        self.external_edit.take()
    }

    /// What `$EDITOR` gave back: the editor's new text (Enter scores it), or why there is none.
    pub(crate) fn finish_external_edit(&mut self, r: Result<String, String>) {
        match r {
            Ok(text) if self.overlay == Overlay::Editor => {
                self.editor.set_text(text);
                self.notice = Some(format!("the text from $EDITOR is in the editor: {} scores it", key_for(Action::EditApply)));
            }
            Ok(_) => {}
            Err(e) => self.notice = Some(format!("$EDITOR: {e}")),
        }
    }

    /// Back one version of a step; R0 and the strong reset step (one dialogue) go back together
    /// while their current versions are the same. False when the step had no version.
    fn undo_step(&mut self, item: usize, part: Part) -> bool {
        if let (Some(t), Some(v)) = (whatif::r0_twin(part), self.whatifs.current(item, part)) {
            if self.whatifs.current(item, t).is_some_and(|w| w == v) {
                self.whatifs.undo(item, t);
            }
        }
        self.whatifs.undo(item, part)
    }

    pub(super) fn undo_edit(&mut self) {
        let Some(item) = self.current() else { return };
        let part = self.current_part();
        if self.undo_step(item, part) {
            self.notice = Some(match self.whatifs.versions(item, part) {
                0 => "back to the original dialogue".to_string(),
                n => format!("back to what-if version {n}"),
            });
        } else {
            self.notice = Some(format!("no what-if edit here ({} edits)", key_for(Action::StartEdit)));
        }
    }

    /// The current step's edited conversation, when it has a what-if edit.
    pub fn whatif_messages(&self, item: usize, part: Part) -> Option<Vec<ChatMessage>> {
        self.whatifs.current(item, part).map(|v| v.messages.clone())
    }

    /// The option the user advocates in the step's current what-if version.
    pub fn whatif_advocated(&self, item: usize, part: Part) -> Option<usize> {
        self.whatifs.current(item, part).map(|v| v.wrong)
    }

    /// `S`: the step's what-if edit saved. An edit of only an operation's final message becomes
    /// a recovery operation in an experiment file under `<data dir>/experiments`, with the
    /// batch command that runs it over the dataset; any other edit becomes a conversation file
    /// (the original and the edited dialogue) with the `score` command that scores it.
    pub(super) fn save_edit(&mut self) {
        let Some((item, e)) = self.current_entry() else { return };
        let part = self.current_part();
        let (Some(v), Some(msgs)) = (self.whatifs.current(item, part).cloned(), self.messages(item, part)) else {
            self.notice = Some(format!("no what-if edit here to save ({} edits a message)", key_for(Action::StartEdit)));
            return;
        };
        let other_wrong = v.wrong != e.wrong;
        let header = &self.cfg.prompts.question_header;
        let m = &v.messages;
        let edit = whatif::final_user(m).and_then(|i| whatif::editable_text(m, i, header)).unwrap_or_default();
        match part {
            Part::Op(key) if self.saves_as_operation(item, part) => self.save_operation(item, part, key, &edit),
            // The strong reset step is R0 on the paper's ramp.
            Part::Curve(5) if self.saves_as_operation(item, part) => self.save_operation(item, part, conditions::ids::ORDINARY_RESET, &edit),
            Part::Curve(k) if self.saves_as_operation(item, part) => self.save_ramp(item, part, k - 1, &edit),
            _ => {
                let why = match part {
                    _ if other_wrong => "another option advocated",
                    Part::Op(_) | Part::Curve(1..=5) => "more than the final message is changed",
                    _ => "the clean step, the probe and custom ramp steps are saved as conversations",
                };
                self.save_conversation(item, part, &msgs, &v.messages, why)
            }
        }
    }

    /// Writes `text` to `path` unless the file holds it already (the name follows the content).
    fn write_saved(&mut self, path: &Path, text: &str) -> bool {
        if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
            return true;
        }
        let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(path, text));
        if let Err(e) = written {
            self.notice = Some(format!("cannot write {}: {e}", path.display()));
            return false;
        }
        true
    }

    fn save_conversation(&mut self, item: usize, part: Part, msgs: &[ChatMessage], edited: &[ChatMessage], why: &str) {
        let Some(e) = self.entry(item) else { return };
        let text = whatif::conversation_jsonl(msgs, edited, &e.item.letters());
        let path = whatif::content_path(&crate::config::data_dir().join("experiments"), &text, "jsonl");
        if !self.write_saved(&path, &text) {
            return;
        }
        let command = format!("hyst-tui score --model {} --messages {}", self.model_key(), path.display());
        tracing::info!("saved the what-if conversations (original, edited) to {}; score them with: {command}", path.display());
        self.whatifs.set_command(item, part, command.clone());
        self.notice = Some(format!("not an operation ({why}): saved to {} · the score command is under the distribution", path.display()));
    }

    fn save_operation(&mut self, item: usize, part: Part, key: &str, edit: &str) {
        use crate::dialogue::recipe::History;
        let Some(cond) = crate::dialogue::conditions::find(key) else { return };
        let Some(recipe) = cond.recipe() else { return };
        let history = match recipe.history {
            History::Kept => "kept",
            History::None => "none",
            _ => {
                self.notice = Some(format!("{}: only an operation that keeps the history or has none can be saved", cond.short));
                return;
            }
        };
        let Some((message, prefix)) = self.generic_final_turn(item, part, edit) else { return };
        let Some(e) = self.entry(item) else { return };
        let assistant = if history == "kept" { recipe.assistant.key() } else { "model" };
        let op_id = whatif::op_id(history, assistant, &message, &prefix);
        let (name, short) = whatif::op_names(&op_id);
        let path = crate::config::data_dir().join("experiments").join(format!("{name}.toml"));
        let op = SavedOp {
            name: name.clone(),
            short: short.clone(),
            label: format!("{} what-if {op_id}", cond.short),
            history,
            assistant,
            message: &message,
            prefix: &prefix,
            description: format!("what-if: {} ({}) with its message rewritten in the explorer on {}", cond.short, cond.key, e.item.id),
        };
        // The description names the item it was first saved from; the same operation saved
        // again from another item keeps the file as it is.
        if !path.exists() && !self.write_saved(&path, &experiment_toml(&op)) {
            return;
        }
        self.saved_experiment(item, part, &name, &short, &path);
    }

    /// The edited final message and the step's prefix as an experiment file has them (None and
    /// a notice when they hold braces): the item's option texts become `{wrong_option_text}` /
    /// `{correct_option_text}`, so the saved operation or ramp fits every item.
    fn generic_final_turn(&mut self, item: usize, part: Part, edit: &str) -> Option<(String, String)> {
        let (_, t) = self.final_turn(item, part)?;
        if edit.contains(['{', '}']) || t.prefix.contains(['{', '}']) {
            self.notice = Some("braces are placeholders in an experiment file: write the message without { }".into());
            return None;
        }
        let e = self.entry(item)?;
        let generic = |s: &str| -> String {
            let (w, c) = (&e.item.options[e.wrong], &e.item.options[e.item.correct]);
            s.replace(w.as_str(), "{wrong_option_text}").replace(c.as_str(), "{correct_option_text}")
        };
        Some((generic(edit), generic(&t.prefix)))
    }

    /// A pressure step's rewritten message (`step` 0 = weak … 3 = medium reset) saved as a
    /// custom ramp — the paper's four exchanges with that one rewritten — and R0's final turn
    /// after it as an operation on it, in `<data dir>/experiments/whatif_<id>.toml`.
    fn save_ramp(&mut self, item: usize, part: Part, step: usize, edit: &str) {
        let Some((message, prefix)) = self.generic_final_turn(item, part, edit) else { return };
        let Some(e) = self.entry(item) else { return };
        let id = whatif::op_id("ramp", whatif::PAPER_RAMP_STEPS[step].0, &message, &prefix);
        let saved = whatif::SavedRamp {
            id: &id,
            step,
            message: &message,
            prefix: &prefix,
            description: format!("what-if: the paper's ramp with its {} step rewritten in the explorer on {}", model::part_label(part), e.item.id),
        };
        let (name, short) = saved.op_names();
        let path = crate::config::data_dir().join("experiments").join(format!("whatif_{id}.toml"));
        if !path.exists() && !self.write_saved(&path, &whatif::ramp_experiment_toml(&saved)) {
            return;
        }
        self.saved_experiment(item, part, &name, &short, &path);
    }

    /// The batch command of a saved experiment file, remembered for the version and shown.
    fn saved_experiment(&mut self, item: usize, part: Part, name: &str, short: &str, path: &Path) {
        let command = format!(
            "hyst-tui --experiment {} batch --models {} --datasets {} --suites hierarchy",
            path.display(),
            self.model_key(),
            self.dataset_spec
        );
        tracing::info!("saved what-if operation {name} to {}; run it with: {command}", path.display());
        self.whatifs.set_command(item, part, command.clone());
        self.notice = Some(format!("saved {short} to {} · the batch command is under the distribution", path.display()));
    }

    /// `V`: the list of the item's edits (or a notice that there is none).
    pub(super) fn open_edits(&mut self) {
        let Some(item) = self.current() else { return };
        let rows = self.edit_rows(item);
        if rows.is_empty() {
            self.notice = Some(format!(
                "no what-if edit of this item yet ({} edits a message, {} advocates another option)",
                key_for(Action::StartEdit),
                key_for(Action::AdvocateNextWrong)
            ));
            return;
        }
        let part = self.current_part();
        let at = rows.iter().find(|r| r.part == part).unwrap_or(&rows[0]).part;
        self.overlay = Overlay::Edits { at };
    }

    /// j/k in the edits list: the cursor `d` rows down or up, stopping at the ends.
    pub(super) fn move_edits_cursor(&mut self, d: isize) {
        let (Overlay::Edits { at }, Some(item)) = (self.overlay, self.current()) else { return };
        let rows = self.edit_rows(item);
        let Some(last) = rows.len().checked_sub(1) else { return };
        let i = rows.iter().position(|r| r.part == at).unwrap_or(0);
        self.overlay = Overlay::Edits { at: rows[i.saturating_add_signed(d).min(last)].part };
    }

    /// The step under the edits list's cursor.
    fn selected_edit(&self) -> Option<(usize, Part)> {
        let Overlay::Edits { at } = self.overlay else { return None };
        let item = self.current()?;
        self.edit_rows(item).iter().any(|r| r.part == at).then_some((item, at))
    }

    /// Enter in the edits list: the Dialogue on that step.
    pub(super) fn show_selected_edit(&mut self) {
        let Some((_, part)) = self.selected_edit() else { return };
        self.overlay = Overlay::None;
        if let Some(i) = self.steps.iter().position(|&p| p == part) {
            self.step = i;
            self.msg_cursor = None;
            self.dialogue_scroll = 0;
        }
        self.set_view(crate::tui::screen::View::Dialogue);
    }

    /// `u` in the edits list: back one version of that step (the list closes once empty).
    pub(super) fn undo_selected_edit(&mut self) {
        let Some((item, part)) = self.selected_edit() else { return };
        let before = self.edit_rows(item).iter().position(|r| r.part == part).unwrap_or(0);
        self.undo_step(item, part);
        let rows = self.edit_rows(item);
        self.overlay = match rows.iter().find(|r| r.part == part).or_else(|| rows.get(before.min(rows.len().saturating_sub(1)))) {
            Some(r) => Overlay::Edits { at: r.part },
            None => Overlay::None,
        };
        self.notice = Some(match self.whatifs.versions(item, part) {
            0 => format!("{}: back to the original", model::part_label(part)),
            v => format!("{}: back to what-if version {v}", model::part_label(part)),
        });
    }

    /// The step's what-if version as the views show it (see [`WhatIfShown`]).
    pub(crate) fn whatif(&self, item: usize, part: Part) -> Option<WhatIfShown<'_>> {
        let v = self.whatifs.current(item, part)?;
        let what = whatif::what_changed(&v.base, &v.messages, &self.cfg.prompts.question_header);
        Some(WhatIfShown {
            what,
            version: self.whatifs.versions(item, part),
            score: self.whatifs.score(self.model_key(), &v.messages),
            saved: self.whatifs.command(item, part),
            wrong: v.wrong,
        })
    }

    /// The done score of the step's current what-if version.
    pub fn whatif_score(&self, item: usize, part: Part) -> Option<&crate::protocol::SlotScore> {
        match self.whatif(item, part)?.score? {
            EditScore::Done(s) => Some(s),
            _ => None,
        }
    }

    /// The option the item's what-if versions advocate, as the Trace draws them: the current
    /// step's version's, else that of the first step (in step order) with a version; None when
    /// the item has no version.
    pub(crate) fn whatif_wrong(&self, item: usize) -> Option<usize> {
        if let Some(v) = self.whatifs.current(item, self.current_part()) {
            return Some(v.wrong);
        }
        self.steps.iter().find_map(|&p| self.whatifs.current(item, p)).map(|v| v.wrong)
    }

    /// The what-if curve of the item's ramp for the Trace, or None without any version: p(the
    /// option the versions advocate) at each ramp step (clean … probe), from the step's version
    /// where it has one (R0's for the strong reset step, their dialogue being one), else from
    /// the original step when that advocates the same option (or none: the clean step, the
    /// probe); no value at a step still scoring or advocating the item's own option.
    pub(crate) fn whatif_curve(&self, item: usize) -> Option<WhatIfCurve> {
        let wrong = self.whatif_wrong(item)?;
        let own = self.entry(item)?.wrong;
        let mut points = Vec::new();
        let mut edited = Vec::new();
        for k in 0..crate::dialogue::CURVE.len() {
            let step = Part::Curve(k);
            let versioned = std::iter::once(step).chain(whatif::r0_twin(step)).find(|&p| self.whatifs.current(item, p).is_some());
            let s = match versioned {
                // A version advocating another option than the curve's has no point on it.
                Some(p) if self.whatif_advocated(item, p) != Some(wrong) => None,
                Some(p) => self.whatif_score(item, p),
                None if wrong == own || k == 0 || k == 6 => self.score(item, step),
                None => None,
            };
            points.push(s.and_then(|s| s.prob(wrong)));
            edited.push(versioned.is_some());
        }
        Some(WhatIfCurve { wrong, points, edited })
    }

    /// The item's what-if versions, one row a step in step order (the edits list, `V`).
    pub(crate) fn edit_rows(&self, item: usize) -> Vec<EditRow> {
        let Some(e) = self.entry(item) else { return Vec::new() };
        let mut rows: Vec<EditRow> = self
            .whatifs
            .edited_steps(item)
            .into_iter()
            .map(|(part, v)| {
                let orig = self.score(item, part);
                let edited = self.whatif_score(item, part);
                EditRow {
                    part,
                    versions: self.whatifs.versions(item, part),
                    what: whatif::what_changed(&v.base, &v.messages, &self.cfg.prompts.question_header),
                    wrong: (v.wrong != e.wrong).then_some(v.wrong),
                    p_orig: orig.and_then(|s| s.prob(v.wrong)),
                    p_edited: edited.and_then(|s| s.prob(v.wrong)),
                    saved: self.whatifs.command(item, part).is_some(),
                }
            })
            .collect();
        // The strong reset step and R0 are one dialogue: listed once while their versions agree.
        let current = |p: Part| self.whatifs.current(item, p);
        let r0 = whatif::r0_twin(Part::Curve(5)).expect("the strong reset step has R0 as its twin");
        if current(Part::Curve(5)).is_some() && current(Part::Curve(5)) == current(r0) {
            rows.retain(|r| r.part != Part::Curve(5));
        }
        rows.sort_by_key(|r| self.steps.iter().position(|&p| p == r.part).unwrap_or(usize::MAX));
        rows
    }

    /// The editor's first line: which message of the step it edits.
    pub(crate) fn editor_heading(&self, part_label: &str) -> String {
        let e = &self.editor;
        let Some(msgs) = e.part.and_then(|p| self.shown_messages(e.item, p)) else { return String::new() };
        let name = whatif::message_name(&msgs, e.index);
        let has_block = msgs.get(e.index).is_some_and(|m| m.role == "user" && crate::tui::model::split_user_turn(&m.content, &self.cfg.prompts.question_header).is_some());
        match msgs.get(e.index).map(|m| m.role.as_str()) {
            _ if Some(e.index) == whatif::final_user(&msgs) && has_block => {
                format!("The message of the final turn of {part_label} (the question block follows it):")
            }
            Some("user") if has_block => format!("The message of {name} of {part_label} (its question block follows it):"),
            Some("system") => format!("The system prompt of {part_label}:"),
            Some("assistant") => format!("The answer of {name} of {part_label}:"),
            _ => format!("{name} of {part_label}:"),
        }
    }

}
