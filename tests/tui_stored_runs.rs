//! A stored run with damaged rows (`hyst-tui --run DIR`): the explorer skips and reports every
//! bad row with its line, keeps the good items, and no view or overlay panics while drawing
//! what is left. A run with no usable row is refused with a message naming the file; a run a
//! batch is still writing says so (and before its first item is stored, is refused).

mod common;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hyst_tui::config::ModelsConfig;
use hyst_tui::dialogue::CURVE;
use hyst_tui::store::run_dir::ITEM_ROWS_JSONL;
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig};
use serde_json::Value;

const MODEL: &str = "toy_a";

fn config(dir: &Path) -> AppConfig {
    let mut cfg = AppConfig {
        run: Some(dir.to_path_buf()),
        ..AppConfig::new(ModelsConfig::bundled().expect("bundled models.toml"))
    };
    cfg.options.frozen = true;
    cfg.options.color = true;
    cfg
}

/// A run directory of synthetic rows (two models, three items each).
fn write_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    hyst_tui::store::write_item_rows(dir.path(), &common::synthetic::synthetic_rows(3)).unwrap();
    dir
}

/// The lines of `item_rows.jsonl`, to damage in place.
struct Rows {
    lines: Vec<String>,
}

impl Rows {
    fn read(dir: &Path) -> Rows {
        let text = std::fs::read_to_string(dir.join(ITEM_ROWS_JSONL)).unwrap();
        Rows { lines: text.lines().map(str::to_string).collect() }
    }
    fn write(&self, dir: &Path) {
        std::fs::write(dir.join(ITEM_ROWS_JSONL), self.lines.join("\n") + "\n").unwrap();
    }
    /// 1-based line of a row of the model.
    fn line_of(&self, model: &str, item: &str, condition: &str) -> usize {
        self.lines
            .iter()
            .position(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                v["model_key"] == model && v["item_id"] == item && v["condition"] == condition
            })
            .unwrap_or_else(|| panic!("no row {model} {item} {condition}"))
            + 1
    }
    /// Sets a field of the row of `MODEL` and returns its line.
    fn damage(&mut self, item: &str, condition: &str, field: &str, value: Value) -> usize {
        let line = self.line_of(MODEL, item, condition);
        let mut v: Value = serde_json::from_str(&self.lines[line - 1]).unwrap();
        v[field] = value;
        self.lines[line - 1] = v.to_string();
        line
    }
}

fn press(app: &mut App, code: KeyCode) {
    app.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    app.update();
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// Draws the current screen at both sizes (a panic fails the test).
fn draw(app: &App) -> String {
    let small = buffer_to_text(&render_to_buffer(app, 80, 24).expect("render 80x24"));
    assert_eq!(small.lines().count(), 24);
    buffer_to_text(&render_to_buffer(app, 100, 30).expect("render 100x30"))
}

/// Every view and overlay, every step of the detail views, for every item.
fn draw_everything(app: &mut App) {
    for item in 0..app.item_count() {
        keys(app, "1g");
        for _ in 0..item {
            keys(app, "j");
        }
        draw(app);
        for sort in 0..7 {
            keys(app, if sort % 2 == 0 { "s" } else { "S" });
            draw(app);
        }
        keys(app, "/");
        keys(app, "mc_0");
        draw(app);
        press(app, KeyCode::Esc);
        for view in ["2", "3", "4", "5"] {
            keys(app, view);
            keys(app, "g");
            draw(app);
            for _ in 0..app_steps() {
                keys(app, "l");
                draw(app);
                if view == "2" {
                    keys(app, "e");
                    press(app, KeyCode::PageUp);
                    draw(app);
                    keys(app, "e");
                }
            }
            keys(app, "r");
            draw(app);
        }
        keys(app, "6");
        draw(app);
        keys(app, "ljL");
        draw(app);
        for view in ["1", "2", "3", "4", "5", "6"] {
            keys(app, view);
            keys(app, "?");
            draw(app);
            keys(app, "j");
            draw(app);
            keys(app, "x"); // closes the help
            keys(app, "m");
            draw(app);
            keys(app, "j");
            draw(app);
            press(app, KeyCode::Esc);
        }
    }
}

fn app_steps() -> usize {
    hyst_tui::tui::parts::steps(hyst_tui::dialogue::conditions::Registry::bundled()).len()
}

#[test]
fn damaged_rows_are_skipped_reported_and_nothing_panics() {
    let dir = write_run();
    let mut rows = Rows::read(dir.path());
    let (i0, i1, i2) = ("truthfulqa_mc_00000", "truthfulqa_mc_00001", "truthfulqa_mc_00002");
    let op = |k: usize| hyst_tui::dialogue::conditions::Registry::bundled().recovery_ops()[k].key;
    let damaged = vec![
        // No probabilities at the clean step: item 0 loses its clean step and is left out.
        rows.damage(i0, CURVE[0].key(), "option_probs_json", Value::from("{}")),
        // Probabilities for letters the item (4 options, A–D) does not have.
        rows.damage(i1, CURVE[5].key(), "option_probs_json", Value::from(r#"{"A":0.1,"B":0.1,"C":0.1,"D":0.1,"E":0.3,"F":0.3}"#)),
        rows.damage(i1, CURVE[1].key(), "correct_option_letter", Value::from("Z")),
        rows.damage(i1, op(1), "correct_option_letter", Value::from("")),
        // A NaN probability, as serde_json writes one: null.
        rows.damage(i2, CURVE[2].key(), "option_probs_json", Value::from(r#"{"A":null,"B":0.5,"C":0.25,"D":0.25}"#)),
        rows.damage(i2, op(2), "pred_letter", Value::from("Q")),
        rows.damage(i2, op(3), "option_probs_json", Value::from(r#"{"A":1.5,"B":0.5,"C":0.25,"D":0.25}"#)),
        rows.damage(i2, op(4), "choices_json", Value::from("not json")),
        rows.damage(i2, op(5), "wrong_advocated_letter", Value::from("A")), // = the correct one
        // A row that is not an item row at all (a number field holding text).
        rows.damage(i2, op(6), "entropy", Value::from("high")),
    ];
    // A line that is not JSON, in another model's rows.
    let garbage = rows.line_of("toy_b", "mmlu_pro_00000", CURVE[3].key());
    rows.lines[garbage - 1] = "{not json".into();
    rows.write(dir.path());

    let mut app = App::new(config(dir.path())).expect("the good rows are still a run");
    let problems = app.stored_run_problems().to_vec();
    let report: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    let report = report.join("\n");
    // Ten damaged rows of the model, the garbage line, and item 0 left out.
    assert_eq!(problems.len(), damaged.len() + 2, "{report}");
    for &line in damaged.iter().chain([&garbage]) {
        assert!(problems.iter().any(|p| p.line == line), "line {line} not reported:\n{report}");
    }
    assert!(problems.iter().all(|p| p.path.ends_with(ITEM_ROWS_JSONL) && p.line >= 1), "{report}");
    assert!(problems.windows(2).all(|w| w[0].line <= w[1].line), "in file order:\n{report}");
    assert!(report.contains(&format!("item {i0}: no usable clean-context row")), "{report}");
    for what in ["letters []", "options A–D", "\"Z\"", "null", "pred_letter \"Q\"", "outside 0–1", "choices_json", "is the correct one", "not an item row"] {
        assert!(report.contains(what), "{what:?} missing from:\n{report}");
    }
    // The count and the first problem are on the status line.
    let first = &problems[0];
    let notice = app.notice().expect("a notice").to_string();
    assert!(
        notice.starts_with(&format!("{ITEM_ROWS_JSONL}:{}: ", first.line)) && notice.ends_with(&format!("(all {} in the log)", problems.len())),
        "{notice}"
    );
    let s = draw(&app);
    // (at 100 columns the notice is cut after the file name)
    assert!(s.contains(&format!("│ {} rows skipped │ {ITEM_ROWS_JSONL}", problems.len())), "{s}");
    let wide = buffer_to_text(&render_to_buffer(&app, 220, 30).unwrap());
    assert!(wide.contains(&format!("│ {} rows skipped │ {}", problems.len(), format!("{ITEM_ROWS_JSONL}:{}: {}", first.line, first.message))), "{wide}");

    // The good items are shown, with their stored values (item 1 has no R0 any more).
    assert_eq!(app.item_count(), 2);
    let ids: Vec<String> = (0..2).map(|i| app.entry(i).unwrap().item.id.clone()).collect();
    assert_eq!(ids, [i1, i2]);
    let table: Vec<&str> = s.lines().filter(|l| l.starts_with('│') && l.contains("truthfulqa_mc_0")).collect();
    assert_eq!(table.len(), 2, "{s}");
    assert!(table[0].contains(i1) && table[0].contains("0.200"), "{s}");
    assert!(table[1].contains(i2) && table[1].contains("0.300") && table[1].contains("0.350"), "{s}");

    draw_everything(&mut app);
}

#[test]
fn a_run_with_no_usable_row_is_refused_naming_the_file() {
    // Every row damaged.
    let dir = write_run();
    let mut rows = Rows::read(dir.path());
    for l in rows.lines.iter_mut() {
        let mut v: Value = serde_json::from_str(l).unwrap();
        v["option_probs_json"] = Value::from("{}");
        *l = v.to_string();
    }
    rows.write(dir.path());
    let err = format!("{:#}", App::new(config(dir.path())).err().expect("refused"));
    let file = dir.path().join(ITEM_ROWS_JSONL).display().to_string();
    assert!(err.contains(&file) && err.contains("no usable item rows"), "{err}");

    // Every line unreadable.
    std::fs::write(dir.path().join(ITEM_ROWS_JSONL), "{not json\n[1, 2]\n").unwrap();
    let err = format!("{:#}", App::new(config(dir.path())).err().expect("refused"));
    assert!(err.contains(&file) && err.contains("line 1"), "{err}");
}

/// A run that a batch is writing (its lock held, here by this test as a batch would hold it):
/// the explorer shows the items stored so far and says so, naming the writer; before the first
/// item is stored it is refused in one line.
#[test]
fn a_run_being_written_says_so_and_one_with_no_item_yet_is_refused() {
    use std::io::Write;
    let dir = write_run();
    let mut lock = std::fs::File::create(dir.path().join(".lock")).unwrap();
    writeln!(lock, "4242").unwrap();
    lock.try_lock().unwrap();
    let app = App::new(config(dir.path())).unwrap();
    let s = buffer_to_text(&render_to_buffer(&app, 200, 30).expect("render 200x30"));
    // (No manifest here, so the run's total is not known.)
    assert!(s.contains("a batch (pid 4242) is still writing this run: 3 items shown; reopen it (6: Runs, Enter) for more"), "{s}");

    std::fs::remove_file(dir.path().join(ITEM_ROWS_JSONL)).unwrap();
    let err = format!("{:#}", App::new(config(dir.path())).err().expect("refused"));
    assert!(err.contains("no item of the run is stored yet") && err.contains("pid 4242 is writing it"), "{err}");
    assert!(!err.contains('\n'), "{err}");

    // Released: the same directory is an ordinary (if empty) run again.
    drop(lock);
    let err = format!("{:#}", App::new(config(dir.path())).err().expect("refused"));
    assert!(err.contains("cannot read") && !err.contains("is writing it"), "{err}");
}
