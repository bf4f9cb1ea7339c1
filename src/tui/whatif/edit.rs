//! Edits of a step's dialogue as text: the final user turn split around its question block,
//! what an edit of a message replaces, deleted and repeated exchanges, the message cursor, and
//! what a version changed, in words.

use crate::protocol::ChatMessage;
use crate::tui::action::Action;
use crate::tui::keymap::key_for;
use crate::tui::parts::{split_user_turn, Part};

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

/// The step whose dialogue is the same as `part`'s: R0 (the ordinary strong reset) and the ramp
/// step it is declared the same as in the registry (`same_as`: the strong reset step); None for
/// every other step.
pub(crate) fn r0_twin(part: Part) -> Option<Part> {
    use crate::dialogue::conditions::{ids::ORDINARY_RESET, Registry};
    let r0 = Part::Op(ORDINARY_RESET);
    // Built-in conditions both: every registry says the same.
    let sources = Registry::bundled().sources(ORDINARY_RESET);
    let step = crate::dialogue::CURVE.into_iter().find(|c| sources.contains(&c.key())).map(Part::curve)?;
    match part {
        p if p == step => Some(r0),
        p if p == r0 => Some(step),
        _ => None,
    }
}

/// The next wrong option after `from` that is neither `correct`, the item's own advocated option
/// `own` (the original dialogue; `u` goes back to it) nor `from`, wrapping around; None when the
/// item has no other.
pub(crate) fn next_wrong(n_options: usize, correct: usize, own: usize, from: usize) -> Option<usize> {
    (1..n_options).map(|d| (from + d) % n_options).find(|&o| o != correct && o != own && o != from)
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
