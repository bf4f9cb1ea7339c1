//! Every condition of the protocol (docs/protocol.md §3): the ramp steps (from [`CURVE`] and the three controls) and
//! every other condition from the recipe registry (`prompts/conditions.toml`, bundled), plus the
//! operations of experiment files (the bundled self-consistency experiment and `--experiment
//! FILE`). A [`Registry`] is a value: [`Registry::bundled`] (the built-in conditions and the
//! bundled experiments), or [`Registry::with_experiments`] with the user's files (those a run's
//! manifest records, or `--experiment`); whoever reads conditions is handed the registry of the
//! run it works on.

use std::sync::OnceLock;

use super::recipe::{self, Definition, ExperimentSource, FileKind, Group, OpFamily, OrderingFamily, RampDef, Recipe, RecipeError};
use super::{Builder, Control, CurvePoint, DialogueItem, CURVE};
use crate::protocol::letter;

// A condition's messages (`dialogue::messages`), where callers have always found them.
pub use super::messages::{run_custom_ramp, Built};
pub(crate) use super::messages::{build_recipe, clean_letter_or_correct, custom_ramp_messages, r7_evidence};

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
    /// The bundled self-consistency experiment (not part of `all`).
    SelfConsistency,
}

impl Suite {
    /// The paper's suites (`--suites all`): every suite but the bundled experiments'.
    pub const ALL: [Suite; 7] = {
        let mut a = [Suite::Ramp; 7];
        let mut i = 0;
        while i < 7 {
            a[i] = Suite::EVERY[i];
            i += 1;
        }
        a
    };
    /// Every suite, the paper's and the bundled experiments'.
    pub const EVERY: [Suite; 8] = [
        Suite::Ramp,
        Suite::Hierarchy,
        Suite::Controls,
        Suite::FalseContext,
        Suite::Truncation,
        Suite::Relabel,
        Suite::R7,
        Suite::SelfConsistency,
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
            Suite::SelfConsistency => "self-consistency",
        }
    }
}

/// What a condition does to the dialogue: a ramp step, or a recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Curve(Control, CurvePoint),
    Recipe(&'static Recipe),
    /// Step `k` of a custom ramp of an experiment file.
    RampStep(&'static RampDef, usize),
}

/// The self-conditioned ramp whose letters a condition's messages use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Base {
    /// The paper's ramp under a control.
    Paper(Control),
    /// A custom ramp of an experiment file.
    Custom(&'static RampDef),
}

impl Base {
    /// How many letters the ramp's history has (the paper's: A1 … A4).
    pub fn exchanges(self) -> usize {
        match self {
            Base::Paper(_) => recipe::PAPER_RAMP_EXCHANGES,
            Base::Custom(r) => r.steps.len(),
        }
    }
}

/// The ramp a condition builds on.
pub fn base_of(c: &Condition) -> Base {
    match c.kind {
        Kind::Curve(ctrl, _) => Base::Paper(ctrl),
        Kind::Recipe(r) => match &r.ramp {
            Some(rd) if r.keeps_history() => Base::Custom(rd),
            _ => Base::Paper(Control::PressureWrong),
        },
        Kind::RampStep(rd, _) => Base::Custom(rd),
    }
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
    /// Short label (R0 … for operations, "" otherwise).
    pub short: &'static str,
    /// `None` for the ramp steps.
    pub group: Option<Group>,
    /// `bundled prompts/conditions.toml`, an experiment file, or "" for the ramp steps.
    pub origin: &'static str,
    /// A condition whose messages are identical by construction.
    pub same_as: Option<&'static str>,
}

impl Condition {
    /// The recipe of a non-ramp condition.
    pub fn recipe(&self) -> Option<&'static Recipe> {
        match self.kind {
            Kind::Recipe(r) => Some(r),
            Kind::Curve(..) | Kind::RampStep(..) => None,
        }
    }
    /// The condition exists when the question is asked without its options (format `open`):
    /// every condition but relabelling (which is about the letters the options are shown
    /// under) and steering operations (whose read-out measures letters).
    pub fn has_open_form(&self) -> bool {
        self.group != Some(Group::Relabel) && !self.recipe().is_some_and(|r| r.shuffled) && !self.is_steered()
    }
    /// A step of a custom ramp of an experiment file.
    pub fn is_custom_ramp_step(&self) -> bool {
        matches!(self.kind, Kind::RampStep(..))
    }
    /// An operation of an experiment file (bundled or the user's).
    pub fn is_experiment(&self) -> bool {
        self.group == Some(Group::Experiment)
    }
    /// A steering operation (scored only under its control vector).
    pub fn is_steered(&self) -> bool {
        self.recipe().is_some_and(|r| r.steering.is_some())
    }
}

/// A recovery operation (docs/protocol.md §3.4–§3.6): the condition and every label the paper, its artifact and the
/// explorer use for it. The list of operations is [`recovery_ops`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryOp {
    /// Condition key, e.g. `ordinary_strong_reset`.
    pub key: &'static str,
    /// Short name: R0, R1, R2, R3a, R3b, R4, R5, R6; R6′ and R2′ (appendix), R7; an experiment's own.
    pub short: &'static str,
    /// `level` column / `minimal_recovery_level` (R3 for both R3a and R3b).
    pub level: &'static str,
    /// One of the eight main hierarchy operations (the others are appendix operations, R7 or
    /// experiment operations).
    pub main: bool,
    /// The display label (`condition_label` of the item rows).
    pub label: &'static str,
    /// Short lower-case name shown by the explorer.
    pub name: &'static str,
    /// Table 4 `condition_label` (main operations only).
    pub table4_label: &'static str,
    /// Table 17's short name of the operation (main operations only).
    pub table17_label: &'static str,
    /// Table 16's label (main operations only; Table 4's unless the paper printed another).
    pub table16_label: &'static str,
    /// Table 6's label (R0 and R7), else "".
    pub table6_label: &'static str,
    /// Column stem of `recovery_threshold_sensitivity.csv` (`<stem>_recovered`, `mro_<stem>`).
    pub sweep_stem: &'static str,
    /// Label used in `mro_distribution` (`"R0 ordinary reset=1; R3 fresh deletion=7"`).
    pub mro_label: &'static str,
    /// Operation label of the `*_with_ci.csv` files (docs/protocol.md §9.4; for experiment operations their label).
    pub ci_label: &'static str,
    pub suite: Suite,
    pub group: Group,
    /// Instruction or state (main operations; `family` in prompts/conditions.toml).
    pub family: Option<OpFamily>,
    /// The qualitative ordering's families it counts in (main operations; `ordering`).
    pub ordering: &'static [OrderingFamily],
    pub category: &'static str,
    pub history_role: &'static str,
    pub description: &'static str,
    /// The file that defines it.
    pub origin: &'static str,
}

impl RecoveryOp {
    pub fn is_experiment(&self) -> bool {
        self.group == Group::Experiment
    }
}

/// Names of the built-in conditions that code refers to: written once here, each checked to be
/// in the bundled registry by a unit test.
pub mod ids {
    pub const ORDINARY_RESET: &str = "ordinary_strong_reset";
    pub const USER_RETRACTION: &str = "explicit_user_retraction";
    pub const SYSTEM_RESET: &str = "system_level_reset";
    pub const FRESH_CONTEXT_DELETION: &str = "fresh_context_deletion";
    pub const CONTEXT_TRUNCATION: &str = "context_truncation";
    pub const NEUTRAL_SUMMARY: &str = "neutral_summary_replacement";
    pub const FACTUAL_RECONSTRUCTION: &str = "factual_state_reconstruction";
    pub const SELF_VERIFICATION: &str = "self_verification_final_label";
    pub const EVIDENCE_COMPARISON: &str = "evidence_for_each_option_then_answer";
    pub const SOURCE_SKEPTICISM: &str = "source_skepticism_reset";
    pub const TRUSTED_EVIDENCE: &str = "evidence_grounded_recovery";
    pub const FULL_HISTORY_RESET: &str = "full_history_reset";
    pub const REMOVE_STRONG_ONLY: &str = "remove_strong_only";
    pub const REMOVE_MEDIUM_STRONG: &str = "remove_medium_strong";
    pub const REMOVE_ALL_PRESSURE: &str = "remove_all_pressure";
    pub const RESET_ONLY: &str = "reset_only";
    pub const FRESH_CONTEXT: &str = "fresh_context";
    pub const CLEAN_NO_MENTION: &str = "clean_no_mention";
    pub const NEUTRAL_WRONG_MENTION: &str = "neutral_wrong_mention";
    pub const EXPLICIT_FALSE_MENTION: &str = "explicit_false_wrong_mention";
    pub const QUOTED_FALSE_CLAIM: &str = "quoted_false_claim";
    pub const USER_PRESSURE: &str = "user_pressure";
    pub const RELABEL_BASELINE: &str = "baseline_strong_reset";
    pub const RELABEL_REFRESH: &str = "current_question_refresh_reset";
    pub const RELABEL_NO_SHUFFLE: &str = "option_relabel_no_shuffle_reset";
    pub const RELABEL_SHUFFLE: &str = "option_relabel_shuffle_reset";
    /// The bundled self-consistency experiment's operations.
    pub const RESET_AFTER_CORRECT_LETTERS: &str = "reset_after_correct_letters";
    pub const RESET_AFTER_CLEAN_LETTERS: &str = "reset_after_clean_letters";
    pub const RESET_AFTER_USER_TURNS_ONLY: &str = "reset_after_user_turns_only";
    /// Every name above.
    pub const ALL: [&str; 29] = [
        ORDINARY_RESET, USER_RETRACTION, SYSTEM_RESET, FRESH_CONTEXT_DELETION, CONTEXT_TRUNCATION,
        NEUTRAL_SUMMARY, FACTUAL_RECONSTRUCTION, SELF_VERIFICATION, EVIDENCE_COMPARISON,
        SOURCE_SKEPTICISM, TRUSTED_EVIDENCE, FULL_HISTORY_RESET, REMOVE_STRONG_ONLY,
        REMOVE_MEDIUM_STRONG, REMOVE_ALL_PRESSURE, RESET_ONLY, FRESH_CONTEXT, CLEAN_NO_MENTION,
        NEUTRAL_WRONG_MENTION, EXPLICIT_FALSE_MENTION, QUOTED_FALSE_CLAIM, USER_PRESSURE,
        RELABEL_BASELINE, RELABEL_REFRESH, RELABEL_NO_SHUFFLE, RELABEL_SHUFFLE,
        RESET_AFTER_CORRECT_LETTERS, RESET_AFTER_CLEAN_LETTERS, RESET_AFTER_USER_TURNS_ONLY,
    ];
}

/// The conditions of one set of experiment files: the built-in ones, the bundled experiments'
/// and the user's. Built once per set and never freed (its conditions are `'static`), so it is
/// handed around as `&'static Registry`.
#[derive(Debug)]
pub struct Registry {
    conditions: Vec<Condition>,
    ops: Vec<RecoveryOp>,
    main: Vec<RecoveryOp>,
    user: Vec<ExperimentSource>,
    by_group: Vec<(Group, Vec<&'static str>)>,
    ramps: Vec<&'static RampDef>,
    /// [`Registry::sources`] of every condition, in [`Registry::all`] order.
    sources: Vec<&'static [&'static str]>,
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

impl Registry {
    fn build(user: &[ExperimentSource]) -> Result<Registry, RecipeError> {
        let origin = "bundled prompts/conditions.toml";
        let mut defs: Vec<Definition> = recipe::parse_file(crate::prompts::bundled_conditions(), origin, FileKind::Registry)?.defs;
        let sc = ExperimentSource::bundled_self_consistency();
        let mut files = vec![sc];
        files.extend(user.iter().cloned());
        let mut ramps: Vec<&'static RampDef> = Vec::new();
        for f in &files {
            let parsed = recipe::parse_file(&f.content, &f.path, FileKind::Experiment)?;
            // Every name a file adds (ramps, their steps, operations) must be new.
            let taken = |name: &str, defs: &[Definition], ramps: &[&RampDef]| -> Option<String> {
                if let Some(o) = defs.iter().find(|o| o.name == name) {
                    return Some(if o.origin == origin { "a built-in condition".to_string() } else { format!("an operation of {}", o.origin) });
                }
                if curve_keys().any(|k| k == name) || [Control::PressureWrong, Control::NeutralHistory, Control::CorrectPressure].iter().any(|c| c.key() == name) {
                    return Some("a step or control of the paper's ramp".to_string());
                }
                ramps.iter().find(|r| r.name == name || (0..r.steps.len()).any(|k| r.step_key(k) == name)).map(|r| format!("a ramp or ramp step of {}", r.origin))
            };
            for r in &parsed.ramps {
                let err = |m: String| RecipeError { file: f.path.clone(), condition: r.name.clone(), field: "name".into(), message: m };
                for name in std::iter::once(r.name.clone()).chain((0..r.steps.len()).map(|k| r.step_key(k))) {
                    if let Some(what) = taken(&name, &defs, &ramps).or_else(|| parsed.defs.iter().any(|d| d.name == name).then(|| "an operation of this file".to_string())) {
                        return Err(err(format!("{name:?} is already {what}")));
                    }
                }
            }
            for r in &parsed.ramps {
                // Its steps' labels (<short>1, …) must not be any other short label.
                let shorts = (0..r.steps.len()).map(|k| format!("{}{}", r.short, k + 1)).filter(|_| !r.short.is_empty());
                for s in shorts {
                    let other_ramp = ramps.iter().any(|o| !o.short.is_empty() && (1..=o.steps.len()).any(|k| format!("{}{k}", o.short) == s));
                    let op = defs.iter().chain(&parsed.defs).find(|d| d.short == s).map(|d| d.name.clone());
                    if other_ramp || op.is_some() {
                        let by = op.unwrap_or_else(|| "another ramp's step".into());
                        return Err(RecipeError { file: f.path.clone(), condition: r.name.clone(), field: "short".into(), message: format!("its step label {s:?} is already used by {by}") });
                    }
                }
                ramps.push(Box::leak(Box::new((**r).clone())));
            }
            for d in parsed.defs {
                let err = |field: &str, m: String| RecipeError {
                    file: f.path.clone(),
                    condition: d.name.clone(),
                    field: field.into(),
                    message: m,
                };
                if let Some(what) = taken(&d.name, &defs, &ramps) {
                    return Err(err("name", format!("{:?} is already {what}", d.name)));
                }
                if let Some(o) = defs.iter().find(|o| !o.short.is_empty() && o.short == d.short) {
                    return Err(err("short", format!("short label {:?} is already used by {}", d.short, o.name)));
                }
                defs.push(d);
            }
        }
        resolve_contexts(&mut defs)?;
        for d in &defs {
            let err = |m: String| RecipeError { file: d.origin.clone(), condition: d.name.clone(), field: "same_as".into(), message: m };
            // A chain of `same_as` ends: at a condition that names none, or at a ramp step.
            let mut seen = vec![d.name.as_str()];
            let mut at = d;
            while let Some(t) = &at.same_as {
                if seen.contains(&t.as_str()) {
                    return Err(err(format!("the `same_as` chain {} comes back to {t:?}", seen.join(" -> "))));
                }
                seen.push(t);
                match defs.iter().find(|o| &o.name == t) {
                    Some(o) if o.recipe.steering.is_some() => return Err(err(format!("{t:?} is steered: its scores are its own"))),
                    Some(o) => at = o,
                    None if curve_keys().any(|k| &k == t) => break,
                    None => return Err(err(format!("no condition or ramp step {t:?}"))),
                }
            }
        }
        let mut conditions = Vec::new();
        for control in [Control::PressureWrong, Control::NeutralHistory, Control::CorrectPressure] {
            for p in CURVE {
                let (key, suite) = match control {
                    Control::PressureWrong => (p.key().to_string(), Suite::Ramp),
                    _ => (format!("{}:{}", control.key(), p.key()), Suite::Controls),
                };
                // The probe is scored again with the clean step's very prompt.
                let same_as = p.same_as().map(|twin| match control {
                    Control::PressureWrong => twin.key(),
                    _ => leak(&format!("{}:{}", control.key(), twin.key())),
                });
                conditions.push(Condition {
                    key,
                    label: p.key().to_string(),
                    suite,
                    level: "",
                    category: "pressure_ramp",
                    history_role: "pressure_ramp",
                    is_main: false,
                    description: p.description(),
                    kind: Kind::Curve(control, p),
                    short: "",
                    group: None,
                    origin: "",
                    same_as,
                });
            }
        }
        // The custom ramps' steps follow the paper's ramp.
        for r in &ramps {
            for k in 0..r.steps.len() {
                let key = r.step_key(k);
                conditions.push(Condition {
                    label: format!("{} {}", r.name, r.steps[k].name),
                    suite: r.suite,
                    level: "",
                    category: "custom_ramp",
                    history_role: "custom_pressure_ramp",
                    is_main: false,
                    description: leak(&format!("{} — step {} of {}", r.description, k + 1, r.steps.len())),
                    kind: Kind::RampStep(r, k),
                    short: leak(&if r.short.is_empty() { String::new() } else { format!("{}{}", r.short, k + 1) }),
                    group: None,
                    origin: leak(&r.origin),
                    same_as: None,
                    key,
                });
            }
        }
        // The operations first by group (main in scan order, then appendix, then evidence),
        // then the other conditions, then the experiments' operations, each in file order: the
        // registry order is the item rows' order (a main operation added at the end of the file
        // still scans and shows with the main ones).
        let rank = |g: Group| match g {
            Group::Main => 0,
            Group::Appendix => 1,
            Group::Evidence => 2,
            Group::Truncation | Group::FalseContext | Group::Relabel => 3,
            Group::Experiment => 4,
        };
        let mut ordered: Vec<&Definition> = defs.iter().collect();
        ordered.sort_by_key(|d| rank(d.group));
        let mut ops = Vec::new();
        for d in ordered {
            let c = Condition {
                key: d.name.clone(),
                label: d.label.clone(),
                suite: d.suite,
                level: leak(&d.level),
                category: leak(&d.category),
                history_role: leak(&d.history_role),
                is_main: d.group == Group::Main,
                description: leak(&d.description),
                kind: Kind::Recipe(Box::leak(Box::new(d.recipe.clone()))),
                short: leak(&d.short),
                group: Some(d.group),
                origin: leak(&d.origin),
                same_as: d.same_as.as_deref().map(leak),
            };
            if d.group.is_operation() {
                ops.push(RecoveryOp {
                    key: leak(&d.name),
                    short: c.short,
                    level: c.level,
                    main: c.is_main,
                    label: leak(&d.label),
                    name: leak(&d.ui_name),
                    table4_label: leak(&d.labels.table4),
                    table17_label: leak(&d.labels.table17),
                    table16_label: leak(if d.labels.table16.is_empty() { &d.labels.table4 } else { &d.labels.table16 }),
                    table6_label: leak(&d.labels.table6),
                    sweep_stem: leak(&d.labels.sweep_stem),
                    mro_label: leak(&d.labels.mro),
                    ci_label: if d.group == Group::Experiment { leak(&d.label) } else { leak(&d.labels.ci) },
                    suite: d.suite,
                    group: d.group,
                    family: d.family,
                    ordering: Box::leak(d.ordering.clone().into_boxed_slice()),
                    category: c.category,
                    history_role: c.history_role,
                    description: c.description,
                    origin: c.origin,
                });
            }
            conditions.push(c);
        }
        let main = ops.iter().filter(|o| o.main).copied().collect();
        let by_group = [Group::Truncation, Group::FalseContext, Group::Relabel, Group::Experiment]
            .into_iter()
            .map(|g| (g, conditions.iter().filter(|c| c.group == Some(g)).map(|c| leak(&c.key)).collect()))
            .collect();
        let sources = conditions.iter().map(|c| &*Box::leak(same_rows(&conditions, &c.key).into_boxed_slice())).collect();
        Ok(Registry { conditions, ops, main, user: user.to_vec(), by_group, ramps, sources })
    }
}

/// Gives each steering operation written with `context = "…"` the recipe of that condition (its
/// own steering kept), and the history role and description it did not write.
fn resolve_contexts(defs: &mut [Definition]) -> Result<(), RecipeError> {
    for i in 0..defs.len() {
        let Some(target) = defs[i].context_of.clone() else { continue };
        let d = &defs[i];
        let err = |m: String| RecipeError { file: d.origin.clone(), condition: d.name.clone(), field: "context".into(), message: m };
        let Some(t) = defs.iter().find(|o| o.name == target) else {
            let hint = if curve_keys().any(|k| k == target) { " (a ramp step is not an operation's context: write its dialogue)" } else { "" };
            return Err(err(format!("no condition {target:?}{hint}")));
        };
        if t.context_of.is_some() || t.recipe.steering.is_some() {
            return Err(err(format!("{target:?} is itself steered: give the unsteered condition whose context to steer")));
        }
        let (recipe, role, short) = (t.recipe.clone(), t.history_role.clone(), t.short.clone());
        let d = &mut defs[i];
        let steering = d.recipe.steering.take();
        if d.description.is_empty() {
            let shown = if short.is_empty() { target.clone() } else { format!("{short}, {target}") };
            let how = steering.as_ref().map_or(String::new(), |s| s.describe());
            d.description = format!("{}: the context of {shown}, steered with {how}", recipe::origin_name(&d.origin));
        }
        if d.history_role.is_empty() {
            d.history_role = role;
        }
        d.recipe = Recipe { steering, ..recipe };
    }
    Ok(())
}

/// The conditions whose rows stand for `key`'s (see [`Registry::sources`]).
fn same_rows(conditions: &[Condition], key: &str) -> Vec<&'static str> {
    let forward = |key: &str| -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut at = conditions.iter().find(|c| c.key == key);
        while let Some(c) = at {
            out.push(leak(&c.key));
            at = c.same_as.and_then(|t| conditions.iter().find(|o| o.key == t)).filter(|o| !out.contains(&o.key.as_str()));
        }
        out
    };
    let mut out = forward(key);
    for c in conditions {
        if !out.contains(&c.key.as_str()) && forward(&c.key).contains(&key) {
            out.push(leak(&c.key));
        }
    }
    out
}

fn curve_keys() -> impl Iterator<Item = String> {
    [Control::PressureWrong, Control::NeutralHistory, Control::CorrectPressure].into_iter().flat_map(|c| {
        CURVE.iter().map(move |p| match c {
            Control::PressureWrong => p.key().to_string(),
            _ => format!("{}:{}", c.key(), p.key()),
        })
    })
}

impl Registry {
    /// The built-in conditions and the bundled experiments (no user file), built on first use.
    pub fn bundled() -> &'static Registry {
        static BUNDLED: OnceLock<Registry> = OnceLock::new();
        BUNDLED.get_or_init(|| Registry::build(&[]).expect("bundled registry is valid (checked by unit tests)"))
    }

    /// The registry with the user's experiment files (a file listed twice in a row counts
    /// once): their operations follow the built-in ones, in file order. Without files, the
    /// [`bundled`](Self::bundled) one.
    pub fn with_experiments(files: &[ExperimentSource]) -> Result<&'static Registry, RecipeError> {
        let mut files = files.to_vec();
        files.dedup_by(|a, b| a.sha256 == b.sha256);
        if files.is_empty() {
            return Ok(Registry::bundled());
        }
        Ok(Box::leak(Box::new(Registry::build(&files)?)))
    }

    /// The user's experiment files in the registry (what a run records in its manifest).
    pub fn user_experiments(&self) -> &[ExperimentSource] {
        &self.user
    }

    /// The custom pressure ramps of the experiment files, in file order.
    pub fn custom_ramps(&self) -> &[&'static RampDef] {
        &self.ramps
    }

    /// The custom ramp of a name.
    pub fn custom_ramp(&self, name: &str) -> Option<&'static RampDef> {
        self.ramps.iter().copied().find(|r| r.name == name)
    }

    /// Every condition, in a stable order: the ramp steps, the recovery operations, the other
    /// built-in conditions, then experiment operations.
    pub fn all(&self) -> &[Condition] {
        &self.conditions
    }

    /// Every recovery operation: the eight main ones in minimal-recovery scan order (R0, R1,
    /// R2, R3a, R3b, R4, R5, R6), then R6′ and R2′ (appendix), R7, and the experiments'
    /// operations.
    pub fn recovery_ops(&self) -> &[RecoveryOp] {
        &self.ops
    }

    /// The eight main operations in minimal-recovery scan order.
    pub fn main_ops(&self) -> &[RecoveryOp] {
        &self.main
    }

    /// The recovery operation of a condition key.
    pub fn recovery_op(&self, key: &str) -> Option<&RecoveryOp> {
        self.ops.iter().find(|o| o.key == key)
    }

    /// The main operation of a condition key.
    pub fn main_op(&self, key: &str) -> Option<&RecoveryOp> {
        self.main.iter().find(|o| o.key == key)
    }

    /// Condition keys of a group, in registry order: the row order of the truncation,
    /// false-context and relabel tables (truncation, false-context, relabel and experiment
    /// groups only).
    pub fn group_keys(&self, g: Group) -> &[&'static str] {
        self.by_group.iter().find(|(x, _)| *x == g).map_or(&[], |(_, v)| v.as_slice())
    }

    /// The recovery operations the explorer steps through: the built-in ones and the user's
    /// experiment operations (the bundled experiments' are shown when a stored run has them).
    pub fn explorer_ops(&self) -> impl Iterator<Item = &RecoveryOp> {
        self.ops.iter().filter(|o| !o.is_experiment() || !o.origin.starts_with("bundled "))
    }

    /// The conditions whose rows a table may use for `key`'s, in the order it prefers them: the
    /// condition itself, then the conditions it is declared the same as (`same_as` in
    /// prompts/conditions.toml, followed to its end: a condition or a step of the pressure
    /// ramp, whose clean probe is the clean step again), then the conditions declared the same
    /// as it. Their messages are identical by construction, so their scores are too
    /// (docs/protocol.md §3.10). Empty for an unknown key.
    pub fn sources(&self, key: &str) -> &'static [&'static str] {
        self.conditions.iter().position(|c| c.key == key).map_or(&[], |i| self.sources[i])
    }

    /// The clean reference of the tables: the clean probe, else the identical clean step, …
    pub fn clean_ref(&self) -> &'static [&'static str] {
        self.sources(super::CurvePoint::CleanContextProbe.key())
    }

    /// The ordinary reset R0 as a reference: the hierarchy's condition, else the ramp's step
    /// that is the same prompt, …
    pub fn r0_ref(&self) -> &'static [&'static str] {
        self.sources(ids::ORDINARY_RESET)
    }

    /// [`explorer_ops`](Self::explorer_ops), each with the group whose section it opens (its
    /// group differs from the operation's before it), if it opens one: the views head a section
    /// on a change of group.
    pub fn explorer_sections(&self) -> impl Iterator<Item = (Option<Group>, &RecoveryOp)> {
        let mut before: Option<Group> = None;
        self.explorer_ops().map(move |o| (opens_section(&mut before, o), o))
    }

    pub fn find(&self, key: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.key == key)
    }

    /// A condition's position in [`all`](Self::all) (the item rows' order), `usize::MAX` for
    /// an unknown key.
    pub fn position(&self, key: &str) -> usize {
        self.conditions.iter().position(|c| c.key == key).unwrap_or(usize::MAX)
    }
}

/// The eight main operations in minimal-recovery scan order. Built-in: every registry has the
/// same (an experiment file adds experiment operations only), so the bundled one says them.
pub fn main_ops() -> &'static [RecoveryOp] {
    Registry::bundled().main_ops()
}

/// The main operation of a condition key (built-in, as [`main_ops`]).
pub fn main_op(key: &str) -> Option<&'static RecoveryOp> {
    Registry::bundled().main_op(key)
}

/// Condition keys of a built-in group (truncation, false-context, relabel; evidence), in
/// registry order: the row order of their tables. Every registry has the same; an experiment
/// group's keys are [`Registry::group_keys`].
pub fn group_keys(g: Group) -> &'static [&'static str] {
    assert!(g != Group::Experiment, "the experiment group differs per registry: Registry::group_keys");
    Registry::bundled().group_keys(g)
}

/// The group whose section opens at `o`, shown after an operation of group `before` (`None`:
/// the first); `before` becomes `o`'s group.
pub(crate) fn opens_section(before: &mut Option<Group>, o: &RecoveryOp) -> Option<Group> {
    let opens = (*before != Some(o.group)).then_some(o.group);
    *before = Some(o.group);
    opens
}

/// Builds a condition's messages. `letters` are the model's own letters on the ramp the condition
/// builds on ([`base_of`]: A1..A4 of the paper's wrong-pressure ramp for every non-control
/// condition, one per step for a custom ramp; a ramp step uses those before it); `clean` is the
/// model's clean-context prediction (used by recipes whose assistant turns repeat it).
pub fn build(cond: &Condition, b: &Builder, d: &DialogueItem, letters: &[char], clean: char) -> Built {
    match cond.kind {
        Kind::RampStep(r, k) => Built {
            messages: custom_ramp_messages(b, d, r, k, letters),
            options: d.item.options.clone(),
            correct: d.item.correct,
            wrong: d.wrong,
            permutation: None,
            old_wrong_letter: letter(d.wrong),
        },
        Kind::Curve(control, point) => {
            let item = &d.item;
            Built {
                messages: b.curve_messages(d, control, point, letters),
                options: item.options.clone(),
                correct: item.correct,
                wrong: d.wrong,
                permutation: None,
                old_wrong_letter: letter(d.wrong),
            }
        }
        Kind::Recipe(r) => build_recipe(r, b, d, letters, clean),
    }

}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steering_operation_takes_its_context_from_the_condition_it_names() {
        let file = |ctx: &str| {
            ExperimentSource::new(
                "steer.toml",
                format!("[[operation]]\nname = \"s1\"\nshort = \"S1\"\ncontext = \"{ctx}\"\n[operation.steering]\nvector = \"v.gguf\"\nalpha = 1.5\n\n[[operation]]\nname = \"s2\"\nshort = \"S2\"\ncontext = \"s1\"\n[operation.steering]\nvector = \"v.gguf\"\nalpha = 2\n"),
            )
        };
        let e = Registry::with_experiments(&[file(ids::ORDINARY_RESET)]).unwrap_err().to_string();
        assert!(e.contains("operation `s2`: field `context`: \"s1\" is itself steered"), "{e}");
        let one = |ctx: &str| ExperimentSource::new("steer.toml", format!("[[operation]]\nname = \"s1\"\nshort = \"S1\"\ncontext = \"{ctx}\"\n[operation.steering]\nvector = \"v.gguf\"\nalpha = 1.5\n"));
        let reg = Registry::with_experiments(&[one(ids::ORDINARY_RESET)]).unwrap();
        let (s1, r0) = (reg.find("s1").unwrap(), reg.find(ids::ORDINARY_RESET).unwrap());
        let (a, b) = (s1.recipe().unwrap(), r0.recipe().unwrap());
        assert_eq!(a.steering.as_ref().map(|s| s.alpha), Some(1.5));
        assert_eq!(Recipe { steering: None, ..a.clone() }, *b, "R0's dialogue, untouched");
        assert_eq!(s1.history_role, r0.history_role);
        assert!(s1.description.contains("the context of R0"), "{}", s1.description);
        // Its scores are its own: no table takes R0's rows for it.
        assert_eq!(reg.sources("s1"), ["s1"]);
        for bad in ["strong_reset", "no_such_condition"] {
            let e = Registry::with_experiments(&[one(bad)]).unwrap_err().to_string();
            assert!(e.contains("field `context`: no condition"), "{e}");
        }
    }
}
