//! `hyst-tui bench answers`: what open answers cost against letters, on the same items of the
//! hierarchy suite, each run through the batch pipeline with prefix reuse (one worker, no score
//! store): tokens evaluated, the prefix-trie bound of what was scored (contexts, and contexts
//! followed by each option text), and the scoring wall time.

use anyhow::Result;

use super::super::Ctx;
use super::batch::{contexts_of, pipeline_in, Run};
use super::trie_nodes;
use hyst_tui::data::selection::select;
use hyst_tui::data::DatasetSpec;
use hyst_tui::protocol::AnswerFormat;

pub fn run(ctx: &Ctx, model: Option<&str>, limit: usize, dataset: &str) -> Result<()> {
    let key = ctx.model(model)?.key.clone();
    let mut items = select(&DatasetSpec::parse(dataset)?.load()?, None, 42);
    items.truncate(limit.max(1));
    let n = items.len();
    let letters = pipeline_in(ctx, &key, dataset, n, 1, true, 1, "letters".into(), AnswerFormat::Letters)?;
    let open = pipeline_in(ctx, &key, dataset, n, 1, true, 1, "open answers".into(), AnswerFormat::Open)?;
    println!("model {key} · hierarchy suite · {n} item(s) of {dataset} · {} threads · prefix reuse on", ctx.engine_options().threads);
    println!("{:<14} {:>9} {:>10} {:>10} {:>11} {:>9}", "", "contexts", "tokens", "trie bound", "tokens/bound", "scoring");
    let line = |r: &Run| {
        let bound = trie_nodes(&contexts_of(&r.engine.kv_ops));
        let tokens = r.summary.totals.tokens_evaluated;
        println!(
            "{:<14} {:>9} {:>10} {:>10} {:>11.3} {:>8.2}s",
            r.label,
            r.summary.totals.scored,
            tokens,
            bound,
            tokens as f64 / bound.max(1) as f64,
            r.scoring
        );
        (tokens, bound)
    };
    let (lt, _) = line(&letters);
    let (ot, _) = line(&open);
    println!(
        "open / letters: {:.2}× the tokens, {:.2}× the scoring time ({:.0} extra tokens per item)",
        ot as f64 / lt.max(1) as f64,
        open.scoring / letters.scoring,
        (ot as f64 - lt as f64) / n as f64
    );
    println!(
        "columns: tokens = decoded by the engine; trie bound = distinct token prefixes of everything scored (for open answers, each context followed by each option text), the fewest tokens any reuse can decode; scoring = first item started to last committed"
    );
    Ok(())
}
