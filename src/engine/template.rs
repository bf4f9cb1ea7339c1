//! Chat-template rendering with minijinja (the GGUF's own Jinja `tokenizer.chat_template`, a named
//! template of ours, or an inline override) and the system-role policy of docs/protocol.md §2.3.
//!
//! llama.cpp's `apply_chat_template` is not Jinja: it recognises a template and runs a built-in
//! formatter, which differs from the real template in corner cases. We always render the Jinja.

use minijinja::{Environment, Error as JinjaError, ErrorKind, Value};

use crate::config::{named_template, SystemPolicy};
use crate::protocol::ChatMessage;


/// Applies the system policy: with `FoldIntoFinalUser` the system text is removed and prepended to
/// the final user message as `system.strip() + "\n\n" + user.strip()` (docs/protocol.md §2.3).
pub(crate) fn apply_system_policy(
    messages: &[ChatMessage],
    policy: SystemPolicy,
) -> Result<Vec<ChatMessage>, TemplateError> {
    match policy {
        SystemPolicy::Native => Ok(messages.to_vec()),
        SystemPolicy::FoldIntoFinalUser => {
            let mut system: Option<&str> = None;
            let mut out = Vec::with_capacity(messages.len());
            for (i, m) in messages.iter().enumerate() {
                if m.role == "system" {
                    if i != 0 || system.is_some() {
                        return Err(TemplateError::Render(
                            "a system message may only come first".into(),
                        ));
                    }
                    system = Some(&m.content);
                } else {
                    out.push(m.clone());
                }
            }
            if let Some(sys) = system {
                let last = out
                    .last_mut()
                    .filter(|m| m.role == "user")
                    .ok_or_else(|| {
                        TemplateError::Render(
                            "system folding needs the conversation to end with a user turn".into(),
                        )
                    })?;
                last.content = format!("{}\n\n{}", sys.trim(), last.content.trim());
            }
            Ok(out)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum TemplateError {
    #[error("chat template does not compile: {0}")]
    Compile(String),
    #[error("chat template failed to render: {0}")]
    Render(String),
    #[error("the GGUF has no tokenizer.chat_template; set `template = {{ kind = \"named\", name = ... }}` in models.toml")]
    Missing,
}

/// A compiled chat template plus the special-token texts it may use.
pub(crate) struct ChatTemplate {
    env: Environment<'static>,
    pub source: String,
    pub bos_token: String,
    pub eos_token: String,
    fuel: u64,
}

fn raise_exception(msg: String) -> Result<Value, JinjaError> {
    Err(JinjaError::new(ErrorKind::InvalidOperation, msg))
}

/// The work one render may do (minijinja fuel: about one unit per instruction and one per 64
/// bytes of data the template makes). A chat template comes with the GGUF, from anyone: a loop or
/// a recursion without end, or a gigabyte string, ends in an error after this much work (well
/// under a second, at most about 64 MB) instead of hanging. The shipped models' templates need
/// 7,000–9,000 units for a 122-message dialogue, about ten times the protocol's longest
/// (tests/engine.rs and `doctor` measure it).
pub const RENDER_FUEL: u64 = 1_000_000;

/// The longest prompt text a render may produce: 16 MiB, far beyond any context window (a
/// million-token context holds about 4 MB of text).
pub(crate) const MAX_PROMPT_BYTES: usize = 16 << 20;

/// Nesting depth of blocks, macros and includes (minijinja's default is 500; a recursive macro
/// costs several levels per call).
const RECURSION_LIMIT: usize = 200;

/// A minijinja error as one line: its kind, detail and place, whitespace runs (including the
/// line breaks of a message raised by the template) folded to one space.
fn one_line(e: &JinjaError, fuel: u64) -> String {
    let mut msg = match e.kind() {
        ErrorKind::OutOfFuel => format!(
            "the template used up its budget of {fuel} steps (a loop or recursion without end, or a huge output?)"
        ),
        _ => e.to_string(),
    };
    if let Some(d) = e.detail() {
        if !msg.contains(d) {
            msg = format!("{msg}: {d}");
        }
    }
    if e.kind() == ErrorKind::OutOfFuel {
        if let Some(name) = e.name() {
            msg = format!("{msg} (in {name}:{})", e.line().unwrap_or(0));
        }
    }
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl ChatTemplate {
    pub(crate) fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        Self::with_fuel(source, bos_token, eos_token, RENDER_FUEL)
    }

    /// [`ChatTemplate::new`] with another render budget (tests measure what templates need).
    pub(crate) fn with_fuel(source: &str, bos_token: &str, eos_token: &str, fuel: u64) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        env.set_fuel(Some(fuel));
        env.set_recursion_limit(RECURSION_LIMIT);
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        // Templates that print today's date (e.g. Llama 3.2) get a fixed date, so that a prompt
        // and its score never depend on the day it was rendered.
        env.add_function("strftime_now", |_fmt: String| -> Result<Value, JinjaError> {
            Ok(Value::from("26 Jul 2024"))
        });
        env.add_template_owned("chat", source.to_string())
            .map_err(|e| TemplateError::Compile(one_line(&e, fuel)))?;
        Ok(Self {
            env,
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
            fuel,
        })
    }

    pub(crate) fn named(name: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        let src = named_template(name)
            .ok_or_else(|| TemplateError::Compile(format!("unknown named template {name:?}")))?;
        Self::new(src, bos_token, eos_token)
    }

    /// Renders `messages` (after the system policy) with `add_generation_prompt = true`.
    pub(crate) fn render(&self, messages: &[ChatMessage]) -> Result<String, TemplateError> {
        self.render_with(messages, true)
    }

    pub(crate) fn render_with(
        &self,
        messages: &[ChatMessage],
        add_generation_prompt: bool,
    ) -> Result<String, TemplateError> {
        let tmpl = self
            .env
            .get_template("chat")
            .map_err(|e| TemplateError::Compile(one_line(&e, self.fuel)))?;
        let ctx = minijinja::context! {
            messages => Value::from(minijinja::value::Serde(messages)),
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token.as_str(),
            eos_token => self.eos_token.as_str(),
        };
        let text = tmpl.render(ctx).map_err(|e| TemplateError::Render(one_line(&e, self.fuel)))?;
        if text.len() > MAX_PROMPT_BYTES {
            return Err(TemplateError::Render(format!(
                "the rendered prompt is {} bytes, more than the {MAX_PROMPT_BYTES} any context can hold",
                text.len()
            )));
        }
        Ok(text)
    }
}

/// The least fuel with which `source` renders `messages` (bisection over 0..=[`RENDER_FUEL`]); an
/// error when it does not render within the budget.
pub(crate) fn fuel_needed(source: &str, bos: &str, eos: &str, messages: &[ChatMessage]) -> Result<u64, TemplateError> {
    let render = |f: u64| ChatTemplate::with_fuel(source, bos, eos, f).and_then(|t| t.render(messages));
    render(RENDER_FUEL)?;
    let (mut lo, mut hi) = (0u64, RENDER_FUEL);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if render(mid).is_ok() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msgs(with_system: bool) -> Vec<ChatMessage> {
        let mut v = vec![];
        if with_system {
            v.push(ChatMessage::system("Be exact."));
        }
        v.push(ChatMessage::user("Q1"));
        v.push(ChatMessage::assistant("B"));
        v.push(ChatMessage::user("  Q2  "));
        v
    }

    #[test]
    fn chatml_named_renders_expected_text() {
        let t = ChatTemplate::named("chatml", "", "<|im_end|>").unwrap();
        assert_eq!(
            t.render(&msgs(true)).unwrap(),
            "<|im_start|>system\nBe exact.<|im_end|>\n<|im_start|>user\nQ1<|im_end|>\n\
<|im_start|>assistant\nB<|im_end|>\n<|im_start|>user\n  Q2  <|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn gemma_named_with_folding() {
        let t = ChatTemplate::named("gemma", "<bos>", "<eos>").unwrap();
        let folded = apply_system_policy(&msgs(true), SystemPolicy::FoldIntoFinalUser).unwrap();
        assert_eq!(folded.len(), 3);
        assert_eq!(
            t.render(&folded).unwrap(),
            "<bos><start_of_turn>user\nQ1<end_of_turn>\n<start_of_turn>model\nB<end_of_turn>\n\
<start_of_turn>user\nBe exact.\n\nQ2<end_of_turn>\n<start_of_turn>model\n"
        );
        // Unfolded system message is a loud error, never silently dropped.
        let e = t.render(&msgs(true)).unwrap_err().to_string();
        assert!(e.contains("no system role"), "{e}");
    }

    #[test]
    fn mistral_moves_system_to_last_user_turn() {
        let t = ChatTemplate::named("mistral-v3", "<s>", "</s>").unwrap();
        assert_eq!(
            t.render(&msgs(true)).unwrap(),
            "<s>[INST] Q1[/INST] B</s>[INST] Be exact.\n\n  Q2  [/INST]"
        );
    }

    #[test]
    fn native_policy_keeps_messages() {
        assert_eq!(
            apply_system_policy(&msgs(true), SystemPolicy::Native).unwrap(),
            msgs(true)
        );
        // No system message: folding is a no-op.
        assert_eq!(
            apply_system_policy(&msgs(false), SystemPolicy::FoldIntoFinalUser).unwrap(),
            msgs(false)
        );
    }

    #[test]
    fn broken_template_is_an_error() {
        assert!(matches!(
            ChatTemplate::new("{% for %}", "", ""),
            Err(TemplateError::Compile(_))
        ));
        let t = ChatTemplate::new("{{ raise_exception('nope') }}", "", "").unwrap();
        assert!(t.render(&msgs(false)).unwrap_err().to_string().contains("nope"));
    }

    /// Renders `source` on a thread with the default 2 MiB stack (as the engine's worker has)
    /// and returns the error; prints how long it took (no timed assertion).
    fn hostile(source: &str) -> String {
        let source = source.to_string();
        std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            let t = ChatTemplate::new(&source, "", "").expect("compiles");
            let e = t.render(&msgs(false)).expect_err("a hostile template must fail");
            eprintln!("{:.3}s: {e}", t0.elapsed().as_secs_f64());
            e.to_string()
        })
        .join()
        .expect("no panic, no stack overflow")
    }

    #[test]
    fn a_loop_without_end_runs_out_of_fuel() {
        // 10^10 iterations: hangs without a budget.
        let e = hostile("{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}");
        assert!(e.starts_with("chat template failed to render: the template used up its budget of 1000000 steps"), "{e}");
        assert!(e.ends_with("(in chat:1)"), "{e}");
        // A loop that prints nothing still costs steps.
        let e = hostile("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
        assert!(e.contains("used up its budget"), "{e}");
    }

    #[test]
    fn recursion_without_end_is_an_error() {
        let e = hostile("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
        assert!(e.starts_with("chat template failed to render: "), "{e}");
        assert!(e.contains("recursion"), "{e}");
        let e = hostile("{% macro f(n) %}{{ f(n + 1) ~ f(n + 2) }}{% endmacro %}{{ f(0) }}");
        assert!(e.contains("recursion") || e.contains("budget"), "{e}");
    }

    #[test]
    fn a_gigabyte_string_is_refused_before_it_is_made() {
        for src in [
            "{{ 'x' * 1000000000 }}",
            "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
            "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s.replace('x', 'xx') %}{% endfor %}{{ ns.s }}",
            "{{ 'x' | indent(1000000000, first=true) }}",
            "{% for i in range(100000) %}{{ 'y' * 50000 }}{% endfor %}",
        ] {
            let e = hostile(src);
            assert!(e.starts_with("chat template failed to render: "), "{src}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // Within the fuel, a prompt longer than any context is refused by size.
        let t = ChatTemplate::new("{% for i in range(300) %}{{ 'z' * 60000 }}{% endfor %}", "", "").unwrap();
        let e = t.render(&msgs(false)).unwrap_err().to_string();
        assert!(e.contains("the rendered prompt is 18000000 bytes, more than the 16777216"), "{e}");
    }

    #[test]
    fn every_template_error_is_one_line() {
        let e = ChatTemplate::new("{% if %}\n\n{{ x }}", "", "").err().expect("does not compile").to_string();
        assert!(e.starts_with("chat template does not compile: syntax error"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let t = ChatTemplate::new("{{ raise_exception('line one\nline two\n') }}", "", "").unwrap();
        let e = t.render(&msgs(false)).unwrap_err().to_string();
        assert_eq!(e, "chat template failed to render: invalid operation: line one line two (in chat:1)");
    }

    /// The named templates render a dialogue far longer than the protocol's longest with a small
    /// part of the budget.
    #[test]
    fn real_dialogues_need_a_small_part_of_the_fuel() {
        let long: Vec<ChatMessage> = (0..120)
            .map(|i| {
                let text = format!("turn {i}: {}", "a long option text, ".repeat(100));
                if i % 2 == 0 { ChatMessage::user(text) } else { ChatMessage::assistant(text) }
            })
            .collect();
        for name in crate::config::named_template_names() {
            let needed = fuel_needed(named_template(name).unwrap(), "<s>", "</s>", &long).unwrap();
            eprintln!("{name}: {needed} of {RENDER_FUEL}");
            assert!(needed * 20 < RENDER_FUEL, "{name} needs {needed}");
            // One unit less does not render: the bisection found the least.
            assert!(ChatTemplate::with_fuel(named_template(name).unwrap(), "<s>", "</s>", needed - 1).unwrap().render(&long).is_err());
        }
    }

    #[test]
    fn pycompat_methods_work() {
        // HF templates use Python string methods such as .strip() and .startswith().
        let t = ChatTemplate::new(
            "{% for m in messages %}{{ m.content.strip() }}|{{ m.role.startswith('u') }};{% endfor %}",
            "",
            "",
        )
        .unwrap();
        assert_eq!(
            t.render(&msgs(false)).unwrap(),
            "Q1|True;B|False;Q2|True;"
        );
    }
}
