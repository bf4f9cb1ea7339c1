//! Recovery criteria (docs/protocol.md §6) and the repair classifier (§6.3).
//!
//! The clean-context-like test is evaluated on **pair-level aggregates** ([`Agg`]: means over the
//! items of one model × dataset × operation), never per item.
//!
//! # How comparisons are done
//! Every check is a plain IEEE `<=` / `>=` between f64 values, written in exactly the artifact's
//! form, with no tolerance:
//! - gap: `|x.p_wrong − clean.p_wrong| <= wrong_gap` (the gap is the difference of the two pair
//!   means, `intervention_hysteresis_gap`),
//! - accuracy: `x.accuracy >= clean.accuracy − accuracy_slack`,
//! - p(c): `x.p_correct >= clean.p_correct − p_correct_slack`,
//! - entropy: `x.entropy <= clean.entropy + entropy_slack`,
//! - max prob: `x.max_prob >= clean.max_prob − max_prob_slack`.
//!
//! Pair means come from [`super::mean`], which reproduces numpy's summation order, so a value that
//! lands exactly on a threshold in the artifact lands exactly on it here too and passes. A value
//! that is mathematically on the threshold but whose f64 difference rounds one ulp above it fails,
//! exactly as it does in the artifact (e.g. `0.55 − 0.5 = 0.050000000000000044 > 0.05`).
//! Scaled families multiply each threshold by λ in f64 (`0.05 * 3.0 = 0.15000000000000002`),
//! as the sweep script does.

use super::{intervention_hysteresis_gap, Agg};

/// Five-part clean-context-like criterion (thresholds of docs/protocol.md §6.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Criterion {
    pub wrong_gap: f64,
    pub accuracy_slack: f64,
    pub p_correct_slack: f64,
    pub entropy_slack: f64,
    pub max_prob_slack: f64,
}

impl Criterion {
    pub(crate) const STRICT: Criterion = Criterion {
        wrong_gap: 0.025,
        accuracy_slack: 0.01,
        p_correct_slack: 0.025,
        entropy_slack: 0.10,
        max_prob_slack: 0.10,
    };
    pub(crate) const MAIN: Criterion = Criterion {
        wrong_gap: 0.05,
        accuracy_slack: 0.03,
        p_correct_slack: 0.05,
        entropy_slack: 0.15,
        max_prob_slack: 0.15,
    };
    pub(crate) const LOOSE: Criterion = Criterion {
        wrong_gap: 0.075,
        accuracy_slack: 0.05,
        p_correct_slack: 0.075,
        entropy_slack: 0.20,
        max_prob_slack: 0.20,
    };

    /// Every threshold multiplied by `lambda` (threshold sweep, docs/protocol.md §6.4).
    pub(crate) fn scaled(&self, lambda: f64) -> Criterion {
        Criterion {
            wrong_gap: self.wrong_gap * lambda,
            accuracy_slack: self.accuracy_slack * lambda,
            p_correct_slack: self.p_correct_slack * lambda,
            entropy_slack: self.entropy_slack * lambda,
            max_prob_slack: self.max_prob_slack * lambda,
        }
    }

    /// Per-check breakdown.
    pub(crate) fn check(&self, clean: &Agg, x: &Agg) -> CriterionCheck {
        let gap = intervention_hysteresis_gap(clean, x);
        CriterionCheck {
            gap,
            gap_ok: gap.abs() <= self.wrong_gap,
            accuracy_ok: x.accuracy >= clean.accuracy - self.accuracy_slack,
            p_correct_ok: x.p_correct >= clean.p_correct - self.p_correct_slack,
            entropy_ok: x.entropy <= clean.entropy + self.entropy_slack,
            max_prob_ok: x.max_prob >= clean.max_prob - self.max_prob_slack,
        }
    }

    /// All five checks hold ("restored / clean-context-like"). Any NaN input fails its check.
    pub(crate) fn passes(&self, clean: &Agg, x: &Agg) -> bool {
        self.check(clean, x).all()
    }
}

/// Outcome of each of the five checks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CriterionCheck {
    /// `mean p_X(w) − mean p_clean(w)`.
    pub gap: f64,
    pub gap_ok: bool,
    pub accuracy_ok: bool,
    pub p_correct_ok: bool,
    pub entropy_ok: bool,
    pub max_prob_ok: bool,
}

impl CriterionCheck {
    pub(crate) fn all(&self) -> bool {
        self.gap_ok && self.accuracy_ok && self.p_correct_ok && self.entropy_ok && self.max_prob_ok
    }
}

/// Where a gap `p_X(w) − p_clean(w)` lies against a criterion's p(wrong) threshold: the gap
/// check's verdict, with the side it fails on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum GapVerdict {
    /// No gap to judge (a score missing, or not a finite number).
    #[default]
    Unknown,
    /// `|gap| <= wrong_gap`: the gap check passes.
    Within,
    /// More mass on the advocated wrong option than in the clean context, beyond the threshold.
    MoreWrong,
    /// Less mass on it than in the clean context, beyond the threshold.
    LessWrong,
}

impl Criterion {
    /// The verdict of the gap check on `gap` (the same `<=` as [`Criterion::check`]).
    pub(crate) fn gap_verdict(&self, gap: Option<f64>) -> GapVerdict {
        match gap {
            Some(g) if g.is_finite() && g.abs() <= self.wrong_gap => GapVerdict::Within,
            Some(g) if g.is_finite() && g > 0.0 => GapVerdict::MoreWrong,
            Some(g) if g.is_finite() => GapVerdict::LessWrong,
            _ => GapVerdict::Unknown,
        }
    }
}

/// Tolerance family of docs/protocol.md §6.1 (Table 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Strict,
    Main,
    Loose,
}

impl Family {
    pub(crate) const ALL: [Family; 3] = [Family::Strict, Family::Main, Family::Loose];
    pub(crate) fn criterion(self) -> Criterion {
        match self {
            Family::Strict => Criterion::STRICT,
            Family::Main => Criterion::MAIN,
            Family::Loose => Criterion::LOOSE,
        }
    }
    /// `strict` / `main` / `loose` (as in `clean_context_like_<family>`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Family::Strict => "strict",
            Family::Main => "main",
            Family::Loose => "loose",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Recovery operations
// ---------------------------------------------------------------------------------------------

pub(crate) use crate::dialogue::conditions::{main_op, main_ops};
use crate::dialogue::conditions::RecoveryOp;
use crate::dialogue::recipe::{OpFamily, OrderingFamily};

/// Condition key of R0.
pub(crate) use crate::dialogue::conditions::ids::ORDINARY_RESET as ORDINARY_RESET_KEY;
/// Minimal recovery operation when no operation passes.
pub(crate) const NOT_RESTORED: &str = "not_restored";


/// Minimal recovery operation: the first key (in the given scan order, which callers build in
/// [`MAIN_OPS`] order) whose flag is `true`; `None` means [`NOT_RESTORED`].
pub(crate) fn minimal_recovery_operation<'a>(scan: &[(&'a str, bool)]) -> Option<&'a str> {
    scan.iter().find(|(_, ok)| *ok).map(|(k, _)| *k)
}

/// `minimal_recovery_level` for an MRO result (`R3` for both R3a/R3b; `not_restored` for None or
/// a key that is not a main operation).
pub(crate) fn minimal_recovery_level(mro: Option<&str>) -> &'static str {
    mro.and_then(main_op)
        .map(|o| o.level)
        .unwrap_or(NOT_RESTORED)
}

// ---------------------------------------------------------------------------------------------
// Repair classification
// ---------------------------------------------------------------------------------------------

/// `repair_classification` labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum RepairClass {
    RestoredCleanContextLike,
    OrdinaryResetBaseline,
    GenuineRepairLike,
    FlatteningOrSuppression,
    WeakWrongSuppression,
    WorseThanReset,
    NoMaterialChange,
}

impl RepairClass {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RepairClass::RestoredCleanContextLike => "restored_clean_context_like",
            RepairClass::OrdinaryResetBaseline => "ordinary_reset_baseline",
            RepairClass::GenuineRepairLike => "genuine_repair_like",
            RepairClass::FlatteningOrSuppression => "flattening_or_suppression",
            RepairClass::WeakWrongSuppression => "weak_wrong_suppression",
            RepairClass::WorseThanReset => "worse_than_reset",
            RepairClass::NoMaterialChange => "no_material_change",
        }
    }
}

impl std::fmt::Display for RepairClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `paper_bootstrap_cis.py::classify_recovery` on pair means (docs/protocol.md §6.3). `condition` is the condition
/// key of X; `r0` is the pair's ordinary-reset aggregate. NaN inputs make every threshold test
/// false and fall through to `no_material_change`.
pub(crate) fn classify_repair(condition: &str, clean: &Agg, r0: &Agg, x: &Agg) -> RepairClass {
    if Criterion::MAIN.passes(clean, x) {
        return RepairClass::RestoredCleanContextLike;
    }
    if condition == ORDINARY_RESET_KEY {
        return RepairClass::OrdinaryResetBaseline;
    }
    let wrong_drop = r0.p_wrong - x.p_wrong;
    let correct_gain = x.p_correct - r0.p_correct;
    let acc_gain = x.accuracy - r0.accuracy;
    let entropy_gain = x.entropy - r0.entropy;
    let max_drop = r0.max_prob - x.max_prob;
    if wrong_drop >= 0.05
        && correct_gain >= 0.03
        && acc_gain >= -0.02
        && entropy_gain <= 0.25
        && max_drop <= 0.15
    {
        RepairClass::GenuineRepairLike
    } else if wrong_drop >= 0.05 {
        RepairClass::FlatteningOrSuppression
    } else if wrong_drop >= 0.02 {
        RepairClass::WeakWrongSuppression
    } else if wrong_drop <= -0.02 {
        RepairClass::WorseThanReset
    } else {
        RepairClass::NoMaterialChange
    }
}

// ---------------------------------------------------------------------------------------------
// Recovered counts and the threshold sweep
// ---------------------------------------------------------------------------------------------

/// Aggregates of one condition of one pair: the pair's clean (probe) aggregate and the
/// condition's aggregate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CondAgg {
    pub condition: String,
    pub clean: Agg,
    pub x: Agg,
}

/// λ values of `configs/threshold_sweep.yaml`.
pub(crate) const SWEEP_LAMBDAS: [f64; 8] = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0];

fn find<'a>(pair: &'a [CondAgg], key: &str) -> Option<&'a CondAgg> {
    pair.iter().find(|c| c.condition == key)
}

/// Whether each main operation passes `criterion` in this pair, in [`MAIN_OPS`] order. A
/// condition missing from the pair counts as not passing.
pub(crate) fn pass_flags(pair: &[CondAgg], criterion: &Criterion) -> Vec<(&'static str, bool)> {
    main_ops()
        .iter()
        .map(|o| (o.key, find(pair, o.key).is_some_and(|c| criterion.passes(&c.clean, &c.x))))
        .collect()
}

/// Number of pairs in which each main operation passes (Table 4 with [`Criterion::MAIN`]).
pub(crate) fn recovered_counts(
    pairs: &[Vec<CondAgg>],
    criterion: &Criterion,
) -> Vec<(&'static str, usize)> {
    let mut out: Vec<(&'static str, usize)> = main_ops().iter().map(|o| (o.key, 0)).collect();
    for pair in pairs {
        for (i, (_, ok)) in pass_flags(pair, criterion).iter().enumerate() {
            if *ok {
                out[i].1 += 1;
            }
        }
    }
    out
}

/// One row of the threshold sweep.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SweepRow {
    pub lambda: f64,
    pub criterion: Criterion,
    pub n_pairs: usize,
    /// `<condition>_recovered`, [`MAIN_OPS`] order (keys are condition keys).
    pub recovered: Vec<(&'static str, usize)>,
    /// `mro_<condition>` counts, [`MAIN_OPS`] order.
    pub mro: Vec<(&'static str, usize)>,
    pub mro_not_restored: usize,
    /// `"R0 ordinary reset=1; R3 fresh deletion=7"`: non-zero MRO counts in scan order, then
    /// `not_restored=<k>` when k > 0; empty when there are no pairs.
    pub mro_distribution: String,
    /// The best count of the `instruction-level` operations (R1, R2).
    pub instruction_level_max: usize,
    /// The best count of the `state-changing` operations (R3a, R3b, R5).
    pub state_changing_max: usize,
    /// The best count of the `neutral-or-reconstruction` operations (R4, R5).
    pub neutral_or_reconstruction_max: usize,
    /// `state_changing_max >= neutral_or_reconstruction_max >= instruction_level_max`.
    pub qualitative_ordering_stable: bool,
    /// [inferred] the best count of the `instruction` family (R0, R1, R2; released CSV column
    /// `instruction_best_recovered`).
    pub instruction_best_recovered: usize,
    /// [inferred] the best count of the `state` family (R3a, R3b, R4, R5; released CSV column
    /// `dialogue_state_best_recovered`).
    pub dialogue_state_best_recovered: usize,
}

/// Sweep row for one explicit criterion.
pub(crate) fn sweep_row(pairs: &[Vec<CondAgg>], criterion: &Criterion, lambda: f64) -> SweepRow {
    let recovered = recovered_counts(pairs, criterion);
    let mut mro: Vec<(&'static str, usize)> = main_ops().iter().map(|o| (o.key, 0)).collect();
    let mut not_restored = 0;
    for pair in pairs {
        let flags = pass_flags(pair, criterion);
        match minimal_recovery_operation(&flags) {
            Some(k) => {
                let i = main_ops().iter().position(|o| o.key == k).expect("main op");
                mro[i].1 += 1;
            }
            None => not_restored += 1,
        }
    }
    let mut parts: Vec<String> = mro
        .iter()
        .zip(main_ops().iter())
        .filter(|((_, c), _)| *c > 0)
        .map(|((_, c), op)| format!("{}={}", op.mro_label, c))
        .collect();
    if not_restored > 0 {
        parts.push(format!("{NOT_RESTORED}={not_restored}"));
    }
    // The best count among the main operations of a family (the registry's `family` and
    // `ordering`); 0 when none is.
    let best = |member: &dyn Fn(&RecoveryOp) -> bool| {
        main_ops().iter().zip(&recovered).filter(|(o, _)| member(o)).map(|(_, (_, n))| *n).max().unwrap_or(0)
    };
    let ordering = |f: OrderingFamily| best(&|o: &RecoveryOp| o.ordering.contains(&f));
    let instruction_level_max = ordering(OrderingFamily::InstructionLevel);
    let state_changing_max = ordering(OrderingFamily::StateChanging);
    let neutral_or_reconstruction_max = ordering(OrderingFamily::NeutralOrReconstruction);
    let instruction_best_recovered = best(&|o: &RecoveryOp| o.family == Some(OpFamily::Instruction));
    let dialogue_state_best_recovered = best(&|o: &RecoveryOp| o.family == Some(OpFamily::State));
    SweepRow {
        lambda,
        criterion: *criterion,
        n_pairs: pairs.len(),
        recovered,
        mro,
        mro_not_restored: not_restored,
        mro_distribution: parts.join("; "),
        instruction_level_max,
        state_changing_max,
        neutral_or_reconstruction_max,
        qualitative_ordering_stable: state_changing_max >= neutral_or_reconstruction_max
            && neutral_or_reconstruction_max >= instruction_level_max,
        instruction_best_recovered,
        dialogue_state_best_recovered,
    }
}

/// Threshold sweep: one row per λ with `base.scaled(λ)` (base = [`Criterion::MAIN`] in the
/// artifact, λ = [`SWEEP_LAMBDAS`]).
pub(crate) fn threshold_sweep(pairs: &[Vec<CondAgg>], base: &Criterion, lambdas: &[f64]) -> Vec<SweepRow> {
    lambdas
        .iter()
        .map(|&l| sweep_row(pairs, &base.scaled(l), l))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gap verdict is the gap check of `check`, with its side; on the threshold it passes.
    #[test]
    fn gap_verdicts() {
        let m = Criterion::MAIN;
        assert_eq!(m.gap_verdict(Some(0.05)), GapVerdict::Within);
        assert_eq!(m.gap_verdict(Some(-0.05)), GapVerdict::Within);
        assert_eq!(m.gap_verdict(Some(0.55 - 0.5)), GapVerdict::MoreWrong, "one ulp above fails, as in check");
        assert_eq!(m.gap_verdict(Some(-0.2)), GapVerdict::LessWrong);
        assert_eq!(m.gap_verdict(Some(f64::NAN)), GapVerdict::Unknown);
        assert_eq!(m.gap_verdict(None), GapVerdict::Unknown);
        assert_eq!(Criterion::LOOSE.gap_verdict(Some(0.07)), GapVerdict::Within);
        for g in [0.0, 0.03, 0.05, 0.0500001, -0.07, 0.3] {
            let clean = agg(0.2, 0.7, 1.0, 0.5, 0.7);
            let x = agg(0.2 + g, 0.7, 1.0, 0.5, 0.7);
            let ch = m.check(&clean, &x);
            assert_eq!(m.gap_verdict(Some(ch.gap)) == GapVerdict::Within, ch.gap_ok, "{g}");
        }
    }

    fn agg(p_wrong: f64, p_correct: f64, accuracy: f64, entropy: f64, max_prob: f64) -> Agg {
        Agg {
            n: 500,
            p_wrong,
            p_correct,
            accuracy,
            wrong_follow: 0.0,
            entropy,
            max_prob,
        }
    }
    const CLEAN: Agg = Agg {
        n: 500,
        p_wrong: 0.2,
        p_correct: 0.6,
        accuracy: 0.5,
        wrong_follow: 0.1,
        entropy: 0.4,
        max_prob: 0.8,
    };

    #[test]
    fn constants_and_scaling() {
        assert_eq!(Criterion::MAIN.scaled(1.0), Criterion::MAIN);
        assert_eq!(Criterion::MAIN.scaled(0.5).wrong_gap, 0.025);
        assert_eq!(Criterion::MAIN.scaled(3.0).wrong_gap, 0.05 * 3.0);
        assert_eq!(Family::Strict.criterion(), Criterion::STRICT);
        assert_eq!(Family::Loose.name(), "loose");
        assert_eq!(SWEEP_LAMBDAS.len(), 8);
    }

    #[test]
    fn identical_passes_all_families() {
        for f in Family::ALL {
            assert!(f.criterion().passes(&CLEAN, &CLEAN));
        }
    }

    #[test]
    fn gap_boundary_inclusive() {
        let c = agg(0.0, 0.6, 0.5, 0.4, 0.8);
        // 0.05 − 0.0 == 0.05 exactly: passes
        assert!(
            Criterion::MAIN
                .check(&c, &agg(0.05, 0.6, 0.5, 0.4, 0.8))
                .gap_ok
        );
        // negative gap of exactly the threshold also passes (absolute value)
        let c2 = agg(0.05, 0.6, 0.5, 0.4, 0.8);
        assert!(
            Criterion::MAIN
                .check(&c2, &agg(0.0, 0.6, 0.5, 0.4, 0.8))
                .gap_ok
        );
        // 0.25 − 0.2 = 0.04999999999999999 passes
        assert!(
            Criterion::MAIN
                .check(&CLEAN, &agg(0.25, 0.6, 0.5, 0.4, 0.8))
                .gap_ok
        );
        // a hair above fails
        let k = Criterion::MAIN.check(&c, &agg(0.05 + 1e-12, 0.6, 0.5, 0.4, 0.8));
        assert!(!k.gap_ok);
        // strict: 0.025 exactly passes, loose: 0.075 exactly passes
        assert!(Criterion::STRICT.passes(&c, &agg(0.025, 0.6, 0.5, 0.4, 0.8)));
        assert!(Criterion::LOOSE.passes(&c, &agg(0.075, 0.6, 0.5, 0.4, 0.8)));
        assert!(!Criterion::STRICT.passes(&c, &agg(0.0250001, 0.6, 0.5, 0.4, 0.8)));
    }

    #[test]
    fn other_checks_boundary_inclusive() {
        let m = Criterion::MAIN;
        // accuracy: 0.47 >= 0.5 − 0.03 (== 0.47 in f64)
        assert!(m.check(&CLEAN, &agg(0.2, 0.6, 0.47, 0.4, 0.8)).accuracy_ok);
        assert!(
            !m.check(&CLEAN, &agg(0.2, 0.6, 0.47 - 1e-12, 0.4, 0.8))
                .accuracy_ok
        );
        // p_correct: exactly clean − slack
        let pc = CLEAN.p_correct - m.p_correct_slack;
        assert!(m.check(&CLEAN, &agg(0.2, pc, 0.5, 0.4, 0.8)).p_correct_ok);
        assert!(
            !m.check(&CLEAN, &agg(0.2, pc - 1e-12, 0.5, 0.4, 0.8))
                .p_correct_ok
        );
        // entropy: exactly clean + slack
        let h = CLEAN.entropy + m.entropy_slack;
        assert!(m.check(&CLEAN, &agg(0.2, 0.6, 0.5, h, 0.8)).entropy_ok);
        let k = m.check(&CLEAN, &agg(0.2, 0.6, 0.5, h + 1e-12, 0.8));
        assert!(!k.entropy_ok);
        // max prob: exactly clean − slack
        let mp = CLEAN.max_prob - m.max_prob_slack;
        assert!(m.check(&CLEAN, &agg(0.2, 0.6, 0.5, 0.4, mp)).max_prob_ok);
        assert!(
            !m.check(&CLEAN, &agg(0.2, 0.6, 0.5, 0.4, mp - 1e-12))
                .max_prob_ok
        );
        // improvements always pass
        assert!(m.passes(&CLEAN, &agg(0.2, 0.9, 0.9, 0.1, 0.99)));
        // NaN fails
        assert!(!m.passes(&CLEAN, &agg(f64::NAN, 0.6, 0.5, 0.4, 0.8)));
    }

    #[test]
    fn mistral_like_entropy_failure() {
        // restoration near 1 but entropy 0.580 > 0.403 + 0.15 -> not clean-context-like
        let clean = agg(0.10, 0.5, 0.5, 0.403, 0.7);
        let x = agg(0.101, 0.5, 0.5, 0.580, 0.7);
        let k = Criterion::MAIN.check(&clean, &x);
        assert!(k.gap_ok && !k.entropy_ok && !k.all());
    }

    #[test]
    fn repair_classifier_branches() {
        let clean = agg(0.1, 0.6, 0.6, 0.4, 0.8);
        let r0 = agg(0.5, 0.3, 0.3, 0.5, 0.8);
        let c = |key: &str, x: Agg| classify_repair(key, &clean, &r0, &x);
        // clean-context-like wins, even for R0
        assert_eq!(
            c("ordinary_strong_reset", clean),
            RepairClass::RestoredCleanContextLike
        );
        assert_eq!(
            c("system_level_reset", clean),
            RepairClass::RestoredCleanContextLike
        );
        assert_eq!(
            c("ordinary_strong_reset", r0),
            RepairClass::OrdinaryResetBaseline
        );
        // genuine: drop 0.1, correct gain 0.05, acc gain 0, entropy & maxp unchanged
        assert_eq!(
            c("x", agg(0.4, 0.35, 0.3, 0.5, 0.8)),
            RepairClass::GenuineRepairLike
        );
        // 0.5 − 0.45 = 0.04999999999999999 < 0.05: only weak suppression (plain f64 comparison)
        assert_eq!(
            c("x", agg(0.45, 0.35, 0.3, 0.5, 0.8)),
            RepairClass::WeakWrongSuppression
        );
        // flattening: big drop but entropy jumps > 0.25
        assert_eq!(
            c("x", agg(0.3, 0.4, 0.35, 0.8, 0.8)),
            RepairClass::FlatteningOrSuppression
        );
        // flattening: big drop but no correct gain
        assert_eq!(
            c("x", agg(0.3, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::FlatteningOrSuppression
        );
        // flattening: max prob drop > 0.15
        assert_eq!(
            c("x", agg(0.3, 0.4, 0.35, 0.5, 0.6)),
            RepairClass::FlatteningOrSuppression
        );
        // weak: drop in [0.02, 0.05)
        assert_eq!(
            c("x", agg(0.47, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::WeakWrongSuppression
        );
        // worse: drop <= -0.02
        assert_eq!(
            c("x", agg(0.53, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::WorseThanReset
        );
        // no material change
        assert_eq!(
            c("x", agg(0.49, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::NoMaterialChange
        );
        assert_eq!(
            c("x", agg(0.51, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::NoMaterialChange
        );
        assert_eq!(
            c("x", agg(f64::NAN, 0.3, 0.3, 0.5, 0.8)),
            RepairClass::NoMaterialChange
        );
        assert_eq!(
            RepairClass::GenuineRepairLike.as_str(),
            "genuine_repair_like"
        );
        assert_eq!(
            RepairClass::FlatteningOrSuppression.to_string(),
            "flattening_or_suppression"
        );
    }

    #[test]
    fn repair_classifier_thresholds_inclusive() {
        // values chosen so the differences are exactly the thresholds in f64:
        // entropy_gain = 0.75 − 0.5 == 0.25, max_drop = 0.25 − 0.1 == 0.15
        let clean = agg(0.0, 1.0, 1.0, 0.0, 1.0);
        let r0 = agg(0.5, 0.25, 0.25, 0.5, 0.25);
        let g = agg(0.375, 0.375, 0.25, 0.75, 0.1);
        assert_eq!(r0.max_prob - g.max_prob, 0.15);
        assert_eq!(
            classify_repair("x", &clean, &r0, &g),
            RepairClass::GenuineRepairLike
        );
        let g2 = agg(0.375, 0.375, 0.25, 0.75 + 1e-9, 0.1);
        assert_eq!(
            classify_repair("x", &clean, &r0, &g2),
            RepairClass::FlatteningOrSuppression
        );
        let g3 = agg(0.375, 0.375, 0.25, 0.75, 0.1 - 1e-9);
        assert_eq!(
            classify_repair("x", &clean, &r0, &g3),
            RepairClass::FlatteningOrSuppression
        );
        // acc_gain exactly −0.02 is allowed (0.27 − 0.25 is not exact, so build it from r0)
        let r0b = agg(0.5, 0.25, 0.27, 0.5, 0.25);
        let g4 = agg(0.375, 0.375, 0.25, 0.75, 0.1);
        let acc_gain = g4.accuracy - r0b.accuracy;
        let want = if acc_gain >= -0.02 {
            RepairClass::GenuineRepairLike
        } else {
            RepairClass::FlatteningOrSuppression
        };
        assert_eq!(classify_repair("x", &clean, &r0b, &g4), want);
    }

    #[test]
    fn mro_scan() {
        let scan = [
            ("ordinary_strong_reset", false),
            ("explicit_user_retraction", false),
            ("fresh_context_deletion", true),
            ("context_truncation", true),
        ];
        assert_eq!(
            minimal_recovery_operation(&scan),
            Some("fresh_context_deletion")
        );
        assert_eq!(
            minimal_recovery_level(minimal_recovery_operation(&scan)),
            "R3"
        );
        let none = [
            ("ordinary_strong_reset", false),
            ("explicit_user_retraction", false),
        ];
        assert_eq!(minimal_recovery_operation(&none), None);
        assert_eq!(minimal_recovery_level(None), NOT_RESTORED);
        assert_eq!(
            minimal_recovery_operation(&[
                ("ordinary_strong_reset", true),
                ("fresh_context_deletion", true)
            ]),
            Some("ordinary_strong_reset")
        );
        assert_eq!(main_op("context_truncation").unwrap().short, "R3b");
        let paper: Vec<&str> = main_ops().iter().filter(|o| PAPER_OPS.contains(&o.key)).map(|o| o.short).collect();
        assert_eq!(paper, ["R0", "R1", "R2", "R3a", "R3b", "R4", "R5", "R6"]);
    }

    use crate::dialogue::conditions::ids;

    /// The paper's eight main operations, in its scan order (a main operation added to the
    /// registry gets a failing gap in [`pair_with`] and is left out of [`paper_counts`]).
    const PAPER_OPS: [&str; 8] = [
        ids::ORDINARY_RESET,
        ids::USER_RETRACTION,
        ids::SYSTEM_RESET,
        ids::FRESH_CONTEXT_DELETION,
        ids::CONTEXT_TRUNCATION,
        ids::NEUTRAL_SUMMARY,
        ids::FACTUAL_RECONSTRUCTION,
        ids::SELF_VERIFICATION,
    ];

    /// The counts of the paper's operations, in [`PAPER_OPS`] order.
    fn paper_counts(counts: &[(&str, usize)]) -> Vec<usize> {
        PAPER_OPS.iter().map(|k| counts.iter().find(|(c, _)| c == k).expect("a main operation").1).collect()
    }

    /// A pair where each of the paper's operations has the gap of its position in `gaps` (any
    /// other main operation: 0.30, failing).
    fn pair_with(gaps: [f64; 8]) -> Vec<CondAgg> {
        main_ops()
            .iter()
            .map(|op| (op, PAPER_OPS.iter().position(|k| *k == op.key).map_or(0.30, |i| gaps[i])))
            .map(|(op, g)| CondAgg {
                condition: op.key.to_string(),
                clean: CLEAN,
                x: Agg {
                    p_wrong: CLEAN.p_wrong + g,
                    ..CLEAN
                },
            })
            .collect()
    }

    #[test]
    fn recovered_counts_and_sweep() {
        //            R0    R1    R2    R3a  R3b  R4    R5    R6
        let p1 = pair_with([0.30, 0.04, 0.20, 0.0, 0.0, 0.02, 0.0, 0.30]);
        let p2 = pair_with([0.30, 0.30, 0.30, 0.0, 0.01, 0.06, 0.03, 0.30]);
        let p3 = pair_with([0.01, 0.30, 0.30, 0.0, 0.0, 0.30, 0.30, 0.30]);
        let mut p4 = pair_with([0.50; 8]);
        p4.retain(|c| c.condition != "fresh_context_deletion"); // missing condition never passes
        let pairs = vec![p1, p2, p3, p4];

        let counts = recovered_counts(&pairs, &Criterion::MAIN);
        assert_eq!(paper_counts(&counts), vec![1, 1, 0, 3, 3, 1, 2, 0]);

        let rows = threshold_sweep(&pairs, &Criterion::MAIN, &SWEEP_LAMBDAS);
        assert_eq!(rows.len(), 8);
        let main = &rows[3];
        assert_eq!(main.lambda, 1.0);
        assert_eq!(main.criterion, Criterion::MAIN);
        assert_eq!(main.recovered, counts);
        // p1 -> R1, p2 -> R3a, p3 -> R0, p4 -> not restored
        assert_eq!(paper_counts(&main.mro), vec![1, 1, 0, 1, 0, 0, 0, 0]);
        assert_eq!(main.mro_not_restored, 1);
        assert_eq!(
            main.mro_distribution,
            "R0 ordinary reset=1; R1 user retraction=1; R3 fresh deletion=1; not_restored=1"
        );
        assert_eq!(main.instruction_level_max, 1);
        assert_eq!(main.state_changing_max, 3);
        assert_eq!(main.neutral_or_reconstruction_max, 2);
        assert!(main.qualitative_ordering_stable);
        assert_eq!(main.instruction_best_recovered, 1);
        assert_eq!(main.dialogue_state_best_recovered, 3);
        assert_eq!(main.n_pairs, 4);

        // λ = 0.25: gap threshold 0.0125 -> only zero gaps and the 0.01 ones pass
        let low = &rows[0];
        assert_eq!(paper_counts(&low.recovered), vec![1, 0, 0, 3, 3, 0, 1, 0]);
        // λ = 3.0: gap threshold 0.15 -> 0.30 / 0.50 fail, others pass
        let hi = &rows[7];
        assert_eq!(paper_counts(&hi.recovered), vec![1, 1, 0, 3, 3, 2, 2, 0]);
        assert_eq!(hi.neutral_or_reconstruction_max, 2);
        assert!(hi.qualitative_ordering_stable);
    }

    #[test]
    fn ordering_unstable_when_instruction_beats_state() {
        let p = pair_with([0.3, 0.0, 0.0, 0.3, 0.3, 0.3, 0.3, 0.3]);
        let row = sweep_row(&[p], &Criterion::MAIN, 1.0);
        assert_eq!(row.instruction_level_max, 1);
        assert_eq!(row.state_changing_max, 0);
        assert!(!row.qualitative_ordering_stable);
        assert_eq!(row.mro_distribution, "R1 user retraction=1");
        let empty = sweep_row(&[], &Criterion::MAIN, 1.0);
        assert_eq!(empty.mro_distribution, "");
        assert!(empty.qualitative_ordering_stable);
    }
}
