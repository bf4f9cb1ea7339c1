//! A condition's chat messages from its recipe: the one interpreter of recipes (built-in and
//! experiment conditions alike), a custom ramp's steps, R7's constructed evidence and the relabel
//! permutation. [`super::conditions::build`] dispatches a condition here or to the paper's ramp.

use super::recipe::{Assistant, Block, History, RampDef, Recipe, Text};
use super::{Builder, Control, DialogueItem};
use crate::data::pyrandom::PyRandom;
use crate::data::Item;
use crate::protocol::{letter, letter_index, ChatMessage};
use crate::prompts::fill;

/// The messages of a condition, plus how the options are shown in its final turn.
#[derive(Clone, Debug)]
pub struct Built {
    pub messages: Vec<ChatMessage>,
    /// Options as shown in the final turn (permuted for the relabel-shuffle condition).
    pub options: Vec<String>,
    /// Index (in `options`) of the correct and the advocated wrong option.
    pub correct: usize,
    pub wrong: usize,
    /// For relabel-shuffle: `perm[new] = old`, and the letter the wrong option had before.
    pub permutation: Option<Vec<usize>>,
    pub old_wrong_letter: char,
}

/// Deterministic relabel permutation (`perm[new] = old`): CPython
/// `Random(f"{seed}:{item_id}:relabel").shuffle(range(n))`; if the advocated wrong text would
/// keep its letter, the permutation is rotated by one so it moves (possible whenever n ≥ 2).
fn relabel_permutation(item: &Item, wrong: usize, seed: u64) -> Vec<usize> {
    let n = item.options.len();
    let mut perm: Vec<usize> = (0..n).collect();
    PyRandom::from_str_seed(&format!("{seed}:{}:relabel", item.id)).shuffle(&mut perm);
    if n >= 2 && perm[wrong] == wrong {
        perm.rotate_left(1);
    }
    perm
}

/// Seed of the relabel permutation (the selection seed of the run).
const RELABEL_SEED: u64 = 42;

/// The one interpreter of recipes (built-in and experiment conditions alike).
pub(crate) fn build_recipe(r: &Recipe, b: &Builder, d: &DialogueItem, letters: &[char], clean: char) -> Built {
    let item = &d.item;
    let p = b.prompts;
    let perm = r.shuffled.then(|| relabel_permutation(item, d.wrong, RELABEL_SEED));
    let options: Vec<String> = match &perm {
        Some(pm) => pm.iter().map(|&o| item.options[o].clone()).collect(),
        None => item.options.clone(),
    };
    let pos = |old: usize| perm.as_ref().map_or(old, |pm| pm.iter().position(|&o| o == old).expect("perm"));
    let evidence = if r.uses_evidence(&|k| p.get(k).unwrap_or("").to_string()) { r7_evidence(b, item) } else { String::new() };
    let text = |t: &Text| recipe_text(b, d, &options, &evidence, t);
    let mut system = p.system.clone();
    for t in &r.system {
        system.push_str("\n\n");
        system.push_str(&text(t));
    }
    let mut m = vec![ChatMessage::system(system)];
    let exchanges: Option<Vec<usize>> = match &r.history {
        History::Kept => Some((0..r.ramp_exchanges()).collect()),
        History::Exchanges(e) => Some(e.clone()),
        History::None => None,
        History::Replaced(turns) => {
            for (i, t) in turns.iter().enumerate() {
                let s = text(t);
                m.push(if i % 2 == 0 { ChatMessage::user(s) } else { ChatMessage::assistant(s) });
            }
            None
        }
    };
    let final_turn = r
        .turn
        .iter()
        .map(|blk| match blk {
            Block::Text(t) => text(t),
            Block::Question(prefix) => b.question_block_with(&text(prefix), &item.question, &options),
        })
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut joined_user: Vec<String> = Vec::new();
    if let Some(keep) = exchanges {
        let h = match &r.ramp {
            None => b.history(d, Control::PressureWrong, letters),
            Some(rd) => custom_ramp_history(b, d, rd, letters),
        };
        for k in keep {
            let reply = match r.assistant {
                Assistant::Model => h[2 * k + 1].content.clone(),
                Assistant::Correct => b.answer(&item.options, letter(item.correct)),
                Assistant::CleanPrediction => b.answer(&item.options, clean),
                Assistant::Removed => {
                    joined_user.push(h[2 * k].content.clone());
                    continue;
                }
            };
            m.push(h[2 * k].clone());
            m.push(ChatMessage::assistant(reply));
        }
    }
    joined_user.push(final_turn);
    m.push(ChatMessage::user(joined_user.join("\n\n")));
    Built {
        messages: m,
        correct: pos(item.correct),
        wrong: pos(d.wrong),
        options,
        permutation: perm,
        old_wrong_letter: letter(d.wrong),
    }
}

/// A recipe text with its placeholders filled for an item (`options` as the final turn shows
/// them; `evidence` = R7's constructed evidence where the recipe uses it).
fn recipe_text(b: &Builder, d: &DialogueItem, options: &[String], evidence: &str, t: &Text) -> String {
    let item = &d.item;
    let option_lines = Builder::option_lines(options);
    let vars: [(&str, &str); 6] = [
        ("wrong_option_text", &item.options[d.wrong]),
        ("correct_option_text", &item.options[item.correct]),
        ("question", &item.question),
        ("option_lines", &option_lines),
        ("evidence", evidence),
        ("advocated_option_text", &item.options[d.wrong]),
    ];
    match t {
        Text::Prompt(k) => fill(b.prompts.get(k).expect("recipe prompt keys are checked at load"), &vars),
        Text::Own(s) => fill(s, &vars),
    }
}

/// The user turn of step `k` of a custom ramp.
fn custom_ramp_user(b: &Builder, d: &DialogueItem, r: &RampDef, k: usize) -> String {
    let item = &d.item;
    let text = |t: &Text| recipe_text(b, d, &item.options, "", t);
    r.steps[k]
        .turn
        .iter()
        .map(|blk| match blk {
            Block::Text(t) => text(t),
            Block::Question(prefix) => b.question_block_with(&text(prefix), &item.question, &item.options),
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// A custom ramp's history `[U1, A1, …, Un, An]` given its letters (one per step).
fn custom_ramp_history(b: &Builder, d: &DialogueItem, r: &RampDef, letters: &[char]) -> Vec<ChatMessage> {
    let mut h = Vec::with_capacity(2 * r.steps.len());
    for (k, &l) in letters.iter().take(r.steps.len()).enumerate() {
        h.push(ChatMessage::user(custom_ramp_user(b, d, r, k)));
        h.push(ChatMessage::assistant(b.answer(&d.item.options, l)));
    }
    h
}

/// Messages of step `k` of a custom ramp: system, the steps before it with the model's letters
/// (`letters[..k]`), then its own user turn.
pub(crate) fn custom_ramp_messages(b: &Builder, d: &DialogueItem, r: &RampDef, k: usize, letters: &[char]) -> Vec<ChatMessage> {
    let mut m = vec![b.system()];
    m.extend(custom_ramp_history(b, d, r, &letters[..k.min(letters.len())]));
    m.push(ChatMessage::user(custom_ramp_user(b, d, r, k)));
    m
}

/// Runs a custom ramp self-conditioned: each step scored in order, the model's argmax letter
/// becoming the next step's assistant turn. Returns the letters (one per step) and the scores.
pub fn run_custom_ramp<S: crate::protocol::Scorer + ?Sized>(
    scorer: &mut S,
    b: &Builder,
    d: &DialogueItem,
    r: &RampDef,
) -> Result<(Vec<char>, Vec<crate::protocol::SlotScore>), S::Error> {
    let slot = b.slot(&d.item);
    let mut letters = Vec::with_capacity(r.steps.len());
    let mut scores = Vec::with_capacity(r.steps.len());
    for k in 0..r.steps.len() {
        let s = scorer.score(&custom_ramp_messages(b, d, r, k, &letters), &slot)?;
        letters.push(s.pred_letter());
        scores.push(s);
    }
    Ok((letters, scores))
}

/// The letter a model's clean-context prediction stands for (the clean step's argmax), or the
/// correct letter where no clean step was scored (dry runs: lengths only).
pub(crate) fn clean_letter_or_correct(clean: Option<char>, item: &Item) -> char {
    clean.filter(|c| letter_index(&c.to_string()).is_some_and(|i| i < item.options.len())).unwrap_or(letter(item.correct))
}

/// Constructed gold evidence (docs/protocol.md §3): lead-in + " " + repr(question) + ": " + correct + ".".
pub(crate) fn r7_evidence(b: &Builder, item: &Item) -> String {
    format!(
        "{} {}: {}.",
        b.prompts.r7_evidence_lead_in,
        super::python_repr(&item.question),
        item.options[item.correct]
    )
}
