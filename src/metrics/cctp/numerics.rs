//! Numerics of the projection (centring, softmax, renormalisation, CCTP entropy) and the α
//! grid with its buckets.

use crate::metrics::{mean, pairwise_sum, PROB_EPS};

/// α at or below this returns the full-history distribution exactly.
pub(crate) const ALPHA_EPS: f64 = 1e-12;
/// `configs/cctp_tube_main.yaml::alpha_grid_step`.
pub(crate) const ALPHA_GRID_STEP: f64 = 0.01;

/// `z − mean(z)`.
pub(crate) fn center(z: &[f64]) -> Vec<f64> {
    let m = mean(z);
    z.iter().map(|v| v - m).collect()
}

/// `exp(z − max z) / Σ exp(z − max z)`.
pub(crate) fn softmax(z: &[f64]) -> Vec<f64> {
    let mx = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - mx).exp()).collect();
    let s = pairwise_sum(&e);
    e.iter().map(|v| v / s).collect()
}

/// Negatives clipped to 0, divided by the sum. `None` when the sum is not positive and finite.
pub(crate) fn normalize_probs(p: &[f64]) -> Option<Vec<f64>> {
    let c: Vec<f64> = p.iter().map(|&v| if v > 0.0 { v } else { 0.0 }).collect();
    let s = pairwise_sum(&c);
    if !(s > 0.0 && s.is_finite()) {
        return None;
    }
    Some(c.iter().map(|v| v / s).collect())
}

/// CCTP entropy: clamp each probability to 1e-12, renormalise, `−Σ q ln q` (nats).
pub(crate) fn cctp_entropy(p: &[f64]) -> f64 {
    let c: Vec<f64> = p.iter().map(|v| v.max(PROB_EPS)).collect();
    let s = pairwise_sum(&c);
    let mut h = 0.0;
    for v in c {
        let q = v / s;
        h -= q * q.ln();
    }
    h
}

/// α grid: `np.arange(0, 1 + step/2, step)` rounded to 10 decimals (numpy `round`: `rint(x·1e10)
/// / 1e10`), values above 1 dropped, sorted, de-duplicated, 1.0 appended if missing.
/// `alpha_grid(0.01)` has 101 values `i / 100`.
pub(crate) fn alpha_grid(step: f64) -> Vec<f64> {
    if !(step > 0.0 && step.is_finite()) {
        return vec![0.0, 1.0];
    }
    let len = ((1.0 + step / 2.0) / step).ceil() as usize;
    let mut g: Vec<f64> = (0..len)
        .map(|i| (i as f64 * step * 1e10).round_ties_even() / 1e10)
        .filter(|&a| a <= 1.0)
        .collect();
    g.sort_by(|a, b| a.total_cmp(b));
    g.dedup();
    if g.last() != Some(&1.0) {
        g.push(1.0);
    }
    g
}

/// Bucket of an α\* value.
pub(crate) fn alpha_bucket(alpha: f64) -> &'static str {
    if alpha <= ALPHA_EPS {
        "alpha_000"
    } else if alpha >= 1.0 - ALPHA_EPS {
        "alpha_100"
    } else if alpha <= 0.10 {
        "alpha_001_010"
    } else if alpha <= 0.25 {
        "alpha_011_025"
    } else if alpha <= 0.50 {
        "alpha_026_050"
    } else if alpha <= 0.75 {
        "alpha_051_075"
    } else {
        "alpha_076_099"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cctp::reference::close;

    #[test]
    fn grid_has_101_exact_values() {
        let g = alpha_grid(ALPHA_GRID_STEP);
        assert_eq!(g.len(), 101);
        for (i, &a) in g.iter().enumerate() {
            assert_eq!(a, i as f64 / 100.0, "grid[{i}]");
        }
        assert_eq!(g[0], 0.0);
        assert_eq!(*g.last().unwrap(), 1.0);
        assert_eq!(g[10], 0.1);
        assert_eq!(g[25], 0.25);
        // a step that does not hit 1.0 gets it forced
        let g3 = alpha_grid(0.03);
        assert_eq!(*g3.last().unwrap(), 1.0);
        assert_eq!(g3[g3.len() - 2], 0.99);
        assert_eq!(g3.len(), 35);
        assert_eq!(alpha_grid(0.25), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn buckets() {
        let g = alpha_grid(0.01);
        let b = |i: usize| alpha_bucket(g[i]);
        assert_eq!(b(0), "alpha_000");
        assert_eq!(b(1), "alpha_001_010");
        assert_eq!(b(10), "alpha_001_010");
        assert_eq!(b(11), "alpha_011_025");
        assert_eq!(b(25), "alpha_011_025");
        assert_eq!(b(26), "alpha_026_050");
        assert_eq!(b(50), "alpha_026_050");
        assert_eq!(b(51), "alpha_051_075");
        assert_eq!(b(75), "alpha_051_075");
        assert_eq!(b(76), "alpha_076_099");
        assert_eq!(b(99), "alpha_076_099");
        assert_eq!(b(100), "alpha_100");
    }

    #[test]
    fn numerics() {
        let z = center(&[1.0, 2.0, 6.0]);
        assert_eq!(z, vec![-2.0, -1.0, 3.0]);
        let p = softmax(&[0.0, 0.0]);
        assert_eq!(p, vec![0.5, 0.5]);
        // huge scores do not overflow
        let p = softmax(&[-1000.0, 0.0]);
        assert_eq!(p[1], 1.0);
        assert_eq!(
            normalize_probs(&[-0.2, 0.5, 1.5]),
            Some(vec![0.0, 0.25, 0.75])
        );
        assert_eq!(normalize_probs(&[0.0, -1.0]), None);
        // CCTP entropy clamps and renormalises
        assert!(close(
            cctp_entropy(&[0.5, 0.5]),
            std::f64::consts::LN_2,
            1e-15
        ));
        let h = cctp_entropy(&[1.0, 0.0]);
        let q0: f64 = 1.0 / (1.0 + 1e-12);
        let q1: f64 = 1e-12 / (1.0 + 1e-12);
        assert!(close(h, -(q0 * q0.ln() + q1 * q1.ln()), 1e-20));
    }
}
