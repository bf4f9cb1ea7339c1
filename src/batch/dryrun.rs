//! `--dry-run`: the work a batch (or a run plan) implies, without loading a model. Per pair: the
//! suites, the items, the distinct contexts to score, and an estimate of the prompt tokens to
//! evaluate with and without prefix reuse.
//!
//! The token estimate needs no tokenizer: every context's messages are written out as
//! `role\ncontent\n` and counted in characters, at four characters per token (a typical rate of
//! the paper models' tokenizers on English text; chat-template tokens add a little). Prefix
//! reuse is estimated at message granularity: a message shared by two contexts after the same
//! earlier messages is counted once, as the engine's prefix cache would evaluate it once. The
//! model's own letters in the ramp are not known before scoring; a placeholder letter stands in,
//! which changes no count.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use anyhow::Result;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::item::{bases_for, conditions_for, conditions_in_format, controls_for, scoring_group};
use crate::dialogue::conditions::{base_of, Base};
use super::plan::BatchPlan;
use super::shard::PairUnits;
use super::{pair_ranges, pair_work, plan_items};
use crate::dialogue::conditions::build;
use crate::dialogue::{Builder, DialogueItem, CURVE};
use crate::protocol::{AnswerFormat, ChatMessage};

/// Characters per token of the estimate.
pub const CHARS_PER_TOKEN: usize = 4;

#[derive(Clone, Debug, Serialize)]
pub struct DryPair {
    pub model: String,
    pub dataset: String,
    pub suites: Vec<String>,
    pub items: usize,
    pub contexts: usize,
    /// Estimated prompt tokens to evaluate with prefix reuse.
    pub tokens_estimate: usize,
    pub tokens_estimate_without_reuse: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct DryRun {
    /// The run plan's name, if any.
    pub plan: Option<String>,
    pub out: String,
    pub pairs: Vec<DryPair>,
    pub items: usize,
    pub contexts: usize,
    pub tokens_estimate: usize,
    pub tokens_estimate_without_reuse: usize,
    /// Table id → the (model, dataset) pairs it pools (tables not listed pool every pair).
    pub tables: BTreeMap<String, BTreeSet<(String, String)>>,
}

fn message_hash(m: &ChatMessage) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(m.role.as_bytes());
    h.update([0u8]);
    h.update(m.content.as_bytes());
    h.finalize().into()
}

fn chars(m: &ChatMessage) -> usize {
    m.role.chars().count() + m.content.chars().count() + 2
}

/// Counts of one item: (contexts, characters with message-level prefix reuse, characters without).
fn item_counts(contexts: &[Vec<ChatMessage>]) -> (usize, usize, usize) {
    let mut seen: HashSet<Vec<[u8; 32]>> = HashSet::new();
    // Trie of messages: (parent node, message hash) -> node.
    let mut trie: HashMap<(usize, [u8; 32]), usize> = HashMap::new();
    let (mut n, mut with, mut without) = (0, 0, 0);
    for ctx in contexts {
        let hashes: Vec<[u8; 32]> = ctx.iter().map(message_hash).collect();
        if !seen.insert(hashes.clone()) {
            continue; // an exact duplicate is scored once
        }
        n += 1;
        let mut node = 0;
        for (m, h) in ctx.iter().zip(hashes) {
            let c = chars(m);
            without += c;
            let next = trie.len() + 1;
            node = *trie.entry((node, h)).or_insert_with(|| {
                with += c;
                next
            });
        }
    }
    (n, with, without)
}

/// Counts of one item over the conditions and controls of its pair: (contexts, characters
/// with message-level prefix reuse, characters without).
/// A steering operation's context is decoded whole through the read-out probe (no reuse, even
/// of an identical unsteered prompt), and not at all for an item of its direction's training split.
fn item_estimate(
    b: &Builder,
    s: &crate::data::Selected,
    conds: &[&'static crate::dialogue::conditions::Condition],
    controls: &[crate::dialogue::Control],
    steerings: &super::steered::Steerings,
) -> (usize, usize, usize) {
    let di = DialogueItem::from(s);
    let mut ctxs: Vec<Vec<ChatMessage>> = Vec::new();
    let mut steered = (0, 0);
    for base in bases_for(conds, controls) {
        let placeholder = vec!['A'; base.exchanges()];
        match base {
            Base::Paper(control) => {
                for point in CURVE {
                    ctxs.push(b.curve_messages(&di, control, point, &placeholder));
                }
            }
            Base::Custom(r) => {
                for k in 0..r.steps.len() {
                    ctxs.push(crate::dialogue::conditions::custom_ramp_messages(b, &di, r, k, &placeholder));
                }
            }
        }
        let mut mine: Vec<_> = conds.iter().filter(|c| base_of(c) == base).collect();
        mine.sort_by_key(|c| scoring_group(c));
        for c in mine {
            let messages = build(c, b, &di, &placeholder, crate::dialogue::conditions::clean_letter_or_correct(None, &di.item)).messages;
            match steerings.get(&c.key) {
                Some(op) if op.scores(&s.item.dataset, &s.item.id) => {
                    steered.0 += 1;
                    steered.1 += messages.iter().map(chars).sum::<usize>();
                }
                Some(_) => {}
                None => ctxs.push(messages),
            }
        }
    }
    let (n, mut with, mut without) = item_counts(&ctxs);
    if b.format() == AnswerFormat::Open {
        // Each option text continues each context: at least a minimal decode call (32 tokens)
        // with reuse, the whole context again without.
        let texts: usize = di.item.options.iter().map(|o| o.chars().count().max(32 * CHARS_PER_TOKEN)).sum();
        let k = di.item.options.len();
        with += n * texts;
        without = without * k + n * di.item.options.iter().map(|o| o.chars().count()).sum::<usize>();
    }
    (n + steered.0, with + steered.1, without + steered.1)
}

/// One builder per answer format the plan scores.
fn format_builders(plan: &BatchPlan) -> Vec<Builder<'_>> {
    plan.format_prompts().into_iter().map(|(p, _)| Builder::new(p)).collect()
}

/// [`item_estimate`] summed over the plan's answer formats.
fn item_estimate_formats(
    builders: &[Builder],
    s: &crate::data::Selected,
    conds: &[&'static crate::dialogue::conditions::Condition],
    controls: &[crate::dialogue::Control],
    steerings: &super::steered::Steerings,
) -> (usize, usize, usize) {
    builders.iter().fold((0, 0, 0), |acc, b| {
        let (n, w, wo) = item_estimate(b, s, &conditions_in_format(b, conds), controls, steerings);
        (acc.0 + n, acc.1 + w, acc.2 + wo)
    })
}

/// The estimated prompt tokens (with reuse) of every item of every pair of `work`, the weights
/// of a by-model split (`shard::split_by_model`).
pub(crate) fn pair_units(plan: &BatchPlan, selections: &[Vec<crate::data::Selected>], work: &[(String, usize, Vec<crate::dialogue::Suite>)]) -> Vec<PairUnits> {
    let b = format_builders(plan);
    work.iter()
        .map(|(model, d, suites)| {
            let (conds, controls) = (conditions_for(plan.registry, suites), controls_for(suites));
            PairUnits {
                model: model.clone(),
                tokens: selections[*d].iter().map(|s| item_estimate_formats(&b, s, &conds, &controls, &plan.steerings).1.div_ceil(CHARS_PER_TOKEN)).collect(),
            }
        })
        .collect()
}

/// The dataset key of selection `d` of a plan (`<dataset>@seed<S>` in a `--seeds` run).
pub(crate) fn selection_dataset_key(plan: &BatchPlan, selections: usize, d: usize) -> Result<String> {
    let per = selections / plan.dataset_specs.len().max(1);
    let mut dataset = crate::data::DatasetSpec::parse(&plan.dataset_specs[d / per.max(1)])?.key();
    if !plan.config.seeds.is_empty() {
        dataset = super::seeded_dataset(&dataset, plan.config.seeds[d % per.max(1)]);
    }
    Ok(dataset)
}

/// The work of a batch plan, without loading any model (a by-model shard: its own items).
pub fn dry_run(plan: &BatchPlan) -> Result<DryRun> {
    let cfg = &plan.config;
    let selections = plan_items(plan)?;
    let work = pair_work(cfg, &plan.dataset_specs)?;
    let ranges = pair_ranges(plan, &selections, &work)?;
    let b = format_builders(plan);
    let mut pairs = Vec::new();
    for ((model, d, suites), range) in work.iter().zip(ranges) {
        if range.is_empty() && cfg.shard_by == super::shard::ShardBy::Model {
            continue; // another task's pair
        }
        let conds = conditions_for(plan.registry, suites);
        let controls = controls_for(suites);
        let (mut contexts, mut with, mut without) = (0, 0, 0);
        for s in &selections[*d][range.clone()] {
            let (n, w, wo) = item_estimate_formats(&b, s, &conds, &controls, &plan.steerings);
            contexts += n;
            with += w;
            without += wo;
        }
        pairs.push(DryPair {
            model: model.clone(),
            dataset: selection_dataset_key(plan, selections.len(), *d)?,
            suites: suites.iter().map(|s| s.key().to_string()).collect(),
            items: range.len(),
            contexts,
            tokens_estimate: with.div_ceil(CHARS_PER_TOKEN),
            tokens_estimate_without_reuse: without.div_ceil(CHARS_PER_TOKEN),
        });
    }
    Ok(DryRun {
        plan: cfg.plan.as_ref().map(|p| p.name.clone()),
        out: plan.out.display().to_string(),
        items: pairs.iter().map(|p| p.items).sum(),
        contexts: pairs.iter().map(|p| p.contexts).sum(),
        tokens_estimate: pairs.iter().map(|p| p.tokens_estimate).sum(),
        tokens_estimate_without_reuse: pairs.iter().map(|p| p.tokens_estimate_without_reuse).sum(),
        tables: cfg.plan.as_ref().map(|p| p.table_scopes.clone()).unwrap_or_default(),
        pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_messages_are_counted_once_and_duplicates_not_at_all() {
        let sys = ChatMessage::system("S");
        let a = vec![sys.clone(), ChatMessage::user("Q1")];
        let b = vec![sys.clone(), ChatMessage::user("Q1"), ChatMessage::assistant("B"), ChatMessage::user("Q2")];
        let (n, with, without) = item_counts(&[a.clone(), b.clone(), a.clone()]);
        assert_eq!(n, 2);
        let c = |m: &ChatMessage| chars(m);
        assert_eq!(without, c(&a[0]) + c(&a[1]) + b.iter().map(c).sum::<usize>());
        assert_eq!(with, b.iter().map(c).sum::<usize>());
    }
}
