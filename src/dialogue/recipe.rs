//! Conditions as data: the recipe schema shared by the bundled registry
//! (`prompts/conditions.toml`) and user experiment files (`--experiment FILE`), its validation,
//! and the one function that turns a recipe into chat messages.
//!
//! A recipe says which history the dialogue keeps, what the system prompt becomes and what the
//! final user turn says. Built-in recipes name prompt keys (so `--prompts DIR` rewords them);
//! an experiment file carries its own texts.

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::Suite;
use crate::prompts::{allowed_placeholders, placeholders_in};

/// The bundled self-consistency experiment (suite `self-consistency`; also the schema's worked
/// example in the README).
pub(crate) const BUNDLED_SELF_CONSISTENCY: &str = include_str!("../../assets/experiments/self-consistency.toml");

/// Placeholders any text of a recipe may use (all optional): the advocated wrong option's text,
/// the correct option's text, the question, the option lines and R7's constructed evidence.
/// `{advocated_option_text}` is the wrong option's text too (the name the paper's ramp prompts
/// use), so a custom ramp can name the prompt keys `weak_pressure` … .
pub(crate) const RECIPE_PLACEHOLDERS: &[&str] =
    &["wrong_option_text", "correct_option_text", "question", "option_lines", "evidence", "advocated_option_text"];

/// A text of a recipe: a prompt-set key, or a text written in an experiment file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Text {
    Prompt(String),
    Own(String),
}

/// One block of the final user turn (blocks are joined by a blank line).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Block {
    Text(Text),
    /// The question block with this prefix.
    Question(Text),
}

/// Which history precedes the final turn.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum History {
    /// The 4-exchange history of the wrong-pressure ramp.
    Kept,
    /// No history.
    None,
    /// These exchanges of the ramp history (paper's ramp: 0 = weak … 3 = medium reset; a custom
    /// ramp: its steps from 0), in this order.
    Exchanges(Vec<usize>),
    /// Alternating user / assistant turns in place of the history.
    Replaced(Vec<Text>),
}

/// What the assistant turns of a kept history say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assistant {
    /// The model's own letters of its ramp (the protocol).
    Model,
    /// The correct option's letter at every turn.
    Correct,
    /// The model's clean-context prediction at every turn.
    CleanPrediction,
    /// No assistant turns; the history's user turns are joined into one user turn.
    Removed,
}

impl Assistant {
    pub(crate) fn key(self) -> &'static str {
        match self {
            Assistant::Model => "model",
            Assistant::Correct => "correct",
            Assistant::CleanPrediction => "clean_prediction",
            Assistant::Removed => "removed",
        }
    }
}

/// How a condition's dialogue is built.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recipe {
    pub history: History,
    pub assistant: Assistant,
    /// Appended to the system prompt, each after a blank line.
    pub system: Vec<Text>,
    pub turn: Vec<Block>,
    /// The final turn shows the options under the relabel permutation.
    pub shuffled: bool,
    /// The pressure ramp whose history the recipe keeps: `None` = the paper's ramp, else a
    /// custom ramp of an experiment file.
    pub ramp: Option<std::sync::Arc<RampDef>>,
}

/// A custom pressure ramp (`[[ramp]]` of an experiment file): self-conditioned like the paper's
/// (each step's assistant turn is the model's own letter at that step), with its own turns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RampDef {
    pub name: String,
    /// Short label of the ramp (its steps are `<short>1`, `<short>2`, … in the explorer).
    pub short: String,
    pub suite: Suite,
    pub description: String,
    pub steps: Vec<RampStepDef>,
    pub origin: String,
}

/// One step of a custom ramp: its user turn (blocks joined by a blank line).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RampStepDef {
    pub name: String,
    pub turn: Vec<Block>,
}

impl RampDef {
    /// The condition key of step `k` (`<ramp>:<step>`).
    pub fn step_key(&self, k: usize) -> String {
        format!("{}:{}", self.name, self.steps[k].name)
    }
}

impl Recipe {
    /// Whether the recipe keeps some of the ramp's exchanges.
    pub(crate) fn keeps_history(&self) -> bool {
        match &self.history {
            History::Kept => true,
            History::Exchanges(e) => !e.is_empty(),
            _ => false,
        }
    }
    /// Whether the final turn uses the constructed R7 evidence.
    pub(crate) fn uses_evidence(&self, prompt: &dyn Fn(&str) -> String) -> bool {
        self.texts().any(|t| {
            let s = match t {
                Text::Prompt(k) => prompt(k),
                Text::Own(s) => s.clone(),
            };
            placeholders_in(&s).contains(&"evidence")
        })
    }
    fn texts(&self) -> impl Iterator<Item = &Text> {
        let hist: Vec<&Text> = match &self.history {
            History::Replaced(t) => t.iter().collect(),
            _ => vec![],
        };
        hist.into_iter().chain(self.system.iter()).chain(self.turn.iter().map(block_text))
    }
    /// How many exchanges the recipe's ramp history has (4 for the paper's ramp).
    pub(crate) fn ramp_exchanges(&self) -> usize {
        self.ramp.as_ref().map_or(PAPER_RAMP_EXCHANGES, |r| r.steps.len())
    }
}

fn block_text(b: &Block) -> &Text {
    match b {
        Block::Text(t) | Block::Question(t) => t,
    }
}

/// The exchanges of the paper's pressure history (weak, medium, strong, medium reset).
pub(crate) const PAPER_RAMP_EXCHANGES: usize = 4;

/// Which part of the tables and the explorer a condition belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    Main,
    Appendix,
    Evidence,
    Truncation,
    FalseContext,
    Relabel,
    /// An operation of an experiment file (bundled or the user's).
    Experiment,
}

impl Group {
    const ALL: [(Group, &'static str); 7] = [
        (Group::Main, "main"),
        (Group::Appendix, "appendix"),
        (Group::Evidence, "evidence"),
        (Group::Truncation, "truncation"),
        (Group::FalseContext, "false-context"),
        (Group::Relabel, "relabel"),
        (Group::Experiment, "experiment"),
    ];
    fn parse(s: &str) -> Option<Group> {
        Self::ALL.iter().find(|(_, k)| *k == s).map(|(g, _)| *g)
    }
    /// A recovery operation (it has a short label R0 … and appears in the hierarchy views).
    pub(crate) fn is_operation(self) -> bool {
        matches!(self, Group::Main | Group::Appendix | Group::Evidence | Group::Experiment)
    }
}

/// Which kind of recovery a main operation is: the qualitative ordering compares the best of
/// each (`instruction_best_recovered`, `dialogue_state_best_recovered`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpFamily {
    /// An instruction added to the kept pressure history (R0, R1, R2).
    Instruction,
    /// The dialogue state itself changes: history deleted, replaced or reconstructed (R3a … R5).
    State,
}

/// The families of the threshold sweep's qualitative ordering (docs/protocol.md §8:
/// `state_changing_max >= neutral_or_reconstruction_max >= instruction_level_max`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderingFamily {
    InstructionLevel,
    StateChanging,
    NeutralOrReconstruction,
}

impl OpFamily {
    const ALL: [(OpFamily, &'static str); 2] = [(OpFamily::Instruction, "instruction"), (OpFamily::State, "state")];
    fn parse(s: &str) -> Option<OpFamily> {
        Self::ALL.iter().find(|(_, k)| *k == s).map(|(f, _)| *f)
    }
    /// The key as written in prompts/conditions.toml.
    pub fn key(self) -> &'static str {
        Self::ALL.iter().find(|(f, _)| *f == self).map_or("", |(_, k)| *k)
    }
}

impl OrderingFamily {
    pub(crate) const ALL: [(OrderingFamily, &'static str); 3] = [
        (OrderingFamily::InstructionLevel, "instruction-level"),
        (OrderingFamily::StateChanging, "state-changing"),
        (OrderingFamily::NeutralOrReconstruction, "neutral-or-reconstruction"),
    ];
    fn parse(s: &str) -> Option<OrderingFamily> {
        Self::ALL.iter().find(|(_, k)| *k == s).map(|(o, _)| *o)
    }
    /// The key as written in prompts/conditions.toml.
    pub fn key(self) -> &'static str {
        Self::ALL.iter().find(|(o, _)| *o == self).map_or("", |(_, k)| *k)
    }
}

/// Table labels of an operation (the five of a main operation are required).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Labels {
    /// The paper's Table 4 label (`R3a fresh-context deletion`).
    #[serde(default)]
    pub table4: String,
    /// The paper's Table 16 label where it differs from Table 4's (`R3a fresh deletion`).
    #[serde(default)]
    pub table16: String,
    /// The paper's Table 6 label (R0 and R7 only: `R7 evidence`).
    #[serde(default)]
    pub table6: String,
    /// Table 17's short name (`R3a deletion`).
    #[serde(default)]
    pub table17: String,
    #[serde(default)]
    pub sweep_stem: String,
    #[serde(default)]
    pub mro: String,
    #[serde(default)]
    pub ci: String,
}

/// One condition as written in a registry or experiment file (`[[condition]]` / `[[operation]]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCondition {
    name: String,
    #[serde(default)]
    short: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    suite: Option<String>,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    history_role: Option<String>,
    #[serde(default)]
    ui_name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    labels: Option<Labels>,
    #[serde(default)]
    family: Option<String>,
    #[serde(default)]
    ordering: Option<Vec<String>>,
    history: String,
    #[serde(default)]
    exchanges: Option<Vec<usize>>,
    #[serde(default)]
    replacement: Option<Vec<String>>,
    #[serde(default)]
    assistant: Option<String>,
    /// Registry form: prompt keys appended to the system prompt.
    #[serde(default)]
    system: Option<Vec<String>>,
    /// Experiment form: a text appended to the system prompt.
    #[serde(default)]
    system_addition: Option<String>,
    /// Registry form: blocks of prompt keys.
    #[serde(default)]
    turn: Option<Vec<String>>,
    /// Experiment form: the final turn's message (before the question block).
    #[serde(default)]
    message: Option<String>,
    /// Experiment form: the question block's prefix.
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    options: Option<String>,
    #[serde(default)]
    same_as: Option<String>,
    /// Experiment form: the ramp whose history a kept / exchanges history is (`"default"` = the
    /// paper's; else a `[[ramp]]` of the file).
    #[serde(default)]
    ramp: Option<String>,
}

/// A custom ramp as written (`[[ramp]]` with `[[ramp.step]]` tables).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRamp {
    name: String,
    #[serde(default)]
    short: Option<String>,
    #[serde(default)]
    suite: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    step: Vec<RawRampStep>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRampStep {
    name: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    prefix: Option<String>,
    #[serde(default)]
    turn: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    condition: Vec<RawCondition>,
    #[serde(default)]
    operation: Vec<RawCondition>,
    /// An experiment file's own prompt texts, usable by name in `turn`, `system`, `replacement`.
    #[serde(default)]
    prompts: indexmap::IndexMap<String, String>,
    /// Free text describing the experiment.
    #[serde(default)]
    description: Option<String>,
    /// Custom pressure ramps.
    #[serde(default)]
    ramp: Vec<RawRamp>,
    /// The ramp every operation of the file that keeps history builds on, unless it names its
    /// own (`"default"` = the paper's ramp, the default).
    #[serde(default)]
    base_ramp: Option<String>,
}

/// A validated condition definition (before it joins the registry).
#[derive(Clone, Debug)]
pub(crate) struct Definition {
    pub name: String,
    pub short: String,
    pub label: String,
    pub suite: Suite,
    pub group: Group,
    pub level: String,
    pub category: String,
    pub history_role: String,
    pub ui_name: String,
    pub description: String,
    pub labels: Labels,
    pub family: Option<OpFamily>,
    pub ordering: Vec<OrderingFamily>,
    pub recipe: Recipe,
    pub same_as: Option<String>,
    /// The file it comes from (`bundled prompts/conditions.toml`, or an experiment file).
    pub origin: String,
}

/// An experiment file as a run records it: its name, content hash and content.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExperimentSource {
    /// The path it was read from (for messages only; runs compare the hash).
    pub path: String,
    pub sha256: String,
    pub content: String,
}

impl ExperimentSource {
    pub fn new(path: &str, content: String) -> ExperimentSource {
        ExperimentSource { path: path.to_string(), sha256: hex::encode(Sha256::digest(content.as_bytes())), content }
    }
    /// Reads and checks an experiment file (one error line naming it when it cannot be read or
    /// is malformed). The source keeps the file's name, not its directory, so the same file
    /// given from another directory is the same run.
    pub fn read(path: &std::path::Path) -> Result<ExperimentSource, RecipeError> {
        let shown = path.display().to_string();
        let content = crate::util::read_input_file(path).map_err(|e| RecipeError::new(&shown, "", "", &e))?;
        parse_file(&content, &shown, FileKind::Experiment)?;
        let name = path.file_name().map_or(shown.clone(), |f| f.to_string_lossy().into_owned());
        Ok(ExperimentSource::new(&name, content))
    }
    /// The bundled self-consistency experiment.
    pub fn bundled_self_consistency() -> ExperimentSource {
        ExperimentSource::new("bundled assets/experiments/self-consistency.toml", BUNDLED_SELF_CONSISTENCY.to_string())
    }
}

/// An invalid registry or experiment file: one line naming the file, the condition and the field.
#[derive(Debug)]
pub struct RecipeError {
    pub file: String,
    pub condition: String,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for RecipeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.file)?;
        if !self.condition.is_empty() {
            write!(f, "operation `{}`: ", self.condition)?;
        }
        if !self.field.is_empty() {
            write!(f, "field `{}`: ", self.field)?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for RecipeError {}

impl RecipeError {
    fn new(file: &str, condition: &str, field: &str, message: &str) -> RecipeError {
        RecipeError { file: file.into(), condition: condition.into(), field: field.into(), message: message.into() }
    }
}

/// Whether a file's conditions are the built-in registry (prompt keys) or an experiment.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Registry,
    Experiment,
}

/// Parses and validates a registry or experiment file.
/// A parsed registry or experiment file.
pub(crate) struct Parsed {
    pub defs: Vec<Definition>,
    pub ramps: Vec<std::sync::Arc<RampDef>>,
}

pub(crate) fn parse_file(src: &str, origin: &str, kind: FileKind) -> Result<Parsed, RecipeError> {
    if let Some(m) = crate::util::toml_control_character(src) {
        return Err(RecipeError::new(origin, "", "", &m));
    }
    let raw: RawFile = toml::from_str(src).map_err(|e| {
        let (field, msg) = toml_field(src, &e);
        RecipeError::new(origin, "", &field, &msg)
    })?;
    let err = |c: &str, f: &str, m: &str| RecipeError::new(origin, c, f, m);
    match kind {
        FileKind::Registry if !raw.operation.is_empty() || !raw.prompts.is_empty() => {
            return Err(err("", "operation", "the registry lists [[condition]] tables only"))
        }
        FileKind::Experiment if !raw.condition.is_empty() => {
            return Err(err("", "condition", "an experiment file lists its operations as [[operation]]"))
        }
        FileKind::Registry if !raw.ramp.is_empty() || raw.base_ramp.is_some() => {
            return Err(err("", "ramp", "the registry's conditions build on the paper's ramp"))
        }
        _ => {}
    }
    let ramps = ramps(&raw.ramp, origin, &raw.prompts)?;
    if let Some(b) = raw.base_ramp.as_deref().filter(|&b| b != "default") {
        if !ramps.iter().any(|r| r.name == b) {
            return Err(err("", "base_ramp", &format!("no [[ramp]] named {b:?} in this file")));
        }
    }
    for (k, v) in &raw.prompts {
        check_text(v, &|m| err("", &format!("prompts.{k}"), m))?;
    }
    let list = if kind == FileKind::Registry { &raw.condition } else { &raw.operation };
    let mut out: Vec<Definition> = Vec::new();
    for rc in list {
        let d = definition(rc, origin, kind, &raw.prompts, &ramps, raw.base_ramp.as_deref())?;
        if out.iter().any(|o| o.name == d.name) {
            return Err(err(&d.name, "name", "defined twice in this file"));
        }
        if !d.short.is_empty() && out.iter().any(|o| o.short == d.short) {
            return Err(err(&d.name, "short", &format!("short label {:?} is used twice in this file", d.short)));
        }
        out.push(d);
    }
    let _ = raw.description;
    Ok(Parsed { defs: out, ramps })
}

/// The field a TOML error is about, when serde names it, and the message.
fn toml_field(src: &str, e: &toml::de::Error) -> (String, String) {
    let msg = crate::util::toml_error(src, e);
    let field = e
        .message()
        .split('`')
        .nth(1)
        .filter(|_| e.message().contains("field"))
        .unwrap_or("")
        .to_string();
    (field, msg)
}

fn check_text(text: &str, err: &dyn Fn(&str) -> RecipeError) -> Result<(), RecipeError> {
    if let Some(p) = placeholders_in(text).into_iter().find(|p| !RECIPE_PLACEHOLDERS.contains(p)) {
        let allowed: Vec<String> = RECIPE_PLACEHOLDERS.iter().map(|a| format!("{{{a}}}")).collect();
        return Err(err(&format!("unknown placeholder {{{p}}} (allowed: {})", allowed.join(", "))));
    }
    Ok(())
}

/// Reads the texts of one condition or ramp step of a file.
struct Texts<'a> {
    origin: &'a str,
    kind: FileKind,
    own_prompts: &'a indexmap::IndexMap<String, String>,
    condition: &'a str,
}

impl Texts<'_> {
    fn err(&self, field: &str, m: &str) -> RecipeError {
        RecipeError::new(self.origin, self.condition, field, m)
    }
    /// A text reference: a prompt key (registry), or an experiment's `[prompts]` name or
    /// prompt-set key.
    fn reference(&self, field: &str, s: &str) -> Result<Text, RecipeError> {
        match self.kind {
            FileKind::Registry => {
                let allowed = allowed_placeholders(s).ok_or_else(|| self.err(field, &format!("unknown prompt key `{s}`")))?;
                if let Some(p) = allowed.iter().find(|p| !RECIPE_PLACEHOLDERS.contains(p)) {
                    return Err(self.err(field, &format!("prompt key `{s}` needs {{{p}}}, which a recipe cannot fill")));
                }
                Ok(Text::Prompt(s.to_string()))
            }
            FileKind::Experiment => {
                if let Some(t) = self.own_prompts.get(s) {
                    Ok(Text::Own(t.clone()))
                } else if allowed_placeholders(s).is_some_and(|a| a.iter().all(|p| RECIPE_PLACEHOLDERS.contains(p))) {
                    Ok(Text::Prompt(s.to_string()))
                } else {
                    Err(self.err(field, &format!("`{s}` is neither a name in this file's [prompts] nor a prompt key")))
                }
            }
        }
    }
    /// A text written out in the file.
    fn own(&self, field: &str, s: &str) -> Result<Text, RecipeError> {
        check_text(s, &|m| self.err(field, m))?;
        Ok(Text::Own(s.to_string()))
    }
    /// A user turn: `turn = [blocks]` (prompt keys; `question:<key>` is the question block with
    /// that prefix), or `message` (optional) + `prefix` (an experiment's own texts).
    fn turn(&self, turn: Option<&[String]>, message: Option<&str>, prefix: Option<&str>) -> Result<Vec<Block>, RecipeError> {
        let mut out = Vec::new();
        for b in turn.into_iter().flatten() {
            out.push(match b.strip_prefix("question:") {
                Some(k) => Block::Question(self.reference("turn", k)?),
                None => Block::Text(self.reference("turn", b)?),
            });
        }
        if turn.is_some() && (message.is_some() || prefix.is_some()) {
            return Err(self.err("turn", "give either `turn` or `message` / `prefix`, not both"));
        }
        if turn.is_none() {
            if self.kind == FileKind::Registry {
                return Err(self.err("turn", "missing (the final user turn's blocks)"));
            }
            if let Some(m) = message {
                out.push(Block::Text(self.own("message", m)?));
            }
            let prefix = prefix.ok_or_else(|| self.err("prefix", "missing (the question block's first line; or give `turn`)"))?;
            out.push(Block::Question(self.own("prefix", prefix)?));
        }
        if out.is_empty() {
            return Err(self.err("turn", "the user turn is empty"));
        }
        Ok(out)
    }
}

/// A condition or ramp name: letters, digits, '_' and '-'.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses the `[[ramp]]` tables of an experiment file.
fn ramps(raw: &[RawRamp], origin: &str, own_prompts: &indexmap::IndexMap<String, String>) -> Result<Vec<std::sync::Arc<RampDef>>, RecipeError> {
    let mut out: Vec<std::sync::Arc<RampDef>> = Vec::new();
    for r in raw {
        let name = r.name.trim().to_string();
        let err = |f: &str, m: &str| RecipeError::new(origin, &name, f, m);
        if !valid_name(&name) || name == "default" {
            return Err(err("name", "a ramp name is letters, digits, '_' and '-' only, and not \"default\" (the paper's ramp)"));
        }
        if out.iter().any(|o| o.name == name) {
            return Err(err("name", "ramp defined twice in this file"));
        }
        if r.step.is_empty() {
            return Err(err("step", "a ramp needs at least one [[ramp.step]]"));
        }
        let mut steps: Vec<RampStepDef> = Vec::new();
        for st in &r.step {
            let sname = st.name.trim().to_string();
            let key = format!("{name}:{sname}");
            let texts = Texts { origin, kind: FileKind::Experiment, own_prompts, condition: &key };
            if !valid_name(&sname) {
                return Err(texts.err("name", "a step name is letters, digits, '_' and '-' only"));
            }
            if steps.iter().any(|o| o.name == sname) {
                return Err(texts.err("name", "step defined twice in this ramp"));
            }
            let turn = texts.turn(st.turn.as_deref(), st.message.as_deref(), st.prefix.as_deref())?;
            let uses_evidence = turn.iter().map(block_text).any(|t| match t {
                Text::Own(s) => placeholders_in(s).contains(&"evidence"),
                Text::Prompt(k) => allowed_placeholders(k).is_some_and(|a| a.contains(&"evidence")),
            });
            if uses_evidence {
                return Err(texts.err("turn", "{evidence} (R7's constructed evidence) belongs in an operation's final turn, not in a ramp step"));
            }
            steps.push(RampStepDef { name: sname, turn });
        }
        let suite = match r.suite.as_deref() {
            None => Suite::Hierarchy,
            Some("ramp") => return Err(err("suite", "the ramp suite holds the paper's ramp steps only")),
            Some(s) => Suite::parse(s).ok_or_else(|| err("suite", &format!("unknown suite {s:?}")))?,
        };
        let short = r.short.clone().unwrap_or_default();
        if short.chars().count() > 6 {
            return Err(err("short", "at most 6 characters (its steps are labelled <short>1, <short>2, …)"));
        }
        let description = r.description.clone().unwrap_or_else(|| format!("{}: custom pressure ramp, {} steps", origin_name(origin), steps.len()));
        out.push(std::sync::Arc::new(RampDef { name, short, suite, description, steps, origin: origin.to_string() }));
    }
    Ok(out)
}

fn definition(
    rc: &RawCondition,
    origin: &str,
    kind: FileKind,
    own_prompts: &indexmap::IndexMap<String, String>,
    ramps: &[std::sync::Arc<RampDef>],
    base_ramp: Option<&str>,
) -> Result<Definition, RecipeError> {
    let name = rc.name.trim().to_string();
    let err = |f: &str, m: &str| RecipeError::new(origin, &name, f, m);
    if !valid_name(&name) {
        return Err(err("name", "a condition name is letters, digits, '_' and '-' only"));
    }
    let texts = Texts { origin, kind, own_prompts, condition: &name };
    let text_ref = |field: &str, s: &str| texts.reference(field, s);
    let own = |field: &str, s: &str| texts.own(field, s);
    let keeps = matches!(rc.history.as_str(), "kept" | "exchanges");
    if rc.ramp.is_some() && kind == FileKind::Registry {
        return Err(err("ramp", "built-in conditions build on the paper's ramp"));
    }
    if rc.ramp.is_some() && !keeps {
        return Err(err("ramp", "only for a history that keeps exchanges (kept, exchanges)"));
    }
    let ramp = match rc.ramp.as_deref().or(if keeps { base_ramp } else { None }) {
        None | Some("default") => None,
        Some(r) => Some(ramps.iter().find(|x| x.name == r).cloned().ok_or_else(|| {
            err("ramp", &format!("no [[ramp]] named {r:?} in this file (\"default\" is the paper's ramp)"))
        })?),
    };
    let ramp_steps: Vec<String> = match &ramp {
        None => ["weak", "medium", "strong", "medium reset"].iter().enumerate().map(|(i, s)| format!("{i} = {s}")).collect(),
        Some(r) => r.steps.iter().enumerate().map(|(i, s)| format!("{i} = {}", s.name)).collect(),
    };
    let history = match rc.history.as_str() {
        "kept" => History::Kept,
        "none" => History::None,
        "exchanges" => {
            let e = rc.exchanges.clone().ok_or_else(|| err("exchanges", &format!("history = \"exchanges\" needs `exchanges = [...]` ({})", ramp_steps.join(", "))))?;
            if let Some(x) = e.iter().find(|&&x| x >= ramp_steps.len()) {
                return Err(err("exchanges", &format!("exchange {x} does not exist ({})", ramp_steps.join(", "))));
            }
            History::Exchanges(e)
        }
        "replaced" => {
            let r = rc.replacement.as_ref().ok_or_else(|| err("replacement", "history = \"replaced\" needs `replacement = [user text, assistant text, ...]`"))?;
            if r.is_empty() || r.len() % 2 != 0 {
                return Err(err("replacement", "alternating user and assistant turns: an even, non-zero number of texts"));
            }
            let mut v = Vec::new();
            for s in r {
                v.push(match kind {
                    FileKind::Registry => text_ref("replacement", s)?,
                    FileKind::Experiment if own_prompts.contains_key(s) || allowed_placeholders(s).is_some() => text_ref("replacement", s)?,
                    FileKind::Experiment => own("replacement", s)?,
                });
            }
            History::Replaced(v)
        }
        other => {
            return Err(err("history", &format!("unknown history kind {other:?} (kept, none, exchanges, replaced)")));
        }
    };
    if rc.exchanges.is_some() && !matches!(history, History::Exchanges(_)) {
        return Err(err("exchanges", "only with history = \"exchanges\""));
    }
    if rc.replacement.is_some() && !matches!(history, History::Replaced(_)) {
        return Err(err("replacement", "only with history = \"replaced\""));
    }
    let assistant = match rc.assistant.as_deref() {
        None | Some("model") => Assistant::Model,
        Some("correct") => Assistant::Correct,
        Some("clean_prediction") => Assistant::CleanPrediction,
        Some("removed") => Assistant::Removed,
        Some(o) => return Err(err("assistant", &format!("unknown value {o:?} (model, correct, clean_prediction, removed)"))),
    };
    if assistant != Assistant::Model && !matches!(history, History::Kept | History::Exchanges(_)) {
        return Err(err("assistant", "only for a history that keeps exchanges (kept, exchanges)"));
    }
    let mut system = Vec::new();
    for s in rc.system.iter().flatten() {
        system.push(text_ref("system", s)?);
    }
    if let Some(s) = &rc.system_addition {
        system.push(own("system_addition", s)?);
    }
    let turn = texts.turn(rc.turn.as_deref(), rc.message.as_deref(), rc.prefix.as_deref())?;
    let shuffled = match rc.options.as_deref() {
        None | Some("shown") => false,
        Some("shuffled") => true,
        Some(o) => return Err(err("options", &format!("unknown value {o:?} (shown, shuffled)"))),
    };
    let suite = match rc.suite.as_deref() {
        None if kind == FileKind::Experiment => Suite::Hierarchy,
        None => return Err(err("suite", "missing")),
        Some(s) => Suite::parse(s).ok_or_else(|| err("suite", &format!("unknown suite {s:?}")))?,
    };
    if suite == Suite::Ramp {
        return Err(err("suite", "the ramp suite holds the ramp steps only"));
    }
    let group = match rc.group.as_deref() {
        None if kind == FileKind::Experiment => Group::Experiment,
        None => return Err(err("group", "missing")),
        Some(g) => Group::parse(g).ok_or_else(|| err("group", &format!("unknown group {g:?} (main, appendix, evidence, truncation, false-context, relabel, experiment)")))?,
    };
    if kind == FileKind::Experiment && group != Group::Experiment {
        return Err(err("group", "an experiment's operations are in the group \"experiment\""));
    }
    let short = rc.short.clone().unwrap_or_default();
    if group.is_operation() && short.is_empty() {
        return Err(err("short", "missing (the operation's short label, e.g. \"R8\")"));
    }
    if short.chars().count() > 8 {
        return Err(err("short", "at most 8 characters (it labels table rows and explorer steps)"));
    }
    let labels = rc.labels.clone().unwrap_or_default();
    if group == Group::Main && (labels.table4.is_empty() || labels.table17.is_empty() || labels.sweep_stem.is_empty() || labels.mro.is_empty() || labels.ci.is_empty()) {
        return Err(err("labels", "a main operation needs table4, table17, sweep_stem, mro and ci labels"));
    }
    let family = match rc.family.as_deref() {
        None => None,
        Some(f) => Some(OpFamily::parse(f).ok_or_else(|| err("family", &format!("unknown family {f:?} (instruction, state)")))?),
    };
    let mut ordering = Vec::new();
    for o in rc.ordering.iter().flatten() {
        let keys: Vec<&str> = OrderingFamily::ALL.iter().map(|(_, k)| *k).collect();
        ordering.push(OrderingFamily::parse(o).ok_or_else(|| err("ordering", &format!("unknown family {o:?} ({})", keys.join(", "))))?);
    }
    if (family.is_some() || !ordering.is_empty()) && group != Group::Main {
        return Err(err(if family.is_some() { "family" } else { "ordering" }, "only a main operation belongs to a family of the hierarchy"));
    }
    let readable = name.replace(['_', '-'], " ");
    let history_role = rc.history_role.clone().unwrap_or_else(|| {
        match (&history, assistant) {
            (History::Kept, Assistant::Model) => "preserved_pressure_history",
            (History::Kept | History::Exchanges(_), Assistant::Correct) => "pressure_history_correct_letters",
            (History::Kept | History::Exchanges(_), Assistant::CleanPrediction) => "pressure_history_clean_letters",
            (History::Kept | History::Exchanges(_), Assistant::Removed) => "pressure_history_user_turns_only",
            (History::Exchanges(e), _) if e.is_empty() => "deleted_pressure_history",
            (History::Exchanges(_), _) => "truncated_pressure_history",
            (History::None, _) => "deleted_pressure_history",
            (History::Replaced(_), _) => "replaced_pressure_history",
        }
        .to_string()
    });
    Ok(Definition {
        label: rc.label.clone().unwrap_or_else(|| format!("{short} {readable}").trim().to_string()),
        suite,
        group,
        level: rc.level.clone().unwrap_or_else(|| if kind == FileKind::Experiment { short.clone() } else { String::new() }),
        category: rc.category.clone().unwrap_or_else(|| if kind == FileKind::Experiment { "experiment".into() } else { String::new() }),
        history_role,
        ui_name: rc.ui_name.clone().unwrap_or_else(|| readable.clone()),
        description: rc.description.clone().unwrap_or_else(|| describe(&history, assistant, ramp.as_deref(), &origin_name(origin))),
        labels,
        family,
        ordering,
        recipe: Recipe { history, assistant, system, turn, shuffled, ramp },
        same_as: rc.same_as.clone(),
        origin: origin.to_string(),
        short,
        name,
    })
}

fn origin_name(origin: &str) -> String {
    std::path::Path::new(origin.trim_start_matches("bundled ")).file_name().map_or(origin.to_string(), |f| f.to_string_lossy().into_owned())
}

/// A generated one-line description of an experiment operation.
fn describe(h: &History, a: Assistant, ramp: Option<&RampDef>, file: &str) -> String {
    let of = ramp.map_or(String::new(), |r| format!(" of ramp {}", r.name));
    let hist = match h {
        History::Kept => format!("history{of} kept"),
        History::None => "no history".to_string(),
        History::Exchanges(e) => format!("exchanges {e:?}{of} kept"),
        History::Replaced(t) => format!("history replaced by {} turns", t.len()),
    };
    let asst = match a {
        Assistant::Model => String::new(),
        other => format!(", assistant turns: {}", other.key()),
    };
    format!("{file}: {hist}{asst}; its own final turn")
}

impl Suite {
    /// The suite of a key (`hierarchy`, `self-consistency`, …).
    pub fn parse(s: &str) -> Option<Suite> {
        Suite::EVERY.iter().copied().find(|x| x.key() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(src: &str) -> Result<Vec<Definition>, RecipeError> {
        parse_file(src, "my.toml", FileKind::Experiment).map(|p| p.defs)
    }

    #[test]
    fn bundled_files_parse() {
        let reg = parse_file(crate::prompts::bundled_conditions(), "conditions.toml", FileKind::Registry).expect("registry valid").defs;
        assert_eq!(reg.iter().filter(|d| d.group == Group::Main).count(), crate::dialogue::conditions::main_ops().len());
        assert!(reg.iter().any(|d| d.group == Group::Main));
        exp(BUNDLED_SELF_CONSISTENCY).expect("self-consistency valid");
    }

    #[test]
    fn the_issue_example_parses() {
        let d = exp(r#"
[[operation]]
name = "explicit_contradiction"
short = "R8"
history = "kept"
message = "What I claimed earlier was false; {wrong_option_text} is not the answer."
prefix = "Answer the multiple-choice question from factual knowledge only."
"#)
        .unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].suite, Suite::Hierarchy);
        assert_eq!(d[0].label, "R8 explicit contradiction");
        assert_eq!(d[0].recipe.history, History::Kept);
        assert_eq!(d[0].recipe.turn.len(), 2);
    }

    #[test]
    fn malformed_files_name_file_operation_and_field() {
        let base = "[[operation]]\nname = \"x1\"\nshort = \"X1\"\nhistory = \"kept\"\nprefix = \"P\"\n";
        let cases: [(&str, &str); 6] = [
            (&format!("{base}message = \"{{nope}}\"\n"), "field `message`: unknown placeholder {nope}"),
            (&format!("{base}history = \"none\"\n"), "duplicate key"),
            (&base.replace("\"kept\"", "\"sometimes\""), "field `history`: unknown history kind \"sometimes\""),
            (&format!("{base}{base}"), "operation `x1`: field `name`: defined twice"),
            (&format!("{base}colour = 1\n"), "colour"),
            (&base.replace("prefix = \"P\"\n", ""), "field `prefix`: missing"),
        ];
        for (src, want) in cases {
            let e = exp(src).unwrap_err().to_string();
            assert!(e.starts_with("my.toml: "), "{e}");
            assert!(e.contains(want), "{e} lacks {want}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
