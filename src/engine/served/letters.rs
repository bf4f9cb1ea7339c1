//! Letter scores from the next-token log-probabilities a server returns.
//!
//! A server gives the top K next tokens, not the whole distribution. A letter variant token
//! among them has its exact probability; one outside them has some probability between 0 and
//! the bound: the smallest probability returned (nothing outside the top K is more probable)
//! and no more than the mass the returned tokens leave. The score uses 0 for unseen tokens
//! (what the server said) and records the bound: every option probability at its lowest and
//! highest over all values of the unseen tokens, and whether the prediction could change.
//! Where the whole distribution was returned, or every letter token was seen, the score is
//! exact and carries no bound.

use crate::engine::scoring::letters_from_logps;
use crate::protocol::{LetterBound, LetterTokens, SlotScore, TopToken};

/// One next token as the server reported it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    /// The token id, when the API gives one.
    pub id: Option<i32>,
    pub text: String,
    pub logprob: f64,
}

/// The next-token distribution at the answer slot, as far as the server reported it.
#[derive(Clone, Debug, Default)]
pub(crate) struct NextTokens {
    pub candidates: Vec<Candidate>,
    /// Every token of the vocabulary is listed (unlisted tokens have probability 0).
    pub complete: bool,
    /// Log-probabilities of single tokens asked for separately (vLLM `prompt_logprobs`), by id.
    pub extra: Vec<(i32, f64)>,
}

impl NextTokens {
    /// The log-probability of a variant token: by id when the API gives ids, else by text.
    fn lookup(&self, id: i32, text: &str) -> Option<f64> {
        if id >= 0 {
            if let Some(&(_, lp)) = self.extra.iter().find(|(i, _)| *i == id) {
                return Some(lp);
            }
            if self.candidates.iter().any(|c| c.id.is_some()) {
                return self.candidates.iter().find(|c| c.id == Some(id)).map(|c| c.logprob);
            }
        }
        self.candidates.iter().find(|c| c.text == text).map(|c| c.logprob)
    }

    /// The most probability an unlisted token can have.
    pub(crate) fn bound(&self) -> f64 {
        if self.complete {
            return 0.0;
        }
        let listed: f64 = self.candidates.iter().map(|c| c.logprob.exp()).sum();
        let smallest = self.candidates.iter().map(|c| c.logprob.exp()).fold(1.0f64, f64::min);
        smallest.min((1.0 - listed).max(0.0))
    }
}

/// Synthetic ids for a chat API's letter tokens (it reports no token ids): `-(2i+1)` for the bare
/// letter and `-(2i+2)` for the space-prefixed one, so views can still tell letter tokens apart.
pub(crate) fn chat_letter_tokens(letter: char) -> LetterTokens {
    let i = (letter as i32) - ('A' as i32);
    LetterTokens {
        letter,
        ids: vec![-(2 * i + 2), -(2 * i + 1)],
        texts: vec![format!(" {letter}"), letter.to_string()],
    }
}

/// The answer-slot score of `variants` from what the server returned, with its letter bound.
pub(crate) fn score_next_tokens(next: &NextTokens, variants: &[LetterTokens], top_k: usize) -> SlotScore {
    let bound = next.bound();
    let mut seen_lps: Vec<Vec<f64>> = Vec::with_capacity(variants.len());
    let mut unseen: Vec<String> = Vec::new();
    let mut unseen_count: Vec<usize> = Vec::with_capacity(variants.len());
    for v in variants {
        let mut lps = Vec::with_capacity(v.ids.len());
        let mut n_unseen = 0;
        for (j, &id) in v.ids.iter().enumerate() {
            let text = v.texts.get(j).map(String::as_str).unwrap_or("");
            match next.lookup(id, text) {
                Some(lp) => lps.push(lp),
                None => {
                    lps.push(f64::NEG_INFINITY);
                    if bound > 0.0 {
                        n_unseen += 1;
                        unseen.push(text.to_string());
                    }
                }
            }
        }
        seen_lps.push(lps);
        unseen_count.push(n_unseen);
    }
    // No letter token seen at all: every letter is as likely as the bound allows, so the point
    // value is the bound for each (the options come out equal) rather than 0/0.
    let none_seen = seen_lps.iter().all(|l| l.iter().all(|x| *x == f64::NEG_INFINITY));
    let point: Vec<Vec<f64>> = if none_seen && bound > 0.0 {
        seen_lps.iter().map(|l| l.iter().map(|_| bound.ln()).collect()).collect()
    } else {
        seen_lps.clone()
    };
    let letters = letters_from_logps(&point);
    let pred = letters.pred;

    let letter_bound = (!unseen.is_empty()).then(|| {
        // Mean variant probability of each letter at its lowest (unseen = 0) and highest.
        let lo: Vec<f64> = seen_lps.iter().map(|l| mean_prob(l, 0.0)).collect();
        let hi: Vec<f64> = seen_lps.iter().map(|l| mean_prob(l, bound)).collect();
        let n = lo.len();
        let probs_lo: Vec<f64> = (0..n)
            .map(|i| {
                let others: f64 = (0..n).filter(|&j| j != i).map(|j| hi[j]).sum();
                ratio(lo[i], lo[i] + others)
            })
            .collect();
        let probs_hi: Vec<f64> = (0..n)
            .map(|i| {
                let others: f64 = (0..n).filter(|&j| j != i).map(|j| lo[j]).sum();
                ratio(hi[i], hi[i] + others)
            })
            .collect();
        // The prediction holds when its lowest value beats every other letter's highest
        // (a tie goes to the earlier letter, so an earlier rival may not even tie).
        let pred_fixed = (0..n).filter(|&j| j != pred).all(|j| if j < pred { lo[pred] > hi[j] } else { lo[pred] >= hi[j] && lo[pred] > 0.0 });
        LetterBound { k: next.candidates.len(), unseen, bound, probs_lo, probs_hi, pred_fixed }
    });

    let mut counted: Vec<(i32, f64)> = Vec::new();
    for (v, lps) in variants.iter().zip(&seen_lps) {
        for (&id, &lp) in v.ids.iter().zip(lps) {
            if !counted.iter().any(|(i, _)| *i == id) {
                counted.push((id, lp));
            }
        }
    }
    let letter_mass = counted.iter().map(|(_, lp)| lp.exp()).sum();
    let mut sorted: Vec<&Candidate> = next.candidates.iter().collect();
    sorted.sort_by(|a, b| b.logprob.total_cmp(&a.logprob).then(a.id.cmp(&b.id)));
    let top_tokens = sorted
        .into_iter()
        .take(top_k)
        .map(|c| TopToken {
            id: c.id.unwrap_or_else(|| letter_id_of_text(variants, &c.text)),
            text: c.text.clone(),
            prob: c.logprob.exp(),
        })
        .collect();
    letters.into_score(variants, letter_mass, top_tokens, letter_bound)
}

/// The (synthetic, for chat APIs) id of the letter token spelled `text`, else -1.
fn letter_id_of_text(variants: &[LetterTokens], text: &str) -> i32 {
    variants
        .iter()
        .flat_map(|v| v.ids.iter().zip(&v.texts))
        .find(|(_, t)| *t == text)
        .map_or(-1, |(&id, _)| id)
}

fn mean_prob(lps: &[f64], unseen: f64) -> f64 {
    let s: f64 = lps.iter().map(|&lp| if lp == f64::NEG_INFINITY { unseen } else { lp.exp() }).sum();
    s / lps.len().max(1) as f64
}

fn ratio(a: f64, b: f64) -> f64 {
    // 0/0: no mass anywhere for this option or its rivals; 0 keeps the bound finite (it is
    // stored as JSON, where NaN cannot be written).
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(letter: char, ids: &[i32]) -> LetterTokens {
        LetterTokens { letter, ids: ids.to_vec(), texts: ids.iter().map(|i| format!("t{i}")).collect() }
    }

    fn cand(id: i32, p: f64) -> Candidate {
        Candidate { id: Some(id), text: format!("t{id}"), logprob: p.ln() }
    }

    #[test]
    fn all_letters_seen_is_exact_and_matches_the_in_process_arithmetic() {
        // A = {1, 11}, B = {2, 12}: every variant listed.
        let next = NextTokens { candidates: vec![cand(1, 0.5), cand(2, 0.3), cand(11, 0.1), cand(12, 0.05)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10);
        assert!(s.bound.is_none());
        let (a, b) = ((0.5 + 0.1) / 2.0, (0.3 + 0.05) / 2.0);
        assert!((s.probs[0] - a / (a + b)).abs() < 1e-12 && s.pred == 0);
        assert!((s.letter_mass - 0.95).abs() < 1e-12);
    }

    #[test]
    fn an_unseen_variant_is_bounded_by_the_smallest_listed_probability() {
        // " A"/" B" (11, 12) unseen; the smallest listed p is 0.05, the rest of the mass 0.1.
        let next = NextTokens { candidates: vec![cand(1, 0.6), cand(2, 0.25), cand(3, 0.05)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10);
        let b = s.bound.clone().expect("bounded");
        assert_eq!((b.k, b.unseen.clone()), (3, vec!["t11".to_string(), "t12".to_string()]));
        assert!((b.bound - 0.05).abs() < 1e-12, "bound {}", b.bound);
        // Point value: unseen = 0, so A = 0.6 / 0.85.
        assert!((s.probs[0] - 0.6 / 0.85).abs() < 1e-12);
        // Lowest A: A's " A" at 0, B's " B" at the bound; highest A the other way round.
        let lo = (0.6 / 2.0) / (0.6 / 2.0 + (0.25 + 0.05) / 2.0);
        let hi = ((0.6 + 0.05) / 2.0) / ((0.6 + 0.05) / 2.0 + 0.25 / 2.0);
        assert!((b.probs_lo[0] - lo).abs() < 1e-12 && (b.probs_hi[0] - hi).abs() < 1e-12);
        assert!(b.probs_lo[0] <= s.probs[0] && s.probs[0] <= b.probs_hi[0]);
        assert!(b.pred_fixed);
    }

    #[test]
    fn a_close_call_under_the_bound_is_not_a_fixed_prediction() {
        let next = NextTokens { candidates: vec![cand(1, 0.30), cand(2, 0.29), cand(5, 0.2)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10);
        assert_eq!(s.pred, 0);
        assert!(!s.bound.unwrap().pred_fixed, "B's unseen variant can lift it over A");
    }

    #[test]
    fn a_complete_distribution_or_exact_extras_leave_no_bound() {
        let mut next = NextTokens { candidates: vec![cand(1, 0.6), cand(2, 0.4)], complete: true, ..Default::default() };
        assert!(score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10).bound.is_none());
        next.complete = false;
        next.extra = vec![(11, (1e-5f64).ln()), (12, (2e-5f64).ln())];
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10);
        assert!(s.bound.is_none());
        assert!((s.variant_probs[0][1] - 1e-5).abs() < 1e-15);
    }

    #[test]
    fn no_letter_seen_gives_equal_options_and_a_bound() {
        let next = NextTokens { candidates: vec![cand(7, 0.9), cand(8, 0.05)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1]), lt('B', &[2])], 10);
        assert!((s.probs[0] - 0.5).abs() < 1e-12 && s.pred == 0);
        let b = s.bound.unwrap();
        assert!(!b.pred_fixed && b.probs_lo[0] == 0.0 && b.probs_hi[0] == 1.0);
    }

    #[test]
    fn chat_letters_are_matched_by_text() {
        let next = NextTokens {
            candidates: vec![
                Candidate { id: None, text: "B".into(), logprob: (0.7f64).ln() },
                Candidate { id: None, text: "A".into(), logprob: (0.2f64).ln() },
            ],
            ..Default::default()
        };
        let s = score_next_tokens(&next, &[chat_letter_tokens('A'), chat_letter_tokens('B')], 5);
        assert_eq!(s.pred, 1);
        assert!((s.probs[1] - 0.7 / 0.9).abs() < 1e-12);
        assert_eq!(s.top_tokens[0].id, chat_letter_tokens('B').ids[1]);
        assert_eq!(s.bound.unwrap().unseen, vec![" A".to_string(), " B".to_string()]);
    }
}
