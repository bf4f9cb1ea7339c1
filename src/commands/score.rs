//! `hyst-tui score`: measure the answer slot of conversations from a file.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{interrupted, open_engine, Ctx};
use crate::cli::{ScoreArgs, SteeringArgs};
use hyst_tui::engine::inside::{ControlVector, InspectOptions, Steering};
use hyst_tui::protocol::{ChatMessage, SlotScore};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(untagged)]
enum Conversation {
    Bare(Vec<ChatMessage>),
    WithLetters {
        messages: Vec<ChatMessage>,
        #[serde(default)]
        letters: Option<LettersSpec>,
    },
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LettersSpec {
    Joined(String),
    List(Vec<String>),
}

fn parse_letters(spec: &LettersSpec, origin: &str) -> Result<Vec<char>> {
    let parts: Vec<String> = match spec {
        LettersSpec::Joined(s) => s.split(',').map(|p| p.trim().to_string()).collect(),
        LettersSpec::List(v) => v.iter().map(|p| p.trim().to_string()).collect(),
    };
    parts
        .iter()
        .map(|p| {
            let mut cs = p.chars();
            match (cs.next(), cs.next()) {
                (Some(c), None) if c.is_ascii_uppercase() => Ok(c),
                _ => bail!("{origin}: letters must be single capital letters A-Z, got {p:?}"),
            }
        })
        .collect()
}

/// The most tokens `--generate` asks for.
const MAX_GENERATE: usize = 4096;

/// One conversation to score, with its own letters if it named them.
pub struct Input {
    pub messages: Vec<ChatMessage>,
    pub letters: Option<Vec<char>>,
}

pub fn read_inputs(path: &Path) -> Result<Vec<Input>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
    let mut out = Vec::new();
    let lines: Vec<(usize, &str)> = if is_jsonl {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| (i + 1, l))
            .collect()
    } else {
        vec![(1, text.as_str())]
    };
    for (lineno, l) in lines {
        let origin = format!("{}:{lineno}", path.display());
        let conv: Conversation = serde_json::from_str(l).map_err(|e| {
            anyhow::anyhow!(
                "{origin}: not a conversation ({e}); expected [{{\"role\":..,\"content\":..}},..] or {{\"messages\": [..], \"letters\": \"A,B\"}}"
            )
        })?;
        let (messages, letters) = match conv {
            Conversation::Bare(m) => (m, None),
            Conversation::WithLetters { messages, letters } => {
                let l = letters.as_ref().map(|s| parse_letters(s, &origin)).transpose()?;
                (messages, l)
            }
        };
        if messages.is_empty() {
            bail!("{origin}: the conversation has no messages");
        }
        for m in &messages {
            if !matches!(m.role.as_str(), "system" | "user" | "assistant") {
                bail!("{origin}: unknown role {:?} (use system, user or assistant)", m.role);
            }
        }
        out.push(Input { messages, letters });
    }
    if out.is_empty() {
        bail!("{}: no conversations", path.display());
    }
    Ok(out)
}

/// The JSON object printed for one score (probabilities keyed by letter).
pub fn score_json(s: &SlotScore) -> Value {
    let probs: BTreeMap<String, f64> = s
        .letters
        .iter()
        .zip(&s.probs)
        .map(|(l, p)| (l.to_string(), *p))
        .collect();
    let log_scores: BTreeMap<String, f64> = s
        .letters
        .iter()
        .zip(&s.log_scores)
        .map(|(l, p)| (l.to_string(), *p))
        .collect();
    let variants: BTreeMap<String, Value> = s
        .variants
        .iter()
        .zip(&s.variant_probs)
        .map(|(v, ps)| {
            (
                v.letter.to_string(),
                json!(v.ids.iter().zip(&v.texts).zip(ps).map(|((id, t), p)| json!({"id": id, "text": t, "prob": p})).collect::<Vec<_>>()),
            )
        })
        .collect();
    let mut out = json!({
        "probs": probs,
        "pred": s.pred_letter().to_string(),
        "log_scores": log_scores,
        "entropy": s.entropy,
        "max_prob": s.max_prob,
        "margin_top2": s.margin_top2,
        "letter_mass": s.letter_mass,
        "letter_tokens": variants,
        "top_tokens": s.top_tokens.iter().map(|t| json!({"id": t.id, "text": t.text, "prob": t.prob})).collect::<Vec<_>>(),
        "prompt_tokens": s.prompt_tokens,
        "prompt_hash": s.prompt_hash,
        "tokens_evaluated": s.tokens_evaluated,
        "tokens_reused": s.tokens_reused,
        "rendered_prompt": s.rendered_prompt,
    });
    // A served score from top-K log-probabilities that did not list every letter token: what
    // was unseen, its bound, and each option's range (absent where every letter is known).
    if let Some(b) = &s.bound {
        let by_letter = |v: &[f64]| s.letters.iter().zip(v).map(|(l, p)| (l.to_string(), *p)).collect::<BTreeMap<String, f64>>();
        out["bound"] = json!({
            "k": b.k,
            "unseen": b.unseen,
            "bound": b.bound,
            "probs_lo": by_letter(&b.probs_lo),
            "probs_hi": by_letter(&b.probs_hi),
            "pred_fixed": b.pred_fixed,
        });
    }
    out
}

/// The steering setting of `--steer FILE --alpha A --steer-layers L` (none without a file).
pub fn steering_option(a: &SteeringArgs) -> Result<Option<Steering>> {
    let Some(path) = &a.steer else { return Ok(None) };
    let vector = ControlVector::read(path).map_err(|e| anyhow::anyhow!(e))?;
    let layers = a.steer_layers.unwrap_or_else(|| vector.span());
    Ok(Some(Steering { vector: Arc::new(vector), alpha: a.alpha, layers }))
}

fn by_letter(letters: &[char], values: &[f64]) -> BTreeMap<String, f64> {
    letters.iter().zip(values).map(|(l, p)| (l.to_string(), *p)).collect()
}

/// The lens as a table: a row per layer, a column per option, the layer's leading letter.
fn print_lens(out: &mut dyn Write, letters: &[char], layers: &[Vec<f64>], anchor: f64) -> std::io::Result<()> {
    write!(out, "letter lens (option probabilities after each layer)\nlayer")?;
    for l in letters {
        write!(out, "  {l:>6}")?;
    }
    writeln!(out, "  lead")?;
    for (i, p) in layers.iter().enumerate() {
        write!(out, "{i:>5}")?;
        for v in p {
            write!(out, "  {v:>6.4}")?;
        }
        let lead = p.iter().enumerate().fold(0, |b, (j, v)| if *v > p[b] { j } else { b });
        writeln!(out, "  {}", letters[lead])?;
    }
    writeln!(out, "last layer vs the score: max |difference| {anchor:.2e}")
}

pub fn print_human(out: &mut dyn Write, s: &SlotScore) -> std::io::Result<()> {
    writeln!(out, "option  p        log-score")?;
    for (i, l) in s.letters.iter().enumerate() {
        let bar = "#".repeat((s.probs[i] * 40.0).round() as usize);
        let mark = if i == s.pred { " <- pred" } else { "" };
        writeln!(out, "  {l}     {:.4}  {:>9.4}  {bar}{mark}", s.probs[i], s.log_scores[i])?;
    }
    writeln!(
        out,
        "entropy {:.4} nats · max p {:.4} · margin {:.4} · letter mass {:.4}",
        s.entropy, s.max_prob, s.margin_top2, s.letter_mass
    )?;
    write!(out, "top tokens:")?;
    for t in &s.top_tokens {
        write!(out, " {:?} {:.3}", t.text, t.prob)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "prompt {} tokens ({} evaluated, {} reused)",
        s.prompt_tokens, s.tokens_evaluated, s.tokens_reused
    )
}

pub fn run(ctx: &Ctx, args: &ScoreArgs) -> Result<()> {
    let inputs = read_inputs(&args.messages)?;
    let default_letters = args
        .letters
        .clone()
        .unwrap_or_else(|| vec!['A', 'B', 'C', 'D']);
    if let Some(bad) = default_letters.iter().find(|c| !c.is_ascii_uppercase()) {
        bail!("--letters must be capital letters A-Z, got {bad:?}");
    }
    if let Some(n) = args.generate {
        if !(1..=MAX_GENERATE).contains(&n) {
            bail!("--generate {n}: give 1 to {MAX_GENERATE} tokens");
        }
    }
    let steering = steering_option(&args.steering)?;
    let engine = open_engine(ctx, args.model.as_deref())?;
    let inspect = args.lens || steering.is_some();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (i, input) in inputs.iter().enumerate() {
        if interrupted() {
            bail!("{} after {i} of {} conversations (the ones printed are complete)", super::stop_reason(), inputs.len());
        }
        let letters = input.letters.as_ref().unwrap_or(&default_letters);
        let (s, lens) = if inspect {
            let options = InspectOptions { lens: args.lens, residuals: false, steering: steering.clone() };
            let r = engine.inspect(&input.messages, letters, options).with_context(|| format!("conversation {}", i + 1))?;
            (r.score, r.lens.zip(r.lens_anchor))
        } else {
            (engine.score(&input.messages, letters).with_context(|| format!("conversation {}", i + 1))?, None)
        };
        let generated = match args.generate {
            Some(n) => Some(engine.generate(&input.messages, n).with_context(|| format!("conversation {}: generating", i + 1))?),
            None => None,
        };
        if args.json {
            let mut v = score_json(&s);
            if let Some(g) = &generated {
                v["generation"] = json!({"text": g.text, "tokens": g.tokens, "finished": g.finished});
            }
            if let Some((layers, anchor)) = &lens {
                v["lens"] = json!(layers.iter().map(|p| by_letter(&s.letters, p)).collect::<Vec<_>>());
                v["lens_anchor"] = json!(anchor);
            }
            if let (Some(st), Some(path)) = (&steering, &args.steering.steer) {
                v["steering"] = json!({"vector": path.display().to_string(), "hash": st.vector.hash(), "alpha": st.alpha, "layers": [st.layers.0, st.layers.1]});
            }
            writeln!(out, "{v}")?;
        } else {
            if inputs.len() > 1 {
                writeln!(out, "# conversation {}", i + 1)?;
            }
            if let Some(st) = &steering {
                writeln!(out, "steered: alpha {} at layers {}-{} (vector {})", st.alpha, st.layers.0, st.layers.1, &st.vector.hash()[..12])?;
            }
            print_human(&mut out, &s)?;
            if let Some((layers, anchor)) = &lens {
                print_lens(&mut out, &s.letters, layers, *anchor)?;
            }
            if let Some(g) = &generated {
                let end = if g.finished { ", then end of turn" } else { "" };
                writeln!(out, "greedy continuation ({} tokens{end}): {:?}", g.tokens.len(), g.text)?;
            }
        }
        out.flush()?;
    }
    Ok(())
}
