//! hyst-tui's own chat templates (`template = { kind = "named", name = "…" }` in models.toml),
//! for GGUFs without an embedded template or to override it. Written from the published prompt
//! formats of each family; the engine renders them with minijinja like any other template.

/// (name, Jinja source) of every named template.
const NAMED_TEMPLATES: &[(&str, &str)] = &[
    (
        "chatml",
        "{%- for m in messages -%}\
{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}\
{%- endfor -%}\
{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}",
    ),
    (
        // Gemma has no system role: a system message is an error (fold it first).
        "gemma",
        "{{- bos_token -}}\
{%- for m in messages -%}\
{%- if m.role == 'system' -%}{{ raise_exception('this template has no system role; use system = \"fold_into_final_user\"') }}{%- endif -%}\
{%- set r = 'model' if m.role == 'assistant' else m.role -%}\
{{ '<start_of_turn>' + r + '\\n' + (m.content | trim) + '<end_of_turn>\\n' }}\
{%- endfor -%}\
{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}",
    ),
    (
        "llama3",
        "{{- bos_token -}}\
{%- for m in messages -%}\
{{ '<|start_header_id|>' + m.role + '<|end_header_id|>\\n\\n' + (m.content | trim) + '<|eot_id|>' }}\
{%- endfor -%}\
{%- if add_generation_prompt -%}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif -%}",
    ),
    (
        // Mistral v0.3 style: [INST] blocks; a system message is prepended to the last user turn.
        "mistral-v3",
        "{%- set sys = namespace(text='') -%}\
{%- for m in messages -%}{%- if m.role == 'system' -%}{%- set sys.text = m.content -%}{%- endif -%}{%- endfor -%}\
{%- set convo = messages | rejectattr('role', 'equalto', 'system') | list -%}\
{{- bos_token -}}\
{%- for m in convo -%}\
{%- if m.role == 'user' -%}\
{%- if loop.last and sys.text -%}{{ '[INST] ' + sys.text + '\\n\\n' + m.content + '[/INST]' }}\
{%- else -%}{{ '[INST] ' + m.content + '[/INST]' }}{%- endif -%}\
{%- else -%}{{ ' ' + m.content + eos_token }}{%- endif -%}\
{%- endfor -%}",
    ),
];

/// The Jinja source of a named template.
pub(crate) fn named_template(name: &str) -> Option<&'static str> {
    NAMED_TEMPLATES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The names of the named templates, for error messages.
pub(crate) fn named_template_names() -> Vec<&'static str> {
    NAMED_TEMPLATES.iter().map(|(n, _)| *n).collect()
}
