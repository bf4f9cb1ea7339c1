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
        let smallest = self.candidates.iter().map(|c| c.logprob.exp()).fold(1.0f64, f64::min);
        smallest.min(self.unlisted_mass())
    }

    /// The probability the listed tokens leave to all unlisted ones together.
    fn unlisted_mass(&self) -> f64 {
        if self.complete {
            return 0.0;
        }
        let listed: f64 = self.candidates.iter().map(|c| c.logprob.exp()).sum();
        (1.0 - listed).max(0.0)
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
        // Each letter's mean variant probability at its lowest (unseen = 0) and highest alone
        // (its unseen tokens at the bound, together no more than the mass the listed tokens
        // leave); the rivals of a letter at their highest share that mass too.
        let left = next.unlisted_mass();
        let lo: Vec<f64> = seen_lps.iter().map(|l| listed_sum(l) / n_of(l)).collect();
        let hi: Vec<f64> = seen_lps
            .iter()
            .zip(&unseen_count)
            .map(|(l, &u)| listed_sum(l) / n_of(l) + (u as f64 * bound).min(left) / n_of(l))
            .collect();
        let n = lo.len();
        let probs_lo: Vec<f64> = (0..n)
            .map(|i| {
                let others = rivals_at_most(&seen_lps, &unseen_count, i, bound, left);
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

/// The most the letters other than `i` can weigh together (sum of their mean variant
/// probabilities): their listed tokens, plus `left` spread over their unseen tokens, at most
/// `bound` each, first to the letters with the fewest variants (where a token weighs most).
fn rivals_at_most(seen_lps: &[Vec<f64>], unseen_count: &[usize], i: usize, bound: f64, left: f64) -> f64 {
    let mut rivals: Vec<usize> = (0..seen_lps.len()).filter(|&j| j != i).collect();
    rivals.sort_by_key(|&j| seen_lps[j].len());
    let mut budget = left;
    let mut total = 0.0;
    for j in rivals {
        let extra = (unseen_count[j] as f64 * bound).min(budget);
        budget -= extra;
        total += (listed_sum(&seen_lps[j]) + extra) / n_of(&seen_lps[j]);
    }
    total
}

/// The summed probability of a letter's listed variant tokens.
fn listed_sum(lps: &[f64]) -> f64 {
    lps.iter().filter(|lp| **lp != f64::NEG_INFINITY).map(|lp| lp.exp()).sum()
}

/// A letter's number of variant tokens, the divisor of its mean.
fn n_of(lps: &[f64]) -> f64 {
    lps.len().max(1) as f64
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
    fn unseen_tokens_share_the_mass_the_listed_ones_leave() {
        // B's variants 0.24 + 0.24, A's both unseen; one other token at 0.26, so 0.26 is left
        // for all unseen tokens together and each is at most 0.24. A's two unseen tokens can
        // reach a mean of 0.13, not 0.24: B stays ahead whatever they are.
        let next = NextTokens { candidates: vec![cand(2, 0.24), cand(12, 0.24), cand(7, 0.26)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12])], 10);
        let b = s.bound.unwrap();
        assert_eq!(s.pred, 1);
        assert!(b.pred_fixed, "A's unseen tokens cannot tie B");
        assert!((b.probs_hi[0] - 0.13 / (0.13 + 0.24)).abs() < 1e-12, "{:?}", b.probs_hi);
        // Three letters, each with one unseen variant: the two rivals of A share 0.02, not 0.02 each.
        let next = NextTokens { candidates: vec![cand(1, 0.45), cand(2, 0.44), cand(5, 0.05), cand(6, 0.04)], ..Default::default() };
        let s = score_next_tokens(&next, &[lt('A', &[1, 11]), lt('B', &[2, 12]), lt('C', &[5, 15])], 10);
        let b = s.bound.unwrap();
        assert!((b.bound - 0.02).abs() < 1e-12);
        let lo_a = 0.225 / (0.225 + 0.22 + 0.025 + 0.01);
        assert!((b.probs_lo[0] - lo_a).abs() < 1e-12, "{} vs {lo_a}", b.probs_lo[0]);
    }

    /// Every way of giving the unseen tokens probabilities the server's answer allows (each at
    /// most the bound, together at most what the listed tokens leave) gives option probabilities
    /// inside [probs_lo, probs_hi], and the same prediction where it is called fixed.
    #[test]
    fn the_bounds_hold_for_every_allowed_value_of_the_unseen_tokens() {
        let mut rng = crate::data::pyrandom::PyRandom::from_int(11);
        let variants = [lt('A', &[1, 11]), lt('B', &[2, 12]), lt('C', &[3]), lt('D', &[4, 14])];
        let ids: Vec<i32> = variants.iter().flat_map(|v| v.ids.clone()).collect();
        let (mut bounded, mut fixed) = (0, 0);
        for _ in 0..300 {
            // A random distribution over the letter tokens and 3 others; a random top K of it.
            let all: Vec<i32> = ids.iter().copied().chain([90, 91, 92]).collect();
            let w: Vec<f64> = all.iter().map(|_| rng.random().powi(3)).collect();
            let total: f64 = w.iter().sum();
            let mut order: Vec<usize> = (0..all.len()).collect();
            order.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
            let k = 2 + (rng.random() * 6.0) as usize;
            let next = NextTokens { candidates: order[..k].iter().map(|&i| cand(all[i], w[i] / total)).collect(), ..Default::default() };
            let s = score_next_tokens(&next, &variants, 10);
            let Some(b) = s.bound.clone() else { continue };
            bounded += 1;
            fixed += usize::from(b.pred_fixed);
            let unseen: Vec<i32> = ids.iter().copied().filter(|id| !next.candidates.iter().any(|c| c.id == Some(*id))).collect();
            let left = next.unlisted_mass();
            for trial in 0..40 {
                // Random values, a corner or two where one letter's tokens get everything.
                let mut v: Vec<f64> = unseen.iter().map(|_| rng.random() * b.bound).collect();
                if trial < 4 {
                    v.iter_mut().zip(&unseen).for_each(|(x, id)| *x = if variants[trial].ids.contains(id) { b.bound } else { 0.0 });
                }
                let sum: f64 = v.iter().sum();
                if sum > left {
                    v.iter_mut().for_each(|x| *x *= left / sum);
                }
                let mut filled = next.clone();
                filled.candidates.extend(unseen.iter().zip(&v).map(|(&id, &p)| cand(id, p.max(1e-300))));
                let f = score_next_tokens(&filled, &variants, 10);
                for i in 0..variants.len() {
                    assert!(f.probs[i] >= b.probs_lo[i] - 1e-12 && f.probs[i] <= b.probs_hi[i] + 1e-12, "option {i}: {} outside [{}, {}]", f.probs[i], b.probs_lo[i], b.probs_hi[i]);
                }
                if b.pred_fixed {
                    assert_eq!(f.pred, s.pred, "a fixed prediction changed");
                }
            }
        }
        assert!(bounded > 200 && fixed > 20 && bounded - fixed > 20, "{bounded} bounded answers, {fixed} fixed: the cases do not cover both");
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
