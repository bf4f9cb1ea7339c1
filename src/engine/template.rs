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
}

fn raise_exception(msg: String) -> Result<Value, JinjaError> {
    Err(JinjaError::new(ErrorKind::InvalidOperation, msg))
}

impl ChatTemplate {
    pub(crate) fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        minijinja_contrib::add_to_environment(&mut env);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        // Templates that print today's date (e.g. Llama 3.2) get a fixed date, so that a prompt
        // and its score never depend on the day it was rendered.
        env.add_function("strftime_now", |_fmt: String| -> Result<Value, JinjaError> {
            Ok(Value::from("26 Jul 2024"))
        });
        env.add_template_owned("chat", source.to_string())
            .map_err(|e| TemplateError::Compile(format!("{e:#}")))?;
        Ok(Self {
            env,
            source: source.to_string(),
            bos_token: bos_token.to_string(),
            eos_token: eos_token.to_string(),
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
            .map_err(|e| TemplateError::Compile(format!("{e:#}")))?;
        let ctx = minijinja::context! {
            messages => Value::from(minijinja::value::Serde(messages)),
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos_token.as_str(),
            eos_token => self.eos_token.as_str(),
        };
        tmpl.render(ctx).map_err(|e| {
            let mut msg = e.to_string();
            if let Some(d) = e.detail() {
                if !msg.contains(d) {
                    msg = format!("{msg}: {d}");
                }
            }
            TemplateError::Render(msg)
        })
    }
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
