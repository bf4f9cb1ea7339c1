//! Doctor's build checks: the llama.cpp settings this binary was built with (the exactness of
//! prefix reuse depends on them), its devices and the numeric provenance its scores record.

use super::Report;
use crate::commands::Ctx;
use hyst_tui::engine::provenance;

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

/// The build's lines of the report: its features, `GGML_CPU_REPACK` and llama.cpp's CPU kernels
/// (REPACK breaks exactness), llama.cpp's version and devices, the numeric provenance.
pub(super) fn check(ctx: &Ctx, r: &mut Report) {
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
    // main starts the binary again with PASSIVE when the variable is unset (main.rs).
    match std::env::var("OMP_WAIT_POLICY").map(|p| p.to_ascii_uppercase()) {
        Ok(p) if p == "PASSIVE" => r.ok("build", "CPU threads wait passively at llama.cpp's barriers (OMP_WAIT_POLICY=PASSIVE)"),
        Ok(p) => r.ok("build", format!("CPU threads wait with OMP_WAIT_POLICY={p}, as set (spinning is slow where other processes share the cores)")),
        Err(_) => r.warn("build", "OMP_WAIT_POLICY is unset: CPU threads spin at llama.cpp's barriers, which is slow where other processes share the cores"),
    }
    r.ok(
        "build",
        format!(
            "numeric provenance of scores (recorded in every score and part of the cache key): {}",
            provenance::provenance(ctx.engine_options().gpu_layers.unwrap_or_else(hyst_tui::engine::default_gpu_layers))
        ),    );
}
