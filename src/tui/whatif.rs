//! What-if edits of the Dialogue: any message of a step's dialogue — the system prompt, a user
//! turn (the text before its question block), an assistant letter — selected (`J`/`K`) and
//! edited in place (`E`, or in `$EDITOR` from the editor), scored at once on the shown model's
//! engine (its prefix cache evaluates only what follows the first changed token) and shown
//! beside the original. Edits are kept per item and step for the session, each a new version
//! of the whole dialogue (`u` goes back one); `S` writes the current one as a recovery operation
//! into an experiment file (the schema of `--experiment FILE`) when only an operation's final
//! message is edited, and otherwise as a conversation file for `hyst-tui score --messages`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};

use sha2::{Digest, Sha256};

use crate::engine::{Job, JobOutput, JobResult};
use crate::protocol::{ChatMessage, SlotScore};

use super::action::Action;
use super::generations::key;
use super::keymap::key_for;
use super::jobs::Submit;
use super::model::{split_user_turn, Part};

/// The final user turn of a step split as the recipe builds it: message, question-block prefix
/// and the question block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FinalTurn {
    pub(crate) message: String,
    pub(crate) prefix: String,
    pub(crate) block: String,
}

impl FinalTurn {
    /// The last user message of `msgs`, split (None when it has no question block).
    pub(crate) fn of(msgs: &[ChatMessage], question_header: &str) -> Option<FinalTurn> {
        let last = msgs.iter().rev().find(|m| m.role == "user")?;
        let (message, prefix, block) = split_user_turn(&last.content, question_header)?;
        Some(FinalTurn { message: message.into(), prefix: prefix.into(), block: block.into() })
    }

    /// The user turn with `message` in place of the original one.
    #[cfg(test)]
    pub(crate) fn with_message(&self, message: &str) -> String {
        join_turn(message, &self.prefix, &self.block)
    }
}

/// A user turn from its message, question-block prefix and question block (an empty message
/// leaves no blank paragraph).
fn join_turn(message: &str, prefix: &str, block: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if !message.trim().is_empty() {
        parts.push(message);
    }
    if !prefix.is_empty() {
        parts.push(prefix);
    }
    parts.push(block);
    parts.join("\n\n")
}

/// One what-if version of a step's dialogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Version {
    /// The whole edited conversation (text edits, deleted or repeated exchanges).
    pub(crate) messages: Vec<ChatMessage>,
    /// The option the user advocates in it: the item's advocated wrong option unless `w`
    /// changed it.
    pub(crate) wrong: usize,
    /// The protocol's dialogue the version was edited from: the original, or the dialogue the
    /// protocol builds with another option advocated (`w`). Text edits are told against it.
    pub(crate) base: Vec<ChatMessage>,
}

impl Version {
    /// A version of `base` (advocating `wrong`) whose conversation is `messages`.
    pub(crate) fn new(messages: Vec<ChatMessage>, wrong: usize, base: Vec<ChatMessage>) -> Version {
        Version { messages, wrong, base }
    }
}

/// The step whose dialogue is the same as `part`'s: R0 (the ordinary strong reset) and the
/// ramp's strong reset step (`Curve(5)`); None for every other step.
pub(crate) fn r0_twin(part: Part) -> Option<Part> {
    let r0 = Part::Op(crate::dialogue::conditions::ids::ORDINARY_RESET);
    match part {
        Part::Curve(5) => Some(r0),
        p if p == r0 => Some(Part::Curve(5)),
        _ => None,
    }
}

/// The next wrong option after `from` that is neither `correct`, the item's own advocated option
/// `own` (the original dialogue; `u` goes back to it) nor `from`, wrapping around; None when the
/// item has no other.
pub(crate) fn next_wrong(n_options: usize, correct: usize, own: usize, from: usize) -> Option<usize> {
    (1..n_options).map(|d| (from + d) % n_options).find(|&o| o != correct && o != own && o != from)
}

/// `w` in progress: the step rebuilt with another option advocated. The protocol's ramp is
/// self-conditioned (each pressure turn follows the model's own earlier answers), so the ramp
/// steps before the step are scored first under the new pressure, one after the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Retarget {
    pub(crate) item: usize,
    pub(crate) part: Part,
    /// The option advocated now, and the one the step's version advocated before.
    pub(crate) wrong: usize,
    pub(crate) from: usize,
    /// The model's letters at ramp steps 1, 2, … under the new pressure, as far as scored.
    pub(crate) letters: Vec<char>,
}

/// The part of message `i` an edit replaces: for a user turn with a question block the text
/// before the block (the prefix and the block stay); for any other message the whole message.
pub(crate) fn editable_text(msgs: &[ChatMessage], i: usize, question_header: &str) -> Option<String> {
    let m = msgs.get(i)?;
    if m.role == "user" {
        if let Some((message, _, _)) = split_user_turn(&m.content, question_header) {
            return Some(message.to_string());
        }
    }
    Some(m.content.clone())
}

/// `msgs` with the editable part of message `i` (see [`editable_text`]) replaced by `text`.
pub(crate) fn with_text(msgs: &[ChatMessage], i: usize, text: &str, question_header: &str) -> Vec<ChatMessage> {
    let mut out = msgs.to_vec();
    if let Some(m) = out.get_mut(i) {
        let split = if m.role == "user" { split_user_turn(&m.content, question_header) } else { None };
        m.content = match split {
            Some((_, prefix, block)) => join_turn(text, prefix, block),
            None => text.to_string(),
        };
    }
    out
}

/// The exchange (user turn, assistant reply) message `i` belongs to: the index of its user turn.
/// Only exchanges of the history before the final user turn qualify.
fn exchange_at(msgs: &[ChatMessage], i: usize) -> Result<usize, String> {
    let last = final_user(msgs).ok_or("no user turn")?;
    let u = match msgs.get(i).map(|m| m.role.as_str()) {
        Some("user") => i,
        Some("assistant") if i > 0 => i - 1,
        _ => return Err(format!("select a user turn or an answer of the history ({}/{})", key_for(Action::MoveMessage(1)), key_for(Action::MoveMessage(-1)))),
    };
    let is = |k: usize, role: &str| msgs.get(k).is_some_and(|m| m.role == role);
    if u >= last || !is(u, "user") || !is(u + 1, "assistant") {
        return Err("select an exchange of the history (a user turn before the final one and its answer)".into());
    }
    Ok(u)
}

/// `msgs` without the exchange of message `i` (its user turn and the answer to it).
pub(crate) fn delete_exchange(msgs: &[ChatMessage], i: usize) -> Result<Vec<ChatMessage>, String> {
    let u = exchange_at(msgs, i)?;
    let mut out = msgs.to_vec();
    out.drain(u..u + 2);
    Ok(out)
}

/// `msgs` with the exchange of message `i` said once more right after it (the user pushes
/// again, the model answers the same letter); the copy can then be edited like any message.
pub(crate) fn repeat_exchange(msgs: &[ChatMessage], i: usize) -> Result<Vec<ChatMessage>, String> {
    let u = exchange_at(msgs, i)?;
    let mut out = msgs.to_vec();
    let copy = [out[u].clone(), out[u + 1].clone()];
    out.splice(u + 2..u + 2, copy);
    Ok(out)
}

/// What a version changed against the original, in words: each changed message by name and
/// its new text (the editable part), plus the exchanges deleted or added.
pub(crate) fn describe(original: &[ChatMessage], edited: &[ChatMessage], question_header: &str) -> String {
    let mut parts = Vec::new();
    let exchanges = |m: &[ChatMessage]| m.iter().filter(|x| x.role == "user").count();
    let (a, b) = (exchanges(original), exchanges(edited));
    if a != b {
        parts.push(format!("{} turns → {}", a, b));
    }
    if original.len() == edited.len() {
        for (i, (o, e)) in original.iter().zip(edited).enumerate() {
            if o != e {
                let t = editable_text(edited, i, question_header).unwrap_or_default();
                parts.push(format!("{}: {t}", message_name(edited, i)));
            }
        }
    }
    parts.join(" · ")
}

/// What a version changed against the dialogue it was edited from, in words: the final
/// message's new text when only that changed, else [`describe`]; empty when nothing changed (a
/// version of `w` alone).
pub(crate) fn what_changed(base: &[ChatMessage], edited: &[ChatMessage], question_header: &str) -> String {
    if base == edited {
        String::new()
    } else if only_final(base, edited) {
        final_user(edited).and_then(|i| editable_text(edited, i, question_header)).unwrap_or_default()
    } else {
        describe(base, edited, question_header)
    }
}

/// A step's current what-if version as the views show it.
#[derive(Clone, Debug)]
pub(crate) struct WhatIfShown<'a> {
    /// What the text edits changed (see [`what_changed`]).
    pub(crate) what: String,
    /// Its number (1 = the first version).
    pub(crate) version: usize,
    /// Its score on the shown model, as far as known.
    pub(crate) score: Option<&'a EditScore>,
    /// The command that runs or scores it, once saved.
    pub(crate) saved: Option<&'a str>,
    /// The option the user advocates in it.
    pub(crate) wrong: usize,
}

/// The Trace's what-if curve (see `App::whatif_curve`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WhatIfCurve {
    /// The option whose probability it traces.
    pub(crate) wrong: usize,
    /// p(`wrong`) at each ramp step (clean … probe), where known.
    pub(crate) points: Vec<Option<f64>>,
    /// Which steps have a what-if version (the others are the original's).
    pub(crate) edited: Vec<bool>,
}

/// One row of the edits list (`V`): a step of the item with what-if versions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct EditRow {
    pub(crate) part: Part,
    pub(crate) versions: usize,
    /// What the text edits of the current version changed.
    pub(crate) what: String,
    /// The option advocated instead of the item's own, if `w` changed it.
    pub(crate) wrong: Option<usize>,
    /// p(advocated option) of the original step and of the current version.
    pub(crate) p_orig: Option<f64>,
    pub(crate) p_edited: Option<f64>,
    /// The version was saved (`S`).
    pub(crate) saved: bool,
}

/// The index of the last user message: what `E` edits when no message is selected.
pub(crate) fn final_user(msgs: &[ChatMessage]) -> Option<usize> {
    msgs.iter().rposition(|m| m.role == "user")
}

/// The edited dialogue differs from the original in the final user message only.
pub(crate) fn only_final(original: &[ChatMessage], edited: &[ChatMessage]) -> bool {
    let Some(last) = final_user(original) else { return false };
    original.len() == edited.len()
        && original[last] != edited[last]
        && original.iter().zip(edited).enumerate().all(|(i, (o, e))| i == last || o == e)
}

/// A message's name as the transcript shows it: `system`, `user 3`, `assistant 2`.
pub(crate) fn message_name(msgs: &[ChatMessage], i: usize) -> String {
    let Some(m) = msgs.get(i) else { return format!("message {}", i + 1) };
    match m.role.as_str() {
        "system" => "system".to_string(),
        role => format!("{role} {}", msgs[..=i].iter().filter(|x| x.role == role).count()),
    }
}

/// The message cursor moved by `d` from `from` (`None` = the final user message), within the
/// dialogue.
pub(crate) fn move_message(msgs: &[ChatMessage], from: Option<usize>, d: isize) -> Option<usize> {
    let last = msgs.len().checked_sub(1)?;
    let at = from.or_else(|| final_user(msgs)).unwrap_or(last);
    Some(at.saturating_add_signed(d).min(last))
}

#[derive(Clone, Debug)]
pub(crate) enum EditScore {
    Running,
    Done(Box<SlotScore>),
    Failed(String),
}

/// The text being typed in the editor, and its cursor (a byte offset on a character boundary).
#[derive(Clone, Debug, Default)]
pub(crate) struct Editor {
    pub(crate) item: usize,
    pub(crate) part: Option<Part>,
    /// The edited message's index in the step's dialogue.
    pub(crate) index: usize,
    pub(crate) text: String,
    pub(crate) cursor: usize,
}

impl Editor {
    /// The editor on `text`, the cursor at its end.
    pub(crate) fn new(item: usize, part: Part, index: usize, text: String) -> Editor {
        let cursor = text.len();
        Editor { item, part: Some(part), index, text, cursor }
    }

    /// Replaces the whole text (from `$EDITOR`), the cursor at its end.
    pub(crate) fn set_text(&mut self, text: String) {
        self.cursor = text.len();
        self.text = text;
    }

    pub(crate) fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    /// Deletes the character before the cursor.
    pub(crate) fn backspace(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
            self.text.remove(self.cursor);
        }
    }

    /// Deletes the character under the cursor.
    pub(crate) fn delete(&mut self) {
        if self.cursor < self.text.len() {
            self.text.remove(self.cursor);
        }
    }

    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }

    pub(crate) fn left(&mut self) {
        if let Some(c) = self.text[..self.cursor].chars().next_back() {
            self.cursor -= c.len_utf8();
        }
    }

    pub(crate) fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    fn line_start(&self, at: usize) -> usize {
        self.text[..at].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self, at: usize) -> usize {
        self.text[at..].find('\n').map_or(self.text.len(), |i| at + i)
    }

    /// To the start of the cursor's line.
    pub(crate) fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// To the end of the cursor's line.
    pub(crate) fn end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    /// The byte offset `col` characters into the line starting at `start` (its end if shorter).
    fn at_column(&self, start: usize, col: usize) -> usize {
        let end = self.line_end(start);
        self.text[start..end].char_indices().nth(col).map_or(end, |(i, _)| start + i)
    }

    /// One line up (typed lines, not the wrapped ones), keeping the column where it can.
    pub(crate) fn up(&mut self) {
        let start = self.line_start(self.cursor);
        if start == 0 {
            self.cursor = 0;
            return;
        }
        let col = self.text[start..self.cursor].chars().count();
        let prev = self.line_start(start - 1);
        self.cursor = self.at_column(prev, col);
    }

    /// One line down, keeping the column where it can.
    pub(crate) fn down(&mut self) {
        let end = self.line_end(self.cursor);
        if end == self.text.len() {
            self.cursor = end;
            return;
        }
        let col = self.text[self.line_start(self.cursor)..self.cursor].chars().count();
        self.cursor = self.at_column(end + 1, col);
    }
}

pub(crate) struct WhatIfs {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    /// Versions of the edited dialogue per (item, step), oldest first.
    edits: HashMap<(usize, Part), Vec<Version>>,
    /// Scores of edited conversations by context key.
    scores: HashMap<String, EditScore>,
    running: HashMap<u64, String>,
    /// The batch command of the operation saved from a step's current version.
    commands: HashMap<(usize, Part, usize), String>,
}

impl Default for WhatIfs {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        WhatIfs { tx, rx, edits: HashMap::new(), scores: HashMap::new(), running: HashMap::new(), commands: HashMap::new() }
    }
}

impl WhatIfs {
    /// The current edit of a step.
    pub(crate) fn current(&self, item: usize, part: Part) -> Option<&Version> {
        self.edits.get(&(item, part)).and_then(|v| v.last())
    }

    /// The steps of `item` that have a what-if version, with their current one.
    pub(crate) fn edited_steps(&self, item: usize) -> Vec<(Part, &Version)> {
        self.edits.iter().filter(|((i, _), v)| *i == item && !v.is_empty()).filter_map(|((_, p), v)| Some((*p, v.last()?))).collect()
    }

    /// How many versions the step's edit has.
    pub(crate) fn versions(&self, item: usize, part: Part) -> usize {
        self.edits.get(&(item, part)).map_or(0, Vec::len)
    }

    pub(crate) fn push(&mut self, item: usize, part: Part, version: Version) {
        self.edits.entry((item, part)).or_default().push(version);
    }

    /// Back one version (the original once none is left); false when there was no edit.
    pub(crate) fn undo(&mut self, item: usize, part: Part) -> bool {
        let Some(v) = self.edits.get_mut(&(item, part)) else { return false };
        v.pop();
        if v.is_empty() {
            self.edits.remove(&(item, part));
        }
        true
    }

    /// Remembers the batch command of the operation saved from the step's current version.
    pub(crate) fn set_command(&mut self, item: usize, part: Part, command: String) {
        let v = self.versions(item, part);
        self.commands.insert((item, part, v), command);
    }

    /// The batch command saved from the step's current version, if it was saved.
    pub(crate) fn command(&self, item: usize, part: Part) -> Option<&str> {
        self.commands.get(&(item, part, self.versions(item, part))).map(String::as_str)
    }

    pub(crate) fn score(&self, model: &str, messages: &[ChatMessage]) -> Option<&EditScore> {
        self.scores.get(&key(model, messages))
    }

    /// Scores an edited conversation unless it is scored, being scored or failed (a failed one
    /// is not asked again every frame; a new edit of it is a new conversation).
    pub(crate) fn request(&mut self, engine: &dyn Submit, model: &str, messages: &[ChatMessage], letters: Vec<char>) {
        let k = key(model, messages);
        if self.scores.contains_key(&k) {
            return;
        }
        let id = engine.submit(Job::Score { messages: messages.to_vec(), letters }, self.tx.clone());
        self.running.insert(id, k.clone());
        self.scores.insert(k, EditScore::Running);
    }

    /// Takes in finished scores.
    pub(crate) fn poll(&mut self) {
        while let Ok(r) = self.rx.try_recv() {
            let Some(k) = self.running.remove(&r.id) else { continue };
            let s = match r.output {
                Ok(JobOutput::Score(s)) => EditScore::Done(s),
                // Cancelled (the user moved on): asked again when the step is shown.
                Err(crate::engine::EngineError::Cancelled) => {
                    self.scores.remove(&k);
                    continue;
                }
                Err(e) => EditScore::Failed(e.to_string()),
                Ok(_) => EditScore::Failed("unexpected engine answer".into()),
            };
            self.scores.insert(k, s);
        }
    }

    pub(crate) fn busy(&self) -> bool {
        !self.running.is_empty()
    }

    /// The engine went away: what it ran will not answer.
    pub(crate) fn forget_running(&mut self) {
        for k in self.running.values() {
            if matches!(self.scores.get(k), Some(EditScore::Running)) {
                self.scores.remove(k);
            }
        }
        self.running.clear();
    }
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What a saved operation says.
pub(crate) struct SavedOp<'a> {
    pub(crate) name: String,
    pub(crate) short: String,
    pub(crate) label: String,
    pub(crate) history: &'a str,
    pub(crate) assistant: &'a str,
    pub(crate) message: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) description: String,
}

/// The experiment file text of one operation.
pub(crate) fn experiment_toml(op: &SavedOp) -> String {
    let mut t = String::new();
    t.push_str(&format!("# Written by the hyst-tui explorer (what-if edit, {} in the Dialogue view).\n", key_for(Action::SaveEdit)));
    t.push_str(&format!("description = {}\n\n[[operation]]\n", toml_str(&op.description)));
    t.push_str(&format!("name = {}\n", toml_str(&op.name)));
    t.push_str(&format!("short = {}\n", toml_str(&op.short)));
    t.push_str(&format!("label = {}\n", toml_str(&op.label)));
    t.push_str(&format!("history = {}\n", toml_str(op.history)));
    if op.assistant != "model" {
        t.push_str(&format!("assistant = {}\n", toml_str(op.assistant)));
    }
    if !op.message.trim().is_empty() {
        t.push_str(&format!("message = {}\n", toml_str(op.message)));
    }
    t.push_str(&format!("prefix = {}\n", toml_str(op.prefix)));
    t.push_str(&format!("description = {}\n", toml_str(&op.description)));
    t
}

/// The paper's pressure ramp as custom-ramp steps: (step name, message prompt key, prefix
/// prompt key) of weak, medium, strong pressure and the medium reset — the four exchanges before
/// R0's final turn.
pub(crate) const PAPER_RAMP_STEPS: [(&str, &str, &str); 4] = [
    ("weak", "weak_pressure", "pressure_prefix"),
    ("medium", "medium_pressure", "pressure_prefix"),
    ("strong", "strong_pressure", "pressure_prefix"),
    ("medium_reset", "medium_reset", "medium_reset_prefix"),
];

/// What a saved ramp says: the paper's ramp with step `step` (0 = weak … 3 = medium reset)
/// rewritten, and R0 after it.
pub(crate) struct SavedRamp<'a> {
    /// The id of its content ([`op_id`]).
    pub(crate) id: &'a str,
    pub(crate) step: usize,
    pub(crate) message: &'a str,
    pub(crate) prefix: &'a str,
    pub(crate) description: String,
}

impl SavedRamp<'_> {
    /// The ramp's name (`whatif_<id>`; its steps are `whatif_<id>:weak`, …) and short label
    /// (`V` + five hex digits: steps `V1A2B31` …).
    pub(crate) fn ramp_names(&self) -> (String, String) {
        (format!("whatif_{}", self.id), format!("V{}", self.id[..5].to_ascii_uppercase()))
    }

    /// The name and short label of R0 on the ramp (`whatif_<id>_r0`, `W<ID>`).
    pub(crate) fn op_names(&self) -> (String, String) {
        let (name, short) = op_names(self.id);
        (format!("{name}_r0"), short)
    }
}

/// The experiment file of a rewritten ramp step: a `[[ramp]]` of the paper's four exchanges
/// (by prompt key) with the edited one written out, and R0's final turn after it as an
/// operation on that ramp.
pub(crate) fn ramp_experiment_toml(r: &SavedRamp) -> String {
    let (ramp, ramp_short) = r.ramp_names();
    let (op, op_short) = r.op_names();
    let mut t = String::new();
    t.push_str(&format!(
        "# Written by the hyst-tui explorer (what-if edit of a ramp step, {} in the Dialogue view).\n",
        key_for(Action::SaveEdit)
    ));
    t.push_str(&format!("description = {}\n\n[[ramp]]\n", toml_str(&r.description)));
    t.push_str(&format!("name = {}\nshort = {}\ndescription = {}\n", toml_str(&ramp), toml_str(&ramp_short), toml_str(&r.description)));
    for (k, (name, message, prefix)) in PAPER_RAMP_STEPS.iter().enumerate() {
        t.push_str(&format!("\n[[ramp.step]]\nname = {}\n", toml_str(name)));
        if k == r.step {
            if !r.message.trim().is_empty() {
                t.push_str(&format!("message = {}\n", toml_str(r.message)));
            }
            t.push_str(&format!("prefix = {}\n", toml_str(r.prefix)));
        } else {
            t.push_str(&format!("turn = [{}, {}]\n", toml_str(message), toml_str(&format!("question:{prefix}"))));
        }
    }
    t.push_str("\n[[operation]]\n");
    t.push_str(&format!("name = {}\nshort = {}\n", toml_str(&op), toml_str(&op_short)));
    t.push_str(&format!("label = {}\n", toml_str(&format!("R0 after what-if ramp {}", r.id))));
    t.push_str(&format!("ramp = {}\nhistory = \"kept\"\n", toml_str(&ramp)));
    t.push_str("turn = [\"strong_reset\", \"question:strong_reset_prefix\"]\n");
    t.push_str(&format!("description = {}\n", toml_str(&format!("R0's final turn after the ramp {ramp} ({})", r.description))));
    t
}

/// A short, stable id of what an operation does (its history, assistant turn, message and
/// prefix): seven hex digits of their SHA-256. Operations saved in different sessions get
/// different names unless they are the same operation.
pub(crate) fn op_id(history: &str, assistant: &str, message: &str, prefix: &str) -> String {
    let mut h = Sha256::new();
    for part in [history, assistant, message, prefix] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())[..7].to_string()
}

/// The name (`whatif_<id>`) and short label (`W<ID>`, 8 characters) of a saved operation.
pub(crate) fn op_names(id: &str) -> (String, String) {
    (format!("whatif_{id}"), format!("W{}", id.to_ascii_uppercase()))
}

/// The conversation file of an edit that is no operation: the original dialogue, then the
/// edited one, a line each, in the format `hyst-tui score --messages FILE` reads.
pub(crate) fn conversation_jsonl(original: &[ChatMessage], edited: &[ChatMessage], letters: &[char]) -> String {
    let letters: Vec<String> = letters.iter().map(char::to_string).collect();
    let line = |m: &[ChatMessage]| serde_json::json!({ "messages": m, "letters": letters.join(",") }).to_string();
    format!("{}\n{}\n", line(original), line(edited))
}

/// `<dir>/whatif_<id of the content>.<ext>`: the same content always gets the same file.
pub(crate) fn content_path(dir: &Path, content: &str, ext: &str) -> PathBuf {
    let id = hex::encode(Sha256::digest(content.as_bytes()));
    dir.join(format!("whatif_{}.{ext}", &id[..7]))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::dialogue::recipe::ExperimentSource;

    #[test]
    fn a_final_turn_splits_and_joins_back() {
        let content = "Please reset.\n\nAnswer again.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y";
        let msgs = vec![ChatMessage { role: "user".into(), content: content.into() }];
        let t = FinalTurn::of(&msgs, "Question:").unwrap();
        assert_eq!((t.message.as_str(), t.prefix.as_str()), ("Please reset.", "Answer again."));
        assert_eq!(t.with_message("Please reset."), content);
        assert_eq!(t.with_message("Forget it all."), content.replace("Please reset.", "Forget it all."));
        assert_eq!(t.with_message(" "), content.replace("Please reset.\n\n", ""));
        let e = with_text(&msgs, 0, "X", "Question:");
        assert!(e[0].content.starts_with("X\n\nAnswer again."));
    }

    #[test]
    fn versions_and_undo() {
        let mut w = WhatIfs::default();
        let p = Part::Op("ordinary_strong_reset");
        assert!(!w.undo(0, p));
        let d = dialogue();
        let one = Version::new(with_text(&d, 1, "one", "Question:"), 1, d.clone());
        let two = Version::new(with_text(&one.messages, 0, "sys", "Question:"), 1, d.clone());
        w.push(0, p, one.clone());
        w.push(0, p, two.clone());
        assert_eq!(w.edited_steps(0), vec![(p, &two)]);
        assert!(w.edited_steps(1).is_empty());
        assert_eq!((w.current(0, p), w.versions(0, p)), (Some(&two), 2));
        assert!(w.undo(0, p));
        assert_eq!(w.current(0, p), Some(&one));
        assert!(w.undo(0, p));
        assert_eq!(w.current(0, p), None);
        assert_eq!(w.current(1, p), None);
        assert!(w.edited_steps(0).is_empty());
    }

    #[test]
    fn the_next_wrong_option() {
        // Four options, C correct, B the item's own: from B on to D, then A, then D again.
        assert_eq!(next_wrong(4, 2, 1, 1), Some(3));
        assert_eq!(next_wrong(4, 2, 1, 3), Some(0));
        assert_eq!(next_wrong(4, 2, 1, 0), Some(3));
        // Three options: one other wrong option, and none after it; two: none at all.
        assert_eq!(next_wrong(3, 2, 1, 1), Some(0));
        assert_eq!(next_wrong(3, 2, 1, 0), None);
        assert_eq!(next_wrong(2, 0, 1, 1), None);
    }

    #[test]
    fn the_saved_operation_is_valid_toml() {
        let op = SavedOp {
            name: "whatif_1".into(),
            short: "W1".into(),
            label: "what-if \"R0\"".into(),
            history: "kept",
            assistant: "model",
            message: "Line one\nline \\ two",
            prefix: "Answer again.",
            description: "d".into(),
        };
        let v: toml::Value = toml::from_str(&experiment_toml(&op)).unwrap();
        let o = &v["operation"][0];
        assert_eq!(o["message"].as_str(), Some("Line one\nline \\ two"));
        assert_eq!(o["label"].as_str(), Some("what-if \"R0\""));
        assert_eq!(content_path(Path::new("/x"), "a", "toml"), content_path(Path::new("/x"), "a", "toml"));
        assert_ne!(content_path(Path::new("/x"), "a", "toml"), content_path(Path::new("/x"), "b", "toml"));
    }

    fn msg(role: &str, content: &str) -> ChatMessage {
        ChatMessage { role: role.into(), content: content.into() }
    }

    /// A ramp-like dialogue: system, user 1 (clean), assistant 1, user 2 (pressure).
    fn dialogue() -> Vec<ChatMessage> {
        vec![
            msg("system", "Be brief."),
            msg("user", "Answer.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y"),
            msg("assistant", "A"),
            msg("user", "It is B.\n\nAnswer again.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y"),
        ]
    }

    #[test]
    fn any_message_can_be_edited() {
        let d = dialogue();
        let h = "Question:";
        // What an edit replaces: the text before a question block, else the whole message.
        assert_eq!(editable_text(&d, 0, h).as_deref(), Some("Be brief."));
        assert_eq!(editable_text(&d, 1, h).as_deref(), Some(""), "the clean turn has only a prefix");
        assert_eq!(editable_text(&d, 2, h).as_deref(), Some("A"));
        assert_eq!(editable_text(&d, 3, h).as_deref(), Some("It is B."));
        assert_eq!(editable_text(&d, 4, h), None);
        let e = with_text(&with_text(&with_text(&d, 0, "Be careful.", h), 2, "B", h), 3, "Surely B?", h);
        assert_eq!(e[0].content, "Be careful.");
        assert_eq!(e[1], d[1], "unedited messages stay");
        assert_eq!(e[2].content, "B");
        assert_eq!(e[3].content, d[3].content.replace("It is B.", "Surely B?"));
        // An edit of the clean turn puts a message before its prefix.
        let edits = e.clone();
        let e = with_text(&d, 1, "Hi.", h);
        assert!(e[1].content.starts_with("Hi.\n\nAnswer.\n\nQuestion:"), "{}", e[1].content);
        // The final user message, and whether an edit is only that.
        assert_eq!(final_user(&d), Some(3));
        assert!(only_final(&d, &with_text(&d, 3, "x", h)));
        assert!(!only_final(&d, &edits));
        assert!(!only_final(&d, &with_text(&d, 1, "x", h)));
        assert!(!only_final(&d, &d), "no change is no edit");
        assert_eq!(what_changed(&d, &d, h), "");
        assert_eq!(what_changed(&d, &with_text(&d, 3, "Sure?", h), h), "Sure?");
        assert_eq!(what_changed(&d, &edits, h), describe(&d, &edits, h));
        assert_eq!(describe(&d, &edits, h), "system: Be careful. · assistant 1: B · user 2: Surely B?");
        assert_eq!((message_name(&d, 0), message_name(&d, 2), message_name(&d, 3)), ("system".into(), "assistant 1".into(), "user 2".into()));
    }

    #[test]
    fn exchanges_are_deleted_and_repeated() {
        let d = dialogue();
        let h = "Question:";
        // The exchange of user 1 (index 1) and its answer (index 2), from either message.
        let del = delete_exchange(&d, 2).unwrap();
        assert_eq!(del, vec![d[0].clone(), d[3].clone()]);
        assert_eq!(delete_exchange(&d, 1).unwrap(), del);
        let rep = repeat_exchange(&d, 1).unwrap();
        assert_eq!(rep, vec![d[0].clone(), d[1].clone(), d[2].clone(), d[1].clone(), d[2].clone(), d[3].clone()]);
        assert_eq!(describe(&d, &rep, h), "2 turns → 3");
        assert_eq!(describe(&d, &del, h), "2 turns → 1");
        // Neither the system prompt nor the final turn is an exchange of the history.
        assert!(delete_exchange(&d, 0).is_err());
        assert!(delete_exchange(&d, 3).is_err());
        assert!(repeat_exchange(&d, 3).is_err());
        // A repeated exchange's copy is edited on its own.
        let e = with_text(&rep, 3, "Again.", h);
        assert_eq!(e[1], d[1]);
        assert_ne!(e[3], d[1]);
    }

    #[test]
    fn the_message_cursor() {
        let d = dialogue();
        // Unselected = the final user message; it stops at the ends.
        assert_eq!(move_message(&d, None, -1), Some(2));
        assert_eq!(move_message(&d, None, 1), Some(3));
        assert_eq!(move_message(&d, Some(1), -5), Some(0));
        assert_eq!(move_message(&d, Some(0), 1), Some(1));
        assert_eq!(move_message(&[], None, 1), None);
    }

    #[test]
    fn the_editor_cursor() {
        let mut e = Editor::new(0, Part::Curve(0), 0, "ab\nçdef\ng".into());
        assert_eq!(e.cursor, e.text.len());
        e.up(); // from the end of "g" (column 1) to column 1 of "çdef"
        e.insert('X');
        assert_eq!(e.text, "ab\nçXdef\ng");
        e.up();
        e.insert('Y'); // column 2 of "ab" = its end
        assert_eq!(e.text, "abY\nçXdef\ng");
        e.up();
        assert_eq!(e.cursor, 0, "up from the first line goes to its start");
        e.end();
        e.left();
        e.backspace(); // deletes the 'b' before 'Y'
        assert_eq!(e.text, "aY\nçXdef\ng");
        e.down();
        e.home();
        e.delete(); // the 'ç' (two bytes)
        assert_eq!(e.text, "aY\nXdef\ng");
        e.right();
        e.right();
        e.down(); // column 2 is past "g": its end
        e.insert('!');
        assert_eq!(e.text, "aY\nXdef\ng!");
        e.down();
        assert_eq!(e.cursor, e.text.len());
        e.home();
        e.backspace(); // joins the lines
        assert_eq!(e.text, "aY\nXdefg!");
        e.clear();
        e.backspace();
        e.delete();
        e.left();
        assert_eq!((e.text.as_str(), e.cursor), ("", 0));
        e.set_text("new".into());
        assert_eq!(e.cursor, 3);
    }

    /// Saved operations are named by their content: two edits saved in different sessions load
    /// together (`--experiment A --experiment B`), and the short label fits 8 characters.
    #[test]
    fn saved_operations_have_unique_names() {
        let ops: Vec<String> = ["Forget it.", "Start over."]
            .iter()
            .map(|m| {
                let id = op_id("kept", "model", m, "Answer again.");
                let (name, short) = op_names(&id);
                assert!(short.chars().count() <= 8 && name.starts_with("whatif_"), "{name} {short}");
                experiment_toml(&SavedOp {
                    name,
                    short,
                    label: format!("R0 what-if {id}"),
                    history: "kept",
                    assistant: "model",
                    message: m,
                    prefix: "Answer again.",
                    description: "d".into(),
                })
            })
            .collect();
        assert_ne!(ops[0], ops[1]);
        assert_eq!(op_id("kept", "model", "Forget it.", "Answer again."), op_id("kept", "model", "Forget it.", "Answer again."));
        let files = [ExperimentSource::new("a/whatif_a.toml", ops[0].clone()), ExperimentSource::new("b/whatif_b.toml", ops[1].clone())];
        crate::dialogue::conditions::check_experiments(&files).unwrap();
    }

    #[test]
    fn an_edited_conversation_file_is_what_score_reads() {
        let d = dialogue();
        let e = with_text(&d, 0, "Be careful.", "Question:");
        let text = conversation_jsonl(&d, &e, &['A', 'B']);
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["letters"], "A,B");
        let back: Vec<ChatMessage> = serde_json::from_value(lines[1]["messages"].clone()).unwrap();
        assert_eq!(back, e);
        let orig: Vec<ChatMessage> = serde_json::from_value(lines[0]["messages"].clone()).unwrap();
        assert_eq!(orig, d);
    }

    /// A saved ramp-step edit is the paper's ramp with that step rewritten: parsed as an
    /// experiment file, its steps build exactly the paper's ramp dialogues for an item (the
    /// edited step with the new message), so its batch run measures the edit on every item.
    #[test]
    fn a_saved_ramp_step_is_the_papers_ramp_with_the_edit() {
        use crate::dialogue::{conditions, recipe, Builder, Control, DialogueItem, CURVE};
        let prompts = crate::prompts::PromptSet::bundled();
        let b = Builder::new(&prompts);
        let item = crate::data::Item {
            id: "x".into(),
            dataset: "sample".into(),
            question: "Which is a prime?".into(),
            options: vec!["4".into(), "7".into(), "9".into()],
            correct: 1,
            category: String::new(),
            meta: Default::default(),
        };
        let d = DialogueItem { item, wrong: 2 };
        let letters = ['B', 'C', 'C', 'B'];
        let message = "Everyone I asked picked {wrong_option_text}.";
        let saved = SavedRamp { id: "1a2b3c4", step: 1, message, prefix: "Answer again.", description: "d".into() };
        let text = ramp_experiment_toml(&saved);
        let parsed = recipe::parse_file(&text, "whatif_1a2b3c4.toml", recipe::FileKind::Experiment).unwrap();
        let r = &parsed.ramps[0];
        assert_eq!((r.name.as_str(), r.short.as_str(), r.steps.len()), ("whatif_1a2b3c4", "V1A2B3", 4));
        assert_eq!(parsed.defs[0].name, "whatif_1a2b3c4_r0");
        for k in 0..4 {
            let ours = conditions::custom_ramp_messages(&b, &d, r, k, &letters);
            let mut paper = b.curve_messages(&d, Control::PressureWrong, CURVE[k + 1], &letters);
            if k >= 1 {
                // The medium-pressure turn (user 2) carries the edit from step 1 on.
                let orig = b.ramp_user(&d, Control::PressureWrong, 1);
                let edited = orig.replace(&crate::prompts::fill(&prompts.medium_pressure, &[("advocated_option_text", "9")]), "Everyone I asked picked 9.");
                let edited = edited.replace(&prompts.pressure_prefix, "Answer again.");
                let i = paper.iter().position(|m| m.content == orig).unwrap();
                paper[i].content = edited;
            }
            assert_eq!(ours, paper, "step {k}");
        }
        conditions::check_experiments(&[ExperimentSource::new("whatif_1a2b3c4.toml", text)]).unwrap();
    }
}
