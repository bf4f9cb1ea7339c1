//! Paired item bootstrap (docs/protocol.md §8).
//!
//! One **index matrix** (row-major `samples × n`, entries in `0..n`) is drawn per pair (per
//! pair × condition for the recovery operations) and shared by every metric of that group, which
//! makes the metrics paired: all condition measurements of a resampled item stay together. The
//! functions below take the matrix by reference and never copy it.
//!
//! # Seeds (the caller decides)
//! The released `*_with_ci.csv` files (Table 2 and the appendix CI files) use
//! `numpy.random.default_rng(12345 + k)` with
//! - `k = 1` pressure ramp ([`SEED_OFFSET_PRESSURE_RAMP`]),
//! - `k = 2` behavioural controls ([`SEED_OFFSET_CONTROLS`]),
//! - `k = 3` failure decomposition ([`SEED_OFFSET_DECOMPOSITION`]),
//! - `k = 4` recovery operations ([`SEED_OFFSET_RECOVERY_OPS`]),
//! - `k = 5` relabel ([`SEED_OFFSET_RELABEL`]),
//! - hyst-tui's own: `k = 6` experiment operations, `k = 7` self-consistency, `k = 8` custom ramps,
//!   `k = 9` the steering sweep, `k = 10` letters against open answers,
//!
//! and **one generator per group, consumed sequentially** over the pairs in the fixed pair order
//! (qwen25_15b tqa, qwen25_15b mmlu, qwen25_7b tqa, …): pair j's matrix is the j-th block of
//! `samples × n` draws from the same stream. [`index_matrix`] creates a fresh generator, which is
//! what the variants with a per-group/per-condition fresh `default_rng(seed)` need (truncation
//! item-level, false-context summaries); for the sequential scheme use [`IndexStream`].
//! Reproducing numpy's CI digits also needs the same draw order; point estimates never depend on
//! the RNG.
//!
//! Percentiles are numpy's default `linear` method (virtual index `(n−1)·q/100`, numpy's `_lerp`),
//! after dropping NaN replicates.

use super::nprng::NumpyRng;
use super::{mean, RESTORATION_DEN_EPS};
#[cfg(test)]
use super::RatioFlags;
#[cfg(test)]
use super::{restoration_ratio, Restoration};

/// Replicates of the main CI files.
pub(crate) const BOOTSTRAP_SAMPLES: usize = 10_000;
/// Base seed.
pub(crate) const BOOTSTRAP_SEED: u64 = 12345;
pub(crate) const SEED_OFFSET_PRESSURE_RAMP: u64 = 1;
pub(crate) const SEED_OFFSET_CONTROLS: u64 = 2;
pub(crate) const SEED_OFFSET_DECOMPOSITION: u64 = 3;
pub(crate) const SEED_OFFSET_RECOVERY_OPS: u64 = 4;
pub(crate) const SEED_OFFSET_RELABEL: u64 = 5;
/// hyst-tui's own streams (no artifact counterpart): experiment operations and the
/// self-consistency table, so that adding an experiment moves no digit of the paper's tables.
pub(crate) const SEED_OFFSET_EXPERIMENTS: u64 = 6;
pub(crate) const SEED_OFFSET_SELF_CONSISTENCY: u64 = 7;
/// The custom pressure ramps' table (`experiment_ramps`).
pub(crate) const SEED_OFFSET_EXPERIMENT_RAMPS: u64 = 8;
/// The steering sweep (`batch::steering`): one matrix over the held-out items, shared by every row.
pub(crate) const SEED_OFFSET_STEERING: u64 = 9;
/// hyst-tui's own: the letters-against-open-answers comparison (`tables/answer_formats`).
pub(crate) const SEED_OFFSET_ANSWER_FORMATS: u64 = 10;
/// Replicates of the CCTP bootstrap (`combined_bootstrap_cis.csv`, docs/protocol.md §8.3).
pub(crate) const CCTP_BOOTSTRAP_SAMPLES: usize = 1_000;
/// Seed of the CCTP bootstrap (one `default_rng(42)` shared sequentially over the groups).
pub(crate) const CCTP_BOOTSTRAP_SEED: u64 = 42;
/// Percentiles of the 95% interval.
pub(crate) const CI_PERCENTILES: (f64, f64) = (2.5, 97.5);

/// `numpy.random.default_rng(seed).integers(0, n, size=(samples, n))`, row-major, as `u32`.
/// Empty when `n == 0` or `samples == 0`.
pub(crate) fn index_matrix(n: usize, samples: usize, seed: u64) -> Vec<u32> {
    IndexStream::new(seed).next_matrix(n, samples)
}

/// A generator consumed sequentially: successive matrices continue the same numpy stream, like
/// calling `rng.integers(0, n, size=(samples, n))` repeatedly on one `default_rng(seed)`.
pub(crate) struct IndexStream {
    rng: NumpyRng,
}

impl IndexStream {
    pub(crate) fn new(seed: u64) -> Self {
        IndexStream {
            rng: NumpyRng::new(seed),
        }
    }
    /// Next `samples × n` matrix from the stream (consumes nothing when empty). Drawn in chunks
    /// of at most [`DRAW_CHUNK`] values so the transient `u64` buffer stays small; numpy's stream
    /// is the same whether drawn at once or in pieces (the 32-bit half-word buffer lives in the
    /// bit generator), which `numpy_digit_parity` checks.
    pub(crate) fn next_matrix(&mut self, n: usize, samples: usize) -> Vec<u32> {
        if n == 0 || samples == 0 {
            return Vec::new();
        }
        let total = samples * n;
        let mut out = Vec::with_capacity(total);
        while out.len() < total {
            let k = DRAW_CHUNK.min(total - out.len());
            out.extend(self.rng.integers(n as u64, k).into_iter().map(|v| v as u32));
        }
        out
    }
}

/// Values drawn per `integers` call when building an index matrix.
pub(crate) const DRAW_CHUNK: usize = 1 << 16;

/// Point estimate and percentile interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Ci {
    /// Full-sample statistic (not the bootstrap mean).
    pub estimate: f64,
    pub lo: f64,
    pub hi: f64,
}

fn rows(idx: &[u32], n: usize) -> std::slice::ChunksExact<'_, u32> {
    assert!(n > 0, "bootstrap over zero items");
    assert_eq!(
        idx.len() % n,
        0,
        "index matrix length is not a multiple of n"
    );
    idx.chunks_exact(n)
}

/// `values[idx].mean(axis=1)`: one mean per replicate (numpy-exact summation order).
pub(crate) fn replicate_means(values: &[f64], idx: &[u32]) -> Vec<f64> {
    let n = values.len();
    if n == 0 {
        return Vec::new();
    }
    let mut buf = vec![0.0f64; n];
    rows(idx, n)
        .map(|row| {
            for (b, &i) in buf.iter_mut().zip(row) {
                *b = values[i as usize];
            }
            mean(&buf)
        })
        .collect()
}

/// Mean metric: estimate = mean of the item values, CI from [`replicate_means`].
pub(crate) fn mean_ci(values: &[f64], idx: &[u32]) -> Ci {
    let (lo, hi) = ci_from_replicates(&replicate_means(values, idx));
    Ci {
        estimate: mean(values),
        lo,
        hi,
    }
}

/// Ratio metric per replicate: `Σ num flags / Σ den flags` over the resample, NaN where the
/// resampled denominator is 0.
pub(crate) fn ratio_replicates(num: &[bool], den: &[bool], idx: &[u32]) -> Vec<f64> {
    assert_eq!(num.len(), den.len(), "ratio flags must be parallel");
    let n = num.len();
    if n == 0 {
        return Vec::new();
    }
    rows(idx, n)
        .map(|row| {
            let (mut a, mut b) = (0usize, 0usize);
            for &i in row {
                a += num[i as usize] as usize;
                b += den[i as usize] as usize;
            }
            if b == 0 {
                f64::NAN
            } else {
                a as f64 / b as f64
            }
        })
        .collect()
}

/// Ratio metric (conditional lock-in, contamination | clean-correct): estimate = full-sample
/// ratio (NaN when its denominator is 0), CI over the non-NaN replicates (test reference).
#[cfg(test)]
pub(crate) fn ratio_ci(flags: &RatioFlags, idx: &[u32]) -> Ci {
    let (lo, hi) = ci_from_replicates(&ratio_replicates(&flags.num, &flags.den, idx));
    Ci {
        estimate: flags.rate().0,
        lo,
        hi,
    }
}

/// Restoration per replicate: `(mean R0 p(w) − mean X p(w)) / (mean R0 p(w) − mean clean p(w))`
/// over the resample, NaN where `|den| <= 1e-12` (as the released `*_with_ci.csv`).
pub(crate) fn restoration_replicates(clean_pw: &[f64], r0_pw: &[f64], x_pw: &[f64], idx: &[u32]) -> Vec<f64> {
    assert!(
        clean_pw.len() == r0_pw.len() && r0_pw.len() == x_pw.len(),
        "restoration inputs must be parallel"
    );
    let c = replicate_means(clean_pw, idx);
    let r = replicate_means(r0_pw, idx);
    let x = replicate_means(x_pw, idx);
    c.iter()
        .zip(r.iter().zip(&x))
        .map(|(&c, (&r, &x))| {
            let den = r - c;
            if den.abs() <= RESTORATION_DEN_EPS || den.is_nan() {
                f64::NAN
            } else {
                (r - x) / den
            }
        })
        .collect()
}

/// Restoration ratio with CI (the full-matrix reference the tables' streamed bootstrap is
/// tested against).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RestorationCi {
    /// Full-sample restoration (ratio of pair means) and its informative flag.
    pub estimate: Restoration,
    /// NaN unless `estimate.informative` (|full-sample den| >= 0.05).
    pub lo: f64,
    pub hi: f64,
}

/// Restoration-ratio CI (test reference); the interval is reported (non-NaN) only when the full-sample
/// denominator is informative. Replicates are skipped entirely when it is not.
#[cfg(test)]
pub(crate) fn restoration_ci(clean_pw: &[f64], r0_pw: &[f64], x_pw: &[f64], idx: &[u32]) -> RestorationCi {
    let estimate = restoration_ratio(mean(clean_pw), mean(r0_pw), mean(x_pw));
    if !estimate.informative {
        return RestorationCi {
            estimate,
            lo: f64::NAN,
            hi: f64::NAN,
        };
    }
    let (lo, hi) = ci_from_replicates(&restoration_replicates(clean_pw, r0_pw, x_pw, idx));
    RestorationCi { estimate, lo, hi }
}

/// numpy `percentile(values, pct)` with the default `linear` method on an **ascending sorted,
/// NaN-free** slice. NaN for an empty slice.
pub(crate) fn percentile_sorted(sorted: &[f64], pct: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let q = pct / 100.0;
    let vi = (n - 1) as f64 * q;
    if vi >= (n - 1) as f64 {
        return sorted[n - 1];
    }
    if vi < 0.0 {
        return sorted[0];
    }
    let prev = vi.floor();
    let t = vi - prev;
    let i = prev as usize;
    let (a, b) = (sorted[i], sorted[i + 1]);
    // numpy's _lerp: a + (b−a)·t, or b − (b−a)·(1−t) when t >= 0.5
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// Non-NaN values sorted ascending.
pub(crate) fn sorted_without_nan(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// numpy `percentile(values[~isnan(values)], pct)` (linear). NaN if nothing is left.
#[cfg(test)]
fn percentile(values: &[f64], pct: f64) -> f64 {
    percentile_sorted(&sorted_without_nan(values), pct)
}

/// `percentile(reps without NaN, [2.5, 97.5])`; `(NaN, NaN)` if every replicate is NaN.
pub(crate) fn ci_from_replicates(reps: &[f64]) -> (f64, f64) {
    let s = sorted_without_nan(reps);
    (
        percentile_sorted(&s, CI_PERCENTILES.0),
        percentile_sorted(&s, CI_PERCENTILES.1),
    )
}

/// Truncation-table aggregate-row bootstrap (paper Table 5 CIs): resample the K per-pair mean
/// gaps (`hysteresis_gap_mean`) with replacement, `samples` times (10,000), from a fresh
/// `default_rng(seed)` (12345); estimate = mean of the K values.
pub(crate) fn aggregate_row_ci(pair_means: &[f64], samples: usize, seed: u64) -> Ci {
    if pair_means.is_empty() {
        return Ci {
            estimate: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
        };
    }
    let idx = index_matrix(pair_means.len(), samples, seed);
    mean_ci(pair_means, &idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_matches_numpy_linear() {
        // numpy 2.4.6: np.percentile(v, q) for the vectors below, as float.hex bit patterns.
        let v = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4, 0.55];
        for (q, bits) in NUMPY_P7 {
            assert_eq!(percentile(&v, q).to_bits(), bits, "q = {q}");
        }
        let w: Vec<f64> = (0..40u64)
            .map(|i| ((i * 17) % 41) as f64 / 41.0 - 0.25)
            .collect();
        for (q, bits) in NUMPY_P40 {
            assert_eq!(percentile(&w, q).to_bits(), bits, "q = {q}");
        }
        // NaN dropped first
        let mut vn = v.to_vec();
        vn.push(f64::NAN);
        vn.insert(0, f64::NAN);
        assert_eq!(percentile(&vn, 2.5).to_bits(), NUMPY_P7[0].1);
        assert!(percentile(&[f64::NAN], 50.0).is_nan());
        assert!(percentile(&[], 50.0).is_nan());
        assert_eq!(percentile(&[3.0], 97.5), 3.0);
        assert_eq!(percentile(&[1.0, 2.0], 100.0), 2.0);
        assert_eq!(percentile(&[1.0, 2.0], 0.0), 1.0);
        assert_eq!(percentile(&[1.0, 2.0], 50.0), 1.5);
        let (lo, hi) = ci_from_replicates(&v);
        assert_eq!(lo.to_bits(), NUMPY_P7[0].1);
        assert_eq!(hi.to_bits(), NUMPY_P7[1].1);
        let (a, b) = ci_from_replicates(&[f64::NAN, f64::NAN]);
        assert!(a.is_nan() && b.is_nan());
    }
    const NUMPY_P7: [(f64, u64); 5] = [
        (2.5, 0x3fbd70a3d70a3d71),
        (97.5, 0x3febd70a3d70a3d6),
        (50.0, 0x3fd999999999999a),
        (25.0, 0x3fd0000000000000),
        (80.0, 0x3fe570a3d70a3d71),
    ];
    const NUMPY_P40: [(f64, u64); 4] = [
        (2.5, 0xbfccf4c2cf4c2cf5),
        (97.5, 0x3fe67562a7562a75),
        (33.0, 0x3fb05be905be905e),
        (67.5, 0x3fdaa7562a7562a9),
    ];

    #[test]
    fn index_matrix_shape_range_and_reproducible() {
        let a = index_matrix(7, 50, 12345);
        assert_eq!(a.len(), 350);
        assert!(a.iter().all(|&i| i < 7));
        assert_eq!(a, index_matrix(7, 50, 12345));
        assert_ne!(a, index_matrix(7, 50, 12346));
        assert!(index_matrix(0, 10, 1).is_empty());
        assert!(index_matrix(5, 0, 1).is_empty());
        // a stream continues: the second matrix differs from a fresh one
        let mut s = IndexStream::new(12345);
        let first = s.next_matrix(7, 50);
        assert_eq!(first, a);
        let second = s.next_matrix(7, 50);
        assert_ne!(second, a);
    }

    #[test]
    fn replicate_means_hand_matrix() {
        let values = [1.0, 2.0, 3.0, 10.0];
        // 3 replicates over n = 4
        let idx = [0, 0, 0, 0, 1, 2, 3, 3, 3, 2, 1, 0];
        let m = replicate_means(&values, &idx);
        assert_eq!(m, vec![1.0, 6.25, 4.0]);
        let ci = mean_ci(&values, &idx);
        assert_eq!(ci.estimate, 4.0);
        // percentiles of [1, 4, 6.25] at 2.5/97.5: vi = 0.05 / 1.95
        assert!((ci.lo - (1.0 + 3.0 * 0.05)).abs() < 1e-12);
        assert!((ci.hi - (6.25 - 2.25 * 0.05)).abs() < 1e-12);
    }

    #[test]
    fn ratio_with_zero_denominator_replicate() {
        // den flags only on item 2; replicate 0 never draws item 2 -> NaN replicate, dropped
        let flags = RatioFlags {
            num: vec![false, false, true, false],
            den: vec![false, false, true, true],
        };
        let idx = [0, 1, 0, 1, 2, 2, 3, 0, 3, 3, 3, 3];
        let r = ratio_replicates(&flags.num, &flags.den, &idx);
        assert!(r[0].is_nan());
        assert!((r[1] - 2.0 / 3.0).abs() < 1e-15);
        assert_eq!(r[2], 0.0);
        let ci = ratio_ci(&flags, &idx);
        assert_eq!(ci.estimate, 0.5);
        // CI over [0, 2/3] only
        assert!((ci.lo - (2.0 / 3.0) * 0.025).abs() < 1e-12);
        assert!((ci.hi - (2.0 / 3.0) * 0.975).abs() < 1e-12);
        // all-zero denominators: NaN estimate and NaN interval
        let none = RatioFlags {
            num: vec![false; 4],
            den: vec![false; 4],
        };
        let ci = ratio_ci(&none, &idx);
        assert!(ci.estimate.is_nan() && ci.lo.is_nan() && ci.hi.is_nan());
    }

    #[test]
    fn restoration_ci_rules() {
        let clean = [0.1, 0.2, 0.0, 0.1];
        let r0 = [0.6, 0.5, 0.4, 0.5];
        let x = [0.2, 0.3, 0.1, 0.2];
        // replicate 0 resamples item 3 four times; replicate 1 a mix
        let idx = [3, 3, 3, 3, 0, 1, 2, 3];
        let reps =
            restoration_replicates(&clean, &r0, &x, &idx);
        assert!((reps[0] - 0.75).abs() < 1e-12);
        let want1 = (0.5 - 0.2) / (0.5 - 0.1);
        assert!((reps[1] - want1).abs() < 1e-12);
        let ci = restoration_ci(&clean, &r0, &x, &idx);
        assert!(ci.estimate.informative);
        assert!(ci.lo <= ci.hi && !ci.lo.is_nan());
        // a replicate with zero denominator is NaN
        let c2 = [0.5, 0.1];
        let r2 = [0.5, 0.6];
        let x2 = [0.5, 0.2];
        let reps = restoration_replicates(
            &c2,
            &r2,
            &x2,
            &[0, 0, 1, 1, 0, 1]);
        assert!(reps[0].is_nan());
        assert!(!reps[1].is_nan() && !reps[2].is_nan());
        // not informative full sample -> no interval
        let ci = restoration_ci(
            &[0.3, 0.3],
            &[0.31, 0.32],
            &[0.3, 0.3],
            &[0, 1, 1, 0]);
        assert!(!ci.estimate.informative);
        assert!(ci.lo.is_nan() && ci.hi.is_nan());
        assert!(!ci.estimate.ratio.is_nan()); // raw ratio still stored
    }

    #[test]
    fn seeded_mean_ci_brackets_estimate() {
        let values: Vec<f64> = (0..200).map(|i| ((i * 31) % 97) as f64 / 97.0).collect();
        let idx = index_matrix(values.len(), 2000, 12345);
        let a = mean_ci(&values, &idx);
        let b = mean_ci(&values, &index_matrix(values.len(), 2000, 12345));
        assert_eq!(a, b);
        assert!(a.lo < a.estimate && a.estimate < a.hi, "{a:?}");
        assert!(a.hi - a.lo < 0.2);
        // constant values give a degenerate interval
        let c = mean_ci(&vec![0.25; 50], &index_matrix(50, 100, 7));
        assert_eq!((c.estimate, c.lo, c.hi), (0.25, 0.25, 0.25));
    }

    /// End-to-end digit parity with numpy (needs the real `nprng` port, which the delivered crate
    /// has). Reference, numpy 2.4.6:
    /// `v = ((i*7919) % 1000) / 997, i < 50; rng = default_rng(12349);`
    /// `idx = rng.integers(0, 50, size=(10000, 50)); percentile(v[idx].mean(axis=1), [2.5, 97.5])`,
    /// then a second matrix from the same `rng` for a ratio metric, and the aggregate-row
    /// bootstrap of 5 values with `default_rng(12345)`.
    #[test]
    fn numpy_digit_parity() {
        let v: Vec<f64> = (0..50u64)
            .map(|i| ((i * 7919) % 1000) as f64 / 997.0)
            .collect();
        let mut stream = IndexStream::new(BOOTSTRAP_SEED + SEED_OFFSET_RECOVERY_OPS);
        let idx = stream.next_matrix(50, BOOTSTRAP_SAMPLES);
        assert_eq!(&idx[..5], &[40, 15, 44, 8, 35]);
        let ci = mean_ci(&v, &idx);
        assert_eq!(ci.estimate.to_bits(), 0x3fde8608baedc4f1);
        assert_eq!(ci.lo.to_bits(), 0x3fd927db5ec3c1f0);
        assert_eq!(ci.hi.to_bits(), 0x3fe1d9f712968ecb);
        let idx2 = stream.next_matrix(50, BOOTSTRAP_SAMPLES);
        assert_eq!(&idx2[..5], &[17, 8, 34, 34, 2]);
        let den: Vec<bool> = (0..50).map(|i| i % 2 == 0).collect();
        let num: Vec<bool> = (0..50).map(|i| i % 2 == 0 && i % 3 == 0).collect();
        let r = ratio_ci(&RatioFlags { num, den }, &idx2);
        assert_eq!(r.lo.to_bits(), 0x3fc642c8590b2164);
        assert_eq!(r.hi.to_bits(), 0x3fe199999999999a);
        let a = aggregate_row_ci(
            &[0.30, 0.10, 0.25, 0.05, 0.20],
            BOOTSTRAP_SAMPLES,
            BOOTSTRAP_SEED,
        );
        assert_eq!(a.lo.to_bits(), 0x3fb999999999999a); // 0.1
        assert_eq!(a.hi.to_bits(), 0x3fd0a3d70a3d70a4); // 0.26
    }

    #[test]
    fn aggregate_row_bootstrap() {
        let gaps = [0.30, 0.10, 0.25, 0.05, 0.20];
        let a = aggregate_row_ci(&gaps, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED);
        assert!((a.estimate - 0.18).abs() < 1e-12);
        assert_eq!(
            a,
            aggregate_row_ci(&gaps, BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED)
        );
        assert!(
            a.lo >= 0.05 && a.hi <= 0.30 && a.lo < a.estimate && a.estimate < a.hi,
            "{a:?}"
        );
        let e = aggregate_row_ci(&[], 10, 1);
        assert!(e.estimate.is_nan());
    }
}
