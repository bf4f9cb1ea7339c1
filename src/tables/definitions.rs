//! Definition tables generated from the code's own constants: Table 1 (recovery operations, from
//! the condition registry), Table 20 (CCTP tube) and Table 22 (criterion families).

use super::output::CriterionFamily;
use serde::Serialize;

use super::format::{fmt_float, Join, Num, PyBool};
use super::{Ctx, Output};
use crate::dialogue::conditions::Suite;
use crate::dialogue::ops_text::ops_text;
use crate::metrics::cctp::{
    Path, Tube, TubeSpec, ALPHA_GRID_STEP, BINDING_PRIORITY, KL_CHECK_EPS, VARIANTS,
};
use crate::metrics::criteria::{Family, main_ops};


/// `table01_recovery_operations.csv`.
#[derive(Serialize, Default)]
struct Table01Row {
    level: &'static str,
    condition: String,
    condition_label: String,
    category: &'static str,
    history_role: &'static str,
    is_main_condition: PyBool,
    history: &'static str,
    description: &'static str,
}

/// Markdown/LaTeX view of Table 1.
#[derive(Serialize, Default)]
struct Table01View {
    #[serde(rename = "Level")]
    level: &'static str,
    #[serde(rename = "Operation")]
    operation: String,
    #[serde(rename = "History")]
    history: &'static str,
    #[serde(rename = "Main")]
    main: PyBool,
    #[serde(rename = "What changes")]
    what_changes: &'static str,
}

pub(super) fn table01(ctx: &Ctx) -> Vec<Output> {
    let t: Vec<Table01Row> = ctx.reg().all()
        .iter()
        .filter(|c| matches!(c.suite, Suite::Hierarchy | Suite::R7))
        .map(|c| Table01Row {
            level: c.level,
            condition: c.key.clone(),
            condition_label: c.label.clone(),
            category: c.category,
            history_role: c.history_role,
            is_main_condition: PyBool(c.is_main),
            history: match c.history_role {
                "preserved_pressure_history" => "kept",
                "neutral_summary_replacement" => "replaced (neutral summary)",
                "deleted_pressure_history" => "deleted",
                other => other,
            },
            description: c.description,
        })
        .collect();
    let d: Vec<Table01View> = t
        .iter()
        .map(|r| Table01View {
            level: r.level,
            operation: r.condition_label.clone(),
            history: r.history,
            main: r.is_main_condition,
            what_changes: r.description,
        })
        .collect();
    vec![Output::new("table01_recovery_operations", "Recovery operations (history kept / changed)", CriterionFamily::Definition, &t)
        .with_display(&d)
        .with_notes(vec![
            ops_text("Generated from the condition registry (src/dialogue/conditions.rs). is_main_condition marks the {main_count} operations of the minimal-recovery scan; the {appendix_count} appendix operations and {evidence_ops} are not main."),
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

/// `table20_cctp_tube_definition.csv`: the three tubes.
#[derive(Serialize, Default)]
struct TubeRow {
    tube: &'static str,
    top_clean_probability_slack: Num,
    entropy_slack: Num,
    max_prob_slack: Num,
    kl_threshold: Num,
    alpha_grid_step: Num,
    checks: String,
}

/// Markdown/LaTeX view of the tubes.
#[derive(Serialize, Default)]
struct TubeView {
    #[serde(rename = "Tube")]
    tube: &'static str,
    #[serde(rename = "p_top slack")]
    p_top_slack: Num,
    #[serde(rename = "Entropy slack")]
    entropy_slack: Num,
    #[serde(rename = "Max-prob slack")]
    max_prob_slack: Num,
    #[serde(rename = "KL threshold")]
    kl_threshold: Num,
}

/// `table20_cctp_variants.csv`: the eight CCTP conditions.
#[derive(Serialize, Default)]
struct VariantRow {
    condition: &'static str,
    path: &'static str,
    test: String,
}

pub(super) fn table20(_ctx: &Ctx) -> Vec<Output> {
    let checks = format!(
        "{} (argmax Q = argmax P); p_top_clean: Q[argmax P] >= P[argmax P] - slack; kl: KL(P||Q) <= kl_threshold + {:e}; entropy: H(Q) <= H(P) + slack; max_prob: max Q >= max P - slack",
        BINDING_PRIORITY[0], KL_CHECK_EPS
    );
    let tubes = [Tube::STRICT, Tube::MAIN, Tube::LOOSE];
    let t: Vec<TubeRow> = tubes
        .iter()
        .map(|tube| TubeRow {
            tube: tube_name(tube),
            top_clean_probability_slack: Num(tube.p_slack),
            entropy_slack: Num(tube.entropy_slack),
            max_prob_slack: Num(tube.max_slack),
            kl_threshold: Num(tube.kl),
            alpha_grid_step: Num(ALPHA_GRID_STEP),
            checks: checks.clone(),
        })
        .collect();
    let d: Vec<TubeView> = tubes
        .iter()
        .map(|tube| TubeView {
            tube: tube_name(tube),
            p_top_slack: Num(tube.p_slack),
            entropy_slack: Num(tube.entropy_slack),
            max_prob_slack: Num(tube.max_slack),
            kl_threshold: Num(tube.kl),
        })
        .collect();
    let v: Vec<VariantRow> = VARIANTS
        .iter()
        .map(|var| VariantRow {
            condition: var.name,
            path: match var.path {
                Path::LogitLinear => "logit_linear: softmax(center((1-a) z_H + a z_0))",
                Path::ProbLinear => "prob_linear: normalize((1-a) p_H + a p_0)",
                Path::GeometricProb => "geometric_prob: softmax((1-a) ln p_H + a ln p_0)",
            },
            test: match var.spec {
                TubeSpec::Full(tube) => format!("{} tube (all five checks)", tube_name(&tube)),
                TubeSpec::KlOnly(tau) => {
                    format!("KL only, tau = {}", fmt_float(tau, 2).unwrap_or_default())
                }
            },
        })
        .collect();
    vec![
        Output::new("table20_cctp_tube_definition", "CCTP clean-tube criterion (definition)", CriterionFamily::Definition, &t)
            .with_display(&d)
            .with_notes(vec![
                format!("A projected distribution Q passes the tube around the clean distribution P when all five checks hold: {checks}. Entropy in nats with probabilities clamped to 1e-12 and renormalised."),
                "alpha* = the smallest alpha on the grid 0, 0.01, ..., 1 (alpha = weight on the clean anchor) whose projection passes; alpha = 1 returns P exactly (implementation guarantee). The main tube on the logit-linear path is the primary CCTP condition.".into(),
                format!("Binding constraint priority: {}.", BINDING_PRIORITY.join(", ")),
            ]),
        Output::new("table20_cctp_variants", "CCTP conditions (path and tube)", CriterionFamily::Definition, &v),
    ]
}

/// `table22_criterion_families.csv`.
#[derive(Serialize, Default)]
struct FamilyRow {
    family: &'static str,
    wrong_gap: Num,
    accuracy_slack: Num,
    p_correct_slack: Num,
    entropy_slack: Num,
    max_prob_slack: Num,
    used_by: &'static str,
}

/// Markdown view of a family's thresholds (Table 22 and `summary.md`).
#[derive(Serialize, Default)]
pub(super) struct FamilyView {
    #[serde(rename = "Family")]
    family: &'static str,
    #[serde(rename = "|Gap| <=")]
    wrong_gap: Num,
    #[serde(rename = "Acc. slack")]
    accuracy_slack: Num,
    #[serde(rename = "p(c) slack")]
    p_correct_slack: Num,
    #[serde(rename = "Entropy slack")]
    entropy_slack: Num,
    #[serde(rename = "Max-prob slack")]
    max_prob_slack: Num,
}

impl FamilyView {
    pub(super) fn of(f: Family) -> FamilyView {
        let c = f.criterion();
        FamilyView {
            family: f.name(),
            wrong_gap: Num(c.wrong_gap),
            accuracy_slack: Num(c.accuracy_slack),
            p_correct_slack: Num(c.p_correct_slack),
            entropy_slack: Num(c.entropy_slack),
            max_prob_slack: Num(c.max_prob_slack),
        }
    }
}

/// The `Used by` column of Table 22's view.
#[derive(Serialize, Default)]
struct UsedByView {
    #[serde(rename = "Used by")]
    used_by: &'static str,
}

fn used_by(f: Family) -> &'static str {
    match f {
        Family::Strict => "sensitivity columns 'strict family (gap ≤ 0.025)' (Tables 4 and 16, strict_* CSV columns); the paper's text names it for Table 4, but its printed counts are main",
        Family::Main => "the paper's printed counts: Table 4 'Recovered pairs', Table 16 'Strict', the headline recovery counts; mro_success, minimal recovery operation, repair_classification, Tables 5/6/17/18, threshold sweep base",
        Family::Loose => "sensitivity columns 'loose family (gap ≤ 0.075)' (Tables 4 and 16, loose_* CSV columns)",
    }
}

pub(super) fn table22(_ctx: &Ctx) -> Vec<Output> {
    let t: Vec<FamilyRow> = Family::ALL
        .iter()
        .map(|&f| {
            let c = f.criterion();
            FamilyRow {
                family: f.name(),
                wrong_gap: Num(c.wrong_gap),
                accuracy_slack: Num(c.accuracy_slack),
                p_correct_slack: Num(c.p_correct_slack),
                entropy_slack: Num(c.entropy_slack),
                max_prob_slack: Num(c.max_prob_slack),
                used_by: used_by(f),
            }
        })
        .collect();
    let d: Vec<Join<FamilyView, UsedByView>> = Family::ALL
        .iter()
        .map(|&f| {
            Join(
                FamilyView::of(f),
                UsedByView {
                    used_by: used_by(f),
                },
            )
        })
        .collect();
    vec![Output::new("table22_criterion_families", "Clean-restoration tolerance families (definition)", CriterionFamily::Definition, &t)
        .with_display(&d)
        .with_notes(vec![
            "An operation X of a pair is clean-context-like when, on pair means: |mean p_X(w) - mean p_clean(w)| <= wrong_gap, acc_X >= acc_clean - accuracy_slack, p_X(c) >= p_clean(c) - p_correct_slack, H_X <= H_clean + entropy_slack (nats), maxp_X >= maxp_clean - max_prob_slack (all inclusive).".into(),
            format!("Minimal recovery operation scan order: {}.", main_ops().iter().map(|o| o.short).collect::<Vec<_>>().join(", ")),
        ])]
}
