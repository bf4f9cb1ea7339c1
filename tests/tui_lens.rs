//! The explorer's letter lens (`L` in the Slot view) and steering what-if (`T`), on SmolLM2 with
//! its engine: the lens panel shows every layer of the step and its clean counterpart, the
//! steered column appears under `--steer`, and without a steering setting `T` says how to give one.

mod common;

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hyst_tui::config::ModelsConfig;
use hyst_tui::engine::inside::{ControlVector, Steering};
use hyst_tui::tui::parts::Part;
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig, View};

const SETTLE: Duration = Duration::from_secs(1800);

fn app(steering: Option<Steering>, steer_file: Option<std::path::PathBuf>) -> App {
    let mut cfg = AppConfig { model: Some(common::SMOL.into()), dataset: Some("sample".into()), steering, steer_file, ..AppConfig::new(ModelsConfig::bundled().unwrap()) };
    cfg.options.frozen = true;
    cfg.options.prefetch = false;
    let mut app = App::new(cfg).expect("app");
    assert!(app.settle(SETTLE));
    app
}

fn keys(app: &mut App, s: &str) {
    for c in s.chars() {
        app.handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        app.update();
    }
}

fn screen(app: &App) -> String {
    buffer_to_text(&render_to_buffer(app, 140, 50).expect("render"))
}

#[test]
fn the_slot_view_shows_the_lens_and_the_steered_step() {
    let e = common::engine(common::SMOL);
    let b = e.letter_tokens('B').unwrap();
    let row = e.token_row(b.ids[0]).unwrap();
    drop(e);
    let vector = Arc::new(ControlVector::new(row.len(), [(29, row)]).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("b_row.gguf");
    vector.write(&file, "smollm2").unwrap();
    let mut app = app(Some(Steering { vector, alpha: 1.0, layers: (29, 29) }), Some(file.clone()));
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    keys(&mut app, "4lllll");
    assert!(app.settle(SETTLE));
    assert_eq!((app.view(), app.current_part()), (View::Slot, Part::Curve(5)));
    assert!(!screen(&app).contains("Letter lens"));

    keys(&mut app, "L");
    assert!(app.settle(SETTLE));
    let s = screen(&app);
    assert!(s.contains("Letter lens · option p after each layer · step | clean"), "{s}");
    // 30 layers fit in 50 rows: the first and the last are there, and the verdict line.
    assert!(s.contains("│    0 │") && s.contains("│   29 │"), "{s}");
    assert!(s.contains("step: wrong") && s.contains("clean: wrong"), "{s}");
    assert!(!s.contains("steered"), "no steering until T: {s}");

    keys(&mut app, "T");
    assert!(app.settle(SETTLE));
    let s = screen(&app);
    assert!(s.contains("step steered (α 1 at layers 29-29)"), "{s}");
    assert!(s.contains("steered score: "), "{s}");
    // S saves the what-if as a steering operation on R0's context: a file the batch reads.
    keys(&mut app, "S");
    let said = app.notice().unwrap_or_default().to_string();
    assert!(said.starts_with("saved as steering operation steer_"), "{said}");
    let saved = std::path::PathBuf::from(said.split(" in ").nth(1).unwrap().split(" · ").next().unwrap());
    let source = hyst_tui::dialogue::recipe::ExperimentSource::read(&saved).unwrap();
    assert_eq!(source.vectors[0].path, file.display().to_string());
    let reg = hyst_tui::dialogue::conditions::Registry::with_experiments(&[source]).unwrap();
    let op = reg.all().iter().find(|c| c.key.starts_with("steer_")).unwrap();
    let (r, r0) = (op.recipe().unwrap(), reg.find("ordinary_strong_reset").unwrap().recipe().unwrap());
    let st = r.steering.as_ref().unwrap();
    assert_eq!((st.alpha, st.layers), (1.0, Some((29, 29))));
    assert_eq!((&r.history, &r.turn, &r.system), (&r0.history, &r0.turn, &r0.system), "R0's context");
    keys(&mut app, "T");
    assert!(!screen(&app).contains("steered score"), "T again takes the what-if away");
    keys(&mut app, "L");
    assert!(!screen(&app).contains("Letter lens"), "L again hides the lens");
}

#[test]
fn without_a_steering_setting_t_says_how_to_give_one() {
    let mut app = app(None, None);
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    keys(&mut app, "4T");
    assert!(app.notice().is_some_and(|n| n.contains("--steer FILE")), "{:?}", app.notice());
}
