//! Doctor's checks of a model run in-process: the file against its pinned sha256, the load, the
//! GPU offload, the chat template (on a sample and on a long dialogue, against its render
//! budget) and the letter tokens; then the exactness checks (`exactness.rs`).

use std::path::Path;

use super::conversations::{long_conversation, sample_conversation};
use super::{exactness, served, Report};
use crate::commands::Ctx;
use hyst_tui::config::ModelEntry;
use hyst_tui::engine::{provenance, Engine};
use hyst_tui::fetch;

pub(super) fn check(ctx: &Ctx, r: &mut Report, m: &ModelEntry, dir: &Path) {
    let what = format!("model {}", m.key);
    if m.endpoint.is_some() {
        return served::check(ctx, r, m, dir);
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
    exactness::check_reuse(ctx, r, m, &what, &engine);
    engine.shutdown();
    exactness::check_packing(ctx, r, m, &what);
}
