//! Recovery hierarchy: Table 4 (recovered-pair counts), Table 16 (strict vs MRO rule), Table 17
//! (minimal recovery operation per pair), the per-operation summary (§8.2
//! `recovery_hierarchy_summary.csv`), the per-operation CIs (`recovery_operations_with_ci.csv`)
//! and the threshold sweep (§5.3).

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::format::*;
use super::index::{condition_label, PairData, RunIndex, CLEAN_REF, R0_REF};
use super::{Output, TableOptions};
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_RECOVERY_OPS};
use crate::metrics::criteria::{
    classify_repair, main_op, minimal_recovery_level, minimal_recovery_operation, pass_flags,
    threshold_sweep, CondAgg, Criterion, Family, RepairClass, SweepRow, MAIN_OPS, NOT_RESTORED,
    ORDINARY_RESET_KEY, SWEEP_LAMBDAS,
};
use crate::metrics::{
    aggregate, clean_context_damage_accuracy, clean_context_damage_p_correct,
    contamination_advocated, contamination_reduction, gap_reduction, intervention_hysteresis_gap,
    item_gaps, mean, restoration_ratio, unconditional_lock_in, Agg, Obs, Restoration,
};

/// The two appendix operations of the hierarchy summary (after the 8 main ones).
pub const APPENDIX_OPS: [&str; 2] = [
    "evidence_for_each_option_then_answer",
    "source_skepticism_reset",
];

/// Operation labels of the `*_with_ci.csv` files (§8.1).
pub fn ci_label(key: &str) -> &'static str {
    match key {
        "ordinary_strong_reset" => "R0 Ordinary reset",
        "explicit_user_retraction" => "R1 User retraction",
        "system_level_reset" => "R2 System reset",
        "fresh_context_deletion" => "R3 Fresh deletion",
        "context_truncation" => "R3 Context truncation",
        "neutral_summary_replacement" => "R4 Neutral summary",
        "factual_state_reconstruction" => "R5 Factual reconstruction",
        "self_verification_final_label" => "R6 Self-verification",
        _ => "",
    }
}

const MAIN_FAMILY: &str =
    "main (mro_success / clean_context_like main); strict and loose in labelled columns";

/// One operation of one pair.
pub struct OpStats {
    pub key: &'static str,
    /// The condition whose rows were used (R0 may come from the ramp's `strong_reset`).
    pub source: &'static str,
    pub n: usize,
    pub clean: Agg,
    pub r0: Agg,
    pub x: Agg,
    pub lock_in: f64,
    pub contam_r0: f64,
    pub contam_x: f64,
    pub restoration: Restoration,
    pub class: RepairClass,
    /// strict, main, loose.
    pub pass: [bool; 3],
    clean_o: Vec<Obs>,
    r0_o: Vec<Obs>,
    x_o: Vec<Obs>,
}

pub struct HierPair<'p, 'a> {
    pub p: &'p PairData<'a>,
    pub ops: Vec<OpStats>,
}

impl HierPair<'_, '_> {
    fn op(&self, key: &str) -> Option<&OpStats> {
        self.ops.iter().find(|o| o.key == key)
    }
    fn cond_aggs(&self) -> Vec<CondAgg> {
        self.ops
            .iter()
            .filter(|o| main_op(o.key).is_some())
            .map(|o| CondAgg {
                condition: o.key.to_string(),
                clean: o.clean,
                x: o.x,
            })
            .collect()
    }
    /// Minimal recovery operation under a criterion (`None` = not restored).
    fn mro(&self, c: &Criterion) -> Option<&'static str> {
        let flags = pass_flags(&self.cond_aggs(), c);
        minimal_recovery_operation(&flags)
    }
}

/// CI of one metric of one operation.
type OpCis =
    std::collections::BTreeMap<(String, String, &'static str, &'static str), (f64, f64, f64)>;

pub struct Hierarchy<'p, 'a> {
    pub pairs: Vec<HierPair<'p, 'a>>,
    long: Vec<LongRow>,
    cis: OpCis,
    samples: usize,
    seed: u64,
}

fn all_ops() -> Vec<&'static str> {
    MAIN_OPS.iter().map(|o| o.key).chain(APPENDIX_OPS).collect()
}

impl<'p, 'a> Hierarchy<'p, 'a> {
    pub fn build(idx: &'p RunIndex<'a>, opts: &TableOptions) -> Hierarchy<'p, 'a> {
        let mut pairs = Vec::new();
        for p in &idx.pairs {
            let Some(clean) = p.resolve(&CLEAN_REF) else {
                continue;
            };
            if !all_ops().iter().any(|k| p.has(k)) {
                continue;
            }
            let Some(r0) = p.resolve(&R0_REF) else {
                continue;
            };
            let mut ops = Vec::new();
            for key in all_ops() {
                let source = if key == ORDINARY_RESET_KEY {
                    r0
                } else if p.has(key) {
                    key
                } else {
                    continue;
                };
                let a = p.align(&[clean, r0, source]);
                if a.n() == 0 {
                    continue;
                }
                let (c, r, x) = (a.obs(0), a.obs(1), a.obs(2));
                let (ca, ra, xa) = (aggregate(&c), aggregate(&r), aggregate(&x));
                let lock_in = if p.has("strong_pressure") {
                    let b = p.align(&["strong_pressure", source]);
                    if b.n() == 0 {
                        f64::NAN
                    } else {
                        unconditional_lock_in(&b.obs(0), &b.obs(1))
                    }
                } else {
                    f64::NAN
                };
                ops.push(OpStats {
                    key,
                    source,
                    n: a.n(),
                    clean: ca,
                    r0: ra,
                    x: xa,
                    lock_in,
                    contam_r0: contamination_advocated(&c, &r).0,
                    contam_x: contamination_advocated(&c, &x).0,
                    restoration: restoration_ratio(ca.p_wrong, ra.p_wrong, xa.p_wrong),
                    class: classify_repair(key, &ca, &ra, &xa),
                    pass: Family::ALL.map(|f| f.criterion().passes(&ca, &xa)),
                    clean_o: c,
                    r0_o: r,
                    x_o: x,
                });
            }
            if !ops.is_empty() {
                pairs.push(HierPair { p, ops });
            }
        }
        let samples = opts.bootstrap_samples;
        let seed = opts.seed + SEED_OFFSET_RECOVERY_OPS;
        let mut h = Hierarchy {
            pairs,
            long: Vec::new(),
            cis: OpCis::new(),
            samples,
            seed,
        };
        h.bootstrap();
        h
    }

    fn n_pairs(&self) -> usize {
        self.pairs.len()
    }

    /// `recovery_operations_with_ci`: one index matrix per pair × main operation, drawn from one
    /// `default_rng(seed + 4)` stream in pair order, then operation order.
    fn bootstrap(&mut self) {
        let mut stream = IndexStream::new(self.seed);
        let mut long = Vec::new();
        for hp in &self.pairs {
            for op in MAIN_OPS.iter() {
                let Some(o) = hp.op(op.key) else { continue };
                let (xpw, xpc, xacc) = (pw(&o.x_o), pc(&o.x_o), as_f64(&correct_flags(&o.x_o)));
                let gaps = item_gaps(&o.x_o, &o.clean_o);
                let (xh, xm) = (entropies(&o.x_o), max_probs(&o.x_o));
                let (cpw, rpw) = (pw(&o.clean_o), pw(&o.r0_o));
                let cis = paired_cis(
                    &mut stream,
                    o.n,
                    self.samples,
                    &[
                        Stat::Mean(&xpw),
                        Stat::Mean(&xpc),
                        Stat::Mean(&xacc),
                        Stat::Mean(&gaps),
                        Stat::Mean(&xh),
                        Stat::Mean(&xm),
                        Stat::Restoration {
                            clean: &cpw,
                            r0: &rpw,
                            x: &xpw,
                        },
                    ],
                );
                let rest = if o.restoration.informative {
                    o.restoration.ratio
                } else {
                    f64::NAN
                };
                let est = [
                    mean(&xpw),
                    mean(&xpc),
                    mean(&xacc),
                    mean(&gaps),
                    mean(&xh),
                    mean(&xm),
                    rest,
                ];
                let names = [
                    "p_wrong",
                    "p_correct",
                    "accuracy",
                    "hysteresis_gap",
                    "entropy",
                    "max_probability",
                    "restoration_ratio",
                ];
                let label = ci_label(op.key);
                for k in 0..7 {
                    let mut row = LongRow::new(
                        "recovery_operations",
                        hp.p,
                        label,
                        names[k],
                        est[k],
                        cis[k],
                        o.n,
                    );
                    if k == 6 && !o.restoration.informative {
                        row = row
                            .notes(format!(
                                "not informative: |R0 gap| = {:.6} < 0.05",
                                o.restoration.denominator.abs()
                            ))
                            .deterministic();
                    }
                    long.push(row);
                    self.cis.insert(
                        (
                            hp.p.model_key.clone(),
                            hp.p.dataset.clone(),
                            op.key,
                            names[k],
                        ),
                        (est[k], cis[k].0, cis[k].1),
                    );
                }
                for (f, ok) in Family::ALL.iter().zip(o.pass) {
                    long.push(
                        LongRow::new(
                            "recovery_operations",
                            hp.p,
                            label,
                            &format!("clean_context_like_{}", f.name()),
                            if ok { 1.0 } else { 0.0 },
                            (f64::NAN, f64::NAN),
                            o.n,
                        )
                        .deterministic(),
                    );
                }
            }
        }
        self.long = long;
    }

    // -----------------------------------------------------------------------------------------
    // Table 4
    // -----------------------------------------------------------------------------------------

    fn recovered(&self, key: &str, fam: usize) -> usize {
        self.pairs
            .iter()
            .filter(|hp| hp.op(key).is_some_and(|o| o.pass[fam]))
            .count()
    }
    fn with_condition(&self, key: &str) -> usize {
        self.pairs.iter().filter(|hp| hp.op(key).is_some()).count()
    }

    pub fn table04(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let mut t = Table::new(&[
            "condition",
            "condition_label",
            "n_pairs",
            "criterion_used",
            "computed_value",
            "expected_paper_value",
            "pass",
            "verification_label",
            "criterion_family",
            "strict_computed_value",
            "loose_computed_value",
            "n_pairs_with_condition",
        ]);
        let mut d = Table::new(&[
            "Operation",
            "Strict",
            "Main",
            "Loose",
            "Pairs with op",
            "Pairs",
        ]);
        for op in MAIN_OPS.iter() {
            let (s, m, l) = (
                self.recovered(op.key, 0),
                self.recovered(op.key, 1),
                self.recovered(op.key, 2),
            );
            t.push(vec![
                txt(op.key),
                txt(op.table4_label),
                int(self.n_pairs()),
                txt("HierarchyRecoveryCriterion clean-context-like aggregate criterion"),
                int(m),
                Cell::Na,
                Cell::Na,
                txt("computed_from_run"),
                txt("main"),
                int(s),
                int(l),
                int(self.with_condition(op.key)),
            ]);
            d.push(vec![
                txt(op.table4_label),
                int(s),
                int(m),
                int(l),
                int(self.with_condition(op.key)),
                int(self.n_pairs()),
            ]);
        }
        vec![Output::from_table("table04_recovery_counts", "Recovered pairs per operation (clean-restoration diagnostic)", MAIN_FAMILY, t)
            .with_display_table(d)
            .with_notes(vec![
                "computed_value = number of pairs where the operation passes the MAIN clean-context-like criterion (as the artifact's table4 CSV); strict_computed_value / loose_computed_value use the strict / loose families.".into(),
                "The paper's text says Table 4 uses the STRICT family while the artifact's CSV uses MAIN; both are reported (Table 22 lists the thresholds).".into(),
                "expected_paper_value and pass are blank: they compare against the frozen artifact, which a new run does not have. An operation missing from a pair counts as not passing.".into(),
            ])]
    }

    // -----------------------------------------------------------------------------------------
    // Table 16
    // -----------------------------------------------------------------------------------------

    pub fn table16(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let minimal: Vec<[Option<&'static str>; 3]> = self
            .pairs
            .iter()
            .map(|hp| Family::ALL.map(|f| hp.mro(&f.criterion())))
            .collect();
        let count_min =
            |key: Option<&str>, fam: usize| minimal.iter().filter(|m| m[fam] == key).count();
        let mut t = Table::new(&[
            "condition",
            "condition_label",
            "n_pairs",
            "strict_recovered",
            "mro_main_recovered",
            "loose_recovered",
            "strict_minimal_count",
            "mro_main_minimal_count",
            "loose_minimal_count",
        ]);
        let mut d = Table::new(&[
            "Operation",
            "Strict",
            "MRO rule (main)",
            "Loose",
            "Minimal: strict",
            "Minimal: main",
            "Minimal: loose",
        ]);
        for op in MAIN_OPS.iter() {
            let rec = [0, 1, 2].map(|f| self.recovered(op.key, f));
            let mins = [0, 1, 2].map(|f| count_min(Some(op.key), f));
            t.push(vec![
                txt(op.key),
                txt(op.table4_label),
                int(self.n_pairs()),
                int(rec[0]),
                int(rec[1]),
                int(rec[2]),
                int(mins[0]),
                int(mins[1]),
                int(mins[2]),
            ]);
            d.push(vec![
                txt(op.table4_label),
                int(rec[0]),
                int(rec[1]),
                int(rec[2]),
                int(mins[0]),
                int(mins[1]),
                int(mins[2]),
            ]);
        }
        let nr = [0, 1, 2].map(|f| count_min(None, f));
        t.push(vec![
            txt(NOT_RESTORED),
            txt("not restored"),
            int(self.n_pairs()),
            Cell::Na,
            Cell::Na,
            Cell::Na,
            int(nr[0]),
            int(nr[1]),
            int(nr[2]),
        ]);
        d.push(vec![
            txt("not restored"),
            Cell::Na,
            Cell::Na,
            Cell::Na,
            int(nr[0]),
            int(nr[1]),
            int(nr[2]),
        ]);
        vec![Output::from_table("table16_strict_vs_mro", "Recovery counts: strict family vs MRO rule", "strict vs main (the MRO rule: mro_success = main criterion); loose for reference", t)
            .with_display_table(d)
            .with_notes(vec![
                "*_recovered = pairs where the operation passes the family's clean-context-like criterion; *_minimal_count = pairs whose minimal recovery operation (first passing in the order R0, R1, R2, R3a, R3b, R4, R5, R6) is this operation.".into(),
                "The MRO rule of the released tables is the main criterion (not recovery_criteria.mro_success >= 0.95, protocol §5.2).".into(),
            ])]
    }

    // -----------------------------------------------------------------------------------------
    // Table 17
    // -----------------------------------------------------------------------------------------

    pub fn table17(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let mut t = Table::new(&[
            "model_key",
            "model_short_name",
            "dataset",
            "minimal_recovery_operation",
            "minimal_recovery_level",
            "evaluated_n",
            "restoration_ratio",
            "restoration_ratio_informative",
            "intervention_hysteresis_gap",
            "accuracy",
            "repair_classification",
            "strict_minimal_recovery_operation",
            "loose_minimal_recovery_operation",
        ]);
        let mut d = Table::new(&[
            "Model",
            "Dataset",
            "MRO (main)",
            "Level",
            "n",
            "Rest.",
            "Gap",
            "Acc. (%)",
            "Classification",
            "MRO (strict)",
            "MRO (loose)",
        ]);
        let mut long = Vec::new();
        for hp in &self.pairs {
            let [s, m, l] = Family::ALL.map(|f| hp.mro(&f.criterion()));
            let name = |k: Option<&str>| k.unwrap_or(NOT_RESTORED).to_string();
            let mut row = vec![
                txt(hp.p.model_key.clone()),
                txt(hp.p.model.clone()),
                txt(hp.p.dataset.clone()),
                txt(name(m)),
                txt(minimal_recovery_level(m)),
            ];
            let mut drow = pair_cells(hp.p);
            drow.extend([
                txt(m.map_or(NOT_RESTORED, |k| main_op(k).map_or(k, |o| o.short))),
                txt(minimal_recovery_level(m)),
            ]);
            match m.and_then(|k| hp.op(k)) {
                Some(o) => {
                    let rest = if o.restoration.informative {
                        o.restoration.ratio
                    } else {
                        f64::NAN
                    };
                    let gap = intervention_hysteresis_gap(&o.clean, &o.x);
                    row.extend([
                        int(o.n),
                        num(rest),
                        boolc(o.restoration.informative),
                        num(gap),
                        num(o.x.accuracy),
                        txt(o.class.as_str()),
                    ]);
                    drow.extend([
                        int(o.n),
                        num(rest),
                        num(gap),
                        pct(o.x.accuracy),
                        txt(o.class.as_str()),
                    ]);
                    for metric in ["accuracy", "restoration_ratio", "hysteresis_gap"] {
                        if let Some(&(e, lo, hi)) = self.cis.get(&(
                            hp.p.model_key.clone(),
                            hp.p.dataset.clone(),
                            o.key,
                            metric,
                        )) {
                            let mut r = LongRow::new(
                                "minimal_recovery_operation",
                                hp.p,
                                ci_label(o.key),
                                metric,
                                e,
                                (lo, hi),
                                o.n,
                            );
                            if metric == "restoration_ratio" && !o.restoration.informative {
                                r = r
                                    .notes("not informative: |R0 gap| < 0.05".into())
                                    .deterministic();
                            }
                            long.push(r);
                        }
                    }
                }
                None => {
                    let n = hp.ops.first().map_or(0, |o| o.n);
                    row.extend([int(n), Cell::Na, Cell::Na, Cell::Na, Cell::Na, Cell::Na]);
                    drow.extend([int(n), Cell::Na, Cell::Na, Cell::Na, Cell::Na]);
                }
            }
            row.extend([txt(name(s)), txt(name(l))]);
            drow.extend([
                txt(s.map_or(NOT_RESTORED, |k| main_op(k).map_or(k, |o| o.short))),
                txt(l.map_or(NOT_RESTORED, |k| main_op(k).map_or(k, |o| o.short))),
            ]);
            t.push(row);
            d.push(drow);
        }
        let mut out = vec![Output::from_table("table17_minimal_recovery_operation", "Minimal successful recovery operation per pair", "main (strict and loose MRO in labelled columns)", t)
            .with_display_table(d)
            .with_notes(vec![
                "MRO = first operation in the order R0, R1, R2, R3a, R3b, R4, R5, R6 that passes the criterion; not_restored if none. Metrics (restoration, gap, accuracy, classification) are those of the main-family MRO; blank when not restored.".into(),
                "restoration_ratio is blank when not informative (|R0 gap| < 0.05).".into(),
            ])];
        if !long.is_empty() {
            out.push(
                Output::new("table17_minimal_recovery_operation_with_ci", "Minimal recovery operation with paired CIs", "main", &long_table(long, self.samples, self.seed))
                    .with_notes(vec![format!(
                        "Intervals are those of the operation in aux_recovery_operations_with_ci (one matrix per pair x operation from default_rng({}) = base seed + 4).",
                        self.seed
                    )]),
            );
        }
        out
    }

    // -----------------------------------------------------------------------------------------
    // Summary and operations with CI
    // -----------------------------------------------------------------------------------------

    pub fn aux_summary(&self) -> Vec<Output> {
        if self.pairs.is_empty() {
            return Vec::new();
        }
        let mut t = Table::new(&[
            "model_key",
            "model_short_name",
            "dataset",
            "condition",
            "condition_label",
            "level",
            "category",
            "is_main_condition",
            "evaluated_n",
            "clean_p_wrong",
            "ordinary_reset_p_wrong",
            "intervention_p_wrong",
            "clean_p_correct",
            "ordinary_reset_p_correct",
            "intervention_p_correct",
            "ordinary_reset_hysteresis_gap",
            "intervention_hysteresis_gap",
            "gap_reduction",
            "restoration_ratio",
            "restoration_ratio_informative",
            "clean_accuracy",
            "ordinary_reset_accuracy",
            "accuracy",
            "wrong_follow_rate",
            "lock_in_rate",
            "entropy",
            "max_probability",
            "clean_entropy",
            "clean_max_probability",
            "ordinary_reset_entropy",
            "ordinary_reset_max_probability",
            "clean_context_damage_p_correct",
            "clean_context_damage_accuracy",
            "clean_correct_to_history_wrong_rate",
            "clean_correct_to_intervention_wrong_rate",
            "contamination_reduction",
            "repair_classification",
            "mro_success",
            "clean_context_like_strict",
            "clean_context_like_loose",
            "source_condition",
        ]);
        let mut d = Table::new(&[
            "Model",
            "Dataset",
            "Operation",
            "n",
            "p(w)",
            "Gap",
            "Rest.",
            "Acc. (%)",
            "WF (%)",
            "Entropy",
            "Max p",
            "Strict",
            "Main",
            "Loose",
            "Classification",
        ]);
        for hp in &self.pairs {
            for o in &hp.ops {
                let reg = crate::dialogue::conditions::find(o.key);
                let level = reg.map_or("", |c| c.level);
                let category = reg.map_or("", |c| c.category);
                let is_main = reg.is_some_and(|c| c.is_main);
                let r0_gap = intervention_hysteresis_gap(&o.clean, &o.r0);
                let x_gap = intervention_hysteresis_gap(&o.clean, &o.x);
                t.push(vec![
                    txt(hp.p.model_key.clone()),
                    txt(hp.p.model.clone()),
                    txt(hp.p.dataset.clone()),
                    txt(o.key),
                    txt(condition_label(o.key)),
                    txt(level),
                    txt(category),
                    boolc(is_main),
                    int(o.n),
                    num(o.clean.p_wrong),
                    num(o.r0.p_wrong),
                    num(o.x.p_wrong),
                    num(o.clean.p_correct),
                    num(o.r0.p_correct),
                    num(o.x.p_correct),
                    num(r0_gap),
                    num(x_gap),
                    num(gap_reduction(r0_gap, x_gap)),
                    num(o.restoration.ratio),
                    boolc(o.restoration.informative),
                    num(o.clean.accuracy),
                    num(o.r0.accuracy),
                    num(o.x.accuracy),
                    num(o.x.wrong_follow),
                    num(o.lock_in),
                    num(o.x.entropy),
                    num(o.x.max_prob),
                    num(o.clean.entropy),
                    num(o.clean.max_prob),
                    num(o.r0.entropy),
                    num(o.r0.max_prob),
                    num(clean_context_damage_p_correct(&o.clean, &o.x)),
                    num(clean_context_damage_accuracy(&o.clean, &o.x)),
                    num(o.contam_r0),
                    num(o.contam_x),
                    num(contamination_reduction(o.contam_r0, o.contam_x)),
                    txt(o.class.as_str()),
                    boolc(o.pass[1]),
                    boolc(o.pass[0]),
                    boolc(o.pass[2]),
                    txt(o.source),
                ]);
                let mut drow = pair_cells(hp.p);
                let rest = if o.restoration.informative {
                    o.restoration.ratio
                } else {
                    f64::NAN
                };
                drow.extend([
                    txt(condition_label(o.key)),
                    int(o.n),
                    num(o.x.p_wrong),
                    num(x_gap),
                    num(rest),
                    pct(o.x.accuracy),
                    pct(o.x.wrong_follow),
                    num(o.x.entropy),
                    num(o.x.max_prob),
                    boolc(o.pass[0]),
                    boolc(o.pass[1]),
                    boolc(o.pass[2]),
                    txt(o.class.as_str()),
                ]);
                d.push(drow);
            }
        }
        vec![Output::from_table("aux_recovery_hierarchy_summary", "Recovery hierarchy summary (all operations)", MAIN_FAMILY, t)
            .with_display_table(d)
            .with_notes(vec![
                "Pair means over the items present in clean, R0 and the operation; clean = clean probe; intervention_hysteresis_gap = mean p_X(w) - mean p_clean(w).".into(),
                "mro_success and repair_classification use the MAIN criterion; clean_context_like_strict / _loose are the other families. restoration_ratio is the raw ratio (CSV) with restoration_ratio_informative; the Markdown/LaTeX view prints NA when not informative.".into(),
                "lock_in_rate is the unconditional lock-in (strong pressure and the operation both follow w); contamination rates are the advocated-wrong version among clean-correct items.".into(),
                "source_condition names the rows used (R0 falls back to the ramp's identical strong_reset capture step when ordinary_strong_reset rows are absent).".into(),
            ])]
    }

    pub fn aux_operations_with_ci(&self) -> Vec<Output> {
        if self.long.is_empty() {
            return Vec::new();
        }
        vec![Output::new("aux_recovery_operations_with_ci", "Recovery operations with paired item bootstrap CIs", "strict, main and loose (clean_context_like_<family> rows)", &long_table(self.long.clone(), self.samples, self.seed))
                .with_notes(vec![
                    format!("One index matrix per pair x main operation from one default_rng({}) stream (base seed + 4), pairs in the fixed order, operations R0..R6; shared by all metrics of the operation.", self.seed),
                    "restoration_ratio replicates are NaN where |den| <= 1e-12; the estimate and interval are blank when the full-sample |R0 gap| < 0.05. clean_context_like_* are deterministic (1 = pass, no interval).".into(),
                ]),]
    }

    // -----------------------------------------------------------------------------------------
    // Threshold sweep
    // -----------------------------------------------------------------------------------------

    pub fn aux_threshold_sweep(&self) -> Vec<Output> {
        let aggs: Vec<Vec<CondAgg>> = self
            .pairs
            .iter()
            .map(|hp| hp.cond_aggs())
            .filter(|a| !a.is_empty())
            .collect();
        if aggs.is_empty() {
            return Vec::new();
        }
        let mut rows: Vec<(String, SweepRow)> = Vec::new();
        for f in Family::ALL {
            let mut r = threshold_sweep(&aggs, &f.criterion(), &[1.0]);
            rows.push((f.name().to_string(), r.remove(0)));
        }
        for r in threshold_sweep(&aggs, &Criterion::MAIN, &SWEEP_LAMBDAS) {
            rows.push((
                format!("main_lambda_{}", fmt_float(r.lambda, 2).unwrap_or_default()),
                r,
            ));
        }
        let mut cols: Vec<String> = [
            "threshold_family",
            "lambda",
            "gap_threshold",
            "accuracy_slack",
            "p_correct_slack",
            "entropy_slack",
            "max_prob_slack",
            "n_pairs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cols.extend(
            MAIN_OPS
                .iter()
                .map(|o| format!("{}_recovered", o.sweep_stem)),
        );
        cols.extend(MAIN_OPS.iter().map(|o| format!("mro_{}", o.sweep_stem)));
        cols.extend(
            [
                "mro_not_restored",
                "mro_distribution",
                "instruction_best_recovered",
                "dialogue_state_best_recovered",
                "qualitative_conclusion_holds",
                "instruction_level_max",
                "state_changing_max",
                "neutral_or_reconstruction_max",
                "qualitative_ordering_stable",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        let mut t = Table::with_columns(cols);
        let mut dcols: Vec<String> = vec!["Family".into(), "lambda".into(), "Gap thr.".into()];
        dcols.extend(MAIN_OPS.iter().map(|o| o.short.to_string()));
        dcols.extend(["Not restored".to_string(), "Ordering stable".to_string()]);
        let mut d = Table::with_columns(dcols);
        for (name, r) in &rows {
            let c = &r.criterion;
            let mut row = vec![
                txt(name.clone()),
                num(r.lambda),
                num(c.wrong_gap),
                num(c.accuracy_slack),
                num(c.p_correct_slack),
                num(c.entropy_slack),
                num(c.max_prob_slack),
                int(r.n_pairs),
            ];
            row.extend(r.recovered.iter().map(|(_, k)| int(*k)));
            row.extend(r.mro.iter().map(|(_, k)| int(*k)));
            row.extend([
                int(r.mro_not_restored),
                txt(r.mro_distribution.clone()),
                int(r.instruction_best_recovered),
                int(r.dialogue_state_best_recovered),
                boolc(r.dialogue_state_best_recovered >= r.instruction_best_recovered),
                int(r.instruction_level_max),
                int(r.state_changing_max),
                int(r.neutral_or_reconstruction_max),
                boolc(r.qualitative_ordering_stable),
            ]);
            t.push(row);
            let mut drow = vec![txt(name.clone()), num(r.lambda), num(c.wrong_gap)];
            drow.extend(r.recovered.iter().map(|(_, k)| int(*k)));
            drow.extend([
                int(r.mro_not_restored),
                boolc(r.qualitative_ordering_stable),
            ]);
            d.push(drow);
        }
        vec![Output::from_table("aux_threshold_sweep", "Threshold sweep of the clean-context-like criterion", "strict / main / loose, then main x lambda", t)
            .with_display_table(d)
            .with_notes(vec![
                "Rows strict/main/loose are the three families; main_lambda_L multiplies every main threshold by L (configs/threshold_sweep.yaml lambdas).".into(),
                "qualitative_ordering_stable = max(R3a, R3b, R5) >= max(R4, R5) >= max(R1, R2); instruction_best_recovered = max(R0, R1, R2), dialogue_state_best_recovered = max(R3a, R3b, R4, R5) [inferred]; qualitative_conclusion_holds = dialogue_state_best_recovered >= instruction_best_recovered (decision: the released aggregator's rule is not available).".into(),
            ])]
    }
}
