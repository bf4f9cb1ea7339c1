//! The letter lens in the explorer (`L` in the Slot view) and the steering what-if (`T`): read-outs
//! of a step's context through the engine's probe (`Job::Inspect`), run on the shown model's
//! engine thread like a score and kept per context — model, messages and steering setting — for
//! the session.

use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, Sender};

use crate::dialogue::conditions::Registry;
use super::parts::Part;
use crate::engine::inside::{InspectOptions, Inspection, Steering};
use crate::engine::{Job, JobOutput, JobResult};
use crate::protocol::ChatMessage;

use super::generations::key as context_key;
use super::jobs::Submit;

#[derive(Clone, Debug)]
pub(crate) enum LensState {
    Running,
    Done(Box<Inspection>),
    Failed(String),
}

pub(crate) struct Lenses {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    states: HashMap<String, LensState>,
    running: HashMap<u64, String>,
}

impl Default for Lenses {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Lenses { tx, rx, states: HashMap::new(), running: HashMap::new() }
    }
}

fn key(model: &str, messages: &[ChatMessage], steering: Option<&Steering>) -> String {
    let mut k = context_key(model, messages);
    k.push('\u{3}');
    k.push_str(&steering.map(Steering::key).unwrap_or_default());
    k
}

impl Lenses {
    pub(crate) fn get(&self, model: &str, messages: &[ChatMessage], steering: Option<&Steering>) -> Option<&LensState> {
        self.states.get(&key(model, messages, steering))
    }

    /// Asks `engine` for the lens of a context (nothing when it is asked already).
    pub(crate) fn request(&mut self, engine: &dyn Submit, model: &str, messages: &[ChatMessage], letters: &[char], steering: Option<&Steering>) {
        let k = key(model, messages, steering);
        if self.states.contains_key(&k) {
            return;
        }
        let options = InspectOptions { lens: true, residuals: false, steering: steering.cloned() };
        let id = engine.submit(Job::Inspect { messages: messages.to_vec(), letters: letters.to_vec(), options }, self.tx.clone());
        self.running.insert(id, k.clone());
        self.states.insert(k, LensState::Running);
    }

    /// Takes in finished read-outs; true when any arrived.
    pub(crate) fn poll(&mut self) -> bool {
        let mut any = false;
        while let Ok(r) = self.rx.try_recv() {
            let Some(k) = self.running.remove(&r.id) else { continue };
            any = true;
            let state = match r.output {
                Ok(JobOutput::Inspected(i)) => LensState::Done(i),
                Ok(other) => LensState::Failed(format!("unexpected engine answer {}", other.name())),
                Err(e) => LensState::Failed(e.to_string()),
            };
            // A cancelled read-out (the item changed) can be asked again.
            if matches!(&state, LensState::Failed(m) if m == "job cancelled") {
                self.states.remove(&k);
            } else {
                self.states.insert(k, state);
            }
        }
        any
    }

    /// The engine went away (another model): what ran will not answer.
    pub(crate) fn forget_running(&mut self) {
        for k in self.running.values() {
            if matches!(self.states.get(k), Some(LensState::Running)) {
                self.states.remove(k);
            }
        }
        self.running.clear();
    }

    pub(crate) fn busy(&self) -> bool {
        !self.running.is_empty()
    }
}

/// `S` in the Slot view with the steering what-if on: the context of the operation at `part` under
/// `steering` (read from its file) becomes a steering operation of an experiment file under
/// `<data dir>/experiments`, named by its content. Returns what to tell the user.
pub(crate) fn save_steering(reg: &Registry, part: Part, steering: Option<(&Steering, &std::path::Path)>, model: &str) -> String {
    use crate::tui::action::Action;
    use crate::tui::keymap::key_for;
    let Some((s, file)) = steering else {
        return format!("no steering what-if to save: turn it on with {} (the explorer started with --steer FILE)", key_for(Action::ToggleSteering));
    };
    let key = match part {
        Part::Op(k) => k,
        Part::Curve(5) => crate::dialogue::conditions::ids::ORDINARY_RESET,
        _ => return "a steering operation steers an operation's context: step to R0 or another operation".into(),
    };
    let Some(cond) = reg.find(key) else { return format!("unknown condition {key}") };
    if cond.is_steered() {
        return format!("{} is already a steering operation", cond.label);
    }
    if cond.is_experiment() && !cond.origin.starts_with("bundled ") {
        return format!("{} comes from {}: add an [operation.steering] table to a copy of its operation there", cond.label, cond.origin);
    }
    let body = format!(
        "context = \"{key}\"\n\n[operation.steering]\nvector = {}\nalpha = {:?}\nlayers = \"{}-{}\"\n",
        toml::Value::String(file.display().to_string()),
        s.alpha,
        s.layers.0,
        s.layers.1
    );
    let id = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(body.as_bytes()));
    let name = format!("steer_{}", &id[..7]);
    let text = format!(
        "# Written by the hyst-tui explorer (the steering what-if on {}, {} in the Slot view).\n[[operation]]\nname = \"{name}\"\nshort = \"T{}\"\n{body}",
        cond.label,
        key_for(Action::SaveSteering),
        &id[..5]
    );
    let path = crate::config::data_dir().join("experiments").join(format!("{name}.toml"));
    let written = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(&path, &text));
    match written {
        Err(e) => format!("cannot write {}: {e}", path.display()),
        Ok(()) => {
            let said = format!("saved as steering operation {name} in {} · hyst-tui --batch --experiment {} --model {model}", path.display(), path.display());
            tracing::info!("{said}");
            said
        }
    }
}
