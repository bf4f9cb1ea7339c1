//! Definition tables generated from the code's own constants: Table 1 (recovery operations, from
//! the condition registry), Table 20 (CCTP tube) and Table 22 (criterion families).

use super::format::*;
use super::{Ctx, Output};
use crate::dialogue::conditions::{all, Suite};
use crate::metrics::cctp::{
    Path, Tube, TubeSpec, ALPHA_GRID_STEP, BINDING_PRIORITY, KL_CHECK_EPS, VARIANTS,
};
use crate::metrics::criteria::{Family, MAIN_OPS};

const DEF: &str = "definition";

pub(super) fn table01(_ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "level",
        "condition",
        "condition_label",
        "category",
        "history_role",
        "is_main_condition",
        "history",
        "description",
    ]);
    for c in all()
        .iter()
        .filter(|c| matches!(c.suite, Suite::Hierarchy | Suite::R7))
    {
        let history = match c.history_role {
            "preserved_pressure_history" => "kept",
            "neutral_summary_replacement" => "replaced (neutral summary)",
            "deleted_pressure_history" => "deleted",
            other => other,
        };
        t.push(vec![
            txt(c.level),
            txt(c.key.clone()),
            txt(c.label.clone()),
            txt(c.category),
            txt(c.history_role),
            boolc(c.is_main),
            txt(history),
            txt(c.description),
        ]);
    }
    let mut d = Table::new(&["Level", "Operation", "History", "Main", "What changes"]);
    for r in &t.rows {
        d.push(vec![
            r[0].clone(),
            r[2].clone(),
            r[6].clone(),
            r[5].clone(),
            r[7].clone(),
        ]);
    }
    vec![Output::from_table("table01_recovery_operations", "Recovery operations (history kept / changed)", DEF, t)
        .with_display_table(d)
        .with_notes(vec![
            "Generated from the condition registry (src/dialogue/conditions.rs). is_main_condition marks the eight operations of the minimal-recovery scan; the two appendix operations and R7 are not main.".into(),
        ])]
}

fn tube_name(t: &Tube) -> &'static str {
    if *t == Tube::STRICT {
        "strict"
    } else if *t == Tube::MAIN {
        "main"
    } else if *t == Tube::LOOSE {
        "loose"
    } else {
        "custom"
    }
}

pub(super) fn table20(_ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "tube",
        "top_clean_probability_slack",
        "entropy_slack",
        "max_prob_slack",
        "kl_threshold",
        "alpha_grid_step",
        "checks",
    ]);
    let checks = format!(
        "{} (argmax Q = argmax P); p_top_clean: Q[argmax P] >= P[argmax P] - slack; kl: KL(P||Q) <= kl_threshold + {:e}; entropy: H(Q) <= H(P) + slack; max_prob: max Q >= max P - slack",
        BINDING_PRIORITY[0], KL_CHECK_EPS
    );
    for tube in [Tube::STRICT, Tube::MAIN, Tube::LOOSE] {
        t.push(vec![
            txt(tube_name(&tube)),
            num(tube.p_slack),
            num(tube.entropy_slack),
            num(tube.max_slack),
            num(tube.kl),
            num(ALPHA_GRID_STEP),
            txt(checks.clone()),
        ]);
    }
    let mut d = Table::new(&[
        "Tube",
        "p_top slack",
        "Entropy slack",
        "Max-prob slack",
        "KL threshold",
    ]);
    for r in &t.rows {
        d.push(vec![
            r[0].clone(),
            r[1].clone(),
            r[2].clone(),
            r[3].clone(),
            r[4].clone(),
        ]);
    }
    let mut v = Table::new(&["condition", "path", "test"]);
    for var in VARIANTS {
        let test = match var.spec {
            TubeSpec::Full(tube) => format!("{} tube (all five checks)", tube_name(&tube)),
            TubeSpec::KlOnly(tau) => {
                format!("KL only, tau = {}", fmt_float(tau, 2).unwrap_or_default())
            }
        };
        let path = match var.path {
            Path::LogitLinear => "logit_linear: softmax(center((1-a) z_H + a z_0))",
            Path::ProbLinear => "prob_linear: normalize((1-a) p_H + a p_0)",
            Path::GeometricProb => "geometric_prob: softmax((1-a) ln p_H + a ln p_0)",
        };
        v.push(vec![txt(var.name), txt(path), txt(test)]);
    }
    vec![
        Output::from_table("table20_cctp_tube_definition", "CCTP clean-tube criterion (definition)", DEF, t)
            .with_display_table(d)
            .with_notes(vec![
                format!("A projected distribution Q passes the tube around the clean distribution P when all five checks hold: {checks}. Entropy in nats with probabilities clamped to 1e-12 and renormalised."),
                "alpha* = the smallest alpha on the grid 0, 0.01, ..., 1 (alpha = weight on the clean anchor) whose projection passes; alpha = 1 returns P exactly (implementation guarantee). The main tube on the logit-linear path is the primary CCTP condition.".into(),
                format!("Binding constraint priority: {}.", BINDING_PRIORITY.join(", ")),
            ]),
        Output::from_table("table20_cctp_variants", "CCTP conditions (path and tube)", DEF, v),
    ]
}

pub(super) fn table22(_ctx: &Ctx) -> Vec<Output> {
    let mut t = Table::new(&[
        "family",
        "wrong_gap",
        "accuracy_slack",
        "p_correct_slack",
        "entropy_slack",
        "max_prob_slack",
        "used_by",
    ]);
    for f in Family::ALL {
        let c = f.criterion();
        let used = match f {
            Family::Strict => "paper text of Table 4; Table 16 'Strict'; strict columns everywhere",
            Family::Main => "mro_success, minimal recovery operation, repair_classification, Table 4 CSV, Tables 5/6/17/18, threshold sweep base",
            Family::Loose => "sensitivity columns",
        };
        t.push(vec![
            txt(f.name()),
            num(c.wrong_gap),
            num(c.accuracy_slack),
            num(c.p_correct_slack),
            num(c.entropy_slack),
            num(c.max_prob_slack),
            txt(used),
        ]);
    }
    let mut d = Table::new(&[
        "Family",
        "|Gap| <=",
        "Acc. slack",
        "p(c) slack",
        "Entropy slack",
        "Max-prob slack",
        "Used by",
    ]);
    for r in &t.rows {
        d.push(r.clone());
    }
    vec![Output::from_table("table22_criterion_families", "Clean-restoration tolerance families (definition)", DEF, t)
        .with_display_table(d)
        .with_notes(vec![
            "An operation X of a pair is clean-context-like when, on pair means: |mean p_X(w) - mean p_clean(w)| <= wrong_gap, acc_X >= acc_clean - accuracy_slack, p_X(c) >= p_clean(c) - p_correct_slack, H_X <= H_clean + entropy_slack (nats), maxp_X >= maxp_clean - max_prob_slack (all inclusive).".into(),
            format!("Minimal recovery operation scan order: {}.", MAIN_OPS.iter().map(|o| o.short).collect::<Vec<_>>().join(", ")),
        ])]
}
