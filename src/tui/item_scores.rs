//! Every score the explorer session holds in memory — from the engine, from a stored run or
//! from the shared score store (`shared_scores.rs`, on disk) — keyed by
//! (model, item id, part), the errors of parts that could not be scored, and what follows from
//! the scores: the model's own ramp letters, the messages of a part, and twins (parts whose
//! messages are identical to an earlier part's, scored once).

use std::collections::HashMap;
use std::sync::Arc;

use super::parts::{messages_for, Part};
use crate::dialogue::conditions::Registry;
use crate::dialogue::{Builder, DialogueItem};
use crate::protocol::{ChatMessage, SlotScore};

type ScoreKey = (String, String, Part);

fn key(model: &str, item_id: &str, part: Part) -> ScoreKey {
    (model.to_string(), item_id.to_string(), part)
}

pub(crate) struct ItemScores {
    /// The conditions of the run shown: what a part's messages are.
    reg: &'static Registry,
    scores: HashMap<ScoreKey, Arc<SlotScore>>,
    errors: HashMap<ScoreKey, String>,
    /// Counts the changes (what was computed from the store knows whether it is still current).
    revision: u64,
}

impl ItemScores {
    /// No scores yet, for a run of the conditions `reg`.
    pub(crate) fn new(reg: &'static Registry) -> ItemScores {
        ItemScores { reg, scores: HashMap::new(), errors: HashMap::new(), revision: 0 }
    }

    /// The conditions of the run shown.
    pub(crate) fn reg(&self) -> &'static Registry {
        self.reg
    }

    /// The number of changes so far.
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    pub(crate) fn get(&self, model: &str, item_id: &str, part: Part) -> Option<&SlotScore> {
        self.scores.get(&key(model, item_id, part)).map(|a| a.as_ref())
    }

    pub(crate) fn error(&self, model: &str, item_id: &str, part: Part) -> Option<&str> {
        self.errors.get(&key(model, item_id, part)).map(String::as_str)
    }

    /// The part has a score or an error: nothing more to ask the engine.
    pub(crate) fn settled(&self, model: &str, item_id: &str, part: Part) -> bool {
        let k = key(model, item_id, part);
        self.scores.contains_key(&k) || self.errors.contains_key(&k)
    }

    pub(crate) fn insert(&mut self, model: &str, item_id: &str, part: Part, score: SlotScore) {
        self.revision += 1;
        self.scores.insert(key(model, item_id, part), Arc::new(score));
    }

    pub(crate) fn insert_error(&mut self, model: &str, item_id: &str, part: Part, error: String) {
        self.revision += 1;
        self.errors.insert(key(model, item_id, part), error);
    }

    /// Gives `part` the score of its twin `src` (shared, not copied). Returns false while `src`
    /// has no score yet.
    pub(crate) fn share(&mut self, model: &str, item_id: &str, src: Part, part: Part) -> bool {
        let Some(s) = self.scores.get(&key(model, item_id, src)).cloned() else {
            return false;
        };
        self.scores.insert(key(model, item_id, part), s);
        self.revision += 1;
        true
    }

    /// The model's letters at ramp steps 1..=4 (the assistant turns), as far as known.
    pub(crate) fn ramp_letters(&self, model: &str, item_id: &str) -> [Option<char>; 4] {
        let mut l = [None; 4];
        for (i, slot) in l.iter_mut().enumerate() {
            *slot = self.get(model, item_id, Part::Curve(i + 1)).map(|s| s.pred_letter());
        }
        l
    }

    /// The model's clean-context prediction, once scored.
    pub(crate) fn clean_letter(&self, model: &str, item_id: &str) -> Option<char> {
        self.get(model, item_id, Part::Curve(0)).map(|s| s.pred_letter())
    }

    /// The messages of a part (None while an earlier letter is missing).
    pub(crate) fn messages(&self, b: &Builder, model: &str, d: &DialogueItem, part: Part) -> Option<Vec<ChatMessage>> {
        let step = |k: &'static str| self.get(model, &d.item.id, Part::Step(k)).map(|s| s.pred_letter());
        messages_for(self.reg, b, d, part, &self.ramp_letters(model, &d.item.id), self.clean_letter(model, &d.item.id), &step)
    }

    /// The first of `steps` before `part` whose messages are identical to `msgs` (R0 = strong
    /// reset, R3a = clean, the probe = clean).
    /// Whether `part` is a steering operation (scored only under its steering).
    pub(crate) fn is_steered(&self, part: Part) -> bool {
        matches!(part, Part::Op(k) if self.reg.find(k).is_some_and(|c| c.is_steered()))
    }

    pub(crate) fn twin(&self, b: &Builder, model: &str, d: &DialogueItem, part: Part, msgs: &[ChatMessage], steps: &[Part]) -> Option<Part> {
        let letters = self.ramp_letters(model, &d.item.id);
        let clean = self.clean_letter(model, &d.item.id);
        steps
            .iter()
            .take_while(|&&q| q != part)
            // A steered operation's score is its own, whatever its messages.
            .filter(|&&q| !self.is_steered(q))
            .find(|&&q| messages_for(self.reg, b, d, q, &letters, clean, &|k| self.get(model, &d.item.id, Part::Step(k)).map(|s| s.pred_letter())).is_some_and(|m| m == msgs))
            .copied()
    }
}
