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
use crate::prompts::placeholders_in;

mod load;
pub(crate) use load::{origin_name, parse_file};

/// The bundled self-consistency experiment (suite `self-consistency`; also the schema's worked
/// example in docs/guide/experiments.md).
pub(crate) const BUNDLED_SELF_CONSISTENCY: &str = include_str!("../../../assets/experiments/self-consistency.toml");

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
    /// Scored with a control vector added to the residual stream (an experiment's steering
    /// operation); `None` for every other recipe.
    pub steering: Option<SteerSpec>,
}

/// The steering of an operation as its experiment file writes it (`[operation.steering]`): a
/// control-vector file, a strength and the layers it is added after.
#[derive(Clone, Debug)]
pub struct SteerSpec {
    /// The file as written (relative to the experiment file's folder, or absolute).
    pub vector: String,
    pub alpha: f32,
    /// First and last steered layer; `None` = every layer the vector has a direction for.
    pub layers: Option<(usize, usize)>,
}

impl PartialEq for SteerSpec {
    fn eq(&self, o: &Self) -> bool {
        self.vector == o.vector && self.alpha.to_bits() == o.alpha.to_bits() && self.layers == o.layers
    }
}

impl Eq for SteerSpec {}

impl std::hash::Hash for SteerSpec {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        (&self.vector, self.alpha.to_bits(), self.layers).hash(h)
    }
}

impl SteerSpec {
    /// `vector α=… layers a-b` for descriptions and messages.
    pub fn describe(&self) -> String {
        let layers = self.layers.map_or("every layer it has".to_string(), |(a, b)| if a == b { format!("layer {a}") } else { format!("layers {a}-{b}") });
        format!("{} at α = {}, {layers}", self.vector, self.alpha)
    }
}

/// A layer (`5`) or a range of layers (`5-12`).
pub fn parse_layer_range(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?}: give a layer (5) or a range of layers (5-12)");
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let (a, b) = (a.trim().parse::<usize>().map_err(|_| bad())?, b.trim().parse::<usize>().map_err(|_| bad())?);
    if a > b {
        return Err(format!("{s:?}: the first layer comes after the last"));
    }
    Ok((a, b))
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
    /// The condition whose context this operation scores (`context = "…"`: its recipe is taken
    /// when the registry is built; only with steering).
    pub context_of: Option<String>,
    /// The file it comes from (`bundled prompts/conditions.toml`, or an experiment file).
    pub origin: String,
}

/// An experiment file as a run records it: its name, content hash and content, and the
/// control-vector files its steering operations name.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExperimentSource {
    /// The path it was read from (for messages only; runs compare the hash).
    pub path: String,
    pub sha256: String,
    pub content: String,
    /// The control vectors of its steering operations, as found when the file was read (so a
    /// changed vector is a different run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<VectorFile>,
}

/// A control-vector file an experiment's steering operation names: what the file writes and the
/// vector's bytes, which make a run; where it lay on this machine is not recorded (the run keeps a
/// copy), so the same experiment from another checkout is the same run.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct VectorFile {
    /// As the experiment file writes it (`steering.vector`).
    pub written: String,
    /// Where it was read (an absolute path); empty for a record read back from a manifest.
    #[serde(skip)]
    pub path: String,
    /// SHA-256 of the file's bytes.
    pub sha256: String,
}

impl PartialEq for VectorFile {
    fn eq(&self, o: &Self) -> bool {
        self.written == o.written && self.sha256 == o.sha256
    }
}

impl Eq for VectorFile {}

impl ExperimentSource {
    pub fn new(path: &str, content: String) -> ExperimentSource {
        ExperimentSource { path: path.to_string(), sha256: hex::encode(Sha256::digest(content.as_bytes())), content, vectors: Vec::new() }
    }
    /// Reads and checks an experiment file (one error line naming it when it cannot be read or
    /// is malformed), and finds the control-vector files its steering operations name, relative
    /// to its folder. The source keeps the file's name, not its directory, so the same file
    /// given from another directory is the same run.
    pub fn read(path: &std::path::Path) -> Result<ExperimentSource, RecipeError> {
        let shown = path.display().to_string();
        let content = crate::util::read_input_file(path).map_err(|e| RecipeError::new(&shown, "", "", &e))?;
        let parsed = parse_file(&content, &shown, FileKind::Experiment)?;
        let name = path.file_name().map_or(shown.clone(), |f| f.to_string_lossy().into_owned());
        let mut source = ExperimentSource::new(&name, content);
        let folder = path.parent().unwrap_or(std::path::Path::new("."));
        for d in &parsed.defs {
            let Some(spec) = &d.recipe.steering else { continue };
            if source.vectors.iter().any(|v| v.written == spec.vector) {
                continue;
            }
            let err = |m: String| RecipeError::new(&shown, &d.name, "steering.vector", &m);
            let at = folder.join(&spec.vector);
            let bytes = std::fs::read(&at).map_err(|e| err(format!("cannot read the control vector {}: {e}", at.display())))?;
            let abs = std::path::absolute(&at).unwrap_or(at);
            source.vectors.push(VectorFile {
                written: spec.vector.clone(),
                path: abs.display().to_string(),
                sha256: hex::encode(Sha256::digest(&bytes)),
            });
        }
        Ok(source)
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

/// A parsed registry or experiment file.
pub(crate) struct Parsed {
    pub defs: Vec<Definition>,
    pub ramps: Vec<std::sync::Arc<RampDef>>,
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
        assert_eq!(reg.iter().filter(|d| d.group == Group::Main).count(), crate::dialogue::conditions::Registry::bundled().main_ops().len());
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

    #[test]
    fn a_steering_operation_parses_and_its_mistakes_are_one_line_each() {
        let op = |body: &str| format!("[[operation]]\nname = \"s1\"\nshort = \"S1\"\n{body}");
        let steer = "[operation.steering]\nvector = \"v/direction.gguf\"\nalpha = -2\nlayers = \"3-5\"\n";
        let d = exp(&op(&format!("context = \"ordinary_strong_reset\"\n{steer}"))).unwrap();
        let s = d[0].recipe.steering.clone().unwrap();
        assert_eq!((s.vector.as_str(), s.alpha, s.layers), ("v/direction.gguf", -2.0, Some((3, 5))));
        assert_eq!(d[0].context_of.as_deref(), Some("ordinary_strong_reset"));
        // Its own dialogue, steered.
        let d = exp(&op(&format!("history = \"kept\"\nprefix = \"P\"\n{}", steer.replace("\"3-5\"", "4")))).unwrap();
        assert_eq!(d[0].recipe.steering.as_ref().unwrap().layers, Some((4, 4)));
        let cases: [(String, &str); 8] = [
            (op(&format!("context = \"ordinary_strong_reset\"\n{}", steer.replace("-2", "\"big\""))), "field `steering.alpha`: a number"),
            (op(&format!("context = \"ordinary_strong_reset\"\n{}", steer.replace("3-5", "5-3")))  , "field `steering.layers`"),
            (op(&format!("context = \"ordinary_strong_reset\"\n{}", steer.replace("3-5", "0-3"))), "layer 0 is never steered"),
            (op(&format!("context = \"ordinary_strong_reset\"\n{}", steer.replace("v/direction.gguf", " "))), "field `steering.vector`: empty"),
            (op(&format!("context = \"ordinary_strong_reset\"\nhistory = \"kept\"\n{steer}")), "field `history`: comes from the context's condition"),
            (op("context = \"ordinary_strong_reset\"\n"), "field `context`: only for a steering operation"),
            (op(&format!("history = \"none\"\nprefix = \"P\"\nsame_as = \"fresh_context\"\n{steer}")), "field `same_as`: a steered operation"),
            (op(&format!("context = \"ordinary_strong_reset\"\n{steer}colour = 1\n")), "colour"),
        ];
        for (src, want) in cases {
            let e = exp(&src).unwrap_err().to_string();
            assert!(e.contains(want), "{e} lacks {want}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
        let reg = parse_file(&op(&format!("group = \"main\"\nsuite = \"hierarchy\"\nhistory = \"none\"\nturn = [\"x\"]\n{steer}")).replace("[[operation]]", "[[condition]]").replace("operation.steering", "condition.steering"), "conditions.toml", FileKind::Registry);
        let e = reg.err().unwrap().to_string();
        assert!(e.contains("steering belongs in an experiment file"), "{e}");
    }
}
