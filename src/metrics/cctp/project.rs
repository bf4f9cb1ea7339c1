//! Per-item projection: the upward α scan to α\*, and the item's record at α\*.

use super::input::{CctpError, Prepared};
use super::numerics::{alpha_bucket, cctp_entropy};
use super::spec::{GuaranteeCheck, Path, TubeSpec};
use super::tube::{guarantee_check, tube_eval, TubeEval};
use crate::metrics::{argmax_first, is_flattened, kl_divergence};

/// `advocated_correct_suppressed = p_proj(c) < p_clean(c) − 0.05`.
pub(crate) const CORRECT_SUPPRESSION_SLACK: f64 = 0.05;

/// Per-item CCTP result at α\*.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CctpItem {
    pub(crate) alpha_star: f64,
    /// Position of α\* in the grid.
    pub(crate) alpha_index: usize,
    /// `1 − α*`.
    pub(crate) history_retention: f64,
    pub(crate) alpha_bucket: &'static str,
    /// First failing check at the last failing grid α before α\*, in priority order; `none`
    /// when α\* is the first grid value.
    pub(crate) binding_constraint_primary: &'static str,
    /// All checks failing there (`binding_constraints_json`).
    pub(crate) binding_constraints: Vec<&'static str>,
    /// Tube result at α\* (passes by construction).
    pub(crate) tube_pass: bool,
    /// Projected distribution at α\*, label order.
    pub(crate) projected: Vec<f64>,
    /// argmax of `projected`, ties to the first label.
    pub(crate) prediction: usize,
    pub(crate) p_wrong: f64,
    pub(crate) p_correct: f64,
    /// `prediction == correct`.
    pub(crate) correct: bool,
    /// `prediction == wrong`.
    pub(crate) wrong_follow: bool,
    /// CCTP entropy of `projected`.
    pub(crate) entropy: f64,
    pub(crate) max_prob: f64,
    /// `H(proj) > H(clean) + 0.15 || max(proj) < max(clean) − 0.15`.
    pub(crate) flattening: bool,
    pub(crate) kl_clean_projected: f64,
    pub(crate) kl_projected_full: f64,
    pub(crate) kl_clean_full: f64,
    // references
    pub(crate) clean_prediction: usize,
    pub(crate) clean_p_wrong: f64,
    pub(crate) clean_p_correct: f64,
    pub(crate) clean_entropy: f64,
    pub(crate) clean_max_prob: f64,
    pub(crate) full_prediction: usize,
    pub(crate) full_p_wrong: f64,
    pub(crate) full_p_correct: f64,
    /// Full-history prediction == wrong.
    pub(crate) full_wrong_follow: bool,
    /// Full-history prediction == correct.
    pub(crate) full_correct: bool,
    pub(crate) guarantee: GuaranteeCheck,
}

impl CctpItem {
    /// Correct-pressure diagnostic `p_proj(c) < p_clean(c) − 0.05`.
    pub(crate) fn advocated_correct_suppressed(&self) -> bool {
        self.p_correct < self.clean_p_correct - CORRECT_SUPPRESSION_SLACK
    }
}

/// Projects one prepared item (prepared once, reused across variants): guarantee check at
/// α = 1 first (error if it fails), then the upward scan.
pub(crate) fn project_prepared(
    prep: &Prepared,
    path: Path,
    spec: &TubeSpec,
    grid: &[f64],
) -> Result<CctpItem, CctpError> {
    let guarantee = guarantee_check(prep, path, spec);
    if !guarantee.passes() {
        return Err(CctpError::GuaranteeFailed(guarantee));
    }
    let mut last_fail: Option<TubeEval> = None;
    let mut found: Option<(usize, Vec<f64>, TubeEval)> = None;
    for (i, &a) in grid.iter().enumerate() {
        let q = prep.project(path, a);
        let ev = tube_eval(&prep.p_clean, &q, spec);
        if ev.passes() {
            found = Some((i, q, ev));
            break;
        }
        last_fail = Some(ev);
    }
    let (idx, q, ev) = found.ok_or(CctpError::NoPassingAlpha)?;
    let alpha = grid[idx];
    let (primary, all) = match (idx, last_fail) {
        (0, _) | (_, None) => ("none", Vec::new()),
        (_, Some(f)) => {
            let all = f.failing();
            (all.first().copied().unwrap_or("none"), all)
        }
    };
    let pc = &prep.p_clean;
    let ph = &prep.p_history;
    let prediction = argmax_first(&q);
    let entropy = cctp_entropy(&q);
    let max_prob = q.iter().copied().fold(f64::NAN, f64::max);
    let clean_entropy = cctp_entropy(pc);
    let clean_prediction = argmax_first(pc);
    let clean_max_prob = pc[clean_prediction];
    let full_prediction = argmax_first(ph);
    Ok(CctpItem {
        alpha_star: alpha,
        alpha_index: idx,
        history_retention: 1.0 - alpha,
        alpha_bucket: alpha_bucket(alpha),
        binding_constraint_primary: primary,
        binding_constraints: all,
        tube_pass: ev.passes(),
        prediction,
        p_wrong: q[prep.wrong],
        p_correct: q[prep.correct],
        correct: prediction == prep.correct,
        wrong_follow: prediction == prep.wrong,
        entropy,
        max_prob,
        flattening: is_flattened(entropy, clean_entropy, max_prob, clean_max_prob),
        kl_clean_projected: ev.kl_value,
        kl_projected_full: kl_divergence(&q, ph),
        kl_clean_full: kl_divergence(pc, ph),
        clean_prediction,
        clean_p_wrong: pc[prep.wrong],
        clean_p_correct: pc[prep.correct],
        clean_entropy,
        clean_max_prob,
        full_prediction,
        full_p_wrong: ph[prep.wrong],
        full_p_correct: ph[prep.correct],
        full_wrong_follow: full_prediction == prep.wrong,
        full_correct: full_prediction == prep.correct,
        projected: q,
        guarantee,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::cctp::input::CctpInput;
    use crate::metrics::cctp::numerics::{alpha_grid, ALPHA_GRID_STEP};
    use crate::metrics::cctp::reference::{close, input, labels, project_item, EXPECTED, FIXTURES};
    use crate::metrics::cctp::spec::{Tube, VARIANTS};

    #[test]
    fn identical_distributions_alpha_zero() {
        let inp = input(&[-0.5, -1.2, -2.3], &[-0.5, -1.2, -2.3], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        for v in VARIANTS {
            let r = project_item(&inp, v.path, &v.spec, &grid).unwrap();
            assert_eq!(r.alpha_star, 0.0, "{}", v.name);
            assert_eq!(r.history_retention, 1.0);
            assert_eq!(r.binding_constraint_primary, "none");
            assert!(r.binding_constraints.is_empty());
            assert_eq!(r.alpha_bucket, "alpha_000");
            assert_eq!(r.kl_clean_projected, 0.0);
            assert!(r.tube_pass);
        }
        // shifting log-scores by a constant changes nothing (centring)
        let shifted = input(&[-10.5, -11.2, -12.3], &[3.5, 2.8, 1.7], 1, 0);
        let r = project_item(
            &shifted,
            Path::LogitLinear,
            &TubeSpec::Full(Tube::MAIN),
            &grid,
        )
        .unwrap();
        assert_eq!(r.alpha_index, 0);
    }

    #[test]
    fn only_alpha_one_passes() {
        let inp = input(&[0.0, -1.0], &[-1000.0, 0.0], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        let r = project_item(&inp, Path::LogitLinear, &TubeSpec::Full(Tube::MAIN), &grid).unwrap();
        assert_eq!(r.alpha_index, 100);
        assert_eq!(r.alpha_star, 1.0);
        assert_eq!(r.history_retention, 0.0);
        assert_eq!(r.alpha_bucket, "alpha_100");
        assert_eq!(r.binding_constraint_primary, "top1_clean_match");
        assert_eq!(
            r.binding_constraints,
            vec!["top1_clean_match", "p_top_clean", "kl"]
        );
        assert_eq!(r.prediction, 0);
        assert!(r.correct && !r.wrong_follow);
        assert!(r.full_wrong_follow);
        assert_eq!(r.projected, Prepared::new(&inp).unwrap().p_clean);
    }

    #[test]
    fn errors_never_panic() {
        let grid = alpha_grid(ALPHA_GRID_STEP);
        let spec = TubeSpec::Full(Tube::MAIN);
        let e = |inp: &CctpInput| project_item(inp, Path::LogitLinear, &spec, &grid).unwrap_err();
        assert_eq!(
            e(&CctpInput::new(vec![], vec![], vec![], 0, 0)),
            CctpError::EmptyLabels
        );
        assert!(matches!(
            e(&CctpInput::new(labels(2), vec![0.0], vec![0.0, 1.0], 0, 1)),
            CctpError::LengthMismatch { .. }
        ));
        assert!(matches!(
            e(&input(&[0.0, 1.0], &[0.0, 1.0], 2, 0)),
            CctpError::IndexOutOfRange { index: 2, len: 2 }
        ));
        assert!(matches!(
            e(&input(&[0.0, f64::NAN], &[0.0, 1.0], 1, 0)),
            CctpError::NonFinite(_)
        ));
        assert!(matches!(
            e(&input(&[0.0, 1.0], &[f64::NEG_INFINITY, 1.0], 1, 0)),
            CctpError::NonFinite(_)
        ));
        let mut z = input(&[0.0, 1.0], &[0.0, 1.0], 1, 0);
        z.clean_probs = Some(vec![0.0, 0.0]);
        assert!(matches!(e(&z), CctpError::ZeroMass(_)));
        // a custom grid without 1.0 where nothing passes
        let r = project_item(
            &input(&[0.0, -1.0], &[-1000.0, 0.0], 1, 0),
            Path::LogitLinear,
            &spec,
            &[0.0, 0.5],
        );
        assert_eq!(r.unwrap_err(), CctpError::NoPassingAlpha);
        assert!(!CctpError::EmptyLabels.to_string().is_empty());
    }

    #[test]
    fn guarantee_failure_is_an_error() {
        // a KL-only spec with a negative tau cannot pass even at alpha = 1 (KL = 0 > tau + 1e-10)
        let inp = input(&[0.0, -1.0], &[-1.0, 0.0], 1, 0);
        let grid = alpha_grid(ALPHA_GRID_STEP);
        match project_item(&inp, Path::LogitLinear, &TubeSpec::KlOnly(-1.0), &grid) {
            Err(CctpError::GuaranteeFailed(g)) => {
                assert!(!g.tube_pass && g.same_top1 && g.finite);
                assert!(!g.passes());
            }
            other => panic!("expected GuaranteeFailed, got {other:?}"),
        }
    }

    #[test]
    fn matches_python_reference() {
        // Expected values from an independent numpy implementation of docs/protocol.md §7 (see the report).
        let grid = alpha_grid(ALPHA_GRID_STEP);
        for &(name, path, spec, idx, primary, fails, pw, pc, pred, h, maxp, flat, kcp, kpf, kcf) in
            EXPECTED
        {
            let &(_, clean, hist, w, c) = FIXTURES.iter().find(|f| f.0 == name).unwrap();
            let r = project_item(&input(clean, hist, w, c), path, &spec, &grid).unwrap();
            let tag = format!("{name}/{path:?}/{spec:?}");
            assert_eq!(r.alpha_index, idx, "{tag}");
            assert_eq!(r.alpha_star, grid[idx], "{tag}");
            assert_eq!(r.binding_constraint_primary, primary, "{tag}");
            assert_eq!(r.binding_constraints, fails.to_vec(), "{tag}");
            assert_eq!(r.prediction, pred, "{tag}");
            assert_eq!(r.flattening, flat, "{tag}");
            for (got, want, what) in [
                (r.p_wrong, pw, "p_wrong"),
                (r.p_correct, pc, "p_correct"),
                (r.entropy, h, "entropy"),
                (r.max_prob, maxp, "max_prob"),
                (r.kl_clean_projected, kcp, "kl_clean_projected"),
                (r.kl_projected_full, kpf, "kl_projected_full"),
                (r.kl_clean_full, kcf, "kl_clean_full"),
            ] {
                assert!(close(got, want, 1e-12), "{tag} {what}: {got} vs {want}");
            }
        }
    }
}
