//! `hyst-tui models list|fetch|dir`.

use anyhow::{bail, Result};

use super::Ctx;
use crate::cli::ModelsCmd;
use hyst_tui::config::{models_dir, Source};
use hyst_tui::fetch;
use hyst_tui::util::human_bytes;

pub fn run(ctx: &Ctx, cmd: &ModelsCmd) -> Result<()> {
    let dir = models_dir();
    match cmd {
        ModelsCmd::Dir => println!("{}", dir.display()),
        ModelsCmd::List { no_verify } => {
            println!("models directory: {}  (config: {})", dir.display(), ctx.config.origin);
            println!("{:<22} {:<8} {:>9}  {:<12} NAME", "KEY", "PRESENT", "SIZE", "SHA256");
            let mut missing = Vec::new();
            let mut dangling = Vec::new();
            for m in &ctx.config.models {
                if let (Some(e), false) = (&m.endpoint, m.has_file()) {
                    let default = if m.key == ctx.config.default_model { " (default)" } else { "" };
                    println!("{:<22} {:<8} {:>9}  {:<12} {} [served: {} {}]{default}", m.key, "served", "-", "-", m.name, e.api.name(), e.base());
                    continue;
                }
                let st = fetch::status(m, &dir, !no_verify);
                if !st.present {
                    if let Some(t) = &st.link_target {
                        dangling.push(format!("{}: {} is a dangling link to {}", m.key, st.path.display(), t.display()));
                    }
                    if !matches!(m.source, Source::Local { .. }) {
                        missing.push(m.key.as_str());
                    }
                }
                let sha = match (st.present, st.sha256_ok, &m.sha256) {
                    (false, _, _) => "-",
                    (true, Some(true), _) => "ok",
                    (true, Some(false), _) => "MISMATCH",
                    (true, None, None) => "not pinned",
                    (true, None, Some(_)) => "unchecked",
                };
                let default = if m.key == ctx.config.default_model { " (default)" } else { "" };
                let served = m.endpoint.as_ref().map(|e| format!(" [served: {} {}; GGUF for its prompts]", e.api.name(), e.base())).unwrap_or_default();
                println!(
                    "{:<22} {:<8} {:>9}  {:<12} {}{served}{default}",
                    m.key,
                    if st.present { "yes" } else { "no" },
                    st.size.map(human_bytes).unwrap_or_else(|| "-".into()),
                    sha,
                    m.name
                );
            }
            for d in &dangling {
                println!("{d}");
            }
            if !missing.is_empty() {
                println!("fetch the missing ones with: hyst-tui {}models fetch {}", config_flag(ctx), missing.join(" "));
            }
        }
        ModelsCmd::Fetch { keys, retries } => {
            let opts = fetch::FetchOptions {
                retries: *retries,
                interrupted: super::interrupted,
                progress: true,
            };
            let mut failed = Vec::new();
            for k in keys {
                let entry = ctx.config.get(k)?;
                if super::interrupted() {
                    bail!("interrupted before fetching {k}");
                }
                let mut err = std::io::stderr();
                match fetch::fetch_with(entry, &dir, &opts, &mut err) {
                    Ok(p) => println!("{}\t{}", entry.key, p.display()),
                    Err(e) if keys.len() == 1 => return Err(e.into()),
                    Err(e) => {
                        eprintln!("error: {e}");
                        failed.push(k.clone());
                    }
                }
            }
            if !failed.is_empty() {
                bail!("could not fetch: {}", failed.join(", "));
            }
        }
    }
    Ok(())
}

/// `--models-config FILE ` when the command line gave one (so a printed command works as is).
fn config_flag(ctx: &Ctx) -> String {
    match &ctx.global.models_config {
        Some(p) => format!("--models-config {} ", p.display()),
        None => String::new(),
    }
}
