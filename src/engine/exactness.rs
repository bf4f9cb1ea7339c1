//! Is prefix reuse exact on this backend? The same prompt scored after a shared prefix (its
//! KV cells reused) and from scratch must give the same bits; on the CPU with this project's
//! settings it does, but a GPU kernel may pick another reduction order for another batch size,
//! and then the two differ in the last digits. [`reuse_check`] measures it on two small
//! conversations, and [`ReusePolicy`] says what a batch does about it.

use super::{Engine, EngineError};
use crate::protocol::{ChatMessage, SlotScore};

/// A conversation with a system message, history and a final question, and its continuation:
/// the second shares the first's first two messages.
fn conversations() -> (Vec<ChatMessage>, Vec<ChatMessage>) {
    let first = vec![
        ChatMessage::system("You answer multiple-choice questions with the letter of the best option only."),
        ChatMessage::user("Question:\nWhich planet is closest to the Sun?\n\nOptions:\nA. Venus\nB. Mercury\nC. Mars\nD. Earth\n\nAnswer with the letter only."),
        ChatMessage::assistant("B"),
        ChatMessage::user("I think it is Venus. Answer with the letter only."),
    ];
    let mut second = first.clone();
    second.truncate(3);
    second.push(ChatMessage::user("Are you sure? Answer with the letter only: A, B, C or D."));
    (first, second)
}

/// What [`reuse_check`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ReuseCheck {
    /// Tokens the cached scoring reused (0: reuse was not exercised, e.g. `--no-cache`).
    pub tokens_reused: usize,
    /// Largest |p_cached − p_scratch| over the option probabilities.
    pub max_abs_dp: f64,
    /// Every log-score and the letter mass bit for bit the same.
    pub identical: bool,
}

/// Scores the second conversation after the first (prefix reused) and again from scratch, and
/// compares. Leaves the engine's cache empty.
pub fn reuse_check(engine: &Engine) -> Result<ReuseCheck, EngineError> {
    let (first, second) = conversations();
    let letters = ['A', 'B', 'C', 'D'];
    engine.clear_cache()?;
    engine.score(&first, &letters)?;
    let cached = engine.score(&second, &letters)?;
    engine.clear_cache()?;
    let scratch = engine.score(&second, &letters)?;
    engine.clear_cache()?;
    Ok(ReuseCheck::compare(std::slice::from_ref(&cached), std::slice::from_ref(&scratch)))
}

impl ReuseCheck {
    /// `a` against `b`, score by score: every log-score and the letter mass bit for bit, the
    /// largest |Δp|, and the tokens `a` reused.
    fn compare(a: &[SlotScore], b: &[SlotScore]) -> ReuseCheck {
        let identical = a.iter().zip(b).all(|(x, y)| {
            x.log_scores.iter().zip(&y.log_scores).all(|(p, q)| p.to_bits() == q.to_bits()) && x.letter_mass.to_bits() == y.letter_mass.to_bits()
        });
        let max_abs_dp = a.iter().zip(b).flat_map(|(x, y)| x.probs.iter().zip(&y.probs).map(|(p, q)| (p - q).abs())).fold(0.0, f64::max);
        ReuseCheck { tokens_reused: a.iter().map(|s| s.tokens_reused).sum(), max_abs_dp, identical }
    }

    /// Whether, under `policy`, prompts are to be scored from scratch, and the line that says
    /// what was found and done (`None` when reuse is exact).
    pub fn decide(&self, policy: ReusePolicy) -> (bool, Option<String>) {
        self.decide_as(
            policy,
            "prefix-reused scores differ from scratch scores on this GPU back-end",
            "scoring every prompt from scratch (exact, slower; --allow-inexact-reuse keeps reuse)",
            "keeping prefix reuse (--allow-inexact-reuse)",
        )
    }

    /// Whether, under `policy`, a batch decodes one prompt per call instead of packing, and
    /// the line that says what was found and done (`None` when packing is exact).
    pub fn decide_pack(&self, policy: ReusePolicy) -> (bool, Option<String>) {
        self.decide_as(
            policy,
            "packed scores differ from one-prompt-per-call scores on this back-end",
            "decoding one prompt per call (exact; --allow-inexact-reuse keeps packing)",
            "keeping packed decoding (--allow-inexact-reuse)",
        )
    }

    fn decide_as(&self, policy: ReusePolicy, found: &str, fall_back: &str, keep: &str) -> (bool, Option<String>) {
        if self.identical {
            return (false, None);
        }
        let back = policy == ReusePolicy::FallBackToScratch;
        (back, Some(format!("{found} (max |Δp| {:.3e}): {}", self.max_abs_dp, if back { fall_back } else { keep })))
    }
}

/// Is packed decoding exact here? Three branches of one history scored as one group (their
/// suffixes in shared decode calls, on fork sequences) and each alone, one per call, on the
/// same engine (which must pack: [`super::EngineOptions::pack`] > 1). Leaves the cache empty.
pub fn pack_check(engine: &Engine) -> Result<ReuseCheck, EngineError> {
    let (first, second) = conversations();
    let mut third = second.clone();
    third.pop();
    third.push(ChatMessage::user("My teacher says it is Mars. Answer with the letter only."));
    let letters = ['A', 'B', 'C', 'D'];
    let prepared = [first, second, third].iter().map(|c| engine.prepare(c)).collect::<Result<Vec<_>, _>>()?;
    engine.clear_cache()?;
    let packed = engine.score_group(prepared.clone(), &letters)?;
    let mut alone = Vec::new();
    for p in prepared {
        engine.clear_cache()?;
        alone.push(engine.score_prepared(p, &letters)?);
    }
    engine.clear_cache()?;
    Ok(ReuseCheck::compare(&packed, &alone))
}

/// What a batch does on a backend where prefix reuse is not bit-exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReusePolicy {
    /// Score every prompt of that model from scratch (exact, slower): the default.
    #[default]
    FallBackToScratch,
    /// Keep reusing prefixes (`--allow-inexact-reuse`); the measured deviation is recorded.
    AllowInexact,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offload_comes_from_the_flag_else_the_model_else_the_build() {
        let models = crate::config::ModelsConfig::bundled().unwrap();
        let mut a = models.get("smollm2-135m").unwrap().clone();
        let b = a.clone();
        a.gpu_layers = Some(12);
        let mut o = crate::engine::EngineOptions::default();
        assert_eq!(o.gpu_layers_for(&a), 12);
        assert_eq!(o.gpu_layers_for(&b), crate::engine::default_gpu_layers());
        o.gpu_layers = Some(3);
        assert_eq!((o.gpu_layers_for(&a), o.gpu_layers_for(&b)), (3, 3));
        assert_eq!(o.for_model(&b).gpu_layers, Some(3));
    }

    #[test]
    fn an_inexact_check_falls_back_unless_inexact_is_allowed() {
        let exact = ReuseCheck { tokens_reused: 9, max_abs_dp: 0.0, identical: true };
        assert_eq!(exact.decide(ReusePolicy::FallBackToScratch), (false, None));
        assert_eq!(exact.decide_pack(ReusePolicy::FallBackToScratch), (false, None));
        let off = ReuseCheck { tokens_reused: 9, max_abs_dp: 0.00123, identical: false };
        let (back, line) = off.decide_pack(ReusePolicy::FallBackToScratch);
        assert!(back);
        assert_eq!(
            line.unwrap(),
            "packed scores differ from one-prompt-per-call scores on this back-end (max |Δp| 1.230e-3): decoding one prompt per call (exact; --allow-inexact-reuse keeps packing)"
        );
        let (back, line) = off.decide(ReusePolicy::AllowInexact);
        assert!(!back);
        assert_eq!(line.unwrap(), "prefix-reused scores differ from scratch scores on this GPU back-end (max |Δp| 1.230e-3): keeping prefix reuse (--allow-inexact-reuse)");
    }

    #[test]
    fn the_second_conversation_shares_a_prefix_with_the_first() {
        let (a, b) = conversations();
        assert_eq!(a[..3], b[..3]);
        assert_ne!(a[3], b[3]);
    }
}
