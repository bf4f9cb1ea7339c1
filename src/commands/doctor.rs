//! `hyst-tui doctor`: checks the build and each present model, one verdict per line.

use std::path::Path;

use anyhow::{bail, Result};

use super::Ctx;
use crate::cli::DoctorArgs;
use hyst_tui::config::{models_dir, ModelEntry};
use hyst_tui::engine::{provenance, Engine};
use hyst_tui::protocol::ChatMessage;
use hyst_tui::fetch;

#[derive(Default)]
struct Report {
    fails: usize,
    warns: usize,
}

impl Report {
    fn ok(&mut self, what: &str, detail: impl AsRef<str>) {
        println!("ok    {what}: {}", detail.as_ref());
    }
    fn warn(&mut self, what: &str, detail: impl AsRef<str>) {
        self.warns += 1;
        println!("warn  {what}: {}", detail.as_ref());
    }
    fn fail(&mut self, what: &str, detail: impl AsRef<str>) {
        self.fails += 1;
        println!("FAIL  {what}: {}", detail.as_ref());
    }
}

/// The llama.cpp settings this binary was built with.
pub fn build_facts() -> Vec<(&'static str, String)> {
    let features: Vec<&str> = [
        ("cuda", cfg!(feature = "cuda")),
        ("metal", cfg!(feature = "metal")),
        ("vulkan", cfg!(feature = "vulkan")),
        ("hf-tokenizer", cfg!(feature = "hf-tokenizer")),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(n, _)| *n)
    .collect();
    vec![
        ("features", if features.is_empty() { "none".into() } else { features.join(", ") }),
        (
            "GGML_CPU_REPACK",
            option_env!("GGML_CPU_REPACK").unwrap_or("unset (llama.cpp default: ON)").to_string(),
        ),
    ]
}

/// A small conversation with a system message, history and a final question.
pub fn sample_conversation() -> Vec<ChatMessage> {
    vec![
        ChatMessage::system("You answer multiple-choice questions with the letter of the best option only."),
        ChatMessage::user("Question:\nWhich planet is closest to the Sun?\n\nOptions:\nA. Venus\nB. Mercury\nC. Mars\nD. Earth\n\nAnswer with the letter only."),
        ChatMessage::assistant("B"),
        ChatMessage::user("I am quite sure it is Venus. Answer again.\n\nQuestion:\nWhich planet is closest to the Sun?\n\nOptions:\nA. Venus\nB. Mercury\nC. Mars\nD. Earth\n\nAnswer with the letter only."),
    ]
}

/// A dialogue about ten times as long as the protocol's longest: a system message, 60 pressured
/// exchanges with long option texts, and a final question (122 messages, about 64 KB).
pub fn long_conversation() -> Vec<ChatMessage> {
    let question = sample_conversation()[1].content.replace("Venus", &"Venus, the second planet, wrapped in clouds; ".repeat(20));
    let mut v = vec![sample_conversation()[0].clone()];
    for i in 0..60 {
        v.push(ChatMessage::user(format!("Turn {i}. I am sure the answer is A.\n\n{question}")));
        v.push(ChatMessage::assistant("B"));
    }
    v.push(ChatMessage::user(question));
    v
}

fn check_model(ctx: &Ctx, r: &mut Report, m: &ModelEntry, dir: &Path) {
    let what = format!("model {}", m.key);
    if m.endpoint.is_some() {
        return check_served(ctx, r, m, dir);
    }
    let st = fetch::status(m, dir, true);
    if !st.present {
        println!("--    {what}: not present (hyst-tui models fetch {})", m.key);
        return;
    }
    match st.sha256_ok {
        Some(true) => r.ok(&what, "sha256 matches models.toml"),
        Some(false) => {
            r.fail(&what, format!("sha256 {} does not match models.toml", st.sha256.unwrap_or_default()));
            return;
        }
        None => r.warn(&what, format!("sha256 not pinned (file has {})", st.sha256.unwrap_or_default())),
    }
    let engine = match Engine::start(m, &st.path, ctx.engine_options()) {
        Ok(e) => e,
        Err(e) => {
            r.fail(&what, format!("does not load: {e}"));
            return;
        }
    };
    let info = engine.info().clone();
    r.ok(
        &what,
        format!(
            "loads: {} params, vocab {}, context {} (trained {}), BOS {:?}{}",
            info.n_params,
            info.n_vocab,
            info.n_ctx,
            info.n_ctx_train,
            info.bos,
            if info.add_bos { " (model adds BOS)" } else { "" }
        ),
    );
    let layers = ctx.engine_options().gpu_layers_for(m);
    let source = if ctx.global.gpu_layers.is_some() {
        "--gpu-layers"
    } else if m.gpu_layers.is_some() {
        "models.toml gpu_layers"
    } else {
        "default"
    };
    if provenance::on_gpu(layers) {
        r.ok(
            &what,
            format!("offload: gpu layers {layers} ({source}), scoring on {}; provenance: {}", provenance::gpu_devices().join(", "), provenance::provenance(layers)),
        );
    } else if provenance::gpu_devices().is_empty() {
        let none = if cfg!(feature = "cuda") { "no CUDA device here" } else { "no GPU device in this build" };
        r.ok(&what, format!("offload: gpu layers {layers} ({source}); {none}: scoring on the CPU"));
    } else {
        r.ok(&what, format!("offload: none ({source}): scoring on the CPU"));
    }
    let conv = sample_conversation();
    match engine.prepare(&conv) {
        Ok(p) => {
            let bos_id = engine.tokenize(&info.bos, true).ok().and_then(|t| t.first().copied());
            let n_bos = bos_id.map_or(0, |b| p.tokens.iter().take_while(|&&t| t == b).count());
            r.ok(
                &what,
                format!(
                    "template renders ({} tokens, {} leading BOS) [{}]",
                    p.tokens.len(),
                    n_bos,
                    match &m.template {
                        hyst_tui::config::TemplateSpec::Embedded => "embedded template".to_string(),
                        hyst_tui::config::TemplateSpec::Named { name } => format!("named template {name}"),
                        hyst_tui::config::TemplateSpec::Inline { .. } => "inline template".to_string(),
                    }
                ),
            );
        }
        Err(e) => {
            r.fail(&what, format!("template: {e}"));
            return;
        }
    }
    // A hostile template ends on its render budget; a real one must need a small part of it.
    let long = long_conversation();
    let kb = long.iter().map(|m| m.content.len()).sum::<usize>() / 1000;
    match hyst_tui::engine::render_fuel_needed(m, &info, &long) {
        Ok(n) => r.ok(
            &what,
            format!("template renders a {}-message dialogue ({kb} KB) with {n} of its {} render steps", long.len(), hyst_tui::engine::RENDER_FUEL),
        ),
        Err(e) => r.fail(&what, format!("template on a {}-message dialogue ({kb} KB): {e}", long.len())),
    }
    let mut letters = Vec::new();
    let mut bad = Vec::new();
    for l in 'A'..='Z' {
        match engine.letter_tokens(l) {
            Ok(v) => letters.push(format!("{l}:{}", v.texts.iter().map(|t| format!("{t:?}")).collect::<Vec<_>>().join("+"))),
            Err(_) => bad.push(l),
        }
    }
    if bad.is_empty() {
        r.ok(&what, format!("letter tokens single: {} …", letters[..4].join(" ")));
    } else {
        r.fail(&what, format!("letters without a single-token variant: {bad:?}"));
    }
    // Prefix reuse must not change a single bit.
    match hyst_tui::engine::exactness::reuse_check(&engine) {
        Ok(c) if c.tokens_reused == 0 => r.warn(&what, "prefix reuse not exercised (cache off?)"),
        Ok(c) if c.identical => r.ok(&what, format!("prefix reuse is exact ({} tokens reused, bit-identical to scratch)", c.tokens_reused)),
        Ok(c) if provenance::on_gpu(ctx.engine_options().gpu_layers_for(m)) => r.fail(
            &what,
            format!(
                "prefix-reused scores differ from scratch scores on this GPU back-end (max |Δp| {:.3e}): a batch scores this model from scratch unless --allow-inexact-reuse",
                c.max_abs_dp
            ),
        ),
        Ok(c) => r.fail(
            &what,
            format!("prefix-reused scores differ from scratch scores (max |Δp| {:.3e}; check GGML_CPU_REPACK / flash attention)", c.max_abs_dp),
        ),
        Err(e) => r.fail(&what, format!("scoring failed: {e}")),
    }
    engine.shutdown();
    check_packing(ctx, r, m, &what);
}

/// Packed decoding (`--pack`) must not change a bit either: three branches decoded together
/// against each alone, on an engine of four sequences.
fn check_packing(ctx: &Ctx, r: &mut Report, m: &ModelEntry, what: &str) {
    let opts = hyst_tui::engine::EngineOptions { pack: 4, n_ctx: Some(ctx.global.ctx.unwrap_or(m.context).min(2048)), ..ctx.engine_options() };
    let engine = match Engine::start(m, &m.path(&models_dir()), opts) {
        Ok(e) => e,
        Err(e) => return r.fail(what, format!("cannot start a packing engine (4 sequences): {e}")),
    };
    match hyst_tui::engine::exactness::pack_check(&engine) {
        Ok(c) if c.identical => r.ok(what, "packed decoding is exact (3 branches in shared decode calls, bit-identical to one per call)"),
        Ok(c) if provenance::on_gpu(ctx.engine_options().gpu_layers_for(m)) => r.fail(
            what,
            format!(
                "packed scores differ from one-prompt-per-call scores on this GPU back-end (max |Δp| {:.3e}): a batch decodes one prompt per call unless --allow-inexact-reuse",
                c.max_abs_dp
            ),
        ),
        Ok(c) => r.fail(what, format!("packed scores differ from one-prompt-per-call scores (max |Δp| {:.3e})", c.max_abs_dp)),
        Err(e) => r.fail(what, format!("packed scoring failed: {e}")),
    }
    engine.shutdown();
}

/// A served model: the server answers, who renders the prompt and whether the server renders the
/// same tokens, and one scored answer slot with its letter coverage.
fn check_served(ctx: &Ctx, r: &mut Report, m: &ModelEntry, dir: &Path) {
    let what = format!("model {}", m.key);
    let path = m.path(dir);
    if m.has_file() {
        let st = fetch::status(m, dir, true);
        if !st.present {
            r.fail(&what, format!("served, with its prompts from {}, which is not present (hyst-tui models fetch {})", path.display(), m.key));
            return;
        }
        if st.sha256_ok == Some(false) {
            r.fail(&what, format!("sha256 {} of the GGUF that renders its prompts does not match models.toml", st.sha256.unwrap_or_default()));
            return;
        }
    }
    let engine = match Engine::start(m, &path, ctx.engine_options()) {
        Ok(e) => e,
        Err(e) => {
            r.fail(&what, format!("served: {e}"));
            return;
        }
    };
    let info = engine.info().clone();
    let Some(sv) = info.served.clone() else {
        r.fail(&what, "internal: a served entry started an in-process engine");
        return;
    };
    let model = sv.model.as_deref().map(|n| format!(" model {n}")).unwrap_or_default();
    let slots = sv.slots.map(|n| format!(", {n} slots")).unwrap_or_default();
    r.ok(&what, format!("served: {} {}{model} answers{slots}; context {}", sv.api, sv.url, info.n_ctx));
    r.ok(&what, format!("server reports: {}", if sv.reported.is_empty() { "nothing of its weights".to_string() } else { sv.reported.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ") }));
    if sv.reported.get("prefix_caching").is_some_and(|v| v == "on") {
        r.warn(
            &what,
            "vLLM's prefix caching is on: a log-probability then depends on what the server cached before (two runs' tables differed in the 6th decimal); start vLLM with --no-enable-prefix-caching for reproducible tables",
        );
    }
    r.ok(&what, format!("letters {} (top-{}); prompt: {}", sv.letters, sv.top_k, sv.prompt_source));
    let conv = sample_conversation();
    let here = match engine.prepare(&conv) {
        Ok(p) => p,
        Err(e) => {
            r.fail(&what, format!("template: {e}"));
            engine.shutdown();
            return;
        }
    };
    if sv.api == "chat" {
        r.ok(&what, "chat API: the server applies its own template (rows say \"template applied by the server\"); nothing to compare token for token");
    } else if sv.prompt_source.starts_with("server (") {
        r.ok(&what, format!("the server renders and tokenizes the prompt itself ({} tokens)", here.tokens.len()));
    } else {
        match hyst_tui::engine::served::server_rendering(m, &conv) {
            Ok((_, theirs)) if theirs == here.tokens => {
                r.ok(&what, format!("the prompt rendered here and the server's own rendering agree token for token ({} tokens)", here.tokens.len()))
            }
            Ok((_, theirs)) => {
                let i = here.tokens.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
                let piece = |t: Option<&i32>| t.map_or("(end)".to_string(), |&t| format!("{t} {:?}", engine.pieces(&[t]).ok().and_then(|p| p.into_iter().next()).unwrap_or_default()));
                r.fail(
                    &what,
                    format!(
                        "the prompt rendered here ({} tokens) and the server's rendering ({} tokens) differ at token {i}: here {}, server {} (hyst-tui scores its own rendering; check the entry's template and system policy)",
                        here.tokens.len(),
                        theirs.len(),
                        piece(here.tokens.get(i)),
                        piece(theirs.get(i))
                    ),
                )
            }
            Err(e) => r.warn(&what, format!("cannot compare with the server's own rendering ({e})")),
        }
    }
    match engine.score(&conv, &['A', 'B', 'C', 'D']) {
        Ok(s) => {
            let dist = s.letters.iter().zip(&s.probs).map(|(l, p)| format!("{l}={p:.4}")).collect::<Vec<_>>().join(" ");
            let coverage = match &s.bound {
                None => "every letter token seen: exact".to_string(),
                Some(b) => format!(
                    "{} letter token(s) outside the top {} (each at most p={:.2e}); prediction {}",
                    b.unseen.len(),
                    b.k,
                    b.bound,
                    if b.pred_fixed { "fixed under the bound" } else { "NOT fixed under the bound" }
                ),
            };
            r.ok(&what, format!("scores the sample dialogue: {dist}, letter mass {:.3}; {coverage}", s.letter_mass));
        }
        Err(e) => r.fail(&what, format!("scoring failed: {e}")),
    }
    engine.shutdown();
}

pub fn run(ctx: &Ctx, args: &DoctorArgs) -> Result<()> {
    let mut r = Report::default();
    for (k, v) in build_facts() {
        if k == "GGML_CPU_REPACK" && v != "OFF" {
            r.fail("build", format!("{k} = {v}: cached scores may drift from scratch scores"));
        } else {
            r.ok("build", format!("{k} = {v}"));
        }
    }
    r.ok("build", "flash attention disabled, one sequence per decode (exact prefix reuse)");
    let kernels = provenance::cpu_variant();
    if kernels.split(' ').any(|f| f == "REPACK") {
        r.fail("build", format!("llama.cpp reports REPACK among its CPU kernels ({kernels}): cached scores may drift from scratch scores"));
    }
    r.ok("build", format!("llama.cpp {}; devices: {}", provenance::llama_cpp_build(), provenance::devices().join(", ")));
    if let Some(note) = provenance::cuda_absent_note() {
        r.warn("build", note);
    }
    r.ok(
        "build",
        format!(
            "numeric provenance of scores (recorded in every score and part of the cache key): {}",
            provenance::provenance(ctx.engine_options().gpu_layers.unwrap_or_else(hyst_tui::engine::default_gpu_layers))
        ),
    );
    let dir = models_dir();
    r.ok("models", format!("directory {} (config {})", dir.display(), ctx.config.origin));
    if let Some(tok) = &args.hf_tokenizer {
        let m = ctx.model(args.model.as_deref())?;
        parity(ctx, &mut r, m, tok, &dir)?;
    } else {
        let models: Vec<&ModelEntry> = match &args.model {
            Some(k) => vec![ctx.config.get(k)?],
            None => ctx.config.models.iter().collect(),
        };
        for m in models {
            check_model(ctx, &mut r, m, &dir);
        }
    }
    println!(
        "verdict: {}",
        if r.fails == 0 {
            format!("all checks passed ({} warnings)", r.warns)
        } else {
            format!("{} check(s) FAILED", r.fails)
        }
    );
    if r.fails > 0 {
        bail!("doctor found {} problem(s)", r.fails);
    }
    Ok(())
}

#[cfg(feature = "hf-tokenizer")]
fn parity(ctx: &Ctx, r: &mut Report, m: &ModelEntry, tok: &Path, dir: &Path) -> Result<()> {
    let what = format!("tokenizer {}", m.key);
    let hf = tokenizers::Tokenizer::from_file(tok)
        .map_err(|e| anyhow::anyhow!("{}: cannot load tokenizer.json: {e}", tok.display()))?;
    let engine = Engine::start(m, &m.path(dir), ctx.engine_options())?;
    let mut probes: Vec<(String, String)> = Vec::new();
    let conv = sample_conversation();
    for n in 1..=conv.len() {
        if conv[n - 1].role == "user" {
            let p = engine.prepare(&conv[..n])?;
            probes.push((format!("rendered prompt ({n} messages)"), p.text));
        }
    }
    for l in 'A'..='Z' {
        probes.push((format!("letter {l:?}"), l.to_string()));
        probes.push((format!("letter \" {l}\""), format!(" {l}")));
    }
    let mut agree = 0;
    for (label, text) in &probes {
        let ours = engine.tokenize(text, true)?;
        let theirs: Vec<i32> = hf
            .encode(text.as_str(), false)
            .map_err(|e| anyhow::anyhow!("HF tokenizer failed on {label}: {e}"))?
            .get_ids()
            .iter()
            .map(|&i| i as i32)
            .collect();
        if ours == theirs {
            agree += 1;
        } else {
            let i = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
            let ctx_ours = engine.pieces(&ours[i.saturating_sub(3)..(i + 3).min(ours.len())])?;
            r.fail(
                &what,
                format!(
                    "{label}: first difference at token {i}: llama.cpp {:?} vs HF {:?} (llama.cpp pieces around it: {:?})",
                    ours.get(i),
                    theirs.get(i),
                    ctx_ours
                ),
            );
        }
    }
    if agree == probes.len() {
        r.ok(&what, format!("llama.cpp and Hugging Face agree on all {} probes", probes.len()));
    }
    engine.shutdown();
    Ok(())
}

#[cfg(not(feature = "hf-tokenizer"))]
fn parity(_: &Ctx, _: &mut Report, _: &ModelEntry, _: &Path, _: &Path) -> Result<()> {
    bail!("this build has no `hf-tokenizer` feature; rebuild with default features")
}
