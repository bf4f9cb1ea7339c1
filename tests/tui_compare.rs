//! Comparing models in the explorer, on a stored run with two models on the same items (no
//! engine): the synthetic rows of `toy_a` plus a copy as `toy_c` whose advocated wrong option
//! lost 60% of its probability to the correct one. The compare views are insta snapshots at
//! 100×30; `hyst-tui snapshot --compare` renders them headlessly too.

mod common;

use std::path::Path;
use std::process::Command;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hyst_tui::config::ModelsConfig;
use hyst_tui::store::rows::{letter_map_json, parse_letter_map};
use hyst_tui::store::ItemRow;
use hyst_tui::tui::parts::Part;
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig, View};

const W: u16 = 100;
const H: u16 = 30;

/// `toy_a`'s rows copied as `toy_c`, 60% of p(advocated wrong) moved to the correct option.
fn toy_c(rows: &[ItemRow]) -> Vec<ItemRow> {
    rows.iter()
        .filter(|r| r.model_key == "toy_a")
        .map(|r| {
            let mut c = r.clone();
            c.model_key = "toy_c".into();
            c.model_short_name = "Toy-C".into();
            let m = parse_letter_map(&r.option_probs_json).unwrap();
            let letters: String = m.keys().map(|k| k.chars().next().unwrap()).collect();
            let mut p: Vec<f64> = m.values().copied().collect();
            let idx = |l: &str| letters.find(l).unwrap();
            let (w, k) = (idx(&r.wrong_advocated_letter), idx(&r.correct_option_letter));
            let moved = p[w] * 0.6;
            p[w] -= moved;
            p[k] += moved;
            let best = (0..p.len()).fold(0, |b, i| if p[i] > p[b] { i } else { b });
            c.option_probs_json = letter_map_json(&letters, &p);
            c.pred_letter = letters[best..best + 1].to_string();
            c.p_wrong = p[w];
            c.p_correct = p[k];
            c
        })
        .collect()
}

fn write_run(dir: &Path) {
    let mut rows = common::synthetic::synthetic_rows(3);
    let c = toy_c(&rows);
    rows.extend(c);
    hyst_tui::store::write_item_rows(dir, &rows).unwrap();
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

fn screen(app: &App) -> String {
    buffer_to_text(&render_to_buffer(app, W, H).expect("render"))
}

#[test]
fn compare_views_of_a_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let models = ModelsConfig::bundled().unwrap();
    let n_config = models.models.len();
    let mut cfg = AppConfig { run: Some(dir.path().to_path_buf()), ..AppConfig::new(models) };
    cfg.options.frozen = true;
    cfg.options.color = true;
    let mut app = App::new(cfg).expect("app over the stored run");
    assert!(app.stored_run_problems().is_empty());

    // m: the switcher lists the run's models after models.toml's, the cursor on toy_a; c on
    // toy_c compares it.
    keys(&mut app, "m");
    let s = screen(&app);
    assert!(s.contains("toy_c") && s.contains("c compare"), "{s}");
    keys(&mut app, "jj");
    keys(&mut app, "c");
    press(&mut app, KeyCode::Esc);
    let _ = n_config;
    assert!(app.engine_ready().is_none());
    assert_eq!(app.jobs_submitted(), 0, "a stored run's models need no engine");

    // Items: toy_c's gap beside toy_a's, sortable.
    let s = screen(&app);
    assert!(s.contains("vs toy_c"), "{s}");
    insta::assert_snapshot!("compare_items", s);
    keys(&mut app, "ssss");
    let s = screen(&app);
    assert!(s.contains("sort gap of toy_c"), "{s}");

    // Dialogue at strong pressure: each model's letters along its own ramp.
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.view(), View::Dialogue);
    keys(&mut app, "lll");
    assert_eq!(app.current_part(), Part::Curve(3));
    insta::assert_snapshot!("compare_dialogue", screen(&app));

    // Trace at R0: a p(w) and a p(c) chart, one curve per model.
    keys(&mut app, "ll3");
    assert_eq!(app.current_part(), Part::Curve(5));
    insta::assert_snapshot!("compare_trace", screen(&app));

    // Recovery on R2: the models side by side.
    keys(&mut app, "5rll");
    assert_eq!(app.current_part(), Part::Op("system_level_reset"));
    insta::assert_snapshot!("compare_recovery", screen(&app));

    // Every view at 80x24 and without colour still draws.
    for v in ["1", "2", "3", "4", "5", "6"] {
        keys(&mut app, v);
        let small = buffer_to_text(&render_to_buffer(&app, 80, 24).unwrap());
        assert_eq!(small.lines().count(), 24, "{small}");
    }
    app.set_color(false);
    keys(&mut app, "3");
    let buf = render_to_buffer(&app, W, H).unwrap();
    let coloured = buf.content().iter().filter(|c| c.fg != ratatui::style::Color::Reset || c.bg != ratatui::style::Color::Reset).count();
    assert_eq!(coloured, 0, "NO_COLOR: no cell may carry a colour");
    let text = buffer_to_text(&buf);
    assert!(text.contains("⣿ toy_a") && text.contains("• toy_c"), "models are told apart by marker: {text}");
}

#[test]
fn snapshot_command_renders_compare_views() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path());
    let out = dir.path().join("trace.txt");
    let o = Command::new(env!("CARGO_BIN_EXE_hyst-tui"))
        .args(["snapshot", "--view", "trace", "--size", "100x30", "--compare", "toy_c", "--run"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .env("HYST_SCORE_STORE", "off")
        .output()
        .expect("run hyst-tui snapshot");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("Ramp values per model") && text.contains("toy_c") && text.contains("toy_a"), "{text}");

    // An unknown model is an error naming it.
    let o = Command::new(env!("CARGO_BIN_EXE_hyst-tui"))
        .args(["snapshot", "--view", "trace", "--compare", "no-such-model", "--run"])
        .arg(dir.path())
        .arg("--out")
        .arg(&out)
        .env("HYST_SCORE_STORE", "off")
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--compare no-such-model"), "{err}");
}
