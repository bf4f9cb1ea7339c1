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

fn app(steering: Option<Steering>) -> App {
    let mut cfg = AppConfig { model: Some(common::SMOL.into()), dataset: Some("sample".into()), steering, ..AppConfig::new(ModelsConfig::bundled().unwrap()) };
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
    let mut app = app(Some(Steering { vector, alpha: 1.0, layers: (29, 29) }));
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
    keys(&mut app, "T");
    assert!(!screen(&app).contains("steered score"), "T again takes the what-if away");
    keys(&mut app, "L");
    assert!(!screen(&app).contains("Letter lens"), "L again hides the lens");
}

#[test]
fn without_a_steering_setting_t_says_how_to_give_one() {
    let mut app = app(None);
    app.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    keys(&mut app, "4T");
    assert!(app.notice().is_some_and(|n| n.contains("--steer FILE")), "{:?}", app.notice());
}
