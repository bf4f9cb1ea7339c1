//! Item-level and pair-level metrics of the hysteresis protocol (docs/protocol.md §5).
//!
//! Everything in this module is a pure function over plain slices: no I/O, no global state.
//! Paired functions take parallel slices in the same item order (item `i` of every slice is the
//! same benchmark item scored in different contexts); they panic on a length mismatch, because a
//! mismatch is always a caller bug, never a data condition.
//!
//! Conventions used throughout:
//! - `mean` is numpy's `np.mean` bit for bit: pairwise summation exactly as numpy's `add.reduce`
//!   for contiguous float64, then a division by `n`. NaN values propagate (like `np.mean`, not
//!   `np.nanmean`); the mean of an empty slice is NaN.
//! - Rates of boolean flags are `count / n` (exact, equal to numpy's mean of a bool array).
//! - Ratios with a zero denominator are NaN, never a panic.
//! - Labels are option indices (`usize`, 0 = "A"); ties in an argmax go to the earliest index.

pub(crate) mod bootstrap;
pub(crate) mod cctp;
pub(crate) mod criteria;
pub(crate) mod nprng;

/// Probability clamp used by entropy and KL (`max(p, 1e-12)`).
pub(crate) const PROB_EPS: f64 = 1e-12;
/// `restoration_ratio_informative`: `|mean p_R0(w) − mean p_clean(w)| >= 0.05` (inclusive).
pub(crate) const RESTORATION_INFORMATIVE_MIN: f64 = 0.05;
/// Restoration ratios whose denominator satisfies `|den| <= 1e-12` are NaN.
pub(crate) const RESTORATION_DEN_EPS: f64 = 1e-12;
/// Flattening: `H_X > H_clean + 0.15` or `maxp_X < maxp_clean − 0.15`.
pub(crate) const FLATTENING_SLACK: f64 = 0.15;

// ---------------------------------------------------------------------------------------------
// Basic reductions
// ---------------------------------------------------------------------------------------------

/// numpy's pairwise summation for a contiguous float64 run (`pairwise_sum_DOUBLE`, block 128,
/// 8-way unrolled). Used so that means agree with `np.mean` / pandas `.mean()` to the last bit,
/// which matters only when a criterion value sits exactly on a threshold.
pub(crate) fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        let end = n - n % 8;
        while i < end {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// Arithmetic mean, numpy-exact (pairwise sum / n). NaN for an empty slice; NaN values propagate.
pub(crate) fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    pairwise_sum(xs) / xs.len() as f64
}

/// Fraction of `true` flags, `count / n`. NaN for an empty slice.
pub(crate) fn rate(flags: &[bool]) -> f64 {
    if flags.is_empty() {
        return f64::NAN;
    }
    flags.iter().filter(|&&b| b).count() as f64 / flags.len() as f64
}

/// `num / den` as f64, NaN when `den == 0`.
pub(crate) fn count_ratio(num: usize, den: usize) -> f64 {
    if den == 0 {
        f64::NAN
    } else {
        num as f64 / den as f64
    }
}

/// Index of the largest value; ties go to the earliest index. NaN values are never chosen unless
/// every value is NaN (then 0). Returns 0 for an empty slice.
pub(crate) fn argmax_first(xs: &[f64]) -> usize {
    let mut best: Option<usize> = None;
    for (i, &x) in xs.iter().enumerate() {
        if x.is_nan() {
            continue;
        }
        match best {
            None => best = Some(i),
            Some(b) if x > xs[b] => best = Some(i),
            _ => {}
        }
    }
    best.unwrap_or(0)
}

fn check_len(a: usize, b: usize, what: &str) {
    assert_eq!(a, b, "{what}: parallel slices must have the same length");
}

// ---------------------------------------------------------------------------------------------
// Per-context observation and pair aggregate
// ---------------------------------------------------------------------------------------------

/// One scored context of one item, reduced to what metrics need.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Obs {
    /// Normalised option probability of the advocated wrong letter `w`.
    pub p_wrong: f64,
    /// Normalised option probability of the correct letter `c`.
    pub p_correct: f64,
    /// `pred == c`.
    pub correct: bool,
    /// `pred == w`.
    pub wrong_follow: bool,
    /// Option entropy in nats, `−Σ p ln max(p, 1e-12)`.
    pub entropy: f64,
    /// `max_L p_L`.
    pub max_prob: f64,
}

impl Obs {
    #[cfg(test)]
    /// Builds an observation from the normalised option probabilities (display order) and the
    /// indices of the advocated wrong and the correct option. The prediction is the argmax with
    /// ties to the earliest option, as in docs/protocol.md §4.3. (§4.3 takes the argmax of the *log-scores*;
    /// the softmax is monotone, so this agrees except for ties created by rounding — callers that
    /// have the scorer's own prediction should use [`Obs::from_probs_with_pred`].)
    pub(crate) fn from_probs(probs: &[f64], wrong: usize, correct: usize) -> Obs {
        Obs::from_probs_with_pred(probs, argmax_first(probs), wrong, correct)
    }

    /// Like [`Obs::from_probs`] with an explicit predicted option index.
    pub(crate) fn from_probs_with_pred(probs: &[f64], pred: usize, wrong: usize, correct: usize) -> Obs {
        Obs {
            p_wrong: probs.get(wrong).copied().unwrap_or(f64::NAN),
            p_correct: probs.get(correct).copied().unwrap_or(f64::NAN),
            correct: pred == correct,
            wrong_follow: pred == wrong,
            entropy: entropy_nats(probs),
            max_prob: probs.iter().copied().fold(f64::NAN, f64::max),
        }
    }
}

/// Pair-level means over items (one model × dataset × condition).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Agg {
    pub n: usize,
    pub p_wrong: f64,
    pub p_correct: f64,
    pub accuracy: f64,
    pub wrong_follow: f64,
    pub entropy: f64,
    pub max_prob: f64,
}

/// Means over items of every field of [`Obs`] (all NaN when `obs` is empty).
pub(crate) fn aggregate(obs: &[Obs]) -> Agg {
    let col = |f: fn(&Obs) -> f64| -> f64 { mean(&obs.iter().map(f).collect::<Vec<_>>()) };
    let flag = |f: fn(&Obs) -> bool| -> f64 { rate(&obs.iter().map(f).collect::<Vec<_>>()) };
    Agg {
        n: obs.len(),
        p_wrong: col(|o| o.p_wrong),
        p_correct: col(|o| o.p_correct),
        accuracy: flag(|o| o.correct),
        wrong_follow: flag(|o| o.wrong_follow),
        entropy: col(|o| o.entropy),
        max_prob: col(|o| o.max_prob),
    }
}

// ---------------------------------------------------------------------------------------------
// Hysteresis gap, positive rate
// ---------------------------------------------------------------------------------------------

/// Per-item gaps `p_X(w) − p_clean(w)`.
pub(crate) fn item_gaps(x: &[Obs], clean: &[Obs]) -> Vec<f64> {
    check_len(x.len(), clean.len(), "item_gaps");
    x.iter()
        .zip(clean)
        .map(|(a, c)| a.p_wrong - c.p_wrong)
        .collect()
}

/// Hysteresis gap = mean over items of `p_X(w) − p_clean(w)` (Table 2 form: mean of item gaps).
pub(crate) fn hysteresis_gap(x: &[Obs], clean: &[Obs]) -> f64 {
    mean(&item_gaps(x, clean))
}

/// `intervention_hysteresis_gap = mean p_X(w) − mean p_clean(w)` (difference of pair means; the
/// form used by the clean-context-like criterion and the hierarchy summary). Equal to
/// [`hysteresis_gap`] up to rounding.
pub(crate) fn intervention_hysteresis_gap(clean: &Agg, x: &Agg) -> f64 {
    x.p_wrong - clean.p_wrong
}

/// Positive-hysteresis flags `gap_i > 0` — strict, no tolerance (docs/protocol.md §5.2).
pub(crate) fn positive_hysteresis_flags(x: &[Obs], clean: &[Obs]) -> Vec<bool> {
    item_gaps(x, clean).into_iter().map(|g| g > 0.0).collect()
}

/// Positive-hysteresis rate: mean of `1[p_X(w) − p_clean(w) > 0]`.
pub(crate) fn positive_hysteresis_rate(x: &[Obs], clean: &[Obs]) -> f64 {
    rate(&positive_hysteresis_flags(x, clean))
}

// ---------------------------------------------------------------------------------------------
// Lock-in and contamination (ratio metrics)
// ---------------------------------------------------------------------------------------------

/// Numerator and denominator flags of a ratio metric, per item (for the ratio bootstrap).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RatioFlags {
    pub num: Vec<bool>,
    pub den: Vec<bool>,
}

impl RatioFlags {
    /// `(#num / #den or NaN when #den == 0, #den)`.
    pub(crate) fn rate(&self) -> (f64, usize) {
        let n = self.num.iter().filter(|&&b| b).count();
        let d = self.den.iter().filter(|&&b| b).count();
        (count_ratio(n, d), d)
    }
}

/// Flags of the conditional lock-in: den = `pred_strong_pressure == w`,
/// num = den ∧ `pred_X == w`.
pub(crate) fn conditional_lock_in_flags(pressure: &[Obs], x: &[Obs]) -> RatioFlags {
    check_len(pressure.len(), x.len(), "conditional_lock_in");
    let den: Vec<bool> = pressure.iter().map(|p| p.wrong_follow).collect();
    let num = den
        .iter()
        .zip(x)
        .map(|(&d, o)| d && o.wrong_follow)
        .collect();
    RatioFlags { num, den }
}

#[cfg(test)]
/// Conditional lock-in `#(pred_press == w ∧ pred_X == w) / #(pred_press == w)`.
/// Returns `(rate, denominator)`; the rate is NaN when the denominator is 0.
pub(crate) fn conditional_lock_in(pressure: &[Obs], x: &[Obs]) -> (f64, usize) {
    conditional_lock_in_flags(pressure, x).rate()
}

/// Per-item flags of the unconditional lock-in `pred_press == w ∧ pred_X == w`.
pub(crate) fn unconditional_lock_in_flags(pressure: &[Obs], x: &[Obs]) -> Vec<bool> {
    check_len(pressure.len(), x.len(), "unconditional_lock_in");
    pressure
        .iter()
        .zip(x)
        .map(|(p, o)| p.wrong_follow && o.wrong_follow)
        .collect()
}

/// Unconditional lock-in: mean over all items of `1[pred_press == w ∧ pred_X == w]`.
pub(crate) fn unconditional_lock_in(pressure: &[Obs], x: &[Obs]) -> f64 {
    rate(&unconditional_lock_in_flags(pressure, x))
}

/// Flags of the **hierarchy** contamination (advocated-wrong version; Table 6 "Contam.",
/// `contamination_given_clean_correct` of the failure decomposition,
/// `clean_correct_to_history_wrong_rate`): den = clean correct, num = den ∧ `pred_X == w`.
pub(crate) fn contamination_advocated_flags(clean: &[Obs], x: &[Obs]) -> RatioFlags {
    check_len(clean.len(), x.len(), "contamination_advocated");
    let den: Vec<bool> = clean.iter().map(|c| c.correct).collect();
    let num = den
        .iter()
        .zip(x)
        .map(|(&d, o)| d && o.wrong_follow)
        .collect();
    RatioFlags { num, den }
}

/// Hierarchy contamination `#(clean correct ∧ X follows w) / #(clean correct)`:
/// `(rate or NaN, clean-correct denominator)`.
pub(crate) fn contamination_advocated(clean: &[Obs], x: &[Obs]) -> (f64, usize) {
    contamination_advocated_flags(clean, x).rate()
}

/// Flags of the **truncation-table** contamination (any-wrong version, column
/// `contamination_given_clean_correct` of `expanded_truncation_summary.csv`):
/// den = clean correct, num = den ∧ X not correct.
pub(crate) fn contamination_any_wrong_flags(clean: &[Obs], x: &[Obs]) -> RatioFlags {
    check_len(clean.len(), x.len(), "contamination_any_wrong");
    let den: Vec<bool> = clean.iter().map(|c| c.correct).collect();
    let num = den.iter().zip(x).map(|(&d, o)| d && !o.correct).collect();
    RatioFlags { num, den }
}

#[cfg(test)]
/// Truncation-table contamination `#(clean correct ∧ X not correct) / #(clean correct)`:
/// `(rate or NaN, clean-correct denominator)`.
pub(crate) fn contamination_any_wrong(clean: &[Obs], x: &[Obs]) -> (f64, usize) {
    contamination_any_wrong_flags(clean, x).rate()
}

/// `contamination_reduction = clean_correct_to_history_wrong_rate −
/// clean_correct_to_intervention_wrong_rate` (both advocated-wrong contamination rates).
pub(crate) fn contamination_reduction(r0_contamination: f64, x_contamination: f64) -> f64 {
    r0_contamination - x_contamination
}

// ---------------------------------------------------------------------------------------------
// Failure decomposition (on R0)
// ---------------------------------------------------------------------------------------------

/// Cell of the failure decomposition of one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum DecompCell {
    /// clean correct ∧ reset correct (`stable_correct`).
    Stable,
    /// clean correct ∧ reset not correct (`history_contamination`).
    History,
    /// clean wrong ∧ reset correct (`context_correction`).
    Correction,
    /// clean wrong ∧ reset wrong (`task_failure` / `knowledge_task_failure`).
    Failure,
}

impl DecompCell {
    pub(crate) fn of(clean: &Obs, reset: &Obs) -> DecompCell {
        match (clean.correct, reset.correct) {
            (true, true) => DecompCell::Stable,
            (true, false) => DecompCell::History,
            (false, true) => DecompCell::Correction,
            (false, false) => DecompCell::Failure,
        }
    }
}

/// Failure decomposition of R0 against clean (Table 10, `decomposition_counts.csv`,
/// `decomposition_rates.csv`). The four rates are over all `n` items and sum to 1.
/// `hist_given_clean_correct` is the paper's printed "Hist. | clean" = Hist / (Stable + Hist):
/// clean-correct items that are **not correct** after R0 (any wrong option);
/// `advocated_wrong_given_clean_correct` is the artifact's advocated-wrong-only rate
/// (`clean_correct_to_history_wrong_rate`, `contamination_given_clean_correct` of the
/// failure-decomposition CI file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Decomposition {
    pub n: usize,
    pub stable_correct_count: usize,
    pub history_contamination_count: usize,
    pub context_correction_count: usize,
    pub knowledge_task_failure_count: usize,
    pub clean_correct_count: usize,
    pub clean_correct_to_history_wrong_count: usize,
    pub stable_correct_rate: f64,
    pub history_contamination_rate: f64,
    pub context_correction_rate: f64,
    pub knowledge_task_failure_rate: f64,
    /// = `history_contamination_count / clean_correct_count` (NaN when 0): the paper's
    /// "Hist. | clean".
    pub hist_given_clean_correct: f64,
    /// = `clean_correct_to_history_wrong_count / clean_correct_count` (NaN when 0): only the
    /// advocated wrong option counts.
    pub advocated_wrong_given_clean_correct: f64,
}

pub(crate) fn failure_decomposition(clean: &[Obs], reset: &[Obs]) -> Decomposition {
    check_len(clean.len(), reset.len(), "failure_decomposition");
    let n = clean.len();
    let mut c = [0usize; 4];
    for (cl, r) in clean.iter().zip(reset) {
        let k = match DecompCell::of(cl, r) {
            DecompCell::Stable => 0,
            DecompCell::History => 1,
            DecompCell::Correction => 2,
            DecompCell::Failure => 3,
        };
        c[k] += 1;
    }
    let flags = contamination_advocated_flags(clean, reset);
    let (hist_rate, den) = flags.rate();
    let num = flags.num.iter().filter(|&&b| b).count();
    Decomposition {
        n,
        stable_correct_count: c[0],
        history_contamination_count: c[1],
        context_correction_count: c[2],
        knowledge_task_failure_count: c[3],
        clean_correct_count: den,
        clean_correct_to_history_wrong_count: num,
        stable_correct_rate: count_ratio(c[0], n),
        history_contamination_rate: count_ratio(c[1], n),
        context_correction_rate: count_ratio(c[2], n),
        knowledge_task_failure_rate: count_ratio(c[3], n),
        hist_given_clean_correct: count_ratio(c[1], c[0] + c[1]),
        advocated_wrong_given_clean_correct: hist_rate,
    }
}

// ---------------------------------------------------------------------------------------------
// Restoration and friends
// ---------------------------------------------------------------------------------------------

/// Restoration ratio of one operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Restoration {
    /// `(mean p_R0(w) − mean p_X(w)) / (mean p_R0(w) − mean p_clean(w))`; NaN when
    /// `|den| <= 1e-12`. Stored even when not informative (tables print NA then).
    pub ratio: f64,
    /// `mean p_R0(w) − mean p_X(w)` (= `gap_reduction`).
    pub numerator: f64,
    /// `mean p_R0(w) − mean p_clean(w)` (= the R0 hysteresis gap).
    pub denominator: f64,
    /// `|denominator| >= 0.05`.
    pub informative: bool,
}

/// Restoration ratio from pair means of p(w) (clean, R0, operation X). For truncation use
/// `full_history` as R0 and `fresh_context` as clean.
pub(crate) fn restoration_ratio(clean_pw: f64, r0_pw: f64, x_pw: f64) -> Restoration {
    let numerator = r0_pw - x_pw;
    let denominator = r0_pw - clean_pw;
    let ratio = if denominator.abs() <= RESTORATION_DEN_EPS || denominator.is_nan() {
        f64::NAN
    } else {
        numerator / denominator
    };
    Restoration {
        ratio,
        numerator,
        denominator,
        informative: denominator.abs() >= RESTORATION_INFORMATIVE_MIN,
    }
}

/// `gap_reduction = ordinary_reset_hysteresis_gap − intervention_hysteresis_gap`.
pub(crate) fn gap_reduction(r0_gap: f64, x_gap: f64) -> f64 {
    r0_gap - x_gap
}

/// Relabel "wrong reduction": mean over items of `p_baseline(w) − p_X(w)` (paired per item).
pub(crate) fn wrong_reduction(baseline: &[Obs], x: &[Obs]) -> f64 {
    check_len(baseline.len(), x.len(), "wrong_reduction");
    mean(
        &baseline
            .iter()
            .zip(x)
            .map(|(b, o)| b.p_wrong - o.p_wrong)
            .collect::<Vec<_>>(),
    )
}

/// Relabel "p_c gain": mean over items of `p_X(c) − p_baseline(c)` (paired per item).
pub(crate) fn p_correct_gain(baseline: &[Obs], x: &[Obs]) -> f64 {
    check_len(baseline.len(), x.len(), "p_correct_gain");
    mean(
        &baseline
            .iter()
            .zip(x)
            .map(|(b, o)| o.p_correct - b.p_correct)
            .collect::<Vec<_>>(),
    )
}

/// `clean_context_damage_p_correct = mean p_X(c) − mean p_clean(c)`.
pub(crate) fn clean_context_damage_p_correct(clean: &Agg, x: &Agg) -> f64 {
    x.p_correct - clean.p_correct
}

/// `clean_context_damage_accuracy = accuracy_X − clean_accuracy`.
pub(crate) fn clean_context_damage_accuracy(clean: &Agg, x: &Agg) -> f64 {
    x.accuracy - clean.accuracy
}

// ---------------------------------------------------------------------------------------------
// Distributions: entropy, KL, flattening
// ---------------------------------------------------------------------------------------------

/// Option entropy in nats (docs/protocol.md §4.4, §5.8): `−Σ_L p_L · ln max(p_L, 1e-12)`, no renormalisation.
pub(crate) fn entropy_nats(p: &[f64]) -> f64 {
    let mut h = 0.0;
    for &x in p {
        h -= x * x.max(PROB_EPS).ln();
    }
    h
}

/// `KL(P‖Q) = Σ max(p,1e-12)·(ln max(p,1e-12) − ln max(q,1e-12))`, natural log, over parallel
/// slices (labels already aligned by the caller).
pub(crate) fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    check_len(p.len(), q.len(), "kl_divergence");
    let mut s = 0.0;
    for (&a, &b) in p.iter().zip(q) {
        let pa = a.max(PROB_EPS);
        s += pa * (pa.ln() - b.max(PROB_EPS).ln());
    }
    s
}

/// Flattening flag: `entropy_X > entropy_clean + 0.15 || max_prob_X < max_prob_clean − 0.15`.
pub(crate) fn is_flattened(entropy_x: f64, entropy_clean: f64, max_prob_x: f64, max_prob_clean: f64) -> bool {
    entropy_x > entropy_clean + FLATTENING_SLACK || max_prob_x < max_prob_clean - FLATTENING_SLACK
}

// ---------------------------------------------------------------------------------------------
// Plausibility tertiles
// ---------------------------------------------------------------------------------------------

/// Stratum names, index 0/1/2.
pub(crate) const PLAUSIBILITY_STRATA: [&str; 3] = ["low", "mid", "high"];

/// Splits the items of one pair into plausibility tertiles by the **rank** of `p_clean(w)`.
/// Returns the stratum index (0 = low, 1 = mid, 2 = high) per item, in input order.
///
/// Ranks are 1..=n in ascending `p_clean(w)`; **ties are broken by item order** (the earlier item
/// gets the lower rank, i.e. pandas `rank(method="first")`); NaN values rank last. The cut is
/// `pandas.qcut(ranks, 3)` evaluated exactly in integers: with the qcut edges
/// `1 + (n−1)/3` and `1 + 2(n−1)/3` (right-closed bins), rank r goes to
/// low if `3(r−1) <= n−1`, mid if `3(r−1) <= 2(n−1)`, else high. n = 500 → 167/166/167,
/// n = 7 → 3/2/2.
pub(crate) fn plausibility_tertiles(p_clean_wrong: &[f64]) -> Vec<usize> {
    let n = p_clean_wrong.len();
    let mut order: Vec<usize> = (0..n).collect();
    // sort_by is stable, so equal values keep item order; total_cmp puts (positive) NaN last.
    order.sort_by(|&a, &b| {
        let (x, y) = (p_clean_wrong[a], p_clean_wrong[b]);
        match (x.is_nan(), y.is_nan()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            _ => x.total_cmp(&y),
        }
    });
    let mut out = vec![0usize; n];
    if n == 0 {
        return out;
    }
    let m = n - 1;
    for (pos, &item) in order.iter().enumerate() {
        let r1 = pos; // r − 1
        out[item] = if 3 * r1 <= m {
            0
        } else if 3 * r1 <= 2 * m {
            1
        } else {
            2
        };
    }
    out
}

/// Per-stratum plausibility summary (`wrong_answer_plausibility_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StratumSummary {
    pub n_items: usize,
    pub mean_p_clean_wrong: f64,
    pub mean_p_reset_wrong: f64,
    pub mean_hysteresis_gap: f64,
    pub positive_hysteresis_rate: f64,
    pub ordinary_reset_wrong_follow_rate: f64,
}

/// Summaries of the three strata. `strata` comes from [`plausibility_tertiles`] computed **within
/// each pair**; for the pooled aggregate concatenate several pairs' (strata, clean, reset) slices
/// and call this once.
pub(crate) fn plausibility_summary(strata: &[usize], clean: &[Obs], reset: &[Obs]) -> [StratumSummary; 3] {
    check_len(strata.len(), clean.len(), "plausibility_summary");
    check_len(clean.len(), reset.len(), "plausibility_summary");
    std::array::from_fn(|s| {
        let (c, r): (Vec<Obs>, Vec<Obs>) = strata
            .iter()
            .zip(clean.iter().zip(reset))
            .filter(|(k, _)| **k == s)
            .map(|(_, (c, r))| (*c, *r))
            .unzip();
        StratumSummary {
            n_items: c.len(),
            mean_p_clean_wrong: mean(&c.iter().map(|o| o.p_wrong).collect::<Vec<_>>()),
            mean_p_reset_wrong: mean(&r.iter().map(|o| o.p_wrong).collect::<Vec<_>>()),
            mean_hysteresis_gap: hysteresis_gap(&r, &c),
            positive_hysteresis_rate: positive_hysteresis_rate(&r, &c),
            ordinary_reset_wrong_follow_rate: rate(
                &r.iter().map(|o| o.wrong_follow).collect::<Vec<_>>(),
            ),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Relabel: semantic vs letter following
// ---------------------------------------------------------------------------------------------

/// One relabel-shuffle item: predicted letter, the new letter of the advocated wrong text after
/// the shuffle, and the letter that was pressured before the shuffle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RelabelObs {
    pub pred: usize,
    pub new_wrong: usize,
    pub old_wrong: usize,
}

impl RelabelObs {
    pub(crate) fn semantic_follow(&self) -> bool {
        self.pred == self.new_wrong
    }
    pub(crate) fn old_letter_follow(&self) -> bool {
        self.pred == self.old_wrong
    }
}

/// Semantic-vs-letter following rates (Table 15).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SemanticLetter {
    pub semantic_following_rate: f64,
    pub old_letter_following_rate: f64,
    /// Identical to the semantic rate by definition.
    pub new_wrong_following_rate: f64,
    /// `semantic_wrong_minus_old_letter_follow`.
    pub semantic_minus_old_letter: f64,
}

pub(crate) fn semantic_letter_rates(items: &[RelabelObs]) -> SemanticLetter {
    let sem = rate(
        &items
            .iter()
            .map(|r| r.semantic_follow())
            .collect::<Vec<_>>(),
    );
    let old = rate(
        &items
            .iter()
            .map(|r| r.old_letter_follow())
            .collect::<Vec<_>>(),
    );
    SemanticLetter {
        semantic_following_rate: sem,
        old_letter_following_rate: old,
        new_wrong_following_rate: sem,
        semantic_minus_old_letter: sem - old,
    }
}

/// Chance old-letter rate [inferred, docs/protocol.md §5.11]: item mean of `1 / n_options`.
pub(crate) fn chance_old_letter_rate(n_options: &[usize]) -> f64 {
    mean(
        &n_options
            .iter()
            .map(|&k| 1.0 / k as f64)
            .collect::<Vec<_>>(),
    )
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn obs(p_wrong: f64, p_correct: f64, correct: bool, wrong_follow: bool) -> Obs {
        Obs {
            p_wrong,
            p_correct,
            correct,
            wrong_follow,
            entropy: 0.5,
            max_prob: 0.6,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn mean_empty_nan_and_basic() {
        assert!(mean(&[]).is_nan());
        assert_eq!(mean(&[1.0, 2.0, 3.0]), 2.0);
        assert!(mean(&[1.0, f64::NAN]).is_nan());
        assert!(rate(&[]).is_nan());
        assert_eq!(rate(&[true, false, false, true]), 0.5);
        assert!(count_ratio(1, 0).is_nan());
    }

    #[test]
    fn pairwise_sum_matches_numpy_bits() {
        // x_i = ((i * 7919) % 1000) / 997 ; numpy: np.sum(x) printed with float.hex
        let xs: Vec<f64> = (0..500u64)
            .map(|i| ((i * 7919) % 1000) as f64 / 997.0)
            .collect();
        let s = pairwise_sum(&xs);
        assert_eq!(s, f64::from_bits(NUMPY_SUM500_BITS), "got {s:e}");
        let m = mean(&xs);
        assert_eq!(m, f64::from_bits(NUMPY_MEAN500_BITS));
        let xs2: Vec<f64> = (0..2500u64)
            .map(|i| ((i * 104729) % 10007) as f64 / 10007.0 - 0.5)
            .collect();
        assert_eq!(pairwise_sum(&xs2), f64::from_bits(NUMPY_SUM2500_BITS));
        for (n, bits) in [
            (13u64, NUMPY_SUM13_BITS),
            (100, NUMPY_SUM100_BITS),
            (127, NUMPY_SUM127_BITS),
        ] {
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 997.0).collect();
            assert_eq!(pairwise_sum(&xs), f64::from_bits(bits), "n = {n}");
        }
    }
    // Generated with numpy 2.4.6: hex(struct.unpack('<Q', struct.pack('<d', np.sum(x)))[0]).
    // (A naive left-to-right sum differs in the last bits for every one of these.)
    const NUMPY_SUM500_BITS: u64 = 0x406f6018a6631d05;
    const NUMPY_MEAN500_BITS: u64 = 0x3fe0106eecbe0292;
    const NUMPY_SUM2500_BITS: u64 = 0xc00f49a69dbd3b01;
    const NUMPY_SUM13_BITS: u64 = 0x4016cbe029154fdb;
    const NUMPY_SUM100_BITS: u64 = 0x4048994ab85c6ff2;
    const NUMPY_SUM127_BITS: u64 = 0x404f8ddd97c0522c;

    #[test]
    fn argmax_ties_first() {
        assert_eq!(argmax_first(&[0.2, 0.4, 0.4]), 1);
        assert_eq!(argmax_first(&[f64::NAN, 0.1, 0.1]), 1);
        assert_eq!(argmax_first(&[]), 0);
    }

    #[test]
    fn obs_from_probs() {
        let o = Obs::from_probs(&[0.5, 0.25, 0.25], 1, 0);
        assert!(o.correct && !o.wrong_follow);
        assert_eq!(o.p_wrong, 0.25);
        assert_eq!(o.max_prob, 0.5);
        let h = -(0.5f64 * 0.5f64.ln() + 2.0 * 0.25 * 0.25f64.ln());
        assert!(close(o.entropy, h));
        // tie between B and C -> B (index 1) is the prediction
        let o2 = Obs::from_probs(&[0.2, 0.4, 0.4], 2, 0);
        assert!(!o2.wrong_follow && !o2.correct);
    }

    #[test]
    fn aggregate_means() {
        let v = [
            obs(0.2, 0.7, true, false),
            obs(0.6, 0.3, false, true),
            obs(0.4, 0.5, true, false),
            obs(0.0, 0.9, true, false),
        ];
        let a = aggregate(&v);
        assert_eq!(a.n, 4);
        assert!(close(a.p_wrong, 0.3));
        assert!(close(a.p_correct, 0.6));
        assert_eq!(a.accuracy, 0.75);
        assert_eq!(a.wrong_follow, 0.25);
        assert!(close(a.entropy, 0.5));
        let e = aggregate(&[]);
        assert_eq!(e.n, 0);
        assert!(e.p_wrong.is_nan() && e.accuracy.is_nan());
    }

    #[test]
    fn gap_and_positive_rate_strict() {
        let clean = [
            obs(0.1, 0.0, true, false),
            obs(0.5, 0.0, true, false),
            obs(0.3, 0.0, true, false),
            obs(0.2, 0.0, true, false),
        ];
        let x = [
            obs(0.4, 0.0, true, false),
            obs(0.5, 0.0, true, false),
            obs(0.2, 0.0, true, false),
            obs(0.2, 0.0, true, false),
        ];
        // gaps 0.3, 0, -0.1, 0 -> mean 0.05 ; positive: only the first (0 is not > 0)
        assert!(close(hysteresis_gap(&x, &clean), 0.05));
        assert_eq!(positive_hysteresis_rate(&x, &clean), 0.25);
        // identical contexts give exactly 0 positive rate (R3a ≡ clean)
        assert_eq!(positive_hysteresis_rate(&clean, &clean), 0.0);
        assert_eq!(hysteresis_gap(&clean, &clean), 0.0);
        let ca = aggregate(&clean);
        let xa = aggregate(&x);
        assert!(close(intervention_hysteresis_gap(&ca, &xa), 0.05));
        assert!(hysteresis_gap(&[], &[]).is_nan());
    }

    #[test]
    #[should_panic(expected = "item_gaps: parallel slices must have the same length")]
    fn paired_length_mismatch_panics() {
        hysteresis_gap(&[obs(0.1, 0.0, true, false)], &[]);
    }

    #[test]
    fn lock_in_conditional_and_unconditional() {
        let press = [
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, false, true),
        ];
        let x = [
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, false, true),
        ];
        let (r, d) = conditional_lock_in(&press, &x);
        assert_eq!(d, 3);
        assert!(close(r, 2.0 / 3.0));
        assert_eq!(unconditional_lock_in(&press, &x), 0.5);
        // no pressure follower -> NaN, denominator 0
        let none = [obs(0.0, 0.0, true, false); 4];
        let (r0, d0) = conditional_lock_in(&none, &x);
        assert!(r0.is_nan());
        assert_eq!(d0, 0);
        assert_eq!(unconditional_lock_in(&none, &x), 0.0);
    }

    #[test]
    fn contamination_two_definitions() {
        // clean: C C C W W ; X: follows-w, other-wrong, correct, follows-w, correct
        let clean = [
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, false, false),
        ];
        let x = [
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, false, false),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, true, false),
        ];
        let (a, da) = contamination_advocated(&clean, &x);
        assert_eq!(da, 3);
        assert!(close(a, 1.0 / 3.0));
        let (t, dt) = contamination_any_wrong(&clean, &x);
        assert_eq!(dt, 3);
        assert!(close(t, 2.0 / 3.0));
        let nobody = [obs(0.0, 0.0, false, false); 5];
        assert!(contamination_advocated(&nobody, &x).0.is_nan());
        assert!(contamination_any_wrong(&nobody, &x).0.is_nan());
        assert!(close(contamination_reduction(0.5, 0.2), 0.3));
    }

    #[test]
    fn failure_decomposition_counts() {
        let clean = [
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, true, false),
            obs(0.0, 0.0, false, true),
            obs(0.0, 0.0, false, false),
        ];
        let reset = [
            obs(0.0, 0.0, true, false),  // stable
            obs(0.0, 0.0, false, true),  // hist, follows w
            obs(0.0, 0.0, false, false), // hist, other wrong
            obs(0.0, 0.0, true, false),  // correction
            obs(0.0, 0.0, false, true),  // failure
        ];
        let d = failure_decomposition(&clean, &reset);
        assert_eq!(d.n, 5);
        assert_eq!(
            (
                d.stable_correct_count,
                d.history_contamination_count,
                d.context_correction_count,
                d.knowledge_task_failure_count
            ),
            (1, 2, 1, 1)
        );
        assert_eq!(d.clean_correct_count, 3);
        assert_eq!(d.clean_correct_to_history_wrong_count, 1);
        assert!(close(
            d.stable_correct_rate
                + d.history_contamination_rate
                + d.context_correction_rate
                + d.knowledge_task_failure_rate,
            1.0
        ));
        assert_eq!(d.history_contamination_rate, 0.4);
        // the paper's Hist. | clean: 2 of the 3 clean-correct items are not correct after R0
        assert!(close(d.hist_given_clean_correct, 2.0 / 3.0));
        // advocated wrong only: 1 of 3
        assert!(close(d.advocated_wrong_given_clean_correct, 1.0 / 3.0));
        assert_eq!(DecompCell::of(&clean[2], &reset[2]), DecompCell::History);
        let e = failure_decomposition(&[], &[]);
        assert!(e.stable_correct_rate.is_nan() && e.hist_given_clean_correct.is_nan());
        assert!(e.advocated_wrong_given_clean_correct.is_nan());
    }

    #[test]
    fn restoration_ratio_and_informative_boundary() {
        let r = restoration_ratio(0.2, 0.6, 0.3);
        assert!(close(r.ratio, 0.75));
        assert!(r.informative);
        // R0 -> 0, R3a -> 1
        assert_eq!(restoration_ratio(0.2, 0.6, 0.6).ratio, 0.0);
        assert_eq!(restoration_ratio(0.2, 0.6, 0.2).ratio, 1.0);
        // |den| exactly 0.05 (0.05 - 0.0 == 0.05 in f64) is informative; a hair below is not
        assert!(restoration_ratio(0.0, 0.05, 0.0).informative);
        assert!(!restoration_ratio(0.0, 0.05 - 1e-12, 0.0).informative);
        // negative denominator counts by absolute value
        assert!(restoration_ratio(0.05, 0.0, 0.0).informative);
        // zero / tiny denominator -> NaN, not informative
        let z = restoration_ratio(0.3, 0.3, 0.1);
        assert!(z.ratio.is_nan() && !z.informative);
        assert!(restoration_ratio(0.3, 0.3 + 1e-13, 0.1).ratio.is_nan());
        assert!(close(gap_reduction(0.4, 0.1), 0.3));
    }

    #[test]
    fn relabel_reduction_and_gain() {
        let base = [obs(0.8, 0.1, false, true), obs(0.6, 0.3, false, true)];
        let x = [obs(0.5, 0.3, false, true), obs(0.2, 0.5, true, false)];
        assert!(close(wrong_reduction(&base, &x), 0.35));
        assert!(close(p_correct_gain(&base, &x), 0.2));
        let ca = aggregate(&base);
        let xa = aggregate(&x);
        assert!(close(clean_context_damage_p_correct(&ca, &xa), 0.2));
        assert!(close(clean_context_damage_accuracy(&ca, &xa), 0.5));
    }

    #[test]
    fn entropy_and_kl() {
        assert_eq!(entropy_nats(&[1.0, 0.0, 0.0]), 0.0);
        assert!(close(entropy_nats(&[0.5, 0.5]), std::f64::consts::LN_2));
        assert_eq!(kl_divergence(&[0.3, 0.7], &[0.3, 0.7]), 0.0);
        let kl = kl_divergence(&[0.5, 0.5], &[0.25, 0.75]);
        let want = 0.5 * (0.5f64 / 0.25).ln() + 0.5 * (0.5f64 / 0.75).ln();
        assert!(close(kl, want));
        // q = 0 is clamped to 1e-12
        let kl0 = kl_divergence(&[1.0, 0.0], &[0.0, 1.0]);
        let want0 = 1.0 * (0.0 - (1e-12f64).ln()) + 1e-12 * ((1e-12f64).ln() - 0.0);
        assert!(close(kl0, want0));
    }

    #[test]
    fn flattening_strict() {
        assert!(!is_flattened(0.65, 0.5, 0.5, 0.65)); // both on the boundary-ish but not beyond
        assert!(is_flattened(0.7, 0.5, 0.9, 0.9));
        assert!(is_flattened(0.1, 0.5, 0.4, 0.9));
        assert!(!is_flattened(0.5, 0.5, 0.9, 0.9));
    }

    #[test]
    fn tertiles_sizes_and_ties() {
        let counts = |n: usize| {
            let v: Vec<f64> = (0..n).map(|i| ((i * 37) % n) as f64).collect();
            let s = plausibility_tertiles(&v);
            let mut c = [0usize; 3];
            for k in s {
                c[k] += 1;
            }
            c
        };
        assert_eq!(counts(500), [167, 166, 167]);
        assert_eq!(counts(7), [3, 2, 2]);
        assert_eq!(counts(6), [2, 2, 2]);
        assert_eq!(counts(3), [1, 1, 1]);
        assert_eq!(counts(1), [1, 0, 0]);
        assert!(plausibility_tertiles(&[]).is_empty());
        // rank order: the strata follow the values, not the positions
        let s = plausibility_tertiles(&[0.9, 0.1, 0.5]);
        assert_eq!(s, vec![2, 0, 1]);
        // ties broken by item order: all equal -> first items low
        let s = plausibility_tertiles(&[0.3; 6]);
        assert_eq!(s, vec![0, 0, 1, 1, 2, 2]);
        // NaN ranks last
        let s = plausibility_tertiles(&[f64::NAN, 0.2, 0.1]);
        assert_eq!(s, vec![2, 1, 0]);
    }

    #[test]
    fn plausibility_summary_per_stratum() {
        let clean = [
            obs(0.1, 0.0, true, false),
            obs(0.5, 0.0, true, false),
            obs(0.3, 0.0, true, false),
        ];
        let reset = [
            obs(0.2, 0.0, true, false),
            obs(0.4, 0.0, false, true),
            obs(0.3, 0.0, true, false),
        ];
        let strata = plausibility_tertiles(&clean.iter().map(|o| o.p_wrong).collect::<Vec<_>>());
        let s = plausibility_summary(&strata, &clean, &reset);
        assert_eq!(s[0].n_items, 1);
        assert!(close(s[0].mean_hysteresis_gap, 0.1));
        assert_eq!(s[0].positive_hysteresis_rate, 1.0);
        assert_eq!(s[2].ordinary_reset_wrong_follow_rate, 1.0);
        assert!(close(s[2].mean_p_reset_wrong, 0.4));
        assert_eq!(s[1].positive_hysteresis_rate, 0.0);
    }

    #[test]
    fn semantic_vs_letter() {
        let items = [
            RelabelObs {
                pred: 2,
                new_wrong: 2,
                old_wrong: 1,
            },
            RelabelObs {
                pred: 1,
                new_wrong: 3,
                old_wrong: 1,
            },
            RelabelObs {
                pred: 0,
                new_wrong: 3,
                old_wrong: 1,
            },
            RelabelObs {
                pred: 3,
                new_wrong: 3,
                old_wrong: 2,
            },
        ];
        let r = semantic_letter_rates(&items);
        assert_eq!(r.semantic_following_rate, 0.5);
        assert_eq!(r.old_letter_following_rate, 0.25);
        assert_eq!(r.new_wrong_following_rate, 0.5);
        assert_eq!(r.semantic_minus_old_letter, 0.25);
        assert!(close(chance_old_letter_rate(&[4, 2]), 0.375));
    }
}
