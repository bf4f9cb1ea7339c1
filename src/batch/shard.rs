//! Splitting one run over several processes (`--shard K/N`, and the tasks of `hyst-tui slurm`).
//!
//! Two ways to split:
//! - **by item** (`--shard-by item`, the default): shard K holds the items with
//!   `subset_index % N == K - 1` of every model × dataset pair, so every shard loads every model;
//!   `--limit` applies to each shard's items.
//! - **by model** (`--shard-by model`): the run's work units (one item of one model × dataset
//!   pair, after `--limit`) are cut into N tasks, each of one model only, balanced by the
//!   dry-run's token estimate. Every model gets at least one task; the remaining tasks go, one
//!   at a time, to the model with the most estimated tokens per task; a model's units (pairs in
//!   run order, items in selection order) are then cut into contiguous ranges of about equal
//!   tokens. The split depends only on the run's configuration, so every task computes the same
//!   split on its own, and the merged tasks are the unsharded run.

use std::ops::Range;

use anyhow::{bail, Result};
use serde::Serialize;

pub use crate::store::run_dir::ShardBy;

/// The estimated prompt tokens of each item of one model × dataset pair (in run order).
#[derive(Clone, Debug)]
pub struct PairUnits {
    pub model: String,
    pub tokens: Vec<usize>,
}

/// One task of a model-major split: its model and, per pair (index into the run's pairs), the
/// item positions it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Task {
    /// 1-based.
    pub task: usize,
    pub model: String,
    pub ranges: Vec<(usize, Range<usize>)>,
    pub items: usize,
    pub tokens: usize,
}

/// Cuts the run's work into `n` tasks of one model each (see the module text). `pairs` are the
/// run's pairs in run order.
pub fn split_by_model(pairs: &[PairUnits], n: usize) -> Result<Vec<Task>> {
    let mut models: Vec<&str> = Vec::new();
    for p in pairs {
        if !p.tokens.is_empty() && !models.contains(&p.model.as_str()) {
            models.push(&p.model);
        }
    }
    if models.is_empty() {
        bail!("the run has no items to split into tasks");
    }
    if n < models.len() {
        bail!(
            "--tasks {n} is fewer than the run's {} models ({}): a task loads one model, so give at least {} tasks",
            models.len(),
            models.join(", "),
            models.len()
        );
    }
    // Units of each model: (pair, item, tokens), in run order.
    let units: Vec<Vec<(usize, usize, usize)>> = models
        .iter()
        .map(|m| {
            pairs
                .iter()
                .enumerate()
                .filter(|(_, p)| p.model == *m)
                .flat_map(|(i, p)| p.tokens.iter().enumerate().map(move |(j, &t)| (i, j, t.max(1))))
                .collect()
        })
        .collect();
    let all_units: usize = units.iter().map(Vec::len).sum();
    if n > all_units {
        bail!("--tasks {n} is more than the run's {all_units} items (model × dataset × item): give at most {all_units}");
    }
    let totals: Vec<usize> = units.iter().map(|u| u.iter().map(|x| x.2).sum()).collect();
    let mut per_model = vec![1usize; models.len()];
    for _ in models.len()..n {
        // The model with the most tokens per task that can still take one (ties: run order).
        let best = (0..models.len())
            .filter(|&m| per_model[m] < units[m].len())
            .max_by(|&a, &b| {
                let (x, y) = (totals[a] as u128 * per_model[b] as u128, totals[b] as u128 * per_model[a] as u128);
                x.cmp(&y).then(b.cmp(&a))
            })
            .expect("n <= units, so some model can take another task");
        per_model[best] += 1;
    }
    let mut tasks = Vec::new();
    for (m, u) in units.iter().enumerate() {
        for cut in cut_balanced(&u.iter().map(|x| x.2).collect::<Vec<_>>(), per_model[m]) {
            let mut ranges: Vec<(usize, Range<usize>)> = Vec::new();
            for &(pair, item, _) in &u[cut.clone()] {
                match ranges.last_mut() {
                    Some((p, r)) if *p == pair && r.end == item => r.end += 1,
                    _ => ranges.push((pair, item..item + 1)),
                }
            }
            tasks.push(Task {
                task: tasks.len() + 1,
                model: models[m].to_string(),
                items: cut.len(),
                tokens: u[cut].iter().map(|x| x.2).sum(),
                ranges,
            });
        }
    }
    Ok(tasks)
}

/// Cuts `w` (all positive) into `parts` non-empty contiguous ranges of about equal sums: the
/// j-th cut is placed where the running sum comes closest to j/parts of the total.
fn cut_balanced(w: &[usize], parts: usize) -> Vec<Range<usize>> {
    assert!(parts >= 1 && parts <= w.len());
    let total: usize = w.iter().sum();
    let mut prefix = vec![0usize; w.len() + 1];
    for (i, x) in w.iter().enumerate() {
        prefix[i + 1] = prefix[i] + x;
    }
    let mut cuts = vec![0usize];
    for j in 1..parts {
        let target = (total as u128 * j as u128) as f64 / parts as f64;
        let lo = cuts[j - 1] + 1; // at least one unit in the range before
        let hi = w.len() - (parts - j); // at least one unit left for each range after
        let mut best = lo;
        for c in lo..=hi {
            if (prefix[c] as f64 - target).abs() < (prefix[best] as f64 - target).abs() {
                best = c;
            }
        }
        cuts.push(best);
    }
    cuts.push(w.len());
    cuts.windows(2).map(|c| c[0]..c[1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(model: &str, tokens: &[usize]) -> PairUnits {
        PairUnits { model: model.into(), tokens: tokens.to_vec() }
    }

    #[test]
    fn every_unit_lands_in_exactly_one_task_of_its_own_model() {
        let pairs = [pair("a", &[5, 5, 5, 5]), pair("b", &[1, 1]), pair("a", &[10, 10])];
        let tasks = split_by_model(&pairs, 4).unwrap();
        assert_eq!(tasks.iter().map(|t| t.task).collect::<Vec<_>>(), [1, 2, 3, 4]);
        let mut seen = std::collections::BTreeSet::new();
        for t in &tasks {
            for (p, r) in &t.ranges {
                assert_eq!(pairs[*p].model, t.model, "a task holds one model");
                for i in r.clone() {
                    assert!(seen.insert((*p, i)), "({p},{i}) twice");
                }
            }
        }
        assert_eq!(seen.len(), 8);
        // Model a (40 tokens) gets three of the four tasks, model b (2 tokens) one.
        assert_eq!(tasks.iter().filter(|t| t.model == "a").count(), 3);
        assert_eq!(tasks.iter().filter(|t| t.model == "b").count(), 1);
    }

    #[test]
    fn ranges_are_balanced_by_tokens() {
        // 1+1+1+1+4 = 8: two parts of 4 each, not two of four items.
        assert_eq!(cut_balanced(&[1, 1, 1, 1, 4], 2), vec![0..4, 4..5]);
        assert_eq!(cut_balanced(&[3, 3, 3], 3), vec![0..1, 1..2, 2..3]);
        assert_eq!(cut_balanced(&[2, 2, 2, 2], 1), vec![0..4]);
        let t = split_by_model(&[pair("a", &[1, 1, 1, 1, 4])], 2).unwrap();
        assert_eq!(t[0].ranges, vec![(0, 0..4)]);
        assert_eq!(t[1].ranges, vec![(0, 4..5)]);
        assert_eq!((t[0].tokens, t[1].tokens), (4, 4));
    }

    #[test]
    fn a_task_spans_pairs_of_its_model() {
        let t = split_by_model(&[pair("a", &[1, 1]), pair("a", &[1, 1])], 1).unwrap();
        assert_eq!(t[0].ranges, vec![(0, 0..2), (1, 0..2)]);
        assert_eq!(t[0].items, 4);
    }

    #[test]
    fn too_few_or_too_many_tasks_are_refused() {
        let pairs = [pair("a", &[1, 1]), pair("b", &[1])];
        let e = split_by_model(&pairs, 1).unwrap_err().to_string();
        assert!(e.contains("fewer than the run's 2 models (a, b)"), "{e}");
        let e = split_by_model(&pairs, 4).unwrap_err().to_string();
        assert!(e.contains("more than the run's 3 items"), "{e}");
        assert_eq!(split_by_model(&pairs, 3).unwrap().len(), 3);
    }

    #[test]
    fn shard_by_parses() {
        assert_eq!("model".parse::<ShardBy>(), Ok(ShardBy::Model));
        assert_eq!("item".parse::<ShardBy>(), Ok(ShardBy::Item));
        assert!("models".parse::<ShardBy>().is_err());
    }
}
