//! `hyst-tui doctor`: checks the build and each present model, one verdict per line. Each part
//! has its file: the build (`build.rs`), a model run in-process (`model.rs`) with its exactness
//! checks (`exactness.rs`), a served model (`served.rs`), and the tokenizer against Hugging
//! Face's (`tokenizer.rs`).

use anyhow::{bail, Result};

use super::Ctx;
use crate::cli::DoctorArgs;
use hyst_tui::config::{models_dir, ModelEntry};

mod build;
mod conversations;
mod exactness;
mod model;
mod served;
mod tokenizer;

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

pub fn run(ctx: &Ctx, args: &DoctorArgs) -> Result<()> {
    let mut r = Report::default();
    build::check(ctx, &mut r);
    let dir = models_dir();
    r.ok("models", format!("directory {} (config {})", dir.display(), ctx.config.origin));
    if let Some(tok) = &args.hf_tokenizer {
        let m = ctx.model(args.model.as_deref())?;
        tokenizer::parity(ctx, &mut r, m, tok, &dir)?;
    } else {
        let models: Vec<&ModelEntry> = match &args.model {
            Some(k) => vec![ctx.config.get(k)?],
            None => ctx.config.models.iter().collect(),
        };
        for m in models {
            model::check(ctx, &mut r, m, &dir);
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
