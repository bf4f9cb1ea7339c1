//! `S`: a what-if version saved. An edit of only an operation's final message becomes a
//! recovery operation in an experiment file under `<data dir>/experiments`, an edit of only a
//! pressure step's message a custom ramp with R0 after it, each with the batch command that
//! runs it over the dataset; any other edit becomes a conversation file (the original and the
//! edited dialogue) with the `score` command that scores it. Files are named by their content.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::edit::{editable_text, final_user};
use super::{notice, Cx, WhatIf};
use crate::dialogue::conditions;
use crate::protocol::ChatMessage;
use crate::tui::action::Action;
use crate::tui::event::Event;
use crate::tui::keymap::key_for;
use crate::tui::parts::{self, Part};

impl WhatIf {
    /// `S` on the current step.
    pub(super) fn save_edit(&mut self, cx: &Cx) -> Vec<Event> {
        let Some((item, e)) = cx.current_entry() else { return Vec::new() };
        let part = cx.part;
        let (Some(v), Some(msgs)) = (self.store.current(item, part).cloned(), cx.messages(item, part)) else {
            return notice(format!("no what-if edit here to save ({} edits a message)", key_for(Action::StartEdit)));
        };
        let other_wrong = v.wrong != e.wrong;
        let m = &v.messages;
        let edit = final_user(m).and_then(|i| editable_text(m, i, cx.header())).unwrap_or_default();
        match part {
            Part::Op(key) if self.saves_as_operation(item, part, cx) => self.save_operation(cx, item, part, key, &edit),
            // The strong reset step is R0 on the paper's ramp.
            Part::Curve(5) if self.saves_as_operation(item, part, cx) => self.save_operation(cx, item, part, conditions::ids::ORDINARY_RESET, &edit),
            Part::Curve(k) if self.saves_as_operation(item, part, cx) => self.save_ramp(cx, item, part, k - 1, &edit),
            _ => {
                let why = match part {
                    _ if other_wrong => "another option advocated",
                    Part::Op(_) | Part::Curve(1..=5) => "more than the final message is changed",
                    _ => "the clean step, the probe and custom ramp steps are saved as conversations",
                };
                self.save_conversation(cx, item, part, &msgs, &v.messages, why)
            }
        }
    }

    fn save_conversation(&mut self, cx: &Cx, item: usize, part: Part, msgs: &[ChatMessage], edited: &[ChatMessage], why: &str) -> Vec<Event> {
        let Some(e) = cx.entry(item) else { return Vec::new() };
        let text = conversation_jsonl(msgs, edited, &e.item.letters());
        let path = content_path(&crate::config::data_dir().join("experiments"), &text, "jsonl");
        if let Err(events) = write_saved(&path, &text) {
            return events;
        }
        let command = format!("hyst-tui score --model {} --messages {}", cx.model_key(), path.display());
        tracing::info!("saved the what-if conversations (original, edited) to {}; score them with: {command}", path.display());
        self.store.set_command(item, part, command);
        notice(format!("not an operation ({why}): saved to {} · the score command is under the distribution", path.display()))
    }

    fn save_operation(&mut self, cx: &Cx, item: usize, part: Part, key: &str, edit: &str) -> Vec<Event> {
        use crate::dialogue::recipe::History;
        let Some(cond) = cx.reg().find(key) else { return Vec::new() };
        let Some(recipe) = cond.recipe() else { return Vec::new() };
        let history = match recipe.history {
            History::Kept => "kept",
            History::None => "none",
            _ => return notice(format!("{}: only an operation that keeps the history or has none can be saved", cond.short)),
        };
        let (message, prefix) = match self.generic_final_turn(cx, item, part, edit) {
            Ok(Some(t)) => t,
            Ok(None) => return Vec::new(),
            Err(events) => return events,
        };
        let Some(e) = cx.entry(item) else { return Vec::new() };
        let assistant = if history == "kept" { recipe.assistant.key() } else { "model" };
        let op_id = op_id(history, assistant, &message, &prefix);
        let (name, short) = op_names(&op_id);
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
        if !path.exists() {
            if let Err(events) = write_saved(&path, &experiment_toml(&op)) {
                return events;
            }
        }
        self.saved_experiment(cx, item, part, &name, &short, &path)
    }

    /// The edited final message and the step's prefix as an experiment file has them (Err with
    /// a notice when they hold braces): the item's option texts become `{wrong_option_text}` /
    /// `{correct_option_text}`, so the saved operation or ramp fits every item.
    fn generic_final_turn(&self, cx: &Cx, item: usize, part: Part, edit: &str) -> Result<Option<(String, String)>, Vec<Event>> {
        let Some((_, t)) = self.final_turn(cx, item, part) else { return Ok(None) };
        if edit.contains(['{', '}']) || t.prefix.contains(['{', '}']) {
            return Err(notice("braces are placeholders in an experiment file: write the message without { }"));
        }
        let Some(e) = cx.entry(item) else { return Ok(None) };
        let generic = |s: &str| -> String {
            let (w, c) = (&e.item.options[e.wrong], &e.item.options[e.item.correct]);
            s.replace(w.as_str(), "{wrong_option_text}").replace(c.as_str(), "{correct_option_text}")
        };
        Ok(Some((generic(edit), generic(&t.prefix))))
    }

    /// A pressure step's rewritten message (`step` 0 = weak … 3 = medium reset) saved as a
    /// custom ramp — the paper's four exchanges with that one rewritten — and R0's final turn
    /// after it as an operation on it, in `<data dir>/experiments/whatif_<id>.toml`.
    fn save_ramp(&mut self, cx: &Cx, item: usize, part: Part, step: usize, edit: &str) -> Vec<Event> {
        let (message, prefix) = match self.generic_final_turn(cx, item, part, edit) {
            Ok(Some(t)) => t,
            Ok(None) => return Vec::new(),
            Err(events) => return events,
        };
        let Some(e) = cx.entry(item) else { return Vec::new() };
        let id = op_id("ramp", PAPER_RAMP_STEPS[step].0, &message, &prefix);
        let saved = SavedRamp {
            id: &id,
            step,
            message: &message,
            prefix: &prefix,
            description: format!("what-if: the paper's ramp with its {} step rewritten in the explorer on {}", parts::part_label(cx.reg(), part), e.item.id),
        };
        let (name, short) = saved.op_names();
        let path = crate::config::data_dir().join("experiments").join(format!("whatif_{id}.toml"));
        if !path.exists() {
            if let Err(events) = write_saved(&path, &ramp_experiment_toml(&saved)) {
                return events;
            }
        }
        self.saved_experiment(cx, item, part, &name, &short, &path)
    }

    /// The batch command of a saved experiment file, remembered for the version and shown.
    fn saved_experiment(&mut self, cx: &Cx, item: usize, part: Part, name: &str, short: &str, path: &Path) -> Vec<Event> {
        let command = format!(
            "hyst-tui --experiment {} batch --models {} --datasets {} --suites hierarchy",
            path.display(),
            cx.model_key(),
            cx.dataset_spec
        );
        tracing::info!("saved what-if operation {name} to {}; run it with: {command}", path.display());
        self.store.set_command(item, part, command);
        notice(format!("saved {short} to {} · the batch command is under the distribution", path.display()))
    }
}

/// Writes `text` to `path` unless the file holds it already (the name follows the content);
/// Err with a notice when it cannot.
fn write_saved(path: &Path, text: &str) -> Result<(), Vec<Event>> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(path, text));
    written.map_err(|e| notice(format!("cannot write {}: {e}", path.display())))
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
