//! Paired bootstrap over one shared index matrix, drawn in row blocks so that memory stays
//! bounded for pooled groups (7,000 items × 10,000 replicates would be 280 MB at once). The
//! numpy stream is the same whether the matrix is drawn at once or in pieces, so the intervals
//! are identical to `metrics::bootstrap::{mean_ci, ratio_ci, restoration_ci}` on the full matrix.

use crate::metrics::bootstrap::{
    ci_from_replicates, ratio_replicates, replicate_means, restoration_replicates, IndexStream,
};
use crate::metrics::{mean, restoration_ratio, RatioFlags};

/// Index values drawn per block (about 4 MB of `u32`).
const BLOCK_VALUES: usize = 1 << 20;
/// Blocks at least this large compute their statistics in parallel.
const PARALLEL_MIN_VALUES: usize = 1 << 16;

/// One statistic of a paired group.
pub(crate) enum Stat<'a> {
    /// Mean of item values (rates: 0/1 values).
    Mean(&'a [f64]),
    /// Ratio of flag counts, recomputed per replicate (NaN replicates dropped).
    Ratio(&'a RatioFlags),
    /// Restoration ratio of pair means (interval only when the full-sample denominator is
    /// informative, NaN replicates where `|den| <= 1e-12`).
    Restoration {
        clean: &'a [f64],
        r0: &'a [f64],
        x: &'a [f64],
    },
}

/// Draws one `samples × n` index matrix from `stream` and returns the percentile interval of
/// every statistic. `n == 0` draws nothing and returns NaN intervals.
pub(crate) fn paired_cis(
    stream: &mut IndexStream,
    n: usize,
    samples: usize,
    stats: &[Stat],
) -> Vec<(f64, f64)> {
    if n == 0 || samples == 0 {
        return vec![(f64::NAN, f64::NAN); stats.len()];
    }
    let mut reps: Vec<Vec<f64>> = stats.iter().map(|_| Vec::with_capacity(samples)).collect();
    let per_block = (BLOCK_VALUES / n).max(1);
    let mut done = 0;
    while done < samples {
        let k = per_block.min(samples - done);
        let idx = stream.next_matrix(n, k);
        if stats.len() > 1 && idx.len() >= PARALLEL_MIN_VALUES {
            // the statistics of one block are independent: compute them on scoped threads
            let parts: Vec<Vec<f64>> = std::thread::scope(|sc| {
                let hs: Vec<_> = stats
                    .iter()
                    .map(|s| sc.spawn(|| block_replicates(s, &idx)))
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            for (out, p) in reps.iter_mut().zip(parts) {
                out.extend(p);
            }
        } else {
            for (s, out) in stats.iter().zip(reps.iter_mut()) {
                out.extend(block_replicates(s, &idx));
            }
        }
        done += k;
    }
    stats
        .iter()
        .zip(reps)
        .map(|(s, r)| match s {
            Stat::Restoration { clean, r0, x } => {
                if restoration_ratio(mean(clean), mean(r0), mean(x)).informative {
                    ci_from_replicates(&r)
                } else {
                    (f64::NAN, f64::NAN)
                }
            }
            _ => ci_from_replicates(&r),
        })
        .collect()
}

/// Replicates of one statistic over one block of index rows.
fn block_replicates(s: &Stat, idx: &[u32]) -> Vec<f64> {
    match s {
        Stat::Mean(v) => replicate_means(v, idx),
        Stat::Ratio(f) => ratio_replicates(&f.num, &f.den, idx),
        Stat::Restoration { clean, r0, x } => {
            restoration_replicates(clean, r0, x, idx)
        }
    }
}

/// 0/1 values of flags.
pub(crate) fn as_f64(flags: &[bool]) -> Vec<f64> {
    flags.iter().map(|&b| if b { 1.0 } else { 0.0 }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::bootstrap::{index_matrix, mean_ci, ratio_ci};

    #[test]
    fn blocked_draws_equal_one_matrix() {
        // n large enough for several blocks
        let n = 5000;
        let samples = 700;
        let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 997.0).collect();
        let f = RatioFlags {
            num: (0..n).map(|i| i % 3 == 0).collect(),
            den: (0..n).map(|i| i % 2 == 0 || i % 3 == 0).collect(),
        };
        let mut s = IndexStream::new(77);
        let got = paired_cis(&mut s, n, samples, &[Stat::Mean(&v), Stat::Ratio(&f)]);
        let idx = index_matrix(n, samples, 77);
        let want = mean_ci(&v, &idx);
        assert_eq!(got[0], (want.lo, want.hi));
        let want = ratio_ci(&f, &idx);
        assert_eq!(got[1], (want.lo, want.hi));
    }
}
