//! Doctor's checks of a served model: the server answers, who renders the prompt and whether the
//! server renders the same tokens, and one scored answer slot with its letter coverage.

use std::path::Path;

use super::conversations::sample_conversation;
use super::Report;
use crate::commands::Ctx;
use hyst_tui::config::ModelEntry;
use hyst_tui::engine::Engine;
use hyst_tui::fetch;

/// A served model: the server answers, who renders the prompt and whether the server renders the
/// same tokens, and one scored answer slot with its letter coverage.
pub(super) fn check(ctx: &Ctx, r: &mut Report, m: &ModelEntry, dir: &Path) {
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