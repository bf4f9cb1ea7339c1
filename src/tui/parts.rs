//! What the explorer computes for an item: the seven ramp steps and the recovery operations,
//! how their messages are built from the model's own earlier letters, and the single-item
//! measures the views show.

use crate::dialogue::conditions::{base_of, build, Base, Kind, Registry};
use crate::dialogue::{Builder, Control, CurvePoint, DialogueItem, CURVE};
use crate::protocol::ChatMessage;
use crate::metrics::criteria::{Criterion, GapVerdict};

/// One scored context of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// Ramp step 0..7 (clean, weak, medium, strong, medium reset, strong reset = R0, clean probe).
    Curve(usize),
    /// A recovery operation (condition key).
    Op(&'static str),
    /// A step of a custom ramp of an experiment file (condition key `<ramp>:<step>`).
    Step(&'static str),
}

impl Part {
    /// The ramp step `p`.
    pub fn curve(p: CurvePoint) -> Part {
        Part::Curve(p.index())
    }
}

/// Every step the cursor visits in a run of the conditions `reg`: the seven ramp steps, the
/// steps of the experiment files' custom ramps, then the operations.
pub fn steps(reg: &'static Registry) -> Vec<Part> {
    (0..CURVE.len())
        .map(Part::Curve)
        .chain(custom_steps(reg))
        .chain(reg.explorer_ops().map(|o| Part::Op(o.key)))
        .collect()
}

/// The steps of every custom ramp, in registry order.
fn custom_steps(reg: &'static Registry) -> impl Iterator<Item = Part> {
    reg.all().iter().filter(|c| c.is_custom_ramp_step()).map(|c| Part::Step(c.key.as_str()))
}

/// The letters a condition's messages need from the custom ramp it builds on, as far as known
/// (`step_letter(key)` = the model's prediction at that ramp step); `None` while one is missing.
fn custom_letters(reg: &'static Registry, base: Base, upto: usize, step_letter: &dyn Fn(&'static str) -> Option<char>) -> Option<Vec<char>> {
    let Base::Custom(r) = base else { return Some(Vec::new()) };
    (0..upto.min(r.steps.len())).map(|k| reg.find(&r.step_key(k)).and_then(|c| step_letter(c.key.as_str()))).collect()
}

/// Ramp steps the item list needs (clean … R0).
pub fn ramp_parts() -> Vec<Part> {
    (0..6).map(Part::Curve).collect()
}

pub(crate) fn part_label(reg: &Registry, p: Part) -> String {
    match p {
        Part::Curve(k) => match CURVE.get(k) {
            Some(CurvePoint::StrongReset) => format!("{} (R0)", CurvePoint::StrongReset.label()),
            Some(p) => p.label().to_string(),
            None => format!("step {k}"),
        },
        Part::Op(k) => reg.recovery_op(k).map(|o| format!("{} {}", o.short, o.name)).unwrap_or_else(|| k.to_string()),
        Part::Step(k) => reg.find(k).map_or(k.to_string(), |c| c.label.clone()),
    }
}

/// The messages of `part` (a step of a run of the conditions `reg`), given the model's letters
/// at ramp steps 1..=4 as far as known
/// (`letters[i]` = prediction at `Curve(i + 1)`). `None` while a needed letter is missing.
/// `clean` is the model's clean-context prediction, which recipes that repeat it need;
/// `step_letter` gives the prediction at a custom ramp step (by condition key) once scored.
pub(crate) fn messages_for(
    reg: &'static Registry,
    b: &Builder,
    d: &DialogueItem,
    part: Part,
    letters: &[Option<char>],
    clean: Option<char>,
    step_letter: &dyn Fn(&'static str) -> Option<char>,
) -> Option<Vec<ChatMessage>> {
    let known = |n: usize| -> Option<Vec<char>> { (0..n).map(|i| letters.get(i).copied().flatten()).collect() };
    match part {
        Part::Curve(k) => {
            let point = *CURVE.get(k)?;
            let need = point.ramp_step().unwrap_or(0);
            let l = known(need)?;
            Some(b.curve_messages(d, Control::PressureWrong, point, &l))
        }
        Part::Step(key) => {
            let cond = reg.find(key)?;
            let Kind::RampStep(_, k) = cond.kind else { return None };
            let l = custom_letters(reg, base_of(cond), k, step_letter)?;
            Some(build(cond, b, d, &l, clean.unwrap_or('?')).messages)
        }
        Part::Op(key) => {
            let cond = reg.find(key)?;
            let base = base_of(cond);
            let l = match base {
                Base::Paper(_) => known(4)?,
                Base::Custom(_) => custom_letters(reg, base, usize::MAX, step_letter)?,
            };
            let needs_clean = cond.recipe().is_some_and(|r| r.assistant == crate::dialogue::recipe::Assistant::CleanPrediction);
            let clean = if needs_clean { clean? } else { clean.unwrap_or('?') };
            Some(build(cond, b, d, &l, clean).messages)
        }
    }
}

/// The verdict the explorer colours a gap `p_X(w) − p_clean(w)` by: the main criterion's gap
/// check.
pub(crate) fn gap_verdict(gap: Option<f64>) -> GapVerdict {
    Criterion::MAIN.gap_verdict(gap)
}

/// Splits a user turn into (message, prefix, question block) around the question header.
/// `None` when the turn has no question block (e.g. R5's structured state).
pub(crate) fn split_user_turn<'a>(content: &'a str, question_header: &str) -> Option<(&'a str, &'a str, &'a str)> {
    let needle = format!("\n\n{question_header}\n");
    let pos = content.rfind(&needle)?;
    let head = &content[..pos];
    let block = &content[pos + 2..];
    match head.rfind("\n\n") {
        Some(i) => Some((&head[..i], &head[i + 2..], block)),
        None => Some(("", head, block)),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::data::Item;
    use crate::prompts::PromptSet;

    fn item() -> DialogueItem {
        DialogueItem {
            item: Item {
                id: "t1".into(),
                dataset: "sample".into(),
                question: "Q?".into(),
                options: vec!["a".into(), "b".into(), "c".into()],
                correct: 0,
                category: "x".into(),
                meta: BTreeMap::new(),
            },
            wrong: 2,
        }
    }

    #[test]
    fn messages_need_earlier_letters() {
        let reg = Registry::bundled();
        let p = PromptSet::bundled();
        let b = Builder::new(&p);
        let d = item();
        assert!(messages_for(reg, &b, &d, Part::Curve(0), &[], None, &|_| None).is_some());
        assert!(messages_for(reg, &b, &d, Part::Curve(1), &[], None, &|_| None).is_some());
        assert!(messages_for(reg, &b, &d, Part::Curve(2), &[], None, &|_| None).is_none());
        assert!(messages_for(reg, &b, &d, Part::Curve(2), &[Some('C')], None, &|_| None).is_some());
        assert!(messages_for(reg, &b, &d, Part::Op("ordinary_strong_reset"), &[Some('C'); 3], None, &|_| None).is_none());
        let l = [Some('C'), Some('C'), Some('A'), Some('B')];
        // R0 is the strong-reset step, R3a the clean prompt, the probe the clean step.
        assert_eq!(messages_for(reg, &b, &d, Part::Op("ordinary_strong_reset"), &l, None, &|_| None), messages_for(reg, &b, &d, Part::Curve(5), &l, None, &|_| None));
        assert_eq!(messages_for(reg, &b, &d, Part::Op("fresh_context_deletion"), &l, None, &|_| None), messages_for(reg, &b, &d, Part::Curve(0), &l, None, &|_| None));
        assert_eq!(messages_for(reg, &b, &d, Part::Curve(6), &l, None, &|_| None), messages_for(reg, &b, &d, Part::Curve(0), &l, None, &|_| None));
        for o in reg.explorer_ops() {
            assert!(messages_for(reg, &b, &d, Part::Op(o.key), &l, None, &|_| None).is_some(), "{}", o.key);
        }
    }

    #[test]
    fn user_turn_split() {
        let reg = Registry::bundled();
        let p = PromptSet::bundled();
        let b = Builder::new(&p);
        let d = item();
        let l = [Some('C'), Some('C'), Some('A'), Some('B')];
        let m = messages_for(reg, &b, &d, Part::Curve(3), &l, None, &|_| None).unwrap();
        let last = &m.last().unwrap().content;
        let (msg, prefix, block) = split_user_turn(last, &p.question_header).unwrap();
        assert!(!msg.is_empty() && msg.contains('c'), "{msg}");
        assert_eq!(prefix, p.pressure_prefix);
        assert!(block.starts_with(&p.question_header));
        let clean = messages_for(reg, &b, &d, Part::Curve(0), &l, None, &|_| None).unwrap();
        let (msg, prefix, _) = split_user_turn(&clean[1].content, &p.question_header).unwrap();
        assert_eq!((msg, prefix), ("", p.clean_prefix.as_str()));
    }
}
