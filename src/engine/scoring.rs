//! The answer-slot measurement of docs/protocol.md §4, on one logits vector.
//!
//! For each shown letter L the single-token encodings of "L" and " L" are its variants; the
//! letter's log-score is the log of the MEAN of the variants' full-vocabulary probabilities; the
//! option distribution renormalises those scores over the shown letters only. All arithmetic is
//! done in f64 from the f32 logits, in a fixed order, so equal logits give bit-equal results.

use crate::protocol::{LetterTokens, OpenAnswers, OpenOption, SlotScore, TopToken};

/// log-softmax normaliser of `logits`: returns (max, ln Σ exp(x − max)) in f64.
pub(crate) fn log_normaliser(logits: &[f32]) -> f64 {
    let m = logits
        .iter()
        .fold(f64::NEG_INFINITY, |a, &x| a.max(f64::from(x)));
    let s: f64 = logits.iter().map(|&x| (f64::from(x) - m).exp()).sum();
    m + s.ln()
}

/// Letter scoring (docs/protocol.md §4.3) plus letter mass and top tokens. `token_text` gives a token's text.
pub(crate) fn score_letters(
    logits: &[f32],
    variants: &[LetterTokens],
    top_k: usize,
    token_text: &dyn Fn(i32) -> String,
) -> SlotScore {
    let lz = log_normaliser(logits);
    let logp = |id: i32| f64::from(logits[id as usize]) - lz;

    let variant_lps: Vec<Vec<f64>> = variants.iter().map(|v| v.ids.iter().map(|&id| logp(id)).collect()).collect();
    let letters = letters_from_logps(&variant_lps);

    let mut counted: Vec<i32> = variants.iter().flat_map(|v| v.ids.iter().copied()).collect();
    counted.sort_unstable();
    counted.dedup();
    let letter_mass = counted.iter().map(|&id| logp(id).exp()).sum();

    let top_tokens = top_k_tokens(logits, top_k)
        .into_iter()
        .map(|id| TopToken {
            id,
            text: token_text(id),
            prob: logp(id).exp(),
        })
        .collect();

    letters.into_score(variants, letter_mass, top_tokens, None)
}

/// The letter arithmetic of docs/protocol.md §4.3 on the log-probabilities of each letter's
/// variant tokens (`-inf` for a token known to have probability 0): log-score = ln(mean of the
/// variant probabilities), renormalised over the letters, argmax with ties to the earliest
/// letter, margin, entropy and max. In-process and served scores both go through here.
pub(crate) fn letters_from_logps(variant_lps: &[Vec<f64>]) -> Letters {
    let mut log_scores = Vec::with_capacity(variant_lps.len());
    let mut variant_probs = Vec::with_capacity(variant_lps.len());
    for lps in variant_lps {
        // logsumexp(lps) - ln(len)
        let m = lps.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = if m == f64::NEG_INFINITY {
            m
        } else {
            m + lps.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
        };
        log_scores.push(lse - (lps.len() as f64).ln());
        variant_probs.push(lps.iter().map(|x| x.exp()).collect::<Vec<f64>>());
    }

    // Renormalise over the shown letters.
    let m = log_scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let z = m + log_scores.iter().map(|x| (x - m).exp()).sum::<f64>().ln();
    let probs: Vec<f64> = log_scores.iter().map(|x| (x - z).exp()).collect();

    // argmax, ties to the earliest letter; second = next in a stable descending sort.
    let mut order: Vec<usize> = (0..log_scores.len()).collect();
    order.sort_by(|&a, &b| {
        log_scores[b]
            .partial_cmp(&log_scores[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let pred = order[0];
    let margin_top2 = if order.len() > 1 {
        log_scores[pred] - log_scores[order[1]]
    } else {
        0.0
    };
    let entropy = -probs
        .iter()
        .map(|&p| p * p.max(1e-12).ln())
        .sum::<f64>();
    let max_prob = probs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    Letters { log_scores, variant_probs, probs, pred, margin_top2, entropy, max_prob }
}

/// What [`letters_from_logps`] computes.
pub(crate) struct Letters {
    pub log_scores: Vec<f64>,
    pub variant_probs: Vec<Vec<f64>>,
    pub probs: Vec<f64>,
    pub pred: usize,
    pub margin_top2: f64,
    pub entropy: f64,
    pub max_prob: f64,
}

impl Letters {
    /// The slot score of these letters (the prompt fields are filled in by the caller).
    pub(crate) fn into_score(
        self,
        variants: &[LetterTokens],
        letter_mass: f64,
        top_tokens: Vec<TopToken>,
        bound: Option<crate::protocol::LetterBound>,
    ) -> SlotScore {
        SlotScore {
            letters: variants.iter().map(|v| v.letter).collect(),
            log_scores: self.log_scores,
            probs: self.probs,
            pred: self.pred,
            margin_top2: self.margin_top2,
            entropy: self.entropy,
            max_prob: self.max_prob,
            letter_mass,
            variant_probs: self.variant_probs,
            variants: variants.to_vec(),
            top_tokens,
            prompt_tokens: 0,
            tokens_evaluated: 0,
            tokens_reused: 0,
            prompt_hash: String::new(),
            rendered_prompt: String::new(),
            bound,
            open: None,
        }
    }
}

/// The slot score of an `open` answer slot (docs/protocol.md §14): option `i` is labelled by
/// letter `i`, its log-score is the mean log-probability per token of its text, and the
/// distribution, prediction (ties to the earliest option), margin, entropy and maximum are the
/// letters' arithmetic on those log-scores. `letter_mass` is the summed probability of the texts.
pub(crate) fn open_score(options: Vec<OpenOption>, eot_token: String, top_tokens: Vec<TopToken>) -> SlotScore {
    let means: Vec<Vec<f64>> = options.iter().map(|o| vec![o.mean_logp()]).collect();
    let mut letters = letters_from_logps(&means);
    letters.variant_probs = Vec::new();
    let mass = options.iter().map(|o| o.sum_logp.exp()).sum();
    let labels: Vec<LetterTokens> = (0..options.len())
        .map(|i| LetterTokens { letter: crate::protocol::letter(i), ids: Vec::new(), texts: Vec::new() })
        .collect();
    let mut s = letters.into_score(&labels, mass, top_tokens, None);
    s.variants = Vec::new();
    s.open = Some(OpenAnswers { options, eot_token });
    s
}

/// Ids of the `k` largest logits, largest first (ties: lower id first).
pub(crate) fn top_k_tokens(logits: &[f32], k: usize) -> Vec<i32> {
    let mut best: Vec<(f32, i32)> = Vec::with_capacity(k + 1);
    for (i, &x) in logits.iter().enumerate() {
        if best.len() < k || best.last().is_some_and(|&(y, _)| x > y) {
            let pos = best.partition_point(|&(y, _)| y >= x);
            best.insert(pos, (x, i as i32));
            best.truncate(k);
        }
    }
    best.into_iter().map(|(_, i)| i).collect()
}


#[cfg(test)]
mod tests {
    use super::*;

    fn lt(letter: char, ids: &[i32]) -> LetterTokens {
        LetterTokens {
            letter,
            ids: ids.to_vec(),
            texts: ids.iter().map(|i| i.to_string()).collect(),
        }
    }

    // A fixed logits vector over a 10-token "vocabulary"; expected values computed by hand
    // (python: see the comments) — this tests the arithmetic, not llama.cpp.
    const LOGITS: [f32; 10] = [2.0, 1.0, 0.5, 0.0, -1.0, 3.0, 0.0, 0.0, 0.0, 0.0];

    #[test]
    fn mean_of_variants_and_renormalisation() {
        // A = {0, 5}, B = {1}, C = {2}
        let v = [lt('A', &[0, 5]), lt('B', &[1]), lt('C', &[2])];
        let s = score_letters(&LOGITS, &v, 3, &|i| format!("t{i}"));
        let z: f64 = LOGITS.iter().map(|&x| (x as f64).exp()).sum();
        let pa = ((2f64).exp() / z + (3f64).exp() / z) / 2.0;
        let pb = (1f64).exp() / z;
        let pc = (0.5f64).exp() / z;
        let tot = pa + pb + pc;
        let want = [pa / tot, pb / tot, pc / tot];
        for i in 0..3 {
            assert!((s.probs[i] - want[i]).abs() < 1e-12);
        }
        assert!((s.probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(s.pred, 0);
        assert!((s.log_scores[0] - pa.ln()).abs() < 1e-12);
        assert!((s.margin_top2 - (pa.ln() - pb.ln())).abs() < 1e-12);
        let h: f64 = -want.iter().map(|p| p * p.ln()).sum::<f64>();
        assert!((s.entropy - h).abs() < 1e-12);
        assert!((s.max_prob - want[0]).abs() < 1e-12);
        // letter mass counts each token once
        let mass = ((2f64).exp() + (3f64).exp() + (1f64).exp() + (0.5f64).exp()) / z;
        assert!((s.letter_mass - mass).abs() < 1e-12);
        assert_eq!(
            s.top_tokens.iter().map(|t| t.id).collect::<Vec<_>>(),
            vec![5, 0, 1]
        );
        assert_eq!(s.top_tokens[0].text, "t5");
    }

    #[test]
    fn ties_go_to_the_earliest_letter() {
        // tokens 6..9 have identical logits
        let v = [lt('A', &[3]), lt('B', &[6]), lt('C', &[7])];
        let s = score_letters(&LOGITS, &v, 1, &|_| String::new());
        assert_eq!(s.pred, 0);
        assert_eq!(s.margin_top2, 0.0);
        let v = [lt('A', &[4]), lt('B', &[6]), lt('C', &[7])];
        let s = score_letters(&LOGITS, &v, 1, &|_| String::new());
        assert_eq!(s.pred, 1);
    }

    #[test]
    fn open_scores_are_the_mean_per_token_renormalised() {
        let o = |sum_logp: f64, tokens: usize| OpenOption { sum_logp, tokens, eot_logp: -3.0 };
        // means: -1.0, -0.5, -0.5 (a tie: the earlier option wins)
        let s = open_score(vec![o(-2.0, 2), o(-1.5, 3), o(-0.5, 1)], "<eot>".into(), Vec::new());
        assert_eq!(s.letters, vec!['A', 'B', 'C']);
        assert_eq!(s.log_scores, vec![-1.0, -0.5, -0.5]);
        let z = (-1f64).exp() + 2.0 * (-0.5f64).exp();
        assert!((s.probs[0] - (-1f64).exp() / z).abs() < 1e-15);
        assert_eq!(s.pred, 1);
        assert_eq!(s.margin_top2, 0.0);
        assert!((s.letter_mass - ((-2f64).exp() + (-1.5f64).exp() + (-0.5f64).exp())).abs() < 1e-15);
        assert_eq!(s.open.as_ref().unwrap().options[1].tokens, 3);
        assert!(s.variants.is_empty());
    }

    #[test]
    fn top_k_orders_and_breaks_ties_by_id() {
        assert_eq!(top_k_tokens(&LOGITS, 4), vec![5, 0, 1, 2]);
        assert_eq!(top_k_tokens(&[1.0, 1.0, 1.0], 2), vec![0, 1]);
    }

}
