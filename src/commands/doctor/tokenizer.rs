//! `doctor --hf-tokenizer FILE`: llama.cpp's tokenizer against Hugging Face's `tokenizer.json`
//! on rendered prompts and every letter.

use std::path::Path;

use anyhow::Result;
#[cfg(not(feature = "hf-tokenizer"))]
use anyhow::bail;

use super::Report;
use crate::commands::Ctx;
use hyst_tui::config::ModelEntry;
#[cfg(feature = "hf-tokenizer")]
use {super::conversations::sample_conversation, hyst_tui::engine::Engine};

#[cfg(feature = "hf-tokenizer")]
pub(super) fn parity(ctx: &Ctx, r: &mut Report, m: &ModelEntry, tok: &Path, dir: &Path) -> Result<()> {
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
pub(super) fn parity(_: &Ctx, _: &mut Report, _: &ModelEntry, _: &Path, _: &Path) -> Result<()> {
    bail!("this build has no `hf-tokenizer` feature; rebuild with default features")
}
