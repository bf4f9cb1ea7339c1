//! A prompt as an engine prepares it (rendered and tokenized, in this process or by a server),
//! and its identity, the `prompt_hash` of every score and part of every score key.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A rendered and tokenized prompt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prepared {
    pub text: String,
    pub tokens: Vec<i32>,
}

impl Prepared {
    /// The identity of the prompt: the sha256 of its token ids (little-endian i32), or, for a
    /// served chat API's prompt (no ids, its text the messages it sends), of its text.
    pub fn hash(&self) -> String {
        if self.tokens.is_empty() && !self.text.is_empty() {
            let mut h = Sha256::new();
            h.update(b"chat messages\0");
            h.update(self.text.as_bytes());
            return hex::encode(h.finalize());
        }
        let mut h = Sha256::new();
        for t in &self.tokens {
            h.update(t.to_le_bytes());
        }
        hex::encode(h.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_decide_the_hash_and_a_chat_prompt_hashes_its_text() {
        let p = |text: &str, tokens: Vec<i32>| Prepared { text: text.into(), tokens };
        // The token ids alone: the text a tokenized prompt was rendered from does not count.
        assert_eq!(p("a", vec![1, 2]).hash(), p("b", vec![1, 2]).hash());
        assert_ne!(p("a", vec![1, 2]).hash(), p("a", vec![2, 1]).hash());
        // sha256 of the little-endian ids (here of no bytes at all).
        assert_eq!(p("", vec![]).hash(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        // Messages sent as text hash apart from any token sequence.
        assert_ne!(p("[[\"user\",\"q\"]]", vec![]).hash(), p("", vec![]).hash());
    }
}
