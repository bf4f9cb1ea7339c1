//! `w` in the Dialogue: a version of the step in which the user advocates the next wrong option
//! (after the one the current version advocates). The protocol builds the step anew with it;
//! the ramp being self-conditioned, the pressure steps before the step are scored first under
//! the new pressure and get the same version, so the Trace shows the whole what-if curve.

use super::edit::{next_wrong, r0_twin};
use super::store::{EditScore, Version};
use super::{notice, Cx, WhatIf};
use crate::dialogue::conditions::{base_of, Base};
use crate::dialogue::Builder;
use crate::protocol::{letter, ChatMessage};
use crate::tui::action::Action;
use crate::tui::engine_slot::EngineState;
use crate::tui::event::Event;
use crate::tui::keymap::key_for;
use crate::tui::parts::{self, Part};

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

impl WhatIf {
    /// `w`: starts building the step's version with the next wrong option advocated.
    pub(super) fn retarget(&mut self, cx: &Cx) -> Vec<Event> {
        let w = key_for(Action::AdvocateNextWrong);
        let Some((item, e)) = cx.current_entry() else { return Vec::new() };
        let part = cx.part;
        let custom = match part {
            Part::Step(_) => true,
            Part::Op(k) => cx.reg().find(k).is_some_and(|c| matches!(base_of(c), Base::Custom(_))),
            Part::Curve(_) => false,
        };
        if custom {
            return notice(format!("{w}: another advocated option works on the paper's ramp and the operations after it, not on a custom ramp"));
        }
        if let Some(rt) = &self.retarget {
            let id = cx.entry(rt.item).map_or("?", |e| e.item.id.as_str());
            return notice(format!("{w}: still scoring {} with {} advocated ({id}); try again when it is done", parts::part_label(cx.reg(), rt.part), letter(rt.wrong)));
        }
        let from = self.store.current(item, part).map_or(e.wrong, |v| v.wrong);
        let Some(wrong) = next_wrong(e.item.options.len(), e.item.correct, e.wrong, from) else {
            return notice(format!("{w}: this item has no other wrong option to advocate ({} goes back to {})", key_for(Action::UndoEdit), letter(e.wrong)));
        };
        let mut d = crate::dialogue::DialogueItem::from(e);
        d.wrong = wrong;
        let b = Builder::new(cx.prompts);
        let original = cx.messages(item, part);
        let scores = cx.engines.scores();
        let same = original.is_some() && scores.messages(&b, cx.model_key(), &d, part) == original;
        if same {
            return notice(format!("{w}: this step's dialogue does not name the advocated option"));
        }
        // An operation that repeats the clean answer needs it before anything is scored.
        let clean = scores.clean_letter(cx.model_key(), &e.item.id);
        if parts::messages_for(cx.reg(), &b, &d, part, &[Some('A'); 4], clean, &|_| None).is_none() {
            return notice(format!("{w}: this step needs the model's clean answer first; try again once it is scored"));
        }
        self.retarget = Some(Retarget { item, part, wrong, from, letters: Vec::new() });
        self.msg_cursor = None;
        self.advance_retarget(cx)
    }

    /// Takes `w` one step further: scores the next ramp step under the new pressure, or, once
    /// the model's letters before the step are known, adds the step's version. Runs each frame.
    pub(super) fn advance_retarget(&mut self, cx: &Cx) -> Vec<Event> {
        let w = key_for(Action::AdvocateNextWrong);
        while let Some(rt) = self.retarget.clone() {
            let Some(mut d) = cx.entry(rt.item).map(crate::dialogue::DialogueItem::from) else {
                self.retarget = None;
                return Vec::new();
            };
            d.wrong = rt.wrong;
            let b = Builder::new(cx.prompts);
            let known: Vec<Option<char>> = rt.letters.iter().copied().map(Some).collect();
            let model = cx.model_key().to_string();
            let clean = cx.engines.scores().clean_letter(&model, &d.item.id);
            let no_steps = |_: &'static str| None;
            if let Some(msgs) = parts::messages_for(cx.reg(), &b, &d, rt.part, &known, clean, &no_steps) {
                self.retarget = None;
                // R0 and the strong reset step are one dialogue: both get the version.
                for p in std::iter::once(rt.part).chain(r0_twin(rt.part)) {
                    self.push_retargeted(cx, rt.item, p, msgs.clone(), rt.wrong);
                }
                let letters = d.item.letters();
                if let Some(eng) = cx.engines.engine_ready() {
                    self.store.request(eng, &model, &msgs, letters);
                }
                let ramp = if rt.letters.is_empty() { String::new() } else { format!(" (and the {} ramp steps before it)", rt.letters.len()) };
                return notice(format!(
                    "what-if version {} of {}: the user advocates {} instead of {}{ramp}, built anew from the protocol · {} undoes",
                    self.store.versions(rt.item, rt.part),
                    d.item.id,
                    letter(rt.wrong),
                    letter(rt.from),
                    key_for(Action::UndoEdit)
                ));
            }
            let step = Part::Curve(rt.letters.len() + 1);
            let msgs = match parts::messages_for(cx.reg(), &b, &d, step, &known, clean, &no_steps) {
                Some(m) if rt.letters.len() < 4 => m,
                _ => {
                    self.retarget = None;
                    return notice(format!("{w}: this step needs the model's clean answer first; try again once it is scored"));
                }
            };
            match self.store.score(&model, &msgs) {
                Some(EditScore::Done(s)) => {
                    let l = s.pred_letter();
                    self.push_retargeted(cx, rt.item, step, msgs.clone(), rt.wrong);
                    if let Some(r) = self.retarget.as_mut() {
                        r.letters.push(l);
                    }
                }
                Some(EditScore::Failed(err)) => {
                    self.retarget = None;
                    return notice(format!("{w}: scoring {} failed: {err}", parts::part_label(cx.reg(), step)));
                }
                Some(EditScore::Running) => return Vec::new(),
                None => {
                    let letters = d.item.letters();
                    let waiting = match cx.engines.engine_state() {
                        EngineState::Ready(_) => "scoring",
                        EngineState::Loading { .. } => "waiting for the model to score",
                        _ => {
                            self.retarget = None;
                            return notice(format!("{w}: no model to score the ramp under another option ({} loads one)", key_for(Action::OpenModels)));
                        }
                    };
                    if let Some(eng) = cx.engines.engine_ready() {
                        self.store.request(eng, &model, &msgs, letters);
                    }
                    return notice(format!("{w}: {waiting} the ramp of {} with {} advocated: {}…", d.item.id, letter(rt.wrong), parts::part_label(cx.reg(), step)));
                }
            }
        }
        Vec::new()
    }

    /// A version of the step built by the protocol with another option advocated, unless the
    /// step's current version is that already.
    fn push_retargeted(&mut self, cx: &Cx, item: usize, part: Part, msgs: Vec<ChatMessage>, wrong: usize) {
        if self.store.current(item, part).is_some_and(|v| v.messages == msgs) || cx.messages(item, part).is_some_and(|m| m == msgs) {
            return;
        }
        self.store.push(item, part, Version::new(msgs.clone(), wrong, msgs));
    }
}
