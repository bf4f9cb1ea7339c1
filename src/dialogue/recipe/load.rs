//! Reading a registry or experiment file: the TOML as written (`Raw*`, unknown fields
//! rejected), checked field by field into [`Definition`]s and custom ramps, each error naming the
//! file, the condition and the field.

use serde::Deserialize;

use super::{
    block_text, parse_layer_range, Assistant, Block, Definition, FileKind, Group, History, Labels, OpFamily, OrderingFamily,
    Parsed, RampDef, RampStepDef, Recipe, RecipeError, SteerSpec, Text, RECIPE_PLACEHOLDERS,
};
use crate::dialogue::Suite;
use crate::prompts::{allowed_placeholders, placeholders_in};

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
    #[serde(default)]
    history: Option<String>,
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
    /// Experiment form: score the context of this condition (a steering operation only).
    #[serde(default)]
    context: Option<String>,
    /// Experiment form: scored with a control vector (`[operation.steering]`).
    #[serde(default)]
    steering: Option<RawSteering>,
}

/// `[operation.steering]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSteering {
    vector: String,
    alpha: toml::Value,
    #[serde(default)]
    layers: Option<toml::Value>,
}

/// Checks a steering table: a vector file, a finite strength, layers as `5`, `"5"` or `"5-12"`.
fn steer_spec(raw: &RawSteering, err: &dyn Fn(&str, &str) -> RecipeError) -> Result<SteerSpec, RecipeError> {
    if raw.vector.trim().is_empty() {
        return Err(err("steering.vector", "empty (a control-vector file, relative to this file's folder)"));
    }
    let alpha = match &raw.alpha {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        other => return Err(err("steering.alpha", &format!("a number, not {}", other.type_str()))),
    };
    if !(alpha as f32).is_finite() {
        return Err(err("steering.alpha", "not a finite number"));
    }
    let layers = match &raw.layers {
        None => None,
        Some(toml::Value::Integer(i)) if *i >= 0 => Some((*i as usize, *i as usize)),
        Some(toml::Value::String(s)) => Some(parse_layer_range(s).map_err(|m| err("steering.layers", &m))?),
        Some(_) => return Err(err("steering.layers", "a layer (5) or a range of layers (\"5-12\")")),
    };
    if layers.is_some_and(|(a, _)| a == 0) {
        return Err(err("steering.layers", "layer 0 is never steered by llama.cpp: start at 1"));
    }
    Ok(SteerSpec { vector: raw.vector.trim().to_string(), alpha: alpha as f32, layers })
}

/// The fields a steering operation with `context` takes from its context's condition.
const CONTEXT_FIELDS: &[&str] =
    &["history", "exchanges", "replacement", "assistant", "system", "system_addition", "turn", "message", "prefix", "options", "ramp"];

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

/// Parses and validates a registry or experiment file.
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
    let steering = match &rc.steering {
        Some(_) if kind == FileKind::Registry => return Err(err("steering", "steering belongs in an experiment file")),
        Some(raw) => Some(steer_spec(raw, &err)?),
        None => None,
    };
    if steering.is_some() && rc.same_as.is_some() {
        return Err(err("same_as", "a steered operation's scores are its own: it is the same as no other condition"));
    }
    if let Some(c) = &rc.context {
        if steering.is_none() {
            return Err(err("context", "only for a steering operation (an unsteered operation on another's context is that operation)"));
        }
        let given = [
            rc.history.is_some(), rc.exchanges.is_some(), rc.replacement.is_some(), rc.assistant.is_some(), rc.system.is_some(),
            rc.system_addition.is_some(), rc.turn.is_some(), rc.message.is_some(), rc.prefix.is_some(), rc.options.is_some(), rc.ramp.is_some(),
        ];
        if let Some(i) = given.iter().position(|&g| g) {
            return Err(err(CONTEXT_FIELDS[i], &format!("comes from the context's condition {c:?}: give either `context` or the dialogue's fields")));
        }
    }
    let history_kind = match (&rc.history, &rc.context) {
        (Some(h), _) => h.clone(),
        (None, Some(_)) => "none".to_string(),
        (None, None) => return Err(err("history", "missing (kept, none, exchanges, replaced; or `context` for a steering operation)")),
    };
    let texts = Texts { origin, kind, own_prompts, condition: &name };
    let text_ref = |field: &str, s: &str| texts.reference(field, s);
    let own = |field: &str, s: &str| texts.own(field, s);
    let keeps = matches!(history_kind.as_str(), "kept" | "exchanges");
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
    let history = match history_kind.as_str() {
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
    // A `context` operation's turn is its context's (filled in when the registry is built).
    let turn = if rc.context.is_some() { Vec::new() } else { texts.turn(rc.turn.as_deref(), rc.message.as_deref(), rc.prefix.as_deref())? };
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
        if rc.context.is_some() {
            return String::new();
        }
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
        description: rc.description.clone().unwrap_or_else(|| match (&rc.context, &steering) {
            (Some(_), _) => String::new(),
            (None, Some(st)) => format!("{}; steered with {}", describe(&history, assistant, ramp.as_deref(), &origin_name(origin)), st.describe()),
            (None, None) => describe(&history, assistant, ramp.as_deref(), &origin_name(origin)),
        }),
        labels,
        family,
        ordering,
        recipe: Recipe { history, assistant, system, turn, shuffled, ramp, steering },
        same_as: rc.same_as.clone(),
        context_of: rc.context.clone(),
        origin: origin.to_string(),
        short,
        name,
    })
}

pub(crate) fn origin_name(origin: &str) -> String {
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
