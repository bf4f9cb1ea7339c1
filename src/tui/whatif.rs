//! What-if edits of the Dialogue: the message of a recovery operation's final user turn (the
//! text before the question block, e.g. R0's reset message) edited in place (`E`), scored at
//! once on the shown model's engine (its prefix cache evaluates only what follows the first
//! changed token) and shown beside the original. Edits are kept per item and step for the
//! session, each a new version (`u` goes back one); `S` writes the current one as a recovery
//! operation into an experiment file (the schema of `--experiment FILE`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};

use crate::engine::{Job, JobOutput, JobResult};
use crate::protocol::{ChatMessage, SlotScore};

use super::generations::key;
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
    pub(crate) fn with_message(&self, message: &str) -> String {
        let mut parts: Vec<&str> = Vec::new();
        if !message.trim().is_empty() {
            parts.push(message);
        }
        if !self.prefix.is_empty() {
            parts.push(&self.prefix);
        }
        parts.push(&self.block);
        parts.join("\n\n")
    }
}

/// `msgs` with the last user turn replaced.
pub(crate) fn edited_messages(msgs: &[ChatMessage], turn: String) -> Vec<ChatMessage> {
    let mut out = msgs.to_vec();
    if let Some(m) = out.iter_mut().rev().find(|m| m.role == "user") {
        m.content = turn;
    }
    out
}

#[derive(Clone, Debug)]
pub(crate) enum EditScore {
    Running,
    Done(Box<SlotScore>),
    Failed(String),
}

/// The text being typed in the editor.
#[derive(Clone, Debug, Default)]
pub(crate) struct Editor {
    pub(crate) item: usize,
    pub(crate) part: Option<Part>,
    pub(crate) text: String,
}

pub(crate) struct WhatIfs {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    /// Versions of the edited message per (item, step), oldest first.
    edits: HashMap<(usize, Part), Vec<String>>,
    /// Scores of edited conversations by context key.
    scores: HashMap<String, EditScore>,
    running: HashMap<u64, String>,
    /// Operations saved this session (numbers the next one).
    pub(crate) saved: usize,
    /// The batch command of the operation saved from a step's current version.
    commands: HashMap<(usize, Part, usize), String>,
}

impl Default for WhatIfs {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        WhatIfs { tx, rx, edits: HashMap::new(), scores: HashMap::new(), running: HashMap::new(), saved: 0, commands: HashMap::new() }
    }
}

impl WhatIfs {
    /// The current edit of a step.
    pub(crate) fn current(&self, item: usize, part: Part) -> Option<&str> {
        self.edits.get(&(item, part)).and_then(|v| v.last()).map(String::as_str)
    }

    /// How many versions the step's edit has.
    pub(crate) fn versions(&self, item: usize, part: Part) -> usize {
        self.edits.get(&(item, part)).map_or(0, Vec::len)
    }

    pub(crate) fn push(&mut self, item: usize, part: Part, text: String) {
        self.edits.entry((item, part)).or_default().push(text);
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

    /// Scores an edited conversation unless it is scored or being scored.
    pub(crate) fn request(&mut self, engine: &dyn Submit, model: &str, messages: &[ChatMessage], letters: Vec<char>) {
        let k = key(model, messages);
        if matches!(self.scores.get(&k), Some(EditScore::Running | EditScore::Done(_))) {
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
    t.push_str("# Written by the hyst-tui explorer (what-if edit, S in the Dialogue view).\n");
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

/// A file name under `dir` not taken yet: `whatif_<n>.toml`, and its number.
pub(crate) fn free_path(dir: &Path, from: usize) -> (PathBuf, usize) {
    let mut n = from.max(1);
    loop {
        let p = dir.join(format!("whatif_{n}.toml"));
        if !p.exists() {
            return (p, n);
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_turn_splits_and_joins_back() {
        let content = "Please reset.\n\nAnswer again.\n\nQuestion:\nQ?\n\nOptions:\nA. x\nB. y";
        let msgs = vec![ChatMessage { role: "user".into(), content: content.into() }];
        let t = FinalTurn::of(&msgs, "Question:").unwrap();
        assert_eq!((t.message.as_str(), t.prefix.as_str()), ("Please reset.", "Answer again."));
        assert_eq!(t.with_message("Please reset."), content);
        assert_eq!(t.with_message("Forget it all."), content.replace("Please reset.", "Forget it all."));
        assert_eq!(t.with_message(" "), content.replace("Please reset.\n\n", ""));
        let e = edited_messages(&msgs, t.with_message("X"));
        assert!(e[0].content.starts_with("X\n\nAnswer again."));
    }

    #[test]
    fn versions_and_undo() {
        let mut w = WhatIfs::default();
        let p = Part::Op("ordinary_strong_reset");
        assert!(!w.undo(0, p));
        w.push(0, p, "one".into());
        w.push(0, p, "two".into());
        assert_eq!((w.current(0, p), w.versions(0, p)), (Some("two"), 2));
        assert!(w.undo(0, p));
        assert_eq!(w.current(0, p), Some("one"));
        assert!(w.undo(0, p));
        assert_eq!(w.current(0, p), None);
        assert_eq!(w.current(1, p), None);
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
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(free_path(dir.path(), 0).1, 1);
        std::fs::write(dir.path().join("whatif_1.toml"), "").unwrap();
        assert_eq!(free_path(dir.path(), 1).1, 2);
    }
}
