//! How the question is asked and what is measured at the answer slot: the option *letters* of a
//! lettered list (the paper's format), or the option *texts* as continuations of the assistant
//! turn with no list shown (`open`, docs/protocol.md §14).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The answer format of a scored context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerFormat {
    /// The options are listed under letters; the slot is measured over the letter tokens.
    #[default]
    Letters,
    /// The question is asked without the options; the slot is measured over the option texts,
    /// each scored token by token as the assistant's answer.
    Open,
}

impl AnswerFormat {
    pub const ALL: [AnswerFormat; 2] = [AnswerFormat::Letters, AnswerFormat::Open];

    /// `letters` or `open` (item rows, file names, the command line).
    pub const fn key(self) -> &'static str {
        match self {
            AnswerFormat::Letters => "letters",
            AnswerFormat::Open => "open",
        }
    }

    /// The format a key names.
    pub fn from_key(s: &str) -> Option<AnswerFormat> {
        Self::ALL.into_iter().find(|f| f.key() == s)
    }
}

/// What the answer slot is measured over: the shown letters, or the option texts (in option
/// order; option `i` is still labelled by [`letter`](super::letter)`(i)` in the scores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerSlot {
    Letters(Vec<char>),
    Open(Vec<String>),
}

impl AnswerSlot {
    pub fn format(&self) -> AnswerFormat {
        match self {
            AnswerSlot::Letters(_) => AnswerFormat::Letters,
            AnswerSlot::Open(_) => AnswerFormat::Open,
        }
    }

    /// How many options are measured.
    pub fn len(&self) -> usize {
        match self {
            AnswerSlot::Letters(l) => l.len(),
            AnswerSlot::Open(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The label of each option in the scores: the letters, or A, B, … for the texts.
    pub fn labels(&self) -> Vec<char> {
        match self {
            AnswerSlot::Letters(l) => l.clone(),
            AnswerSlot::Open(t) => (0..t.len().min(26)).map(super::letter).collect(),
        }
    }

    /// The part of a score's key that names what was measured: the letters as a string
    /// ("ABCD", as every run before open answers wrote it), or `open:` and the SHA-256 of the
    /// option texts (each as its byte length, a colon and its bytes), so a changed text is
    /// another key.
    pub fn key(&self) -> String {
        match self {
            AnswerSlot::Letters(l) => l.iter().collect(),
            AnswerSlot::Open(texts) => {
                let mut h = Sha256::new();
                for t in texts {
                    h.update(format!("{}:", t.len()).as_bytes());
                    h.update(t.as_bytes());
                }
                format!("open:{}", hex::encode(h.finalize()))
            }
        }
    }
}

/// One option text scored as the continuation of the assistant turn (format `open`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenOption {
    /// Σ log p(token | context, earlier tokens of the text), natural log, over the text's tokens.
    pub sum_logp: f64,
    /// Tokens of the text (the end-of-turn token not counted).
    pub tokens: usize,
    /// log p(end of turn | context, the whole text): the model's end-of-turn token right after
    /// the text. Not part of the primary score; kept so a user can score "the text, then stop".
    pub eot_logp: f64,
}

impl OpenOption {
    /// The primary score: the mean log-probability per token of the text.
    pub fn mean_logp(&self) -> f64 {
        self.sum_logp / self.tokens as f64
    }
}

/// The measurement of an `open` answer slot: one entry per option, in option order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenAnswers {
    pub options: Vec<OpenOption>,
    /// The end-of-turn token scored after each text.
    pub eot_token: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_letter_slot_keys_as_every_earlier_run_did() {
        assert_eq!(AnswerSlot::Letters(vec!['A', 'B', 'C']).key(), "ABC");
        let open = AnswerSlot::Open(vec!["Paris".into(), "Rome".into()]);
        assert!(open.key().starts_with("open:"));
        // The split between texts counts: "ab"+"c" is not "a"+"bc".
        assert_ne!(AnswerSlot::Open(vec!["ab".into(), "c".into()]).key(), AnswerSlot::Open(vec!["a".into(), "bc".into()]).key());
        assert_eq!(open.labels(), vec!['A', 'B']);
        assert_eq!(open.format(), AnswerFormat::Open);
    }

    #[test]
    fn format_keys_round_trip() {
        for f in AnswerFormat::ALL {
            assert_eq!(AnswerFormat::from_key(f.key()), Some(f));
        }
        assert_eq!(AnswerFormat::from_key("both"), None);
        assert_eq!(AnswerFormat::default(), AnswerFormat::Letters);
    }

    #[test]
    fn the_primary_score_is_the_mean_per_token() {
        let o = OpenOption { sum_logp: -6.0, tokens: 3, eot_logp: -1.0 };
        assert_eq!(o.mean_logp(), -2.0);
    }
}
