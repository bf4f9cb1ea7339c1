//! Greedy generation at the answer slot ([`Job::Generate`](super::super::Job::Generate)): the
//! prompt evaluated as for a score, then one token at a time, the generated tokens taken out of
//! the KV cache afterwards.

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use super::{backend_err, Session};
use crate::engine::EngineError;

impl Session<'_> {
    /// Greedy generation after `tokens` on lane 0 (see [`Job::Generate`](super::super::Job::Generate)):
    /// the prompt is evaluated as for a score, then one token at a time is chosen (argmax of the
    /// logits, the lowest id on a tie) and decoded after it. Afterwards the generated tokens are
    /// removed from the KV cache, which then holds `tokens` again, as the lane's cache says.
    pub(crate) fn generate(
        &mut self,
        model: &LlamaModel,
        tokens: &[i32],
        max_tokens: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<crate::engine::Generation, EngineError> {
        self.evaluate(0, tokens)?;
        let n = tokens.len();
        let mut out = Vec::new();
        let steps = self.greedy_steps(model, n, max_tokens, cancelled, &mut out);
        if !out.is_empty() {
            // Only generated positions (n..) go; the prompt's cells are not touched.
            if let Err(e) = self.trim(0, n) {
                self.clear();
                return Err(backend_err("removing the generated tokens from the KV cache", e));
            }
        }
        if matches!(steps, Err(ref e) if !matches!(e, EngineError::Cancelled)) {
            // A failed decode leaves the KV cache in a state nothing records: start clean.
            self.clear();
        }
        let finished = steps?;
        let mut bytes = Vec::new();
        for &t in &out {
            bytes.extend(model.vocab().token_to_piece(LlamaToken(t), true, None));
        }
        Ok(crate::engine::Generation { text: String::from_utf8_lossy(&bytes).into_owned(), tokens: out, finished })
    }

    /// The loop of [`generate`](Self::generate): pushes the chosen tokens to `out`; true when
    /// it stopped on an end-of-generation token.
    fn greedy_steps(
        &mut self,
        model: &LlamaModel,
        n: usize,
        max_tokens: usize,
        cancelled: &dyn Fn() -> bool,
        out: &mut Vec<i32>,
    ) -> Result<bool, EngineError> {
        let vocab = model.vocab();
        let mut logits_at = self.batch.n_tokens() - 1;
        while out.len() < max_tokens {
            if cancelled() {
                return Err(EngineError::Cancelled);
            }
            let logits = self.ctx.get_logits_ith(logits_at);
            let best = (0..logits.len()).fold(0, |b, i| if logits[i] > logits[b] { i } else { b }) as i32;
            if vocab.is_eog(LlamaToken(best)) {
                return Ok(true);
            }
            out.push(best);
            let pos = n + out.len() - 1;
            if out.len() == max_tokens || pos + 1 >= self.n_ctx as usize {
                break;
            }
            self.clear_batch();
            self.add(best, pos, 0, true)?;
            self.decode_batch(0)?;
            logits_at = 0;
        }
        Ok(false)
    }
}
