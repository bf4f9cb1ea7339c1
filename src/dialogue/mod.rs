//! Conditions → chat messages, exactly per docs/protocol.md §3, and the self-conditioned pressure ramp.
//!
//! Every scored context ends with a user turn that carries the full question block. The ramp's
//! assistant turns are the model's own argmax letters at each step, obtained through [`Scorer`].

pub mod conditions;
mod messages;
pub mod ops_text;
pub mod recipe;

use crate::data::{Item, Selected};
use crate::protocol::{letter, letter_index, AnswerFormat, AnswerSlot, ChatMessage, Scorer, SlotScore};
use crate::prompts::{fill, PromptSet};

pub use conditions::{Condition, Suite};

/// Which ramp is run (docs/protocol.md §3.2–§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// The main experiment: pressure toward the advocated wrong option.
    PressureWrong,
    /// Same turns, neutral messages that name no answer.
    NeutralHistory,
    /// Same templates advocating the correct option.
    CorrectPressure,
}

impl Control {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Control::PressureWrong => "pressure_wrong",
            Control::NeutralHistory => "neutral_history",
            Control::CorrectPressure => "correct_pressure",
        }
    }
}

/// The seven curve points of the ramp (docs/protocol.md §3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurvePoint {
    CleanContext,
    WeakPressure,
    MediumPressure,
    StrongPressure,
    MediumReset,
    StrongReset,
    CleanContextProbe,
}

pub const CURVE: [CurvePoint; 7] = [
    CurvePoint::CleanContext,
    CurvePoint::WeakPressure,
    CurvePoint::MediumPressure,
    CurvePoint::StrongPressure,
    CurvePoint::MediumReset,
    CurvePoint::StrongReset,
    CurvePoint::CleanContextProbe,
];

impl CurvePoint {
    pub const fn key(self) -> &'static str {
        match self {
            CurvePoint::CleanContext => "clean_context",
            CurvePoint::WeakPressure => "weak_pressure",
            CurvePoint::MediumPressure => "medium_pressure",
            CurvePoint::StrongPressure => "strong_pressure",
            CurvePoint::MediumReset => "medium_reset",
            CurvePoint::StrongReset => "strong_reset",
            CurvePoint::CleanContextProbe => "clean_context_probe",
        }
    }
    pub fn index(self) -> usize {
        CURVE.iter().position(|&c| c == self).expect("in CURVE")
    }
    /// Name of the step, e.g. `medium reset`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            CurvePoint::CleanContext => "clean context",
            CurvePoint::WeakPressure => "weak pressure",
            CurvePoint::MediumPressure => "medium pressure",
            CurvePoint::StrongPressure => "strong pressure",
            CurvePoint::MediumReset => "medium reset",
            CurvePoint::StrongReset => "strong reset",
            CurvePoint::CleanContextProbe => "clean probe",
        }
    }
    /// Column label (at most 7 characters).
    pub(crate) fn short(self) -> &'static str {
        match self {
            CurvePoint::CleanContext => "clean",
            CurvePoint::WeakPressure => "weak",
            CurvePoint::MediumPressure => "medium",
            CurvePoint::StrongPressure => "strong",
            CurvePoint::MediumReset => "m.reset",
            CurvePoint::StrongReset => "R0",
            CurvePoint::CleanContextProbe => "probe",
        }
    }
    /// Axis label (at most 5 characters).
    pub(crate) fn tiny(self) -> &'static str {
        match self {
            CurvePoint::CleanContext => "clean",
            CurvePoint::WeakPressure => "weak",
            CurvePoint::MediumPressure => "med",
            CurvePoint::StrongPressure => "str",
            CurvePoint::MediumReset => "m.rst",
            CurvePoint::StrongReset => "R0",
            CurvePoint::CleanContextProbe => "probe",
        }
    }
    /// One line for `hyst-tui conditions`.
    pub(crate) fn description(self) -> &'static str {
        match self {
            CurvePoint::CleanContext => "clean counterfactual: system + the question, no history",
            CurvePoint::WeakPressure => "ramp step 1: tentative push toward the advocated option + question",
            CurvePoint::MediumPressure => "ramp step 2: confident push (history: step 1 and the model's letter)",
            CurvePoint::StrongPressure => "ramp step 3: certain push (history: steps 1-2)",
            CurvePoint::MediumReset => "ramp step 4: hedged withdrawal of the preference (history: steps 1-3)",
            CurvePoint::StrongReset => "ramp step 5: explicit reset instruction = R0 (history: steps 1-4)",
            CurvePoint::CleanContextProbe => "clean probe: identical to the clean context, scored again",
        }
    }
    /// The step whose prompt this one repeats (the clean probe is the clean step again).
    pub(crate) fn same_as(self) -> Option<CurvePoint> {
        match self {
            CurvePoint::CleanContextProbe => Some(CurvePoint::CleanContext),
            _ => None,
        }
    }
    /// Ramp steps 1..=5 that extend the history (weak … strong reset).
    pub(crate) fn ramp_step(self) -> Option<usize> {
        match self {
            CurvePoint::WeakPressure => Some(0),
            CurvePoint::MediumPressure => Some(1),
            CurvePoint::StrongPressure => Some(2),
            CurvePoint::MediumReset => Some(3),
            CurvePoint::StrongReset => Some(4),
            _ => None,
        }
    }
}

/// The item as the dialogue sees it: question, options and the advocated wrong option.
#[derive(Clone, Debug)]
pub struct DialogueItem {
    pub item: Item,
    pub wrong: usize,
}

impl From<&Selected> for DialogueItem {
    fn from(s: &Selected) -> Self {
        Self {
            item: s.item.clone(),
            wrong: s.wrong,
        }
    }
}

/// Builds the texts of docs/protocol.md §2 from a prompt set.
pub struct Builder<'p> {
    pub prompts: &'p PromptSet,
}

impl<'p> Builder<'p> {
    pub fn new(prompts: &'p PromptSet) -> Self {
        Self { prompts }
    }

    /// `A. text` lines joined by `\n`, for options in the given order.
    pub fn option_lines(options: &[String]) -> String {
        options
            .iter()
            .enumerate()
            .map(|(i, o)| format!("{}. {o}", letter(i)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The answer format of the prompt set (letters, or open answers).
    pub fn format(&self) -> AnswerFormat {
        self.prompts.format
    }

    /// `<prefix>\n\n<Question:>\n<question>\n\n<Options:>\n<lines>\n\n<closing line>`; in
    /// open form without the options: `<prefix>\n\n<Question:>\n<question>\n\n<closing line>`.
    pub(crate) fn question_block_with(&self, prefix: &str, question: &str, options: &[String]) -> String {
        let p = self.prompts;
        match self.format() {
            AnswerFormat::Letters => format!(
                "{prefix}\n\n{}\n{question}\n\n{}\n{}\n\n{}",
                p.question_header,
                p.options_header,
                Self::option_lines(options),
                p.closing_line
            ),
            AnswerFormat::Open => format!("{prefix}\n\n{}\n{question}\n\n{}", p.question_header, p.closing_line),
        }
    }

    /// What the model's answer `l` is as an assistant turn: the letter, or in open form the
    /// text of option `l` (of `options`, as the dialogue shows them).
    pub fn answer(&self, options: &[String], l: char) -> String {
        match self.format() {
            AnswerFormat::Letters => l.to_string(),
            AnswerFormat::Open => letter_index(&l.to_string()).and_then(|i| options.get(i)).cloned().unwrap_or_else(|| l.to_string()),
        }
    }

    /// What an item's answer slot is measured over in this format.
    pub fn slot(&self, item: &Item) -> AnswerSlot {
        match self.format() {
            AnswerFormat::Letters => AnswerSlot::Letters(item.letters()),
            AnswerFormat::Open => AnswerSlot::Open(item.options.clone()),
        }
    }

    pub(crate) fn question_block(&self, prefix: &str, item: &Item) -> String {
        self.question_block_with(prefix, &item.question, &item.options)
    }

    /// `M + "\n\n" + question_block(prefix)`.
    pub(crate) fn turn(&self, message: &str, prefix: &str, item: &Item) -> String {
        format!("{message}\n\n{}", self.question_block(prefix, item))
    }

    pub(crate) fn system(&self) -> ChatMessage {
        ChatMessage::system(self.prompts.system.clone())
    }

    pub(crate) fn clean_user(&self, item: &Item) -> String {
        self.question_block(&self.prompts.clean_prefix, item)
    }

    /// The user message of ramp step `step` (0 = weak … 4 = strong reset) for a control.
    pub(crate) fn ramp_user(&self, d: &DialogueItem, control: Control, step: usize) -> String {
        let p = self.prompts;
        let item = &d.item;
        let advocated = match control {
            Control::CorrectPressure => &item.options[item.correct],
            _ => &item.options[d.wrong],
        };
        let press = |t: &str| fill(t, &[("advocated_option_text", advocated)]);
        let (msg, prefix) = match (control, step) {
            (Control::NeutralHistory, 0) => (p.neutral_weak.clone(), &p.pressure_prefix),
            (Control::NeutralHistory, 1) => (p.neutral_medium.clone(), &p.pressure_prefix),
            (Control::NeutralHistory, 2) => (p.neutral_strong.clone(), &p.pressure_prefix),
            (Control::NeutralHistory, 3) => (p.neutral_medium_reset.clone(), &p.medium_reset_prefix),
            (Control::NeutralHistory, _) => (p.neutral_strong_reset.clone(), &p.strong_reset_prefix),
            (_, 0) => (press(&p.weak_pressure), &p.pressure_prefix),
            (_, 1) => (press(&p.medium_pressure), &p.pressure_prefix),
            (_, 2) => (press(&p.strong_pressure), &p.pressure_prefix),
            (_, 3) => (p.medium_reset.clone(), &p.medium_reset_prefix),
            (_, _) => (p.strong_reset.clone(), &p.strong_reset_prefix),
        };
        self.turn(&msg, prefix, item)
    }

    /// The 4-exchange history `[U1, A1, U2, A2, U3, A3, U4, A4]` given the ramp letters A1..A4.
    pub(crate) fn history(&self, d: &DialogueItem, control: Control, letters: &[char]) -> Vec<ChatMessage> {
        let mut h = Vec::with_capacity(8);
        for (step, &l) in letters.iter().take(4).enumerate() {
            h.push(ChatMessage::user(self.ramp_user(d, control, step)));
            h.push(ChatMessage::assistant(self.answer(&d.item.options, l)));
        }
        h
    }

    /// Messages of a curve point given the letters chosen so far (`letters[..step]` are used).
    pub(crate) fn curve_messages(&self, d: &DialogueItem, control: Control, point: CurvePoint, letters: &[char]) -> Vec<ChatMessage> {
        let mut m = vec![self.system()];
        match point.ramp_step() {
            None => m.push(ChatMessage::user(self.clean_user(&d.item))),
            Some(step) => {
                for (s, &l) in letters.iter().take(step).enumerate() {
                    m.push(ChatMessage::user(self.ramp_user(d, control, s)));
                    m.push(ChatMessage::assistant(self.answer(&d.item.options, l)));
                }
                m.push(ChatMessage::user(self.ramp_user(d, control, step)));
            }
        }
        m
    }
}

/// One scored step of a ramp.
#[derive(Clone, Debug)]
pub struct RampStep {
    pub point: CurvePoint,
    pub messages: Vec<ChatMessage>,
    pub score: SlotScore,
}

/// A completed self-conditioned ramp.
#[derive(Clone, Debug)]
pub struct Ramp {
    pub control: Control,
    pub steps: Vec<RampStep>,
    /// The model's letters at weak, medium, strong, medium reset (the assistant turns A1..A4).
    pub letters: [char; 4],
}

impl Ramp {
    pub fn step(&self, p: CurvePoint) -> &RampStep {
        &self.steps[p.index()]
    }
}

/// Runs the seven curve points in order; each appended step's assistant turn is the model's own
/// argmax option at that step (its letter, or in open form its text) (docs/protocol.md §3.2). `on_step` sees each step as it is scored.
pub fn run_ramp<S: Scorer + ?Sized>(
    scorer: &mut S,
    b: &Builder,
    d: &DialogueItem,
    control: Control,
    on_step: &mut dyn FnMut(&RampStep),
) -> Result<Ramp, S::Error> {
    let slot = b.slot(&d.item);
    let mut chosen: Vec<char> = Vec::with_capacity(5);
    let mut steps = Vec::with_capacity(7);
    for point in CURVE {
        let messages = b.curve_messages(d, control, point, &chosen);
        let score = scorer.score(&messages, &slot)?;
        if point.ramp_step().is_some() {
            chosen.push(score.pred_letter());
        }
        let step = RampStep { point, messages, score };
        on_step(&step);
        steps.push(step);
    }
    Ok(Ramp {
        control,
        steps,
        letters: [chosen[0], chosen[1], chosen[2], chosen[3]],
    })
}

/// CPython `repr()` of a str (used in the constructed R7 evidence, docs/protocol.md §3.6).
pub(crate) fn python_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (0x80..0xa0).contains(&(c as u32)) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_matches_python() {
        assert_eq!(python_repr("plain"), "'plain'");
        assert_eq!(python_repr("it's"), "\"it's\"");
        assert_eq!(python_repr("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(python_repr("a\\b\n"), "'a\\\\b\\n'");
        assert_eq!(python_repr("é"), "'é'");
    }
}
