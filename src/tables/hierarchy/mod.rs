//! Recovery hierarchy: per pair × operation aggregates and the per-operation bootstrap, built
//! once per run ([`super::Ctx::hierarchy`]) and shared by Table 4 and Table 16 ([`counts`]),
//! Table 17 ([`mro`]), the per-operation summary (docs/protocol.md §9.4, `recovery_hierarchy_summary.csv`) and
//! CIs (`recovery_operations_with_ci.csv`) ([`operations`]) and the threshold sweep (docs/protocol.md §6.4,
//! [`sweep`]).

mod counts;
mod mro;
mod operations;
mod sweep;

use super::boot::{as_f64, paired_cis, Stat};
use super::common::*;
use super::index::{PairData, RunIndex};
use super::TableOptions;
use crate::dialogue::conditions::{RecoveryOp, Registry};
use crate::dialogue::Suite;
use crate::metrics::bootstrap::{IndexStream, SEED_OFFSET_EXPERIMENTS, SEED_OFFSET_RECOVERY_OPS};
use crate::metrics::criteria::{
    classify_repair, main_op, minimal_recovery_operation, pass_flags, CondAgg, Criterion, Family,
    RepairClass, main_ops,
};
use crate::metrics::{
    aggregate, contamination_advocated, item_gaps, mean, restoration_ratio, unconditional_lock_in,
    Agg, Obs, Restoration,
};

/// Operation label of the `*_with_ci.csv` files (docs/protocol.md §9.4), from the registry (empty for the
/// appendix operations and R7).
pub(crate) fn ci_label(reg: &Registry, key: &str) -> &'static str {
    reg.recovery_op(key).map_or("", |o| o.ci_label)
}

/// Where the hierarchy tables show the main family, and the other two.
const MAIN_SHOWN: &str = "mro_success / clean_context_like main";
const MAIN_OTHERS: &str = "strict and loose in labelled columns";

/// One operation of one pair.
pub(crate) struct OpStats {
    pub(crate) key: &'static str,
    /// The condition whose rows were used (R0 may come from the ramp's `strong_reset`).
    pub(crate) source: &'static str,
    pub(crate) n: usize,
    pub(crate) clean: Agg,
    pub(crate) r0: Agg,
    pub(crate) x: Agg,
    pub(crate) lock_in: f64,
    pub(crate) contam_r0: f64,
    pub(crate) contam_x: f64,
    pub(crate) restoration: Restoration,
    pub(crate) class: RepairClass,
    /// strict, main, loose.
    pub(crate) pass: [bool; 3],
    clean_o: Vec<Obs>,
    r0_o: Vec<Obs>,
    x_o: Vec<Obs>,
}

pub(crate) struct HierPair<'p, 'a> {
    pub(crate) p: &'p PairData<'a>,
    pub(crate) ops: Vec<OpStats>,
}

impl HierPair<'_, '_> {
    fn op(&self, key: &str) -> Option<&OpStats> {
        self.ops.iter().find(|o| o.key == key)
    }
    /// The pair-level aggregates of the main operations the pair ran, in its operation order.
    pub(crate) fn cond_aggs(&self) -> Vec<CondAgg> {
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
    pub(crate) fn mro(&self, c: &Criterion) -> Option<&'static str> {
        let flags = pass_flags(&self.cond_aggs(), c);
        minimal_recovery_operation(&flags)
    }
}

/// CI of one metric of one operation.
type OpCis =
    std::collections::BTreeMap<(String, String, &'static str, &'static str), (f64, f64, f64)>;

pub(crate) struct Hierarchy<'p, 'a> {
    /// The conditions of the run.
    reg: &'static Registry,
    pub(crate) pairs: Vec<HierPair<'p, 'a>>,
    long: Vec<LongRow>,
    cis: OpCis,
    samples: usize,
    seed: u64,
}

/// The hierarchy suite's built-in operations: the eight main ones in scan order, then the
/// appendix ones.
fn builtin_ops(reg: &'static Registry) -> Vec<&'static str> {
    let hierarchy = reg.recovery_ops().iter().filter(|o| o.suite == Suite::Hierarchy && !o.is_experiment());
    hierarchy.clone().filter(|o| o.main).chain(hierarchy.filter(|o| !o.main)).map(|o| o.key).collect()
}

/// Every operation a hierarchy pair reports: the built-in ones, then the experiments' (in
/// registry order).
fn all_ops(reg: &'static Registry) -> Vec<&'static str> {
    let mut v = builtin_ops(reg);
    v.extend(reg.recovery_ops().iter().filter(|o| o.is_experiment()).map(|o| o.key));
    v
}

impl<'p, 'a> Hierarchy<'p, 'a> {
    pub(crate) fn build(idx: &'p RunIndex<'a>, opts: &TableOptions) -> Hierarchy<'p, 'a> {
        let mut pairs = Vec::new();
        for p in &idx.pairs {
            let Some(clean) = p.clean() else {
                continue;
            };
            if !builtin_ops(idx.reg).iter().any(|k| p.has(k)) {
                continue;
            }
            let Some(r0) = p.r0() else {
                continue;
            };
            let mut ops = Vec::new();
            for key in all_ops(idx.reg) {
                // R0's rows, else those of the ramp's identical strong_reset (= `r0`); every
                // other operation's own.
                let Some(source) = p.resolve(p.reg.sources(key)) else {
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
        let (samples, seed, _) = opts.bootstrap(SEED_OFFSET_RECOVERY_OPS);
        let mut h = Hierarchy {
            reg: idx.reg,
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
        let mut long = Vec::new();
        // The paper's stream covers the main operations; experiment operations draw from a
        // stream of their own afterwards, so they move no digit of the main operations' CIs.
        let main: Vec<&'static RecoveryOp> = main_ops().iter().collect();
        let exp: Vec<&'static RecoveryOp> = self.reg.recovery_ops().iter().filter(|o| o.is_experiment()).collect();
        let exp_seed = self.seed - SEED_OFFSET_RECOVERY_OPS + SEED_OFFSET_EXPERIMENTS;
        for (ops, seed) in [(main, self.seed), (exp, exp_seed)] {
        let mut stream = IndexStream::new(seed);
        for hp in &self.pairs {
            for op in ops.iter().copied() {
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
                let label = ci_label(self.reg, op.key);
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
        }
        self.long = long;
    }

    fn recovered(&self, key: &str, fam: usize) -> usize {
        self.pairs
            .iter()
            .filter(|hp| hp.op(key).is_some_and(|o| o.pass[fam]))
            .count()
    }
    fn with_condition(&self, key: &str) -> usize {
        self.pairs.iter().filter(|hp| hp.op(key).is_some()).count()
    }
}
