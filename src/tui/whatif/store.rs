//! What-if versions per item and step, and their scores on the shown model's engine (the job
//! queue of edited conversations), with what the views show of them.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};

use crate::engine::{Job, JobOutput, JobResult};
use crate::protocol::{ChatMessage, SlotScore};
use crate::tui::generations::key;
use crate::tui::jobs::Submit;
use crate::tui::parts::Part;

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

#[derive(Clone, Debug)]
pub(crate) enum EditScore {
    Running,
    Done(Box<SlotScore>),
    Failed(String),
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
