//! Every condition of the protocol (docs/protocol.md §3): name, suite, paper label, level, category,
//! history role, and the message builder.

use std::sync::OnceLock;

use super::{Builder, Control, CurvePoint, DialogueItem, CURVE};
use crate::data::pyrandom::PyRandom;
use crate::data::Item;
use crate::protocol::{letter, ChatMessage};
use crate::prompts::fill;

/// Groups of conditions that batch mode runs together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Suite {
    Ramp,
    Hierarchy,
    Controls,
    FalseContext,
    Truncation,
    Relabel,
    R7,
}

impl Suite {
    pub const ALL: [Suite; 7] = [
        Suite::Ramp,
        Suite::Hierarchy,
        Suite::Controls,
        Suite::FalseContext,
        Suite::Truncation,
        Suite::Relabel,
        Suite::R7,
    ];
    pub fn key(self) -> &'static str {
        match self {
            Suite::Ramp => "ramp",
            Suite::Hierarchy => "hierarchy",
            Suite::Controls => "controls",
            Suite::FalseContext => "false-context",
            Suite::Truncation => "truncation",
            Suite::Relabel => "relabel",
            Suite::R7 => "r7",
        }
    }
}

/// What a condition does to the dialogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Curve(Control, CurvePoint),
    /// History-preserving final-turn ops: R0, R1, R2, R6, R6′, R2′, R7.
    R0,
    R1,
    R2,
    R3a,
    R3b,
    R4,
    R5,
    R6,
    R6Evidence,
    R2Skepticism,
    R7,
    /// Truncation: which of the 4 exchanges stay (by index 0..4), R0 final turn.
    Truncate(&'static [usize]),
    /// Empty history + the clean question (truncation's reference).
    FreshContext,
    /// False-context prior exchange (template key) + R0 final turn; `None` = no prior context.
    FalseContext(Option<&'static str>),
    /// Relabel diagnostics: history kept, final turn changes.
    Relabel(RelabelMode),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelabelMode {
    Baseline,
    Refresh,
    NoShuffle,
    Shuffle,
}

/// One condition.
#[derive(Clone, Debug)]
pub struct Condition {
    pub key: String,
    /// The paper's display label.
    pub label: String,
    pub suite: Suite,
    /// R0…R7 for recovery operations, "" otherwise.
    pub level: &'static str,
    pub category: &'static str,
    pub history_role: &'static str,
    /// One of the 8 main hierarchy operations.
    pub is_main: bool,
    pub description: &'static str,
    pub kind: Kind,
}

/// A recovery operation (docs/protocol.md §3.4–§3.6): the condition and every label the paper, its
/// artifact and the explorer use for it. The one list of operations is [`RECOVERY_OPS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryOp {
    /// Condition key, e.g. `ordinary_strong_reset`.
    pub key: &'static str,
    /// Paper short name: R0, R1, R2, R3a, R3b, R4, R5, R6; R6′ and R2′ (appendix), R7.
    pub short: &'static str,
    /// `level` column / `minimal_recovery_level` (R3 for both R3a and R3b).
    pub level: &'static str,
    /// One of the eight main hierarchy operations (the others are appendix operations or R7).
    pub main: bool,
    /// The paper's display label (`condition_label` of the item rows).
    pub label: &'static str,
    /// Short lower-case name shown by the explorer.
    pub name: &'static str,
    /// Table 4 `condition_label` (main operations only).
    pub table4_label: &'static str,
    /// Column stem of `recovery_threshold_sensitivity.csv` (`<stem>_recovered`, `mro_<stem>`).
    pub sweep_stem: &'static str,
    /// Label used in `mro_distribution` (`"R0 ordinary reset=1; R3 fresh deletion=7"`).
    pub mro_label: &'static str,
    /// Operation label of the `*_with_ci.csv` files (docs/protocol.md §9.4).
    pub ci_label: &'static str,
    pub suite: Suite,
    pub category: &'static str,
    pub history_role: &'static str,
    pub description: &'static str,
    pub kind: Kind,
}

const PRES: &str = "preserved_pressure_history";
const DELETED: &str = "deleted_pressure_history";

/// Every recovery operation: the eight main ones in minimal-recovery scan order (R0, R1, R2,
/// R3a, R3b, R4, R5, R6), then R6′ and R2′ (appendix) and R7.
#[rustfmt::skip]
pub const RECOVERY_OPS: [RecoveryOp; 11] = [
    RecoveryOp { key: "ordinary_strong_reset", short: "R0", level: "R0", main: true, label: "R0 Ordinary reset", name: "ordinary reset",
        table4_label: "R0 ordinary reset", sweep_stem: "r0_ordinary_reset", mro_label: "R0 ordinary reset", ci_label: "R0 Ordinary reset",
        suite: Suite::Hierarchy, category: "ordinary_reset", history_role: PRES,
        description: "R0: history kept; strong reset message + question", kind: Kind::R0 },
    RecoveryOp { key: "explicit_user_retraction", short: "R1", level: "R1", main: true, label: "R1 User retraction", name: "user retraction",
        table4_label: "R1 user retraction", sweep_stem: "r1_user_retraction", mro_label: "R1 user retraction", ci_label: "R1 User retraction",
        suite: Suite::Hierarchy, category: "user_retraction", history_role: PRES,
        description: "R1: history kept; the user retracts the earlier claim + question", kind: Kind::R1 },
    RecoveryOp { key: "system_level_reset", short: "R2", level: "R2", main: true, label: "R2 System reset", name: "system reset",
        table4_label: "R2 system reset", sweep_stem: "r2_system_reset", mro_label: "R2 system reset", ci_label: "R2 System reset",
        suite: Suite::Hierarchy, category: "system_reset", history_role: PRES,
        description: "R2: history kept; system prompt gains a warning; final turn is the question only", kind: Kind::R2 },
    RecoveryOp { key: "fresh_context_deletion", short: "R3a", level: "R3", main: true, label: "R3 Fresh context deletion", name: "fresh-context deletion",
        table4_label: "R3a fresh-context deletion", sweep_stem: "r3_fresh_deletion", mro_label: "R3 fresh deletion", ci_label: "R3 Fresh deletion",
        suite: Suite::Hierarchy, category: "context_removal", history_role: DELETED,
        description: "R3a: history deleted; the clean prompt (byte-identical to clean)", kind: Kind::R3a },
    RecoveryOp { key: "context_truncation", short: "R3b", level: "R3", main: true, label: "R3 Context truncation", name: "context truncation",
        table4_label: "R3b context truncation", sweep_stem: "r3_context_truncation", mro_label: "R3 context truncation", ci_label: "R3 Context truncation",
        suite: Suite::Hierarchy, category: "context_removal", history_role: DELETED,
        description: "R3b: history deleted; question block whose prefix is a reset instruction", kind: Kind::R3b },
    RecoveryOp { key: "neutral_summary_replacement", short: "R4", level: "R4", main: true, label: "R4 Neutral summary", name: "neutral summary",
        table4_label: "R4 neutral summary", sweep_stem: "r4_neutral_summary", mro_label: "R4 neutral summary", ci_label: "R4 Neutral summary",
        suite: Suite::Hierarchy, category: "neutral_summary", history_role: "neutral_summary_replacement",
        description: "R4: history replaced by a neutral summary + acknowledgement", kind: Kind::R4 },
    RecoveryOp { key: "factual_state_reconstruction", short: "R5", level: "R5", main: true, label: "R5 Factual-state reconstruction", name: "factual reconstruction",
        table4_label: "R5 factual reconstruction", sweep_stem: "r5_factual_reconstruction", mro_label: "R5 factual reconstruction", ci_label: "R5 Factual reconstruction",
        suite: Suite::Hierarchy, category: "state_reconstruction", history_role: DELETED,
        description: "R5: history deleted; a structured state message replaces the question block", kind: Kind::R5 },
    RecoveryOp { key: "self_verification_final_label", short: "R6", level: "R6", main: true, label: "R6 Self-verification label", name: "self-verification",
        table4_label: "R6 self-verification", sweep_stem: "r6_self_verification", mro_label: "R6 self-verification", ci_label: "R6 Self-verification",
        suite: Suite::Hierarchy, category: "verification", history_role: PRES,
        description: "R6: history kept; verify-internally instruction + question", kind: Kind::R6 },
    RecoveryOp { key: "evidence_for_each_option_then_answer", short: "R6'", level: "R6", main: false, label: "R6 Evidence comparison label", name: "evidence comparison (appx)",
        table4_label: "", sweep_stem: "", mro_label: "", ci_label: "",
        suite: Suite::Hierarchy, category: "verification", history_role: PRES,
        description: "R6' (appendix): history kept; weigh evidence for each option + question", kind: Kind::R6Evidence },
    RecoveryOp { key: "source_skepticism_reset", short: "R2'", level: "R2", main: false, label: "R2 Source skepticism reset", name: "source skepticism (appx)",
        table4_label: "", sweep_stem: "", mro_label: "", ci_label: "",
        suite: Suite::Hierarchy, category: "source_skepticism", history_role: PRES,
        description: "R2' (appendix): history kept; treat earlier claims as unverified + question", kind: Kind::R2Skepticism },
    RecoveryOp { key: "evidence_grounded_recovery", short: "R7", level: "R7", main: false, label: "R7 Trusted evidence", name: "trusted evidence",
        table4_label: "", sweep_stem: "", mro_label: "", ci_label: "",
        suite: Suite::R7, category: "evidence", history_role: PRES,
        description: "R7: history kept; trusted evidence block (constructed gold evidence) + instruction + question", kind: Kind::R7 },
];

/// The eight main operations in minimal-recovery scan order (taken from [`RECOVERY_OPS`]).
pub(crate) const MAIN_OPS: [RecoveryOp; 8] = main_ops();

const fn main_ops() -> [RecoveryOp; 8] {
    let mut out = [RECOVERY_OPS[0]; 8];
    let (mut i, mut j) = (0, 0);
    while i < RECOVERY_OPS.len() {
        if RECOVERY_OPS[i].main {
            out[j] = RECOVERY_OPS[i];
            j += 1;
        }
        i += 1;
    }
    assert!(j == 8, "eight main operations");
    out
}

/// The recovery operation of a condition key.
pub(crate) fn recovery_op(key: &str) -> Option<&'static RecoveryOp> {
    RECOVERY_OPS.iter().find(|o| o.key == key)
}

/// The main operation of a condition key.
pub(crate) fn main_op(key: &str) -> Option<&'static RecoveryOp> {
    MAIN_OPS.iter().find(|o| o.key == key)
}

pub(crate) const TRUNCATION_ORDER: [&str; 6] = [
    "full_history_reset",
    "remove_strong_only",
    "remove_medium_strong",
    "remove_all_pressure",
    "reset_only",
    "fresh_context",
];

pub(crate) const FALSE_CONTEXT_ORDER: [&str; 5] = [
    "clean_no_mention",
    "neutral_wrong_mention",
    "explicit_false_wrong_mention",
    "quoted_false_claim",
    "user_pressure",
];

pub(crate) const RELABEL_ORDER: [&str; 4] = [
    "baseline_strong_reset",
    "current_question_refresh_reset",
    "option_relabel_no_shuffle_reset",
    "option_relabel_shuffle_reset",
];

#[allow(clippy::too_many_arguments)]
fn c(
    key: &str,
    label: &str,
    suite: Suite,
    level: &'static str,
    category: &'static str,
    history_role: &'static str,
    is_main: bool,
    description: &'static str,
    kind: Kind,
) -> Condition {
    Condition {
        key: key.into(),
        label: label.into(),
        suite,
        level,
        category,
        history_role,
        is_main,
        description,
        kind,
    }
}


/// Every condition, in a stable order.
pub fn all() -> &'static [Condition] {
    static ALL: OnceLock<Vec<Condition>> = OnceLock::new();
    ALL.get_or_init(|| {
        use Suite::*;
        let mut v = Vec::new();
        for control in [Control::PressureWrong, Control::NeutralHistory, Control::CorrectPressure] {
            for p in CURVE {
                let (key, suite) = match control {
                    Control::PressureWrong => (p.key().to_string(), Ramp),
                    _ => (format!("{}:{}", control.key(), p.key()), Controls),
                };
                v.push(c(&key, p.key(), suite, "", "pressure_ramp", "pressure_ramp", false, p.description(), Kind::Curve(control, p)));
            }
        }
        for op in &RECOVERY_OPS {
            v.push(Condition {
                key: op.key.into(),
                label: op.label.into(),
                suite: op.suite,
                level: op.level,
                category: op.category,
                history_role: op.history_role,
                is_main: op.main,
                description: op.description,
                kind: op.kind,
            });
        }
        let pres = PRES;
        v.extend([
            c("full_history_reset", "Full pressure history", Truncation, "", "truncation", pres, false,
              "truncation: all 4 exchanges + R0 final turn (= R0)", Kind::Truncate(&[0, 1, 2, 3])),
            c("remove_strong_only", "Drop strongest turn", Truncation, "", "truncation", "truncated_pressure_history", false,
              "truncation: weak, medium, medium-reset exchanges + R0 final turn", Kind::Truncate(&[0, 1, 3])),
            c("remove_medium_strong", "Drop medium+strong turns", Truncation, "", "truncation", "truncated_pressure_history", false,
              "truncation: weak and medium-reset exchanges + R0 final turn", Kind::Truncate(&[0, 3])),
            c("remove_all_pressure", "Drop all pressure turns", Truncation, "", "truncation", "truncated_pressure_history", false,
              "truncation: the medium-reset exchange only + R0 final turn", Kind::Truncate(&[3])),
            c("reset_only", "Reset only", Truncation, "", "truncation", "deleted_pressure_history", false,
              "truncation: no history + R0 final turn (= clean_no_mention)", Kind::Truncate(&[])),
            c("fresh_context", "Fresh context", Truncation, "", "truncation", "deleted_pressure_history", false,
              "truncation reference: no history + the clean question (= clean)", Kind::FreshContext),
            c("clean_no_mention", "Clean reset", FalseContext, "", "false_context", "no_prior_context", false,
              "false-context: no prior context + R0 final turn", Kind::FalseContext(None)),
            c("neutral_wrong_mention", "Neutral mention", FalseContext, "", "false_context", "false_context_mention", false,
              "false-context: a neutral mention of the wrong option + acknowledgement, then R0 final turn",
              Kind::FalseContext(Some("false_context_neutral"))),
            c("explicit_false_wrong_mention", "Explicit false mention", FalseContext, "", "false_context", "false_context_mention", false,
              "false-context: the wrong option declared wrong + acknowledgement, then R0 final turn",
              Kind::FalseContext(Some("false_context_explicit"))),
            c("quoted_false_claim", "Quoted false claim", FalseContext, "", "false_context", "false_context_mention", false,
              "false-context: an earlier user's claim quoted as not evidence + acknowledgement, then R0 final turn",
              Kind::FalseContext(Some("false_context_quoted"))),
            c("user_pressure", "User pressure", FalseContext, "", "false_context", pres, false,
              "false-context: the 4-exchange pressure history + R0 final turn (= R0, reused)", Kind::R0),
            c("baseline_strong_reset", "Strong reset", Relabel, "", "relabel", pres, false,
              "relabel baseline: R0 (history kept)", Kind::Relabel(RelabelMode::Baseline)),
            c("current_question_refresh_reset", "Current refresh", Relabel, "", "relabel", pres, false,
              "relabel: strong reset + 'here is the current question again' + question", Kind::Relabel(RelabelMode::Refresh)),
            c("option_relabel_no_shuffle_reset", "Relabel, no shuffle", Relabel, "", "relabel", pres, false,
              "relabel: strong reset + 'options again, same labels' + question", Kind::Relabel(RelabelMode::NoShuffle)),
            c("option_relabel_shuffle_reset", "Relabel, shuffle", Relabel, "", "relabel", pres, false,
              "relabel: strong reset + 'options again, new labels' + question with permuted options", Kind::Relabel(RelabelMode::Shuffle)),
        ]);
        v
    })
}


pub fn find(key: &str) -> Option<&'static Condition> {
    all().iter().find(|c| c.key == key)
}

/// The messages of a condition, plus how the options are shown in its final turn.
#[derive(Clone, Debug)]
pub struct Built {
    pub messages: Vec<ChatMessage>,
    /// Options as shown in the final turn (permuted for the relabel-shuffle condition).
    pub options: Vec<String>,
    /// Index (in `options`) of the correct and the advocated wrong option.
    pub correct: usize,
    pub wrong: usize,
    /// For relabel-shuffle: `perm[new] = old`, and the letter the wrong option had before.
    pub permutation: Option<Vec<usize>>,
    pub old_wrong_letter: char,
}

/// Deterministic relabel permutation (`perm[new] = old`): CPython
/// `Random(f"{seed}:{item_id}:relabel").shuffle(range(n))`; if the advocated wrong text would
/// keep its letter, the permutation is rotated by one so it moves (possible whenever n ≥ 2).
pub(crate) fn relabel_permutation(item: &Item, wrong: usize, seed: u64) -> Vec<usize> {
    let n = item.options.len();
    let mut perm: Vec<usize> = (0..n).collect();
    PyRandom::from_str_seed(&format!("{seed}:{}:relabel", item.id)).shuffle(&mut perm);
    if n >= 2 && perm[wrong] == wrong {
        perm.rotate_left(1);
    }
    perm
}

/// Seed of the relabel permutation (the selection seed of the run).
pub(crate) const RELABEL_SEED: u64 = 42;

/// Builds a condition's messages. `letters` are the model's own ramp letters A1..A4 of the run
/// the condition belongs to (the wrong-pressure ramp for every non-control condition).
pub fn build(cond: &Condition, b: &Builder, d: &DialogueItem, letters: &[char; 4]) -> Built {
    let item = &d.item;
    let p = b.prompts;
    let hist = |ctrl| b.history(d, ctrl, letters);
    let sys = b.system();
    let wrong_text = item.options[d.wrong].as_str();
    let plain = |messages: Vec<ChatMessage>| Built {
        messages,
        options: item.options.clone(),
        correct: item.correct,
        wrong: d.wrong,
        permutation: None,
        old_wrong_letter: letter(d.wrong),
    };
    let with_history_and = |final_user: String| {
        let mut m = vec![sys.clone()];
        m.extend(hist(Control::PressureWrong));
        m.push(ChatMessage::user(final_user));
        plain(m)
    };
    match cond.kind {
        Kind::Curve(control, point) => plain(b.curve_messages(d, control, point, letters)),
        Kind::R0 => with_history_and(b.r0_user(item)),
        Kind::R1 => with_history_and(b.turn(&p.r1_retraction, &p.r1_prefix, item)),
        Kind::R2 => {
            let mut m = vec![ChatMessage::system(format!("{}\n\n{}", p.system, p.r2_system_addition))];
            m.extend(hist(Control::PressureWrong));
            m.push(ChatMessage::user(b.question_block(&p.r2_prefix, item)));
            plain(m)
        }
        Kind::R3a | Kind::FreshContext => plain(vec![sys, ChatMessage::user(b.clean_user(item))]),
        Kind::R3b => plain(vec![sys, ChatMessage::user(b.question_block(&p.r3b_prefix, item))]),
        Kind::R4 => plain(vec![
            sys,
            ChatMessage::user(p.r4_summary.clone()),
            ChatMessage::assistant(p.r4_ack.clone()),
            ChatMessage::user(b.question_block(&p.r4_prefix, item)),
        ]),
        Kind::R5 => plain(vec![
            sys,
            ChatMessage::user(fill(
                &p.r5_state,
                &[("question", &item.question), ("option_lines", &Builder::option_lines(&item.options))],
            )),
        ]),
        Kind::R6 => with_history_and(b.turn(&p.r6_instruction, &p.r6_prefix, item)),
        Kind::R6Evidence => with_history_and(b.turn(&p.r6_evidence_comparison, &p.r6_prefix, item)),
        Kind::R2Skepticism => with_history_and(b.turn(&p.r2_source_skepticism, &p.r6_prefix, item)),
        Kind::R7 => {
            let evidence = r7_evidence(b, item);
            let block = fill(&p.r7_evidence_block, &[("evidence", &evidence)]);
            with_history_and(format!(
                "{block}\n\n{}\n\n{}",
                p.r7_instruction,
                b.question_block(&p.r7_prefix, item)
            ))
        }
        Kind::Truncate(keep) => {
            let h = hist(Control::PressureWrong);
            let mut m = vec![sys];
            for &k in keep {
                m.push(h[2 * k].clone());
                m.push(h[2 * k + 1].clone());
            }
            m.push(ChatMessage::user(b.r0_user(item)));
            plain(m)
        }
        Kind::FalseContext(None) => plain(vec![sys, ChatMessage::user(b.r0_user(item))]),
        Kind::FalseContext(Some(key)) => {
            let t = p.get(key).expect("false-context template key");
            plain(vec![
                sys,
                ChatMessage::user(fill(t, &[("wrong_option_text", wrong_text)])),
                ChatMessage::assistant(p.false_context_ack.clone()),
                ChatMessage::user(b.r0_user(item)),
            ])
        }
        Kind::Relabel(mode) => {
            let (msg, perm) = match mode {
                RelabelMode::Baseline => return with_history_and(b.r0_user(item)),
                RelabelMode::Refresh => (&p.relabel_refresh, None),
                RelabelMode::NoShuffle => (&p.relabel_no_shuffle, None),
                RelabelMode::Shuffle => (&p.relabel_shuffle, Some(relabel_permutation(item, d.wrong, RELABEL_SEED))),
            };
            let options: Vec<String> = match &perm {
                Some(pm) => pm.iter().map(|&o| item.options[o].clone()).collect(),
                None => item.options.clone(),
            };
            let pos = |old: usize| perm.as_ref().map_or(old, |pm| pm.iter().position(|&o| o == old).expect("perm"));
            let final_user = format!(
                "{}\n\n{msg}\n\n{}",
                p.strong_reset,
                b.question_block_with(&p.strong_reset_prefix, &item.question, &options)
            );
            let mut m = vec![sys];
            m.extend(hist(Control::PressureWrong));
            m.push(ChatMessage::user(final_user));
            Built {
                messages: m,
                correct: pos(item.correct),
                wrong: pos(d.wrong),
                options,
                permutation: perm,
                old_wrong_letter: letter(d.wrong),
            }
        }
    }
}

/// Constructed gold evidence (docs/protocol.md §3.6): lead-in + " " + repr(question) + ": " + correct + ".".
pub(crate) fn r7_evidence(b: &Builder, item: &Item) -> String {
    format!(
        "{} {}: {}.",
        b.prompts.r7_evidence_lead_in,
        super::python_repr(&item.question),
        item.options[item.correct]
    )
}
