//! What is measured at the answer slot of one conversation (docs/protocol.md §4).

use serde::{Deserialize, Serialize};

/// The letter tokens used for one letter: its single-token variants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LetterTokens {
    pub letter: char,
    /// Sorted, unique token ids of the single-token variants ("L" and/or " L").
    pub ids: Vec<i32>,
    /// The text of each id (same order), e.g. "A" and " A".
    pub texts: Vec<String>,
}

/// One of the most probable next tokens at the answer slot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopToken {
    pub id: i32,
    pub text: String,
    pub prob: f64,
}

/// Everything measured at the answer slot of one conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlotScore {
    /// The shown option letters, in order.
    pub letters: Vec<char>,
    /// Un-normalised letter log-scores: ln(mean of variant probabilities) (the paper's
    /// `letter_logps`, CCTP's `option_log_scores`).
    pub log_scores: Vec<f64>,
    /// Option probabilities renormalised over the shown letters (`option_probs`).
    pub probs: Vec<f64>,
    /// Index of the predicted letter (argmax of the log-scores, ties to the earliest letter).
    pub pred: usize,
    /// log-score of the prediction minus the second-highest log-score (0 with one option).
    pub margin_top2: f64,
    /// Entropy of `probs` in nats, each p clamped to ≥ 1e-12 inside the log.
    pub entropy: f64,
    pub max_prob: f64,
    /// Total full-vocabulary probability of all counted letter tokens (not in the paper; low
    /// means the model is not answering with a letter).
    pub letter_mass: f64,
    /// Raw full-vocabulary probability of each variant token of each letter (same shape as
    /// `variants[i].ids`).
    pub variant_probs: Vec<Vec<f64>>,
    pub variants: Vec<LetterTokens>,
    /// Most probable next tokens over the whole vocabulary.
    pub top_tokens: Vec<TopToken>,
    /// Tokens in the rendered prompt.
    pub prompt_tokens: usize,
    /// Tokens decoded for this score (the rest came from the KV cache).
    pub tokens_evaluated: usize,
    pub tokens_reused: usize,
    /// sha256 of the prompt token ids (little-endian i32), identifies the exact input.
    pub prompt_hash: String,
    /// The prompt text after the chat template.
    pub rendered_prompt: String,
    /// Served scores from top-K log-probabilities only: what was not seen (`None`: every
    /// letter token's probability is known exactly, as in-process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<LetterBound>,
    /// Format `open`: each option text's log-probability as the assistant's answer (`letters`
    /// then label the options A, B, …; `log_scores` are the per-token means, `letter_mass` the
    /// summed probability of the texts). `None` for letters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<super::OpenAnswers>,
}

/// A served score whose letter tokens were not all among the top K next tokens the server
/// returned: each unseen token's probability is between 0 (the value used) and `bound`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LetterBound {
    /// K: how many top next tokens the server returned.
    pub k: usize,
    /// The variant tokens not among them (their text, e.g. `" A"`).
    pub unseen: Vec<String>,
    /// The most probability any unseen token can have: the smallest probability returned, and
    /// at most the mass the returned tokens leave.
    pub bound: f64,
    /// Each option probability at its lowest and highest over every value of the unseen tokens.
    pub probs_lo: Vec<f64>,
    pub probs_hi: Vec<f64>,
    /// The predicted letter is the same whatever the unseen tokens' values.
    pub pred_fixed: bool,
}

impl SlotScore {
    /// The predicted letter (`?` if `pred` is out of range, which only stored data can cause).
    pub fn pred_letter(&self) -> char {
        self.letters.get(self.pred).copied().unwrap_or('?')
    }
    /// The option probability of option `i`, if there is one.
    pub(crate) fn prob(&self, i: usize) -> Option<f64> {
        self.probs.get(i).copied()
    }
    pub fn prob_of(&self, letter: char) -> Option<f64> {
        let i = self.letters.iter().position(|&l| l == letter)?;
        self.prob(i)
    }
}
