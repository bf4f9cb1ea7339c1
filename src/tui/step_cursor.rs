//! The step cursor of the detail views (Dialogue, Trace, Slot, Recovery): every step the
//! cursor visits ([`parts::steps`]), the one shown, how far the conversation is scrolled up and
//! whether the repeated question blocks are expanded.

use anyhow::{bail, Result};

use super::action::{Action, Motion};
use super::parts::{self, Part};
use crate::dialogue::conditions::Registry;

pub(crate) struct StepCursor {
    steps: Vec<Part>,
    /// Index into `steps`.
    step: usize,
    /// Transcript lines scrolled up from the bottom.
    dialogue_scroll: usize,
    expand_blocks: bool,
}

impl StepCursor {
    /// At the first step of a run of the conditions `reg`.
    pub(crate) fn new(reg: &'static Registry) -> StepCursor {
        StepCursor { steps: parts::steps(reg), step: 0, dialogue_scroll: 0, expand_blocks: false }
    }

    /// Carries out a step action; true when the step changed (another step has another
    /// dialogue: the message cursor starts over).
    pub(crate) fn update(&mut self, action: Action) -> bool {
        match action {
            Action::MoveStep(m) => {
                let last = self.steps.len().saturating_sub(1);
                match m {
                    Motion::By(d) => {
                        self.step = self.step.saturating_add_signed(d).min(last);
                        self.dialogue_scroll = 0;
                    }
                    // The jumps keep the conversation's scroll position (as they always have).
                    Motion::First => self.step = 0,
                    Motion::Last => self.step = last,
                }
                true
            }
            // Jump between the ramp and the operations.
            Action::ToggleRampOps => {
                let first_op = self.steps.iter().position(|p| matches!(p, Part::Op(_))).unwrap_or(0);
                self.step = if self.step < first_op { first_op } else { 0 };
                true
            }
            Action::ToggleQuestionBlocks => {
                self.expand_blocks = !self.expand_blocks;
                false
            }
            Action::ScrollDialogue(d) => {
                self.dialogue_scroll = self.dialogue_scroll.saturating_add_signed(d);
                false
            }
            _ => false,
        }
    }

    pub(crate) fn set_step(&mut self, k: usize) -> Result<()> {
        if k >= self.steps.len() {
            bail!("--step {k}: steps are 0..{} (0-6 the ramp, then any custom ramp's steps, then the operations)", self.steps.len().saturating_sub(1));
        }
        self.step = k;
        Ok(())
    }

    /// Shows `part` from the end of its conversation (false when it is no step).
    pub(crate) fn show(&mut self, part: Part) -> bool {
        let Some(i) = self.steps.iter().position(|&p| p == part) else { return false };
        self.step = i;
        self.dialogue_scroll = 0;
        true
    }

    /// Back to the end of the conversation (another item).
    pub(crate) fn scroll_to_end(&mut self) {
        self.dialogue_scroll = 0;
    }

    pub(crate) fn steps(&self) -> &[Part] {
        &self.steps
    }
    /// Index of the cursor's step in [`steps`](Self::steps).
    pub(crate) fn step(&self) -> usize {
        self.step
    }
    pub(crate) fn part(&self) -> Part {
        self.steps.get(self.step).copied().unwrap_or(Part::Curve(0))
    }
    pub(crate) fn dialogue_scroll(&self) -> usize {
        self.dialogue_scroll
    }
    pub(crate) fn expand_blocks(&self) -> bool {
        self.expand_blocks
    }
}
