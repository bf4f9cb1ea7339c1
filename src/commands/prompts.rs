//! `hyst-tui prompts`: the message list of one condition for one item, and (with `--model`) the
//! model's own ramp letters and the prompt rendered with its chat template.

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::items::selection;
use super::{open_engine, Ctx};
use crate::cli::PromptsArgs;
use hyst_tui::dialogue::conditions::{self, build, Base};
use hyst_tui::dialogue::{run_ramp, Builder, Control, DialogueItem};
use hyst_tui::protocol::letter;

pub fn run(ctx: &Ctx, args: &PromptsArgs) -> Result<()> {
    let cond = ctx
        .registry
        .find(&args.condition)
        .with_context(|| format!("unknown condition {:?} (see `hyst-tui conditions`)", args.condition))?;
    let sel = selection(&args.dataset, &args.selection)?;
    let s = match &args.item {
        Some(id) => sel
            .iter()
            .find(|s| &s.item.id == id)
            .with_context(|| format!("item {id:?} is not in the selection of {}", args.dataset))?,
        None => sel.first().context("the dataset selection is empty")?,
    };
    let prompts = ctx.prompts()?;
    let b = Builder::new(&prompts);
    let d = DialogueItem::from(s);
    let base = conditions::base_of(cond);
    let engine = match &args.model {
        Some(m) => Some(open_engine(ctx, Some(m))?),
        None => None,
    };
    let (letters, clean): (Vec<char>, char) = match &engine {
        Some(e) => {
            let mut sc: &hyst_tui::engine::Engine = e;
            let control = match base {
                Base::Paper(c) => c,
                Base::Custom(_) => Control::PressureWrong,
            };
            let ramp = run_ramp(&mut sc, &b, &d, control, &mut |_| {})?;
            let clean = ramp.step(hyst_tui::dialogue::CurvePoint::CleanContext).score.pred_letter();
            match base {
                Base::Paper(_) => (ramp.letters.to_vec(), clean),
                Base::Custom(r) => (conditions::run_custom_ramp(&mut sc, &b, &d, r)?.0, clean),
            }
        }
        None => (vec!['?'; base.exchanges()], '?'),
    };
    let built = build(cond, &b, &d, &letters, clean);
    let rendered = match &engine {
        Some(e) => Some(e.prepare(&built.messages)?),
        None => None,
    };
    if args.json {
        let v = json!({
            "item_id": s.item.id,
            "condition": cond.key,
            "suite": cond.suite.key(),
            "correct_letter": letter(built.correct).to_string(),
            "advocated_wrong_letter": letter(built.wrong).to_string(),
            "ramp_letters": if engine.is_some() { json!(letters.iter().map(|c| c.to_string()).collect::<Vec<_>>()) } else { json!(null) },
            "messages": built.messages,
            "rendered_prompt": rendered.as_ref().map(|p| p.text.clone()),
            "prompt_tokens": rendered.as_ref().map(|p| p.tokens.len()),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("item {} · condition {} ({}) · correct {} · advocated wrong {}", s.item.id, cond.key, cond.label,
        letter(built.correct), letter(built.wrong));
    match &engine {
        Some(_) => println!(
            "ramp letters chosen by the model ({}): {}",
            match base {
                Base::Paper(_) => "A1..A4".to_string(),
                Base::Custom(r) => format!("ramp {}, one per step", r.name),
            },
            letters.iter().map(char::to_string).collect::<Vec<_>>().join(" ")
        ),
        None => println!("(assistant letters shown as '?': pass --model KEY to run the ramp and see the model's own letters)"),
    }
    for (i, m) in built.messages.iter().enumerate() {
        println!("\n--- [{i}] {} ---\n{}", m.role, m.content);
    }
    if let Some(p) = rendered {
        println!("\n=== rendered with the model's chat template ({} tokens) ===\n{}", p.tokens.len(), p.text);
    }
    if built.messages.is_empty() {
        bail!("no messages");
    }
    Ok(())
}
