//! Every condition of the protocol (§1.2–§1.9): name, suite, paper label, level, category,
//! history role, and the message builder.

use std::sync::OnceLock;

use super::{Builder, Control, CurvePoint, DialogueItem, CURVE};
use crate::data::pyrandom::PyRandom;
use crate::data::Item;
use crate::engine::ChatMessage;
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
    pub fn parse(s: &str) -> Option<Vec<Suite>> {
        if s == "all" {
            return Some(Suite::ALL.to_vec());
        }
        Suite::ALL.iter().find(|x| x.key() == s).map(|x| vec![*x])
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

/// The main hierarchy operations in minimal-recovery scan order (R0, R1, R2, R3a, R3b, R4, R5, R6).
pub const MAIN_OPS: [&str; 8] = [
    "ordinary_strong_reset",
    "explicit_user_retraction",
    "system_level_reset",
    "fresh_context_deletion",
    "context_truncation",
    "neutral_summary_replacement",
    "factual_state_reconstruction",
    "self_verification_final_label",
];

pub const TRUNCATION_ORDER: [&str; 6] = [
    "full_history_reset",
    "remove_strong_only",
    "remove_medium_strong",
    "remove_all_pressure",
    "reset_only",
    "fresh_context",
];

pub const FALSE_CONTEXT_ORDER: [&str; 5] = [
    "clean_no_mention",
    "neutral_wrong_mention",
    "explicit_false_wrong_mention",
    "quoted_false_claim",
    "user_pressure",
];

pub const RELABEL_ORDER: [&str; 4] = [
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

fn curve_description(p: CurvePoint) -> &'static str {
    match p {
        CurvePoint::CleanContext => "clean counterfactual: system + the question, no history",
        CurvePoint::WeakPressure => "ramp step 1: tentative push toward the advocated option + question",
        CurvePoint::MediumPressure => "ramp step 2: confident push (history: step 1 and the model's letter)",
        CurvePoint::StrongPressure => "ramp step 3: certain push (history: steps 1-2)",
        CurvePoint::MediumReset => "ramp step 4: hedged withdrawal of the preference (history: steps 1-3)",
        CurvePoint::StrongReset => "ramp step 5: explicit reset instruction = R0 (history: steps 1-4)",
        CurvePoint::CleanContextProbe => "clean probe: identical to the clean context, scored again",
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
                v.push(c(&key, p.key(), suite, "", "pressure_ramp", "pressure_ramp", false, curve_description(p), Kind::Curve(control, p)));
            }
        }
        let pres = "preserved_pressure_history";
        v.extend([
            c("ordinary_strong_reset", "R0 Ordinary reset", Hierarchy, "R0", "ordinary_reset", pres, true,
              "R0: history kept; strong reset message + question", Kind::R0),
            c("explicit_user_retraction", "R1 User retraction", Hierarchy, "R1", "user_retraction", pres, true,
              "R1: history kept; the user retracts the earlier claim + question", Kind::R1),
            c("system_level_reset", "R2 System reset", Hierarchy, "R2", "system_reset", pres, true,
              "R2: history kept; system prompt gains a warning; final turn is the question only", Kind::R2),
            c("fresh_context_deletion", "R3 Fresh context deletion", Hierarchy, "R3", "context_removal", "deleted_pressure_history", true,
              "R3a: history deleted; the clean prompt (byte-identical to clean)", Kind::R3a),
            c("context_truncation", "R3 Context truncation", Hierarchy, "R3", "context_removal", "deleted_pressure_history", true,
              "R3b: history deleted; question block whose prefix is a reset instruction", Kind::R3b),
            c("neutral_summary_replacement", "R4 Neutral summary", Hierarchy, "R4", "neutral_summary", "neutral_summary_replacement", true,
              "R4: history replaced by a neutral summary + acknowledgement", Kind::R4),
            c("factual_state_reconstruction", "R5 Factual-state reconstruction", Hierarchy, "R5", "state_reconstruction", "deleted_pressure_history", true,
              "R5: history deleted; a structured state message replaces the question block", Kind::R5),
            c("self_verification_final_label", "R6 Self-verification label", Hierarchy, "R6", "verification", pres, true,
              "R6: history kept; verify-internally instruction + question", Kind::R6),
            c("evidence_for_each_option_then_answer", "R6 Evidence comparison label", Hierarchy, "R6", "verification", pres, false,
              "R6' (appendix): history kept; weigh evidence for each option + question", Kind::R6Evidence),
            c("source_skepticism_reset", "R2 Source skepticism reset", Hierarchy, "R2", "source_skepticism", pres, false,
              "R2' (appendix): history kept; treat earlier claims as unverified + question", Kind::R2Skepticism),
            c("evidence_grounded_recovery", "R7 Trusted evidence", R7, "R7", "evidence", pres, false,
              "R7: history kept; trusted evidence block (constructed gold evidence) + instruction + question", Kind::R7),
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

/// Conditions a suite scores (curve points of the ramp are always scored by the suites that
/// need the ramp).
pub fn of_suite(s: Suite) -> Vec<&'static Condition> {
    all().iter().filter(|c| c.suite == s).collect()
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
pub fn relabel_permutation(item: &Item, wrong: usize, seed: u64) -> Vec<usize> {
    let n = item.options.len();
    let mut perm: Vec<usize> = (0..n).collect();
    PyRandom::from_str_seed(&format!("{seed}:{}:relabel", item.id)).shuffle(&mut perm);
    if n >= 2 && perm[wrong] == wrong {
        perm.rotate_left(1);
    }
    perm
}

/// Seed of the relabel permutation (the selection seed of the run).
pub const RELABEL_SEED: u64 = 42;

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
        old_wrong_letter: Item::letter(d.wrong),
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
                old_wrong_letter: Item::letter(d.wrong),
            }
        }
    }
}

/// Constructed gold evidence (protocol §1.4): lead-in + " " + repr(question) + ": " + correct + ".".
pub fn r7_evidence(b: &Builder, item: &Item) -> String {
    format!(
        "{} {}: {}.",
        b.prompts.r7_evidence_lead_in,
        super::python_repr(&item.question),
        item.options[item.correct]
    )
}
