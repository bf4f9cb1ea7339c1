//! The built-in R8 test: a main recovery operation added to the bundled files — one
//! `[[condition]]` in prompts/conditions.toml and its prompt text in prompts/default.toml, no
//! Rust change — is in every view that lists the operations: the hierarchy tables, the heat
//! map's columns and legend, the definitions table, the explorer's help and Recovery view; and
//! no text still names the operations as they were (`R0 … R6`).
//!
//! The process reads copies of the bundled files with the entry added (`prompts::
//! use_bundled_dir`, what a build from the edited files would bundle); its rows are the
//! synthetic run's, with R6's rows standing in for R8's scores.

mod common;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hyst_tui::config::ModelsConfig;
use hyst_tui::store::ItemRow;
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig};

const R8_KEY: &str = "explicit_correction";

/// The entry a developer adds to prompts/conditions.toml.
const R8_CONDITION: &str = r#"
[[condition]]
name = "explicit_correction"
short = "R8"
label = "R8 Explicit correction"
suite = "hierarchy"
group = "main"
level = "R8"
category = "explicit_correction"
ui_name = "explicit correction"
description = "R8: history kept; the user names the correct option + question"
labels = { table4 = "R8 explicit correction", table17 = "R8 correction", sweep_stem = "r8_explicit_correction", mro = "R8 explicit correction", ci = "R8 Explicit correction" }
family = "instruction"
ordering = ["instruction-level"]
history = "kept"
turn = ["r8_correction", "question:r6_prefix"]
"#;

/// Its prompt text, added to prompts/default.toml.
const R8_PROMPT: &str = "\nr8_correction = \"I was wrong earlier: the correct answer is {correct_option_text}. Please answer from the facts.\"\n";

/// The bundled files with R8 added, installed for this process.
fn install_r8(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    std::fs::write(dir.join("conditions.toml"), read("prompts/conditions.toml") + R8_CONDITION).unwrap();
    std::fs::write(dir.join("default.toml"), read("prompts/default.toml") + R8_PROMPT).unwrap();
    hyst_tui::prompts::use_bundled_dir(dir).expect("before anything reads the bundled files");
}

/// The synthetic rows plus R8's: R6's rows renamed, with p(w) a little lower.
fn rows_with_r8() -> Vec<ItemRow> {
    let mut out = Vec::new();
    for r in common::synthetic::synthetic_rows(3) {
        let mut v = serde_json::to_value(&r).unwrap();
        out.push(r);
        if v["condition"] == "self_verification_final_label" {
            v["condition"] = R8_KEY.into();
            v["condition_label"] = "R8 Explicit correction".into();
            v["level"] = "R8".into();
            v["op_category"] = "explicit_correction".into();
            v["p_wrong"] = (v["p_wrong"].as_f64().unwrap() * 0.5).into();
            out.push(serde_json::from_value(v).unwrap());
        }
    }
    out
}

/// The ways the bundled operations were listed before R8 came.
const STALE: [&str; 5] = ["R0 … R6", "R0..R6", "R0…R7", "R0–R6", "R4, R5, R6 "];

fn assert_fresh(what: &str, text: &str) {
    for s in STALE {
        assert!(!text.contains(s), "{what} still says {s:?}");
    }
    // Every list of the main operations goes on to R8.
    for (i, _) in text.match_indices("R5, R6") {
        assert!(text[i..].starts_with("R5, R6, R8"), "{what}: a list of the operations stops at R6: {}", &text[i..(i + 40).min(text.len())]);
    }
}

fn press(app: &mut App, c: char) {
    app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    app.update();
}

#[test]
fn an_operation_added_to_the_bundled_files_is_everywhere() {
    let bundled = tempfile::tempdir().unwrap();
    install_r8(bundled.path());

    // The registry: R8 is a main operation, after R6 in the scan order.
    let shorts: Vec<&str> = hyst_tui::dialogue::conditions::Registry::bundled().recovery_ops().iter().filter(|o| o.main).map(|o| o.short).collect();
    assert_eq!(shorts, ["R0", "R1", "R2", "R3a", "R3b", "R4", "R5", "R6", "R8"]);

    // The tables and figures of a run with R8 rows.
    let run = tempfile::tempdir().unwrap();
    let rows = rows_with_r8();
    hyst_tui::store::write_item_rows(run.path(), &rows).unwrap();
    let written = hyst_tui::tables::write_tables(&rows, hyst_tui::dialogue::conditions::Registry::bundled(), run.path(), &hyst_tui::tables::TableOptions::default()).unwrap();
    let read = |rel: &str| std::fs::read_to_string(run.path().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    for (file, want) in [
        ("tables/table01_recovery_operations.md", "R8 Explicit correction"),
        ("tables/table01_recovery_operations.md", "marks the nine operations of the minimal-recovery scan"),
        ("tables/table04_recovery_counts.csv", "R8 explicit correction"),
        ("tables/table16_strict_vs_mro.md", "first passing in the order R0, R1, R2, R3a, R3b, R4, R5, R6, R8"),
        ("tables/table17_minimal_recovery_operation.md", "MRO = first operation in the order R0, R1, R2, R3a, R3b, R4, R5, R6, R8"),
        ("tables/aux_recovery_operations_with_ci.md", "operations R0..R8"),
        ("tables/aux_recovery_operations_with_ci.csv", "R8 Explicit correction"),
        ("tables/aux_threshold_sweep.csv", "r8_explicit_correction_recovered"),
        ("tables/aux_threshold_sweep.md", "max(R1, R2, R8); instruction_best_recovered = max(R0, R1, R2, R8)"),
        ("figures/recovery_hierarchy_gap.svg", ">\nR8\n</text>"),
        ("figures/recovery_hierarchy_gap.svg", "MRO = the first operation in the order R0 … R8 that passes"),
        ("summary.md", "operations R0 … R8"),
    ] {
        assert!(read(file).contains(want), "{file} lacks {want:?}:\n{}", read(file));
    }
    for p in &written {
        let text = std::fs::read_to_string(p).unwrap();
        assert_fresh(&p.display().to_string(), &text);
    }

    // The explorer on that run: R8 in the Recovery view and in the help.
    let mut cfg = AppConfig { run: Some(run.path().to_path_buf()), ..AppConfig::new(ModelsConfig::bundled().unwrap()) };
    cfg.options.frozen = true;
    let mut app = App::new(cfg).expect("the explorer opens the run");
    press(&mut app, '5');
    let recovery = buffer_to_text(&render_to_buffer(&app, 120, 50).unwrap());
    let r8_line = recovery.lines().find(|l| l.contains("R8")).unwrap_or_else(|| panic!("no R8 in the Recovery view:\n{recovery}"));
    assert!(r8_line.contains("explicit correction"), "{r8_line}");
    let [r6, r8, appendix] = ["R6 ", "R8 ", "appendix"].map(|s| recovery.find(s).unwrap_or_else(|| panic!("{s:?} not in\n{recovery}")));
    assert!(r6 < r8 && r8 < appendix, "R8 comes after R6, before the appendix operations:\n{recovery}");
    assert_fresh("the Recovery view", &recovery);
    press(&mut app, '?');
    let help = buffer_to_text(&render_to_buffer(&app, 160, 120).unwrap());
    assert!(help.contains("ramp steps, then R0…R8"), "{help}");
    assert_fresh("the help", &help);
}
