//! The paper's deterministic item selection (docs/protocol.md §1.2–§1.3), bit-exact with CPython:
//! subset = `random.Random(seed).shuffle` over the dataset order, first n; advocated wrong option
//! = `random.Random(f"{seed}:{item_id}")`, `randrange` over the sorted wrong indices. Also the
//! released CSVs as the item list, and `--shuffle-options`.

use std::collections::HashMap;
use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::csvfile::read_rows;
use super::item::{normalize_ws, DataError, Item};
use super::pyrandom::{deterministic_wrong_index, shuffled_order, PyRandom};
use crate::protocol::letter_index;

/// One selected item with its advocated wrong option.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Selected {
    /// Position in the selection (the paper's `subset_index`).
    pub subset_index: usize,
    pub item: Item,
    /// Index of the advocated wrong option.
    pub wrong: usize,
}

impl Selected {
    pub fn wrong_letter(&self) -> char {
        Item::letter(self.wrong)
    }
}

/// Permutes each item's options deterministically (`--shuffle-options SEED`): the permutation is
/// CPython `Random(f"{seed}:{item_id}:options").shuffle(range(n))`; option i of the new item is
/// option `perm[i]` of the original. Recorded in `meta["option_permutation"]`.
pub(crate) fn shuffle_options(items: &mut [Item], seed: u64) {
    for it in items.iter_mut() {
        let mut perm: Vec<usize> = (0..it.options.len()).collect();
        PyRandom::from_str_seed(&format!("{seed}:{}:options", it.id)).shuffle(&mut perm);
        it.options = perm.iter().map(|&i| it.options[i].clone()).collect();
        it.correct = perm.iter().position(|&i| i == it.correct).expect("permutation");
        it.meta.insert(
            "option_permutation".into(),
            serde_json::to_string(&perm).expect("json"),
        );
    }
}

/// Subset draw + advocated wrong (docs/protocol.md §1.2). `n = None` keeps every item (still in the
/// shuffled order).
pub fn select(items: &[Item], n: Option<usize>, seed: u64) -> Vec<Selected> {
    let order = shuffled_order(items.len(), seed);
    let take = n.unwrap_or(items.len()).min(items.len());
    order[..take]
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let item = items[i].clone();
            let wrong = deterministic_wrong_index(&item.id, &item.wrong_indices(), seed)
                .expect("items have at least two options");
            Selected {
                subset_index: k,
                item,
                wrong,
            }
        })
        .collect()
}

/// A row of the released `item_subsets/*.csv` (docs/protocol.md §1.3), whose header is
/// `dataset,question_id,original_index,source_row_index,source_question_id,source_split,correct_label,correct_text,n_options`:
/// the columns the join reads; the others are ignored.
#[derive(Deserialize)]
struct SubsetRow {
    question_id: String,
    correct_label: String,
    correct_text: String,
    n_options: usize,
}

impl SubsetRow {
    const COLUMNS: &[&str] = &["question_id", "correct_label", "correct_text", "n_options"];
}

/// A row of the released `advocated_wrong_answers/*.csv` (docs/protocol.md §1.3), whose header is
/// `dataset,question_id,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text,seed`:
/// the columns the join reads; the others are ignored.
#[derive(Deserialize)]
struct AdvocatedRow {
    question_id: String,
    correct_label: String,
    correct_text: String,
    advocated_wrong_label: String,
    advocated_wrong_text: String,
}

impl AdvocatedRow {
    const COLUMNS: &[&str] = &[
        "question_id",
        "correct_label",
        "correct_text",
        "advocated_wrong_label",
        "advocated_wrong_text",
    ];
}

/// The paper's released item list (`item_subsets/*.csv`) and advocated wrong answers
/// (`advocated_wrong_answers/*.csv`), joined with the loaded dataset. Fields are trimmed. A
/// malformed file or field is an error naming the file, the row and the field; every check
/// failure of the join names the item: unknown id, correct label/text, option count, wrong
/// label/text.
pub fn from_released_csvs(items: &[Item], subset: &Path, advocated: &Path) -> Result<Vec<Selected>, DataError> {
    let subset_rows: Vec<SubsetRow> = read_rows(subset, SubsetRow::COLUMNS)?;
    let advocated_rows: Vec<AdvocatedRow> = read_rows(advocated, AdvocatedRow::COLUMNS)?;
    let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
    let wrong_by_id: HashMap<&str, &AdvocatedRow> =
        advocated_rows.iter().map(|r| (r.question_id.as_str(), r)).collect();
    let mut out = Vec::with_capacity(subset_rows.len());
    for (k, r) in subset_rows.iter().enumerate() {
        let id = &r.question_id;
        let err = |m: String| DataError::Item { item: id.clone(), message: m };
        let item = *by_id
            .get(id.as_str())
            .ok_or_else(|| err("listed in the subset CSV but not in the loaded dataset".into()))?;
        let check_correct = |label: &str, text: &str, src: &str| -> Result<(), DataError> {
            if letter_index(label) != Some(item.correct) {
                return Err(err(format!(
                    "{src}: correct label {label} but the dataset says {}",
                    item.correct_letter()
                )));
            }
            if normalize_ws(text) != item.options[item.correct] {
                return Err(err(format!(
                    "{src}: correct text {:?} differs from the dataset's {:?}",
                    normalize_ws(text),
                    item.options[item.correct]
                )));
            }
            Ok(())
        };
        check_correct(&r.correct_label, &r.correct_text, "subset CSV")?;
        if r.n_options != item.options.len() {
            return Err(err(format!(
                "subset CSV: {} options but the dataset item has {}",
                r.n_options,
                item.options.len()
            )));
        }
        let a = wrong_by_id
            .get(id.as_str())
            .ok_or_else(|| err("not in the advocated-wrong CSV".into()))?;
        check_correct(&a.correct_label, &a.correct_text, "advocated-wrong CSV")?;
        let wl = &a.advocated_wrong_label;
        let wrong = letter_index(wl)
            .filter(|&w| w < item.options.len() && w != item.correct)
            .ok_or_else(|| err(format!("advocated wrong label {wl:?} is not a wrong option")))?;
        if normalize_ws(&a.advocated_wrong_text) != item.options[wrong] {
            return Err(err(format!(
                "advocated wrong text {:?} differs from the dataset's option {}: {:?}",
                normalize_ws(&a.advocated_wrong_text),
                wl,
                item.options[wrong]
            )));
        }
        out.push(Selected {
            subset_index: k,
            item: item.clone(),
            wrong,
        });
    }
    Ok(out)
}

/// One line of `hyst-tui items`: a selected item with its correct and advocated wrong option.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ItemListRow {
    pub(crate) subset_index: usize,
    pub(crate) dataset: String,
    pub(crate) item_id: String,
    pub(crate) category: String,
    pub(crate) n_options: usize,
    pub(crate) correct_label: char,
    pub(crate) correct_text: String,
    pub(crate) advocated_wrong_label: char,
    pub(crate) advocated_wrong_text: String,
}

impl ItemListRow {
    /// The header, in field order (written even when the selection is empty).
    pub(crate) const COLUMNS: [&str; 9] = [
        "subset_index",
        "dataset",
        "item_id",
        "category",
        "n_options",
        "correct_label",
        "correct_text",
        "advocated_wrong_label",
        "advocated_wrong_text",
    ];
}

impl From<&Selected> for ItemListRow {
    fn from(s: &Selected) -> Self {
        let it = &s.item;
        Self {
            subset_index: s.subset_index,
            dataset: it.dataset.clone(),
            item_id: it.id.clone(),
            category: it.category.clone(),
            n_options: it.options.len(),
            correct_label: it.correct_letter(),
            correct_text: it.options[it.correct].clone(),
            advocated_wrong_label: s.wrong_letter(),
            advocated_wrong_text: it.options[s.wrong].clone(),
        }
    }
}

/// Writes the selection as CSV ([`ItemListRow`] columns, header first, `\n` line ends, fields
/// quoted only when they hold a comma, a quote or a line break).
pub fn write_item_list<W: io::Write>(sel: &[Selected], out: W) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(out);
    w.write_record(ItemListRow::COLUMNS)?;
    for s in sel {
        w.serialize(ItemListRow::from(s))?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::parquet::{load_truthfulqa, write_truthfulqa_parquet};

    /// A synthetic 817-row TruthfulQA file: row r has 2 + (r % 12) options, the first correct.
    fn synthetic_tqa(dir: &Path) -> std::path::PathBuf {
        let rows: Vec<(String, Vec<String>, Vec<i32>)> = (0..817)
            .map(|r| {
                let n = 2 + (r % 12);
                let opts = (0..n).map(|k| format!("answer {k} of row {r}")).collect();
                let mut labels = vec![0; n];
                labels[0] = 1;
                (format!("Question {r}?"), opts, labels)
            })
            .collect();
        let p = dir.join("validation.parquet");
        write_truthfulqa_parquet(&p, &rows).unwrap();
        p
    }

    #[test]
    fn paper_subset_order_on_817_rows() {
        let dir = tempfile::tempdir().unwrap();
        let items = load_truthfulqa(&synthetic_tqa(dir.path())).unwrap();
        assert_eq!(items.len(), 817);
        let sel = select(&items, Some(500), 42);
        assert_eq!(sel.len(), 500);
        let first: Vec<&str> = sel[..12].iter().map(|s| s.item.id.as_str()).collect();
        let want = [740, 724, 678, 632, 237, 584, 664, 748, 615, 404, 198, 395]
            .map(|r| format!("truthfulqa_mc_{r:05}"));
        assert_eq!(first, want.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(sel[3].subset_index, 3);
        // The wrong rule on the ids of the protocol's vectors: 00740 has 2+(740%12)=10 options
        // here, so only check it is a wrong index and deterministic.
        let again = select(&items, Some(500), 42);
        assert_eq!(sel, again);
        assert!(sel.iter().all(|s| s.wrong != s.item.correct));
    }

    #[test]
    fn protocol_wrong_vectors_through_select() {
        // Items with the protocol's ids and option counts (docs/protocol.md §1.2).
        let cases = [
            ("truthfulqa_mc_00740", 4, 'A', 'B'),
            ("truthfulqa_mc_00724", 8, 'A', 'G'),
            ("truthfulqa_mc_00017", 10, 'A', 'I'),
            ("truthfulqa_mc_00468", 13, 'A', 'J'),
            ("truthfulqa_mc_00632", 2, 'A', 'B'),
            ("mmlu_pro_10024", 10, 'I', 'E'),
            ("mmlu_pro_5088", 10, 'E', 'G'),
            ("demo_item_1", 4, 'C', 'B'),
            ("demo_item_2", 6, 'F', 'B'),
            ("x", 3, 'B', 'C'),
        ];
        let items: Vec<Item> = cases
            .iter()
            .map(|(id, n, c, _)| Item {
                id: id.to_string(),
                dataset: "t".into(),
                question: "q".into(),
                options: (0..*n).map(|k| format!("o{k}")).collect(),
                correct: (*c as u8 - b'A') as usize,
                category: "c".into(),
                meta: Default::default(),
            })
            .collect();
        for s in select(&items, None, 42) {
            let want = cases.iter().find(|c| c.0 == s.item.id).unwrap().3;
            assert_eq!(s.wrong_letter(), want, "{}", s.item.id);
        }
    }

    #[test]
    fn released_csv_join_and_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        let items = load_truthfulqa(&synthetic_tqa(dir.path())).unwrap();
        let sub = dir.path().join("subset.csv");
        let adv = dir.path().join("adv.csv");
        std::fs::write(
            &sub,
            "dataset,question_id,original_index,source_row_index,source_question_id,source_split,correct_label,correct_text,n_options\n\
truthfulqa_mc,truthfulqa_mc_00740,740,740,,validation,A,answer 0 of row 740,10\n\
truthfulqa_mc,truthfulqa_mc_00002,2,2,,validation,A,\"answer 0 of row 2\",4\n",
        )
        .unwrap();
        std::fs::write(
            &adv,
            "dataset,question_id,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text,seed\n\
truthfulqa_mc,truthfulqa_mc_00002,A,answer 0 of row 2,C,answer 2 of row 2,42\n\
truthfulqa_mc,truthfulqa_mc_00740,A,answer 0 of row 740,D,answer 3 of row 740,42\n",
        )
        .unwrap();
        let sel = from_released_csvs(&items, &sub, &adv).unwrap();
        assert_eq!(sel.len(), 2);
        assert_eq!(sel[0].item.id, "truthfulqa_mc_00740");
        assert_eq!(sel[0].wrong_letter(), 'D');
        assert_eq!(sel[1].wrong_letter(), 'C');
        // A wrong text that does not match the dataset is an error naming the item.
        std::fs::write(
            &adv,
            "dataset,question_id,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text,seed\n\
truthfulqa_mc,truthfulqa_mc_00002,A,answer 0 of row 2,C,something else,42\n\
truthfulqa_mc,truthfulqa_mc_00740,A,answer 0 of row 740,D,answer 3 of row 740,42\n",
        )
        .unwrap();
        let e = from_released_csvs(&items, &sub, &adv).unwrap_err().to_string();
        assert!(e.starts_with("item truthfulqa_mc_00002:") && e.contains("advocated wrong text"), "{e}");
        // A wrong correct label too.
        std::fs::write(&sub, std::fs::read_to_string(&sub).unwrap().replace(",A,answer 0 of row 740", ",B,answer 0 of row 740")).unwrap();
        let e = from_released_csvs(&items, &sub, &adv).unwrap_err().to_string();
        assert!(e.contains("truthfulqa_mc_00740") && e.contains("correct label B"), "{e}");
    }

    #[test]
    fn released_csv_malformed_files_name_file_row_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let items = load_truthfulqa(&synthetic_tqa(dir.path())).unwrap();
        let sub = dir.path().join("subset.csv");
        let adv = dir.path().join("adv.csv");
        let sub_header = "dataset,question_id,original_index,source_row_index,source_question_id,source_split,correct_label,correct_text,n_options";
        let adv_text = "dataset,question_id,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text,seed\n\
truthfulqa_mc,truthfulqa_mc_00002,A,answer 0 of row 2,C,answer 2 of row 2,42\n";
        std::fs::write(&adv, adv_text).unwrap();
        let run = |sub_text: &str| {
            std::fs::write(&sub, sub_text).unwrap();
            from_released_csvs(&items, &sub, &adv).map_err(|e| e.to_string())
        };
        // BOM, CRLF and padded fields are fine; extra columns are ignored.
        let sel = run(&format!("\u{feff}{sub_header},extra\r\ntruthfulqa_mc, truthfulqa_mc_00002 ,2,2,,validation, A ,\"answer 0 of row 2\", 4 ,x\r\n")).unwrap();
        assert_eq!((sel[0].item.id.as_str(), sel[0].wrong_letter()), ("truthfulqa_mc_00002", 'C'));
        let e = run(&format!("{}\ntruthfulqa_mc,truthfulqa_mc_00002,2,2,,validation,A,x\n", sub_header.replace(",n_options", ""))).unwrap_err();
        assert!(e.ends_with("subset.csv: missing column `n_options`"), "{e}");
        let e = run(&format!("{sub_header}\n\ntruthfulqa_mc,truthfulqa_mc_00002,2,2,,validation,A,answer 0 of row 2,four\n")).unwrap_err();
        assert!(e.ends_with("subset.csv: row 3: field `n_options`: \"four\": invalid digit found in string"), "{e}");
        let e = run(&format!("{sub_header}\ntruthfulqa_mc,truthfulqa_mc_00002,2,2,,validation,A,answer 0 of row 2\n")).unwrap_err();
        assert!(e.ends_with("subset.csv: line 2: 8 fields, but the header has 9"), "{e}");
        let e = run(&format!("{sub_header}\ntruthfulqa_mc,truthfulqa_mc_00002,2,2,,validation,A,\"answer 0 of row 2,4\n")).unwrap_err();
        assert!(e.ends_with("subset.csv: line 2: unterminated quoted field: a quote opened in the record starting here is never closed"), "{e}");
    }

    fn selected(id: &str, category: &str, options: &[&str], correct: usize, wrong: usize, k: usize) -> Selected {
        Selected {
            subset_index: k,
            item: Item {
                id: id.into(),
                dataset: "d,\"x\"".into(),
                question: "q".into(),
                options: options.iter().map(|s| s.to_string()).collect(),
                correct,
                category: category.into(),
                meta: Default::default(),
            },
            wrong,
        }
    }

    #[test]
    fn item_list_csv_quotes_and_round_trips() {
        let sel = vec![
            selected("plain", "general", &["a", "b"], 0, 1, 0),
            selected("q1, \"quoted\"", "cat\nwith newline", &["a, b", "say \"hi\"", "c"], 1, 0, 1),
            selected(" spaced ", "", &["\"lead", "trail\"", "cr\r"], 2, 0, 2),
        ];
        let mut out = Vec::new();
        write_item_list(&sel, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "subset_index,dataset,item_id,category,n_options,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text\n\
0,\"d,\"\"x\"\"\",plain,general,2,A,a,B,b\n\
1,\"d,\"\"x\"\"\",\"q1, \"\"quoted\"\"\",\"cat\nwith newline\",3,B,\"say \"\"hi\"\"\",A,\"a, b\"\n\
2,\"d,\"\"x\"\"\", spaced ,,3,C,\"cr\r\",A,\"\"\"lead\"\n"
        );
        let mut rdr = csv::Reader::from_reader(text.as_bytes());
        assert_eq!(rdr.headers().unwrap().iter().collect::<Vec<_>>(), ItemListRow::COLUMNS);
        let back: Vec<ItemListRow> = rdr.deserialize().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, sel.iter().map(ItemListRow::from).collect::<Vec<_>>());
        assert_eq!(back[1].category, "cat\nwith newline");
        // An empty selection is the header alone.
        let mut out = Vec::new();
        write_item_list(&[], &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("{}\n", ItemListRow::COLUMNS.join(",")));
    }

    #[test]
    fn option_shuffle_is_recorded_and_keeps_the_answer() {
        let mut items = crate::data::items::DatasetSpec::Sample.load().unwrap();
        let before = items.clone();
        shuffle_options(&mut items, 7);
        for (a, b) in before.iter().zip(&items) {
            assert_eq!(a.options[a.correct], b.options[b.correct]);
            let perm: Vec<usize> = serde_json::from_str(&b.meta["option_permutation"]).unwrap();
            for (i, &p) in perm.iter().enumerate() {
                assert_eq!(b.options[i], a.options[p]);
            }
        }
        assert!(before.iter().zip(&items).any(|(a, b)| a.correct != b.correct));
    }
}
