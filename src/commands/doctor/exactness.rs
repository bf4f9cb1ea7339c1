//! Doctor's exactness checks: prefix reuse and packed decoding (`--pack`) must change no bit of
//! a score (the protocol, §4.5).

use super::Report;
use crate::commands::Ctx;
use hyst_tui::config::models_dir;
use hyst_tui::config::ModelEntry;
use hyst_tui::engine::{provenance, Engine};

/// Prefix reuse must not change a single bit: scores with a reused prefix against scratch.
pub(super) fn check_reuse(ctx: &Ctx, r: &mut Report, m: &ModelEntry, what: &str, engine: &Engine) {
    match hyst_tui::engine::exactness::reuse_check(engine) {
        Ok(c) if c.tokens_reused == 0 => r.warn(what, "prefix reuse not exercised (cache off?)"),
        Ok(c) if c.identical => r.ok(what, format!("prefix reuse is exact ({} tokens reused, bit-identical to scratch)", c.tokens_reused)),
        Ok(c) if provenance::on_gpu(ctx.engine_options().gpu_layers_for(m)) => r.fail(
            what,
            format!(
                "prefix-reused scores differ from scratch scores on this GPU back-end (max |Δp| {:.3e}): a batch scores this model from scratch unless --allow-inexact-reuse",
                c.max_abs_dp
            ),
        ),
        Ok(c) => r.fail(
            what,
            format!("prefix-reused scores differ from scratch scores (max |Δp| {:.3e}; check GGML_CPU_REPACK / flash attention)", c.max_abs_dp),
        ),
        Err(e) => r.fail(what, format!("scoring failed: {e}")),
    }
}

/// Packed decoding (`--pack`) must not change a bit either: three branches decoded together
/// against each alone, on an engine of four sequences.
pub(super) fn check_packing(ctx: &Ctx, r: &mut Report, m: &ModelEntry, what: &str) {
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
