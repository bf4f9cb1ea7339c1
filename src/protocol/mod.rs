//! The protocol's plain data types, shared by every layer above: chat messages, what is measured
//! at the answer slot ([`SlotScore`]) and where ([`ProvenanceKind`]), the [`Scorer`] trait that
//! the engine implements and the dialogue builder calls, option letters and the answer format. Nothing here knows
//! about llama.cpp, files or UI.

mod answers;
mod letters;
mod message;
mod provenance;
mod score;

pub use answers::{AnswerFormat, AnswerSlot, OpenAnswers, OpenOption};
pub use letters::{default_letters, letter, letter_index};
pub use message::ChatMessage;
pub use provenance::{ProvenanceKind, SERVED_PROVENANCE_PREFIX};
pub use score::{LetterBound, LetterTokens, SlotScore, TopToken};

/// Anything that can measure the answer slot of a conversation over the shown option letters or
/// the option texts ([`AnswerSlot`]): the engine, a cache in front of it, or a scripted scorer in
/// tests of the dialogue builder.
pub trait Scorer {
    type Error;
    fn score(&mut self, messages: &[ChatMessage], slot: &AnswerSlot) -> Result<SlotScore, Self::Error>;
}
