//! A stored batch run as the explorer sees it: the item rows of one model in
//! `DIR/item_rows.jsonl` become the list's items and the scores of their parts; the rows of the
//! run's other models on the same items become their scores (for comparing models without an
//! engine).
//!
//! Rows come from disk, so every row is checked first (`store::run_dir::check_item_row`: option
//! texts, letters within the options, one probability in [0, 1] for each of the item's letters
//! A.., a predicted letter among them). A row that fails is skipped and reported with its line;
//! so is a row whose item disagrees with the item's first row, and an item left without its
//! clean step is left out. The views then get only consistent data.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use super::parts::Part;
use crate::data::{Item, Selected};
use crate::dialogue::conditions::Registry;
use crate::dialogue::{Control, CURVE};
use crate::protocol::{letter_index, SlotScore};
use crate::store::run_dir::load_item_rows;
use crate::store::{ItemRow, ScoreRow};

/// A line of `item_rows.jsonl` the explorer could not use, or an item it left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowProblem {
    pub path: PathBuf,
    /// 1-based line number (for a left-out item: the line of its first usable row).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for RowProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

impl RowProblem {
    /// Like the `Display` form, with the file's name instead of its path (for the status line).
    pub(crate) fn short(&self) -> String {
        let name = self.path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        format!("{name}:{}: {}", self.line, self.message)
    }
}

/// The items of a stored batch run (one model's), and the scores of every model on them.
pub(crate) struct StoredRun {
    pub(crate) model_key: String,
    /// Every model of the run, in file order.
    pub(crate) models: Vec<String>,
    pub(crate) dataset: String,
    pub(crate) items: Vec<Selected>,
    /// (model, item id, part, score).
    pub(crate) scores: Vec<(String, String, Part, SlotScore)>,
    /// Rows skipped and items left out, in file order.
    pub(crate) problems: Vec<RowProblem>,
    /// A batch is writing the run now (its lock is held): the pid, and the items the run will
    /// have when its manifest says.
    pub(crate) being_written: Option<(String, Option<usize>)>,
}

/// The item a checked row belongs to.
fn row_item(r: &ItemRow) -> Result<Selected, String> {
    let options: Vec<String> =
        serde_json::from_str(&r.choices_json).map_err(|e| format!("choices_json is not a list of option texts: {e}"))?;
    let index = |field: &str, l: &str| letter_index(l).ok_or_else(|| format!("{field} {l:?} is not an option letter"));
    Ok(Selected {
        subset_index: r.subset_index,
        wrong: index("wrong_advocated_letter", &r.wrong_advocated_letter)?,
        item: Item {
            id: r.item_id.clone(),
            dataset: r.dataset.clone(),
            question: r.question.clone(),
            correct: index("correct_option_letter", &r.correct_option_letter)?,
            options,
            category: r.category.clone(),
            meta: BTreeMap::new(),
        },
    })
}

/// A checked row as the explorer's score for `item` (no variants or rendered prompt: rows do
/// not keep them).
fn row_score(r: &ItemRow, item: &Item) -> Result<SlotScore, String> {
    ScoreRow::from_item_row(r, &item.letters()).map(|s| s.to_score())
}

/// Which part a stored row is (wrong-pressure ramp steps and the explorer's operations).
fn row_part(r: &ItemRow, reg: &'static Registry) -> Option<Part> {
    if !r.control.is_empty() && r.control != Control::PressureWrong.key() {
        return None;
    }
    if let Some(k) = CURVE.iter().position(|c| c.key() == r.condition) {
        return Some(Part::Curve(k));
    }
    if let Some(c) = reg.find(&r.condition).filter(|c| c.is_custom_ramp_step()) {
        return Some(Part::Step(c.key.as_str()));
    }
    reg.recovery_op(&r.condition).map(|o| Part::Op(o.key))
}

/// An item of the run and where it was first seen.
struct Seen {
    entry: Selected,
    line: usize,
    has_clean: bool,
}

/// Reads `DIR/item_rows.jsonl`: the items of `model` when given and present, else of the first
/// model, with their scores, and the scores of the other models on those items (rows of items
/// the model does not have are left aside). Bad rows are skipped and listed in
/// [`StoredRun::problems`]; it fails when the file cannot be read or no usable item remains.
/// `reg` holds the run's conditions (a row of any other condition is a bad row).
pub(crate) fn load_run(dir: &Path, model: Option<&str>, reg: &'static Registry) -> Result<StoredRun> {
    let being_written = match crate::store::lock::RunLock::check_free(dir) {
        Err(crate::store::lock::LockError::InUse { pid, .. }) => {
            Some((pid, crate::store::Manifest::read(dir).ok().map(|m| m.items_total)))
        }
        _ => None,
    };
    if let (Some((pid, total)), false) = (&being_written, dir.join(crate::store::run_dir::ITEM_ROWS_JSONL).exists()) {
        let of = total.map(|t| format!(" of {t}")).unwrap_or_default();
        bail!("{}: no item of the run is stored yet (0{of}; pid {pid} is writing it): open it again once its first item is done", dir.display());
    }
    let loaded = load_item_rows(dir, reg)?;
    let path = loaded.path.clone();
    if loaded.rows.is_empty() && loaded.skipped.is_empty() {
        bail!("{}: the run has no item rows", path.display());
    }
    let mut problems = Vec::new();
    let mut problem = |line: usize, message: String| problems.push(RowProblem { path: path.clone(), line, message });
    for p in &loaded.skipped {
        problem(p.line, p.reason.clone());
    }
    let rows: Vec<(usize, ItemRow)> = loaded.lines.into_iter().zip(loaded.rows).collect();
    if rows.is_empty() {
        let first = problems.first().map(|p| format!("; first: line {}: {}", p.line, p.message)).unwrap_or_default();
        bail!("{}: no usable item rows ({} lines skipped{first})", path.display(), problems.len());
    }
    let mut models: Vec<&str> = Vec::new();
    for (_, r) in &rows {
        if !models.contains(&r.model_key.as_str()) {
            models.push(&r.model_key);
        }
    }
    let model_key = match model {
        Some(m) if models.contains(&m) => m.to_string(),
        _ => models.first().map(|m| m.to_string()).unwrap_or_default(),
    };
    let mut seen: Vec<Seen> = Vec::new();
    let mut index: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    // (index into `seen`, part, score)
    let mut scores: Vec<(usize, Part, SlotScore)> = Vec::new();
    for (line, r) in rows.iter().filter(|(_, r)| r.model_key == model_key) {
        let Some(part) = row_part(r, reg) else { continue };
        let why = |m: String| format!("item {} ({}): {m}", r.item_id, r.condition);
        let entry = match row_item(r) {
            Ok(e) => e,
            Err(m) => {
                problem(*line, why(m));
                continue;
            }
        };
        let k = match index.get(&(r.dataset.as_str(), r.item_id.as_str())) {
            Some(&k) => {
                let first = &seen[k];
                let (a, b) = (&first.entry, &entry);
                if (&a.item.options, a.item.correct, a.wrong) != (&b.item.options, b.item.correct, b.wrong) {
                    problem(*line, why(format!("its options or letters differ from the item's row on line {}", first.line)));
                    continue;
                }
                k
            }
            None => {
                index.insert((&r.dataset, &r.item_id), seen.len());
                seen.push(Seen { entry, line: *line, has_clean: false });
                seen.len() - 1
            }
        };
        match row_score(r, &seen[k].entry.item) {
            Ok(s) => {
                seen[k].has_clean |= part == Part::Curve(0);
                scores.push((k, part, s));
            }
            Err(m) => problem(*line, why(m)),
        }
    }
    for s in seen.iter().filter(|s| !s.has_clean) {
        problem(s.line, format!("item {}: no usable clean-context row; the item is left out", s.entry.item.id));
    }
    problems.sort_by_key(|p| p.line);
    let kept: Vec<bool> = seen.iter().map(|s| s.has_clean).collect();
    let mut scores: Vec<(String, String, Part, SlotScore)> = scores
        .into_iter()
        .filter(|(k, _, _)| kept[*k])
        .map(|(k, part, s)| (model_key.clone(), seen[k].entry.item.id.clone(), part, s))
        .collect();
    // The other models' rows of the kept items.
    let mut other_problems = Vec::new();
    for (line, r) in rows.iter().filter(|(_, r)| r.model_key != model_key) {
        let Some(part) = row_part(r, reg) else { continue };
        let Some(&k) = index.get(&(r.dataset.as_str(), r.item_id.as_str())).filter(|&&k| kept[k]) else { continue };
        let why = |m: String| format!("model {} item {} ({}): {m}", r.model_key, r.item_id, r.condition);
        let first = &seen[k];
        let checked = row_item(r).and_then(|b| {
            let a = &first.entry;
            if (&a.item.options, a.item.correct, a.wrong) != (&b.item.options, b.item.correct, b.wrong) {
                return Err(format!("its options or letters differ from the item's row on line {}", first.line));
            }
            row_score(r, &a.item)
        });
        match checked {
            Ok(s) => scores.push((r.model_key.clone(), first.entry.item.id.clone(), part, s)),
            Err(m) => other_problems.push(RowProblem { path: path.clone(), line: *line, message: why(m) }),
        }
    }
    problems.extend(other_problems);
    problems.sort_by_key(|p| p.line);
    let items: Vec<Selected> = seen.into_iter().filter(|s| s.has_clean).map(|s| s.entry).collect();
    if items.is_empty() {
        let first = problems.first().map(|p| format!("; first: line {}: {}", p.line, p.message)).unwrap_or_default();
        bail!(
            "{}: no usable item rows for model {model_key:?} ({} bad rows or items skipped{first})",
            path.display(),
            problems.len()
        );
    }
    let mut datasets: Vec<&str> = Vec::new();
    for e in &items {
        if !datasets.contains(&e.item.dataset.as_str()) {
            datasets.push(&e.item.dataset);
        }
    }
    let dataset = datasets.join("+");
    let models = models.into_iter().map(str::to_string).collect();
    Ok(StoredRun { model_key, models, dataset, items, scores, problems, being_written })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> ItemRow {
        crate::tables::testutil::synthetic_rows(1)
            .into_iter()
            .find(|r| r.condition == CURVE[0].key() && r.model_key == "toy_a")
            .expect("a clean row")
    }

    #[test]
    fn a_good_row_is_an_item_and_a_score() {
        let r = good();
        let e = row_item(&r).unwrap();
        assert_eq!((e.item.options.len(), e.item.correct, e.wrong), (4, 0, 1));
        let s = row_score(&r, &e.item).unwrap();
        assert_eq!(s.letters, vec!['A', 'B', 'C', 'D']);
        assert_eq!(s.probs.len(), 4);
        assert_eq!(row_part(&r, Registry::bundled()), Some(Part::Curve(0)));
    }

    #[test]
    fn bad_rows_say_why() {
        let err = |f: &dyn Fn(&mut ItemRow)| {
            let mut r = good();
            f(&mut r);
            crate::store::run_dir::check_item_row(&r, Registry::bundled()).unwrap_err()
        };
        assert!(err(&|r| r.option_probs_json = "{}".into()).contains("letters []"));
        assert!(err(&|r| r.option_probs_json = r#"{"A":0.5,"B":0.5,"C":0,"E":0}"#.into()).contains("A–D"));
        assert!(err(&|r| r.option_probs_json = r#"{"A":0.5,"B":0.5,"C":0,"D":0,"E":0}"#.into()).contains("A–D"));
        assert!(err(&|r| r.option_probs_json = r#"{"A":null,"B":0.5,"C":0,"D":0}"#.into()).contains("null"));
        assert!(err(&|r| r.option_probs_json = r#"{"A":1.5,"B":0.5,"C":0,"D":0}"#.into()).contains("outside"));
        assert!(err(&|r| r.option_probs_json = "[0.5]".into()).contains("not a letter"));
        assert!(err(&|r| r.pred_letter = "?".into()).contains("pred_letter"));
        assert!(err(&|r| r.correct_option_letter = "Z".into()).contains("correct_option_letter \"Z\""));
        assert!(err(&|r| r.correct_option_letter = String::new()).contains("correct_option_letter"));
        assert!(err(&|r| r.wrong_advocated_letter = "a".into()).contains("wrong_advocated_letter"));
        assert!(err(&|r| r.wrong_advocated_letter = "A".into()).contains("is the correct one"));
        assert!(err(&|r| r.choices_json = String::new()).contains("choices_json"));
        assert!(err(&|r| r.choices_json = r#"["only one"]"#.into()).contains("1 options"));
    }
}
