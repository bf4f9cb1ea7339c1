//! The requests hyst-tui makes of a server, per API, and how their answers are read.
//!
//! | what | llama-server | completions (vLLM, SGLang, llama-server /v1) | chat |
//! |---|---|---|---|
//! | next-token log-probabilities | `POST /completion` `prompt` = ids, `n_probs` = K, `n_predict` 1 | `POST /completions` `prompt` = ids, `logprobs` = K, `max_tokens` 1 | `POST /chat/completions` `messages`, `top_logprobs` = K |
//! | exact letters | K = the vocabulary (the whole distribution) | `prompt_logprobs` of the prompt + the letter token (vLLM) | — |
//! | identity | `GET /props`, `GET /v1/models` | `GET /models` (+ `/version`) | `GET /models` |
//! | greedy continuation | `n_predict` N, `top_k` 1 | `max_tokens` N, temperature 0 | `max_tokens` N, temperature 0 |

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::http::{Client, HttpError};
use super::letters::{Candidate, NextTokens};
use crate::config::{Endpoint, ServedApi};
use crate::protocol::ChatMessage;

/// What the server says about itself, read once per engine.
#[derive(Clone, Debug, Default)]
pub(crate) struct ServerFacts {
    /// What the server reports of its weights and build, as `name=value` pairs in a fixed order
    /// (nothing that changes between two starts of the same server, such as timestamps).
    pub reported: BTreeMap<String, String>,
    pub slots: Option<usize>,
    pub n_vocab: Option<usize>,
    pub n_ctx: Option<u32>,
    pub n_ctx_train: Option<u32>,
    pub n_params: Option<u64>,
    pub size: Option<u64>,
    pub bos: Option<String>,
    pub eos: Option<String>,
    pub chat_template: Option<String>,
}

impl ServerFacts {
    /// The identity as one line (part of the provenance).
    pub(crate) fn identity(&self) -> String {
        if self.reported.is_empty() {
            return "nothing reported".into();
        }
        self.reported.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads the server's identity. llama-server: `/props` (build, model file, slots, template) and
/// `/v1/models` (vocabulary, parameters, size, file type); OpenAI-style: the served model's
/// `/models` entry and, where there is one, `/version`.
pub(crate) fn server_facts(client: &Client, ep: &Endpoint) -> Result<ServerFacts, HttpError> {
    let mut f = ServerFacts::default();
    match ep.api {
        ServedApi::LlamaServer => {
            let props = client.get("/props")?;
            for (name, ptr) in [("build", "/build_info"), ("model_path", "/model_path"), ("model_alias", "/model_alias"), ("ftype", "/model_ftype")] {
                if let Some(v) = props.pointer(ptr).and_then(text) {
                    f.reported.insert(name.into(), v);
                }
            }
            f.slots = props.get("total_slots").and_then(Value::as_u64).map(|n| n as usize);
            f.n_ctx = props.pointer("/default_generation_settings/n_ctx").and_then(Value::as_u64).map(|n| n as u32);
            f.bos = props.get("bos_token").and_then(text);
            f.eos = props.get("eos_token").and_then(text);
            f.chat_template = props.get("chat_template").and_then(text);
            if let Ok(models) = client.get("/v1/models") {
                read_models_entry(&models, None, &mut f);
            }
        }
        ServedApi::Completions | ServedApi::Chat => {
            let models = client.get("/models")?;
            let name = ep.model.as_deref().unwrap_or("");
            if !read_models_entry(&models, Some(name), &mut f) {
                let known: Vec<String> = models.get("data").and_then(Value::as_array).map(|d| d.iter().filter_map(|m| m.get("id").and_then(text)).collect()).unwrap_or_default();
                return Err(HttpError::Protocol {
                    url: format!("{}/models", client.base()),
                    message: format!("the server does not serve a model named {name:?} (it lists: {})", if known.is_empty() { "none".into() } else { known.join(", ") }),
                });
            }
            if ep.api == ServedApi::Completions {
                if let Ok(v) = client.get_origin("/version") {
                    if let Some(version) = v.get("version").and_then(text) {
                        f.reported.insert("version".into(), version);
                    }
                }
                // vLLM tells its cache settings only in its metrics. With prefix caching on, a
                // log-probability depends on what the server cached before (it moved in the 6th
                // decimal between two runs here), so the setting is part of the identity.
                if let Ok(metrics) = client.get_origin_text("/metrics") {
                    if let Some(on) = vllm_prefix_caching(&metrics) {
                        f.reported.insert("prefix_caching".into(), if on { "on" } else { "off" }.into());
                    }
                }
            }
        }
    }
    Ok(f)
}

/// vLLM's `enable_prefix_caching` from the `vllm:cache_config_info` line of its Prometheus
/// metrics; `None` when the text has no such line (another server).
pub(crate) fn vllm_prefix_caching(metrics: &str) -> Option<bool> {
    let line = metrics.lines().find(|l| l.starts_with("vllm:cache_config_info{"))?;
    let value = line.split("enable_prefix_caching=\"").nth(1)?.split('"').next()?;
    Some(value.eq_ignore_ascii_case("true"))
}

/// Takes the identity fields of one `/models` entry (the one named `name`, else the first).
/// Returns false when `name` is given and not listed.
fn read_models_entry(models: &Value, name: Option<&str>, f: &mut ServerFacts) -> bool {
    let Some(data) = models.get("data").and_then(Value::as_array) else { return name.is_none() };
    let entry = match name {
        Some(n) => data.iter().find(|m| m.get("id").and_then(Value::as_str) == Some(n)),
        None => data.first(),
    };
    let Some(m) = entry else { return false };
    for (k, ptr) in [("id", "/id"), ("root", "/root"), ("owned_by", "/owned_by"), ("max_model_len", "/max_model_len")] {
        if let Some(v) = m.pointer(ptr).and_then(text) {
            f.reported.insert(k.into(), v);
        }
    }
    if let Some(meta) = m.get("meta").and_then(Value::as_object) {
        for k in ["vocab_type", "n_vocab", "n_ctx_train", "n_embd", "n_params", "size", "ftype"] {
            if let Some(v) = meta.get(k).and_then(text) {
                f.reported.insert(k.into(), v);
            }
        }
        f.n_vocab = meta.get("n_vocab").and_then(Value::as_u64).map(|n| n as usize);
        f.n_ctx_train = meta.get("n_ctx_train").and_then(Value::as_u64).map(|n| n as u32);
        f.n_params = meta.get("n_params").and_then(Value::as_u64);
        f.size = meta.get("size").and_then(Value::as_u64);
    }
    if f.n_ctx.is_none() {
        f.n_ctx = m.get("max_model_len").and_then(Value::as_u64).map(|n| n as u32);
    }
    true
}

/// What the server tells of a request's prompt.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Usage {
    pub prompt_tokens: Option<usize>,
    pub cached_tokens: Option<usize>,
}

/// The prompt of a request: token ids (hyst-tui rendered the template) or messages (chat).
pub(crate) enum Prompt<'a> {
    Tokens(&'a [i32]),
    Messages(&'a [ChatMessage]),
}

fn messages_json(messages: &[ChatMessage]) -> Value {
    Value::Array(messages.iter().map(|m| json!({"role": m.role, "content": m.content})).collect())
}

fn protocol(client: &Client, path: &str, message: impl Into<String>) -> HttpError {
    HttpError::Protocol { url: format!("{}{path}", client.base()), message: message.into() }
}

/// llama-server's / the OpenAI chat format's list of top tokens: `[{id?, token, logprob}]`.
fn read_candidates(list: &Value, with_ids: bool) -> Option<Vec<Candidate>> {
    list.as_array()?
        .iter()
        .map(|c| {
            Some(Candidate {
                id: if with_ids { c.get("id").and_then(Value::as_i64).map(|i| i as i32) } else { None },
                text: c.get("token").and_then(Value::as_str)?.to_string(),
                logprob: logprob_of(c.get("logprob")?)?,
            })
        })
        .collect()
}

/// A log-probability; servers write -inf as a very negative number or null.
fn logprob_of(v: &Value) -> Option<f64> {
    match v {
        Value::Null => Some(f64::NEG_INFINITY),
        v => v.as_f64(),
    }
}

/// The next-token log-probabilities after `prompt`: the top `k`.
pub(crate) fn next_tokens(client: &Client, ep: &Endpoint, prompt: Prompt, k: usize) -> Result<(NextTokens, Usage), HttpError> {
    match (ep.api, prompt) {
        (ServedApi::LlamaServer, Prompt::Tokens(ids)) => {
            let body = json!({
                "prompt": ids, "n_predict": 1, "n_probs": k, "post_sampling_probs": false,
                "cache_prompt": ep.prompt_cache, "temperature": 0.0, "stream": false,
            });
            let v = client.post("/completion", &body)?;
            if v.get("truncated").and_then(Value::as_bool) == Some(true) {
                return Err(protocol(client, "/completion", "the server truncated the prompt (it exceeds the server's context; start it with a larger -c)"));
            }
            let list = v
                .pointer("/completion_probabilities/0/top_logprobs")
                .ok_or_else(|| protocol(client, "/completion", "no completion_probabilities[0].top_logprobs in the answer"))?;
            let candidates = read_candidates(list, true).ok_or_else(|| protocol(client, "/completion", "malformed top_logprobs"))?;
            // `timings.cache_n` counts the prompt tokens taken from the slot's cache (`tokens_cached`
            // is everything in the slot afterwards, prompt and generated token alike).
            let usage = Usage {
                prompt_tokens: v.get("tokens_evaluated").and_then(Value::as_u64).map(|n| n as usize),
                cached_tokens: v.pointer("/timings/cache_n").and_then(Value::as_u64).map(|n| n as usize),
            };
            Ok((NextTokens { candidates, complete: false, extra: vec![] }, usage))
        }
        (ServedApi::Completions, Prompt::Tokens(ids)) => {
            let body = json!({
                "model": ep.model, "prompt": ids, "max_tokens": 1, "logprobs": k, "temperature": 0.0,
                "echo": false, "return_tokens_as_token_ids": true, "stream": false,
                // llama-server's /v1 caches prompts unless told not to (see Endpoint::prompt_cache).
                "cache_prompt": ep.prompt_cache,
            });
            let v = client.post("/completions", &body)?;
            let candidates = read_completions_top(&v).map_err(|m| protocol(client, "/completions", m))?;
            Ok((NextTokens { candidates, complete: false, extra: vec![] }, openai_usage(&v)))
        }
        (ServedApi::Chat, Prompt::Messages(messages)) => {
            let body = json!({
                "model": ep.model, "messages": messages_json(messages), "max_tokens": 1,
                "logprobs": true, "top_logprobs": k, "temperature": 0.0, "stream": false,
            });
            let v = client.post("/chat/completions", &body)?;
            let list = v
                .pointer("/choices/0/logprobs/content/0/top_logprobs")
                .ok_or_else(|| protocol(client, "/chat/completions", "no choices[0].logprobs.content[0].top_logprobs in the answer (does the API return log-probabilities?)"))?;
            let candidates = read_candidates(list, false).ok_or_else(|| protocol(client, "/chat/completions", "malformed top_logprobs"))?;
            Ok((NextTokens { candidates, complete: false, extra: vec![] }, openai_usage(&v)))
        }
        _ => Err(protocol(client, "", "internal: prompt kind does not fit the API")),
    }
}

/// The first generated token's top log-probabilities in a `/completions` answer.
fn read_completions_top(v: &Value) -> Result<Vec<Candidate>, &'static str> {
    let lp = v.pointer("/choices/0/logprobs").ok_or("no choices[0].logprobs in the answer")?;
    if let Some(list) = lp.pointer("/content/0/top_logprobs") {
        // llama-server's /v1 answers in its own list format, with ids.
        return read_candidates(list, true).ok_or("malformed top_logprobs");
    }
    // OpenAI's legacy format: one map per position, keys are token texts (vLLM: `token_id:N`
    // with return_tokens_as_token_ids).
    let m = lp.pointer("/top_logprobs/0").and_then(Value::as_object).ok_or("no top log-probabilities for the first token")?;
    Ok(m.iter()
        .filter_map(|(key, lp)| {
            let logprob = logprob_of(lp)?;
            Some(match key.strip_prefix("token_id:").and_then(|n| n.parse::<i32>().ok()) {
                Some(id) => Candidate { id: Some(id), text: String::new(), logprob },
                None => Candidate { id: None, text: key.clone(), logprob },
            })
        })
        .collect())
}

fn openai_usage(v: &Value) -> Usage {
    Usage {
        prompt_tokens: v.pointer("/usage/prompt_tokens").and_then(Value::as_u64).map(|n| n as usize),
        cached_tokens: v.pointer("/usage/prompt_tokens_details/cached_tokens").and_then(Value::as_u64).map(|n| n as usize),
    }
}

/// vLLM's exact log-probability of `token` right after `ids`: the last entry of the
/// `prompt_logprobs` of the prompt `ids + [token]`.
pub(crate) fn prompt_logprob(client: &Client, ep: &Endpoint, ids: &[i32], token: i32) -> Result<f64, HttpError> {
    let mut prompt = ids.to_vec();
    prompt.push(token);
    let body = json!({"model": ep.model, "prompt": prompt, "max_tokens": 1, "prompt_logprobs": 0, "temperature": 0.0, "stream": false});
    let v = client.post("/completions", &body)?;
    read_prompt_logprob(&v, token).map_err(|m| protocol(client, "/completions", m))
}

/// The log-probability of `token`, the prompt's last token, in a `/completions` answer with
/// `prompt_logprobs` (vLLM: one map per prompt position, keyed by token id, the first `null`).
fn read_prompt_logprob(v: &Value, token: i32) -> Result<f64, String> {
    let last = v
        .pointer("/choices/0/prompt_logprobs")
        .and_then(Value::as_array)
        .and_then(|a| a.last())
        .ok_or("no choices[0].prompt_logprobs (exact letters need vLLM's prompt_logprobs; use letters = \"bounded\")")?;
    last.get(token.to_string())
        .and_then(|e| e.get("logprob").and_then(logprob_of).or_else(|| logprob_of(e)))
        .ok_or_else(|| format!("prompt_logprobs has no entry for token {token}"))
}

/// A greedy continuation: (text, token ids where the API gives them, ended on its own).
pub(crate) fn generate(client: &Client, ep: &Endpoint, prompt: Prompt, max_tokens: usize) -> Result<(String, Vec<i32>, bool), HttpError> {
    match (ep.api, prompt) {
        (ServedApi::LlamaServer, Prompt::Tokens(ids)) => {
            let body = json!({
                "prompt": ids, "n_predict": max_tokens, "temperature": 0.0, "top_k": 1,
                "cache_prompt": ep.prompt_cache, "return_tokens": true, "stream": false,
            });
            let v = client.post("/completion", &body)?;
            let text = v.get("content").and_then(Value::as_str).unwrap_or("").to_string();
            let tokens = v.get("tokens").and_then(Value::as_array).map(|a| a.iter().filter_map(|t| t.as_i64().map(|i| i as i32)).collect()).unwrap_or_default();
            let finished = matches!(v.get("stop_type").and_then(Value::as_str), Some("eos") | Some("word"));
            Ok((text, tokens, finished))
        }
        (ServedApi::Completions, Prompt::Tokens(ids)) => {
            let body = json!({"model": ep.model, "prompt": ids, "max_tokens": max_tokens, "temperature": 0.0, "stream": false});
            let v = client.post("/completions", &body)?;
            let text = v.pointer("/choices/0/text").and_then(Value::as_str).unwrap_or("").to_string();
            Ok((text, vec![], v.pointer("/choices/0/finish_reason").and_then(Value::as_str) == Some("stop")))
        }
        (ServedApi::Chat, Prompt::Messages(m)) => {
            let body = json!({"model": ep.model, "messages": messages_json(m), "max_tokens": max_tokens, "temperature": 0.0, "stream": false});
            let v = client.post("/chat/completions", &body)?;
            let text = v.pointer("/choices/0/message/content").and_then(Value::as_str).unwrap_or("").to_string();
            Ok((text, vec![], v.pointer("/choices/0/finish_reason").and_then(Value::as_str) == Some("stop")))
        }
        _ => Err(protocol(client, "", "internal: prompt kind does not fit the API")),
    }
}

/// The server's rendering of `messages` with its own chat template, tokenized by the server:
/// llama-server `/apply-template` + `/tokenize`; vLLM `/tokenize` with messages (+ `/detokenize`
/// for the text).
pub(crate) fn server_render(client: &Client, ep: &Endpoint, messages: &[ChatMessage]) -> Result<(String, Vec<i32>), HttpError> {
    let llama_style = |c: &Client| -> Result<(String, Vec<i32>), HttpError> {
        let prompt = c.post_origin("/apply-template", &json!({"messages": messages_json(messages)}))?;
        let text = prompt.get("prompt").and_then(Value::as_str).ok_or_else(|| protocol(c, "/apply-template", "no prompt in the answer"))?.to_string();
        let ids = server_tokenize(c, ep, &text, true)?;
        Ok((text, ids))
    };
    match ep.api {
        ServedApi::LlamaServer => llama_style(client),
        _ => {
            let body = json!({"model": ep.model, "messages": messages_json(messages), "add_generation_prompt": true, "add_special_tokens": false});
            match client.post_origin("/tokenize", &body) {
                Ok(v) if v.get("tokens").is_some() && v.get("count").is_some() => {
                    let ids = ids_of(&v).ok_or_else(|| protocol(client, "/tokenize", "malformed tokens"))?;
                    let text = client
                        .post_origin("/detokenize", &json!({"model": ep.model, "tokens": ids}))
                        .ok()
                        .and_then(|d| d.get("prompt").and_then(Value::as_str).map(str::to_string))
                        .unwrap_or_default();
                    Ok((text, ids))
                }
                // Not vLLM: llama-server's /v1 has /apply-template beside it.
                _ => llama_style(client),
            }
        }
    }
}

fn ids_of(v: &Value) -> Option<Vec<i32>> {
    v.get("tokens")?.as_array()?.iter().map(|t| t.as_i64().or_else(|| t.get("id")?.as_i64()).map(|i| i as i32)).collect()
}

/// The server's tokenization of `text` (no BOS added).
pub(crate) fn server_tokenize(client: &Client, ep: &Endpoint, text: &str, parse_special: bool) -> Result<Vec<i32>, HttpError> {
    let llama = json!({"content": text, "add_special": false, "parse_special": parse_special});
    let v = match ep.api {
        ServedApi::LlamaServer => client.post_origin("/tokenize", &llama)?,
        _ => match client.post_origin("/tokenize", &json!({"model": ep.model, "prompt": text, "add_special_tokens": false})) {
            Ok(v) if v.get("count").is_some() => v,
            _ => client.post_origin("/tokenize", &llama)?,
        },
    };
    ids_of(&v).ok_or_else(|| protocol(client, "/tokenize", "no tokens in the answer"))
}

/// The server's text of each token.
pub(crate) fn server_pieces(client: &Client, ep: &Endpoint, tokens: &[i32]) -> Result<Vec<String>, HttpError> {
    tokens
        .iter()
        .map(|&t| {
            let v = match ep.api {
                ServedApi::LlamaServer => client.post_origin("/detokenize", &json!({"tokens": [t]}))?,
                _ => client.post_origin("/detokenize", &json!({"model": ep.model, "tokens": [t]}))?,
            };
            Ok(v.get("content").or_else(|| v.get("prompt")).and_then(Value::as_str).unwrap_or("").to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_server_and_chat_lists_are_read() {
        let v: Value = serde_json::from_str(r#"[{"id":330,"token":"A","bytes":[65],"logprob":-0.5},{"id":389,"token":" A","logprob":-9.25}]"#).unwrap();
        let c = read_candidates(&v, true).unwrap();
        assert_eq!(c[1], Candidate { id: Some(389), text: " A".into(), logprob: -9.25 });
        assert_eq!(read_candidates(&v, false).unwrap()[0].id, None);
        let null: Value = serde_json::from_str(r#"[{"token":"Z","logprob":null}]"#).unwrap();
        assert_eq!(read_candidates(&null, false).unwrap()[0].logprob, f64::NEG_INFINITY);
    }

    /// An answer recorded from vLLM 0.32.0 (CPU build) serving SmolLM2-135M in float32.
    fn vllm(name: &str) -> Value {
        let p = format!("{}/tests/data/vllm-0.32.0/{name}.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    }

    #[test]
    fn vllm_answers_are_read() {
        // /v1/models and /version: the identity leaves out `created` and the permission ids,
        // which change at every start.
        let mut f = ServerFacts::default();
        assert!(read_models_entry(&vllm("models"), Some("smollm2-f32"), &mut f));
        assert_eq!(f.identity(), "id=smollm2-f32, max_model_len=2048, owned_by=vllm, root=/tmp/smol/hf");
        assert_eq!(f.n_ctx, Some(2048));
        assert_eq!(vllm("version").get("version").and_then(text).as_deref(), Some("0.32.0"));
        // Top-K of the first generated token, keyed `token_id:N`.
        let top = read_completions_top(&vllm("completions_top_logprobs")).unwrap();
        assert_eq!(top.len(), 5);
        assert_eq!(top.iter().find(|c| c.id == Some(198)).map(|c| c.logprob), Some(-0.035688601434230804));
        assert!(top.iter().all(|c| c.id.is_some() && c.text.is_empty()));
        let usage = openai_usage(&vllm("completions_top_logprobs"));
        assert_eq!((usage.prompt_tokens, usage.cached_tokens), (Some(5), None));
        // prompt_logprobs: the last prompt token's own log-probability (" A", id 330).
        let lp = read_prompt_logprob(&vllm("completions_prompt_logprobs"), 330).unwrap();
        assert_eq!(lp, -15.152324676513672);
        assert!(read_prompt_logprob(&vllm("completions_prompt_logprobs"), 331).unwrap_err().contains("no entry for token 331"));
        assert!(read_prompt_logprob(&vllm("completions_top_logprobs"), 330).unwrap_err().contains("letters = \"bounded\""));
        // Prometheus metrics: the prefix-cache setting (started with --no-enable-prefix-caching).
        let metrics = std::fs::read_to_string(format!("{}/tests/data/vllm-0.32.0/metrics.txt", env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert_eq!(vllm_prefix_caching(&metrics), Some(false));
        assert_eq!(vllm_prefix_caching(&metrics.replace("enable_prefix_caching=\"False\"", "enable_prefix_caching=\"True\"")), Some(true));
        assert_eq!(vllm_prefix_caching("# HELP something\nllamacpp:prompt_tokens_total 3\n"), None);
        // /tokenize with messages (the server applies its template).
        let ids = ids_of(&vllm("tokenize_messages")).unwrap();
        assert_eq!(ids.len(), 36);
        assert_eq!(&ids[ids.len() - 4..], &[1, 520, 9531, 198], "ends with the generation prompt");
    }

    #[test]
    fn models_entries_give_a_stable_identity() {
        // vLLM-style: `created` changes at every call and must not enter the identity.
        let v: Value = serde_json::from_str(r#"{"data":[{"id":"other","root":"x"},{"id":"qwen","object":"model","created":1733000000,"owned_by":"vllm","root":"/models/Qwen2.5-72B","max_model_len":32768}]}"#).unwrap();
        let mut f = ServerFacts::default();
        assert!(read_models_entry(&v, Some("qwen"), &mut f));
        assert_eq!(f.identity(), "id=qwen, max_model_len=32768, owned_by=vllm, root=/models/Qwen2.5-72B");
        assert_eq!(f.n_ctx, Some(32768));
        assert!(!read_models_entry(&v, Some("nope"), &mut ServerFacts::default()));
    }
}
