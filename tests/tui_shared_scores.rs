//! The explorer and the score store shared with every run, on the REAL engine (smollm2-135m,
//! and gemma3-270m as a compared model): a small batch (`hyst-tui --batch --limit 2`) fills a
//! fresh store; the explorer opened on the same items shows the batch's values at once — even
//! with no model file at all — and sends no job to the engine; a compared model's scores are
//! computed in its own engine and appended to the store, so a second explorer needs no engine
//! job for either model. The store screen is exact on a build with the snapshots' numeric
//! provenance and compared within a tolerance elsewhere (`common::screens`).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use hyst_tui::config::{models_dir, ModelsConfig};
use hyst_tui::tui::parts::{ramp_parts, steps, Part};
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig, View};

use common::screens::assert_engine_screen;

const SMOL: &str = "smollm2-135m";
const GEMMA: &str = "gemma3-270m";
/// Generous: other builds may share the two cores.
const SETTLE: Duration = Duration::from_secs(1800);

fn models() -> ModelsConfig {
    ModelsConfig::resolve(None).expect("models config")
}

fn require(key: &str) {
    let e = models().get(key).expect("model in models.toml").clone();
    let p = e.path(&models_dir());
    assert!(p.exists(), "test model {key} is missing at {}: run `bash scripts/fetch-test-models.sh`", p.display());
}

fn config(models: ModelsConfig, store: &Path) -> AppConfig {
    let mut cfg = AppConfig {
        model: Some(SMOL.into()),
        dataset: Some("sample".into()),
        score_store: Some(store.to_path_buf()),
        ..AppConfig::new(models)
    };
    cfg.options.frozen = true;
    cfg.options.color = true;
    // The two items the batch scored.
    cfg.options.prefetch = true;
    cfg.options.prefetch_window = 2;
    cfg
}

fn screen(app: &App) -> String {
    buffer_to_text(&render_to_buffer(app, 100, 30).expect("render"))
}

#[test]
fn batch_scores_are_shown_without_the_engine_and_compared_scores_are_appended() {
    require(SMOL);
    require(GEMMA);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("scores").join("scores.jsonl");

    // --- a small batch fills the store ---------------------------------------------------------
    let out = Command::new(env!("CARGO_BIN_EXE_hyst-tui"))
        .args(["--batch", "--models", SMOL, "--datasets", "sample", "--suites", "hierarchy,r7", "--limit", "2", "--threads", "2", "--out"])
        .arg(dir.path().join("run"))
        .env("HYST_SCORE_STORE", &store)
        .output()
        .expect("run the batch");
    assert!(out.status.success(), "batch failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let lines = std::fs::read_to_string(&store).expect("the batch wrote the store").lines().count();
    assert!(lines > 20, "{lines} records");

    // --- no model file at all: the values still show (the lookup needs only the pinned sha256) ---
    let mut no_file = models();
    for m in &mut no_file.models {
        if m.key == SMOL {
            m.file = "no-such-file.gguf".into();
        }
    }
    let mut app = App::new(config(no_file, &store)).expect("app");
    assert!(app.settle(SETTLE));
    assert!(app.engine_ready().is_none(), "the model cannot load");
    let first = app.visible_items()[..2].to_vec();
    for &i in &first {
        assert!(ramp_parts().iter().all(|&p| app.score(i, p).is_some()), "item {i}: the batch's ramp is shown");
    }
    assert!(steps(hyst_tui::dialogue::conditions::Registry::bundled()).iter().all(|&p| app.score(first[0], p).is_some()), "every step of the current item");
    assert!(app.store_hits() > 0);
    assert_eq!(app.jobs_submitted(), 0);
    drop(app);

    // --- the real model: still no engine job ---------------------------------------------------
    let mut app = App::new(config(models(), &store)).expect("app");
    assert!(app.settle(SETTLE));
    assert!(app.engine_ready().is_some(), "the model loaded");
    assert_eq!(app.jobs_submitted(), 0, "every part came from the store");
    let hits = app.store_hits();
    let s = screen(&app);
    assert!(s.contains(&format!("{hits} from store")), "{s}");
    assert_engine_screen!("shared_store_items", s);

    // --- compare gemma: scored in its own engine, appended to the store -----------------------
    app.compare(GEMMA).expect("compare gemma");
    assert!(app.settle(SETTLE));
    let cur = app.current().unwrap();
    assert!(steps(hyst_tui::dialogue::conditions::Registry::bundled()).iter().all(|&p| app.score_of(GEMMA, cur, p).is_some()), "gemma scored every step");
    let computed = app.jobs_submitted();
    assert!(computed > 0);
    assert_eq!(app.store_appended() as u64, computed, "every computed score is appended");
    // Its own ramp: the dialogue shows each model's letter per turn.
    app.handle_key(crossterm::event::KeyEvent::new(crossterm::event::KeyCode::Char('2'), crossterm::event::KeyModifiers::NONE));
    for _ in 0..4 {
        app.handle_key(crossterm::event::KeyEvent::new(crossterm::event::KeyCode::Char('l'), crossterm::event::KeyModifiers::NONE));
    }
    assert_eq!((app.view(), app.current_part()), (View::Dialogue, Part::Curve(4)));
    let s = screen(&app);
    assert!(s.contains(&format!("{GEMMA}: ")), "{s}");
    for v in ['3', '5', '1'] {
        app.handle_key(crossterm::event::KeyEvent::new(crossterm::event::KeyCode::Char(v), crossterm::event::KeyModifiers::NONE));
        let s = screen(&app);
        assert!(s.contains(GEMMA), "{s}");
    }
    drop(app);

    // --- a second explorer: both models from the store -----------------------------------------
    let mut cfg = config(models(), &store);
    cfg.compare = vec![GEMMA.into()];
    let mut app = App::new(cfg).expect("app");
    assert!(app.settle(SETTLE));
    let cur = app.current().unwrap();
    assert!(steps(hyst_tui::dialogue::conditions::Registry::bundled()).iter().all(|&p| app.score_of(GEMMA, cur, p).is_some()));
    assert_eq!(app.jobs_submitted(), 0, "gemma's scores came from the store too");
}
