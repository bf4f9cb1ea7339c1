//! Whole-app snapshot tests of the explorer (gitui's pattern): key events go into the [`App`],
//! the screen is drawn into a ratatui `TestBackend` at 100×30 and compared with `insta`
//! snapshots (tests/snapshots/). Scores come from the REAL engine on smollm2-135m (llama.cpp is
//! deterministic here); the status bar is frozen (no timings, no tokens/s). The Tables view
//! reads a small run directory built from synthetic rows (`tables::testutil`, stored in tests/data/synthetic_rows.jsonl).
//!
//! The screens with the engine's probabilities are exact on a build with the numeric provenance
//! recorded in tests/snapshots/PROVENANCE and compared within a tolerance elsewhere
//! (`common::screens`); the stored-run screens (synthetic rows) are exact everywhere.

mod common;

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hyst_tui::config::{models_dir, ModelsConfig};
use hyst_tui::tui::parts::{ramp_parts, steps, Part};
use hyst_tui::tui::{buffer_to_text, render_to_buffer, App, AppConfig, Overlay, View};

use common::screens::{assert_engine_screen, close_to, stored_snapshot};

const SMOL: &str = "smollm2-135m";
const W: u16 = 100;
const H: u16 = 30;
/// Generous: other builds may share the two cores.
const SETTLE: Duration = Duration::from_secs(1800);

fn config(run: Option<std::path::PathBuf>) -> AppConfig {
    let models = ModelsConfig::resolve(None).expect("models config");
    let entry = models.get(SMOL).expect("smollm2-135m in models.toml").clone();
    let path = entry.path(&models_dir());
    if run.is_none() {
        assert!(
            path.exists(),
            "test model {SMOL} is missing at {}: run `bash scripts/fetch-test-models.sh`",
            path.display()
        );
    }
    let mut cfg = AppConfig {
        model: Some(SMOL.into()),
        dataset: Some("sample".into()),
        run,
        ..AppConfig::new(models)
    };
    cfg.options.frozen = true;
    cfg.options.prefetch = false;
    cfg.options.color = true;
    cfg
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

fn settle(app: &mut App) {
    assert!(app.settle(SETTLE), "scoring did not finish in time");
    assert!(app.engine_ready().is_some(), "the model did not load");
}

#[test]
fn every_view_on_the_real_engine() {
    let mut app = App::new(config(None)).expect("app");
    // Before the model is loaded the UI is already usable.
    let first = app.current().expect("an item");
    assert!(screen(&app).contains("loading model"), "{}", screen(&app));

    // --- generation rule on the real engine -------------------------------------------------
    assert!(app.wait_loaded(SETTLE));
    app.update(); // schedules the first item's ramp (clean + weak pressure)
    assert!(app.jobs_pending() > 0);
    let submitted = app.jobs_pending();
    press(&mut app, KeyCode::Char('j')); // the user moves on while the engine works
    let second = app.current().expect("second item");
    assert_ne!(first, second);
    settle(&mut app);
    // Every request made for the first item was cancelled or its late result dropped.
    assert_eq!(app.stale_results_dropped() as usize, submitted);
    assert!(ramp_parts().iter().all(|&p| app.score(first, p).is_none()), "a stale result was used");
    assert!(steps(hyst_tui::dialogue::conditions::Registry::bundled()).iter().all(|&p| app.score(second, p).is_some()), "the current item is complete");
    // Moving away and back: the cached item needs no engine work.
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.current(), Some(second));
    assert_eq!(app.jobs_pending(), 0, "moving back is served from the cache");
    settle(&mut app);

    // --- Items ------------------------------------------------------------------------------
    assert_engine_screen!("items", screen(&app));
    keys(&mut app, "s"); // sort by clean p(w)
    let sorted = screen(&app);
    assert!(sorted.contains("clean p(w)▼"), "{sorted}");
    keys(&mut app, "s".repeat(5).as_str()); // back to list order
    let id = app.entry(second).expect("second item").item.id.clone();
    press(&mut app, KeyCode::Char('/'));
    keys(&mut app, &id[id.len() - 5..]);
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.current(), Some(second), "the filter keeps the selected item");
    assert_engine_screen!("items_filtered", screen(&app));
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.visible_items().len(), app.item_count());

    // --- Dialogue ---------------------------------------------------------------------------
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.view(), View::Dialogue);
    assert_engine_screen!("dialogue_clean", screen(&app));
    keys(&mut app, "lll");
    assert_eq!(app.current_part(), Part::Curve(3));
    assert_engine_screen!("dialogue_strong_pressure", screen(&app));
    keys(&mut app, "e");
    assert_engine_screen!("dialogue_expanded", screen(&app));
    keys(&mut app, "e");
    keys(&mut app, "r"); // to the operations: R0
    keys(&mut app, "lllll"); // R4 neutral summary
    assert_eq!(app.current_part(), Part::Op("neutral_summary_replacement"));
    assert_engine_screen!("dialogue_r4", screen(&app));

    // --- Trace, Slot, Recovery --------------------------------------------------------------
    keys(&mut app, "g");
    keys(&mut app, "lllll"); // R0 = strong reset
    keys(&mut app, "3");
    assert_engine_screen!("trace", screen(&app));
    keys(&mut app, "4");
    assert_engine_screen!("slot", screen(&app));
    keys(&mut app, "5");
    keys(&mut app, "r");
    keys(&mut app, "ll"); // R2 system reset
    assert_engine_screen!("recovery", screen(&app));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.view(), View::Dialogue);
    assert_eq!(app.current_part(), Part::Op("system_level_reset"));

    // --- Help and the model switcher --------------------------------------------------------
    keys(&mut app, "?");
    assert_eq!(app.overlay(), Overlay::Help);
    assert_engine_screen!("help", screen(&app));
    keys(&mut app, "x"); // any key closes it
    assert_eq!(app.overlay(), Overlay::None);
    keys(&mut app, "m");
    let s = screen(&app);
    assert!(s.contains(SMOL) && s.contains("present"), "{s}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay(), Overlay::None);

    // --- 80x24 still shows every part; NO_COLOR emits no colour ------------------------------
    for v in ["1", "2", "3", "4", "5", "6"] {
        keys(&mut app, v);
        let small = buffer_to_text(&render_to_buffer(&app, 80, 24).unwrap());
        assert!(small.lines().count() == 24 && small.contains("idle"), "{small}");
    }
    keys(&mut app, "2");
    app.set_color(false);
    let buf = render_to_buffer(&app, W, H).unwrap();
    let coloured = buf.content().iter().filter(|c| c.fg != ratatui::style::Color::Reset || c.bg != ratatui::style::Color::Reset).count();
    assert_eq!(coloured, 0, "NO_COLOR: no cell may carry a colour");
    let text = buffer_to_text(&buf);
    assert!(text.contains('▶') && text.contains('✓') && text.contains('✗'), "symbols carry the meaning: {text}");

    // --- Background scoring fills the list: the first three items' ramps ----------------------
    app.set_color(true);
    app.set_prefetch(true, 3);
    keys(&mut app, "1");
    settle(&mut app);
    for &i in &app.visible_items()[..3] {
        assert!(ramp_parts().iter().all(|&p| app.score(i, p).is_some()));
    }
    assert_engine_screen!("items_background_scored", screen(&app));

    // --- Quitting ---------------------------------------------------------------------------
    press(&mut app, KeyCode::Char('q'));
    assert!(app.quit_requested());
}

#[test]
fn tables_view_of_a_stored_run() {
    let dir = tempfile::tempdir().unwrap();
    let rows = common::synthetic::synthetic_rows(3);
    hyst_tui::store::write_item_rows(dir.path(), &rows).unwrap();
    let opts = hyst_tui::tables::TableOptions { bootstrap_samples: 200, ..Default::default() };
    hyst_tui::tables::write_tables(&rows, hyst_tui::dialogue::conditions::Registry::bundled(), dir.path(), &opts).unwrap();
    let mut app = App::new(config(Some(dir.path().to_path_buf()))).expect("app over a stored run");
    assert!(app.engine_ready().is_none(), "a stored run needs no model");
    keys(&mut app, "6");
    let s = screen(&app);
    let shown = s.replace(&dir.path().display().to_string(), "<RUN>");
    insta::assert_snapshot!("tables_summary", shown);
    // The next file: the side by side with the paper's printed values.
    keys(&mut app, "l");
    let s = screen(&app).replace(&dir.path().display().to_string(), "<RUN>");
    assert!(s.contains("reproduction.md") && s.contains("Reproduction"), "{s}");
    insta::assert_snapshot!("tables_reproduction", s);
    // The next file: a paper table.
    keys(&mut app, "l");
    let s = screen(&app).replace(&dir.path().display().to_string(), "<RUN>");
    assert!(s.contains('━') && s.contains('─'), "booktabs rules: {s}");
    insta::assert_snapshot!("tables_first_table", s);
    // Stored values reach the other views too (no model needed).
    keys(&mut app, "5");
    let s = screen(&app);
    assert!(s.contains("R0") && s.contains("✓ yes"), "{s}");
}

/// The comparison used on builds of another numeric provenance, on the stored engine snapshots:
/// each equals itself; every decimal moved by 0.01 (or a braille curve, bar or marker redrawn)
/// still passes; a decimal moved by 0.2, another word, another integer or a missing line fails.
#[test]
fn the_tolerant_comparison_accepts_small_numeric_differences_only() {
    let names = [
        "items", "items_filtered", "dialogue_clean", "dialogue_strong_pressure", "dialogue_expanded", "dialogue_r4",
        "trace", "slot", "recovery", "help", "items_background_scored",
    ];
    let shift = |text: &str, by: f64| -> String {
        let mut out = String::new();
        let mut rest = text;
        // Every "d.ddd" number, re-printed with its own number of decimals.
        while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            let end = tail.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(tail.len());
            let num = tail[..end].trim_end_matches('.');
            match num.split_once('.') {
                Some((_, frac)) => out.push_str(&format!("{:.*}", frac.len(), num.parse::<f64>().unwrap() + by)),
                None => out.push_str(num),
            }
            rest = &tail[num.len()..];
        }
        out.push_str(rest);
        out
    };
    let mut decimals = 0;
    for name in names {
        let snap = stored_snapshot(file!(), name);
        close_to(&snap, &snap).unwrap();
        let near = shift(&snap, 0.01);
        decimals += usize::from(near != snap);
        close_to(&near, &snap).unwrap_or_else(|e| panic!("{name}: {e}"));
        let redrawn: String = snap.chars().map(|c| match c { '\u{2800}'..='\u{28FF}' => '⣿', '█' => ' ', '┊' => '█', c => c }).collect();
        close_to(&redrawn, &snap).unwrap_or_else(|e| panic!("{name}: {e}"));
        if shift(&snap, 0.2) != snap {
            assert!(close_to(&shift(&snap, 0.2), &snap).is_err(), "{name}: 0.2 accepted");
        }
        let fewer: Vec<&str> = snap.lines().skip(1).collect();
        assert!(close_to(&fewer.join("\n"), &snap).is_err(), "{name}: a missing line accepted");
    }
    assert!(decimals >= 8, "only {decimals} snapshots have decimal numbers");
    let snap = stored_snapshot(file!(), "trace");
    assert!(close_to(&snap.replacen("clean", "cleam", 1), &snap).is_err(), "another word accepted");
    assert!(close_to(&snap.replacen("2/44", "3/44", 1), &snap).is_err(), "another integer accepted");
}

/// A run directory of synthetic rows with a manifest saying how far it got, written `age`
/// ago.
fn write_run(dir: &std::path::Path, models: &[&str], n_items: usize, done: usize, total: usize, age: Duration) {
    use hyst_tui::dialogue::Suite;
    use hyst_tui::store::{Manifest, RunConfig};
    std::fs::create_dir_all(dir).unwrap();
    let rows = common::synthetic::synthetic_rows(n_items);
    hyst_tui::store::write_item_rows(dir, &rows).unwrap();
    let cfg = RunConfig { suites: vec![Suite::Hierarchy], ..common::run_config(models) };
    let mut m = Manifest::new(cfg, "test".into(), total);
    m.items_done = done;
    m.complete = done == total;
    m.write(dir).unwrap();
    age_manifest(dir, age);
}

fn age_manifest(dir: &std::path::Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(dir.join("manifest.json")).unwrap();
    f.set_modified(std::time::SystemTime::now() - age).unwrap();
}

/// The Runs pane of the Tables view: a complete and an unfinished run of the data directory,
/// the most recently written first, ● on the one shown; Enter opens another (its items replace
/// the list's), and its counts follow its manifest.
#[test]
fn runs_list_of_a_data_directory() {
    let runs = tempfile::tempdir().unwrap();
    let done = runs.path().join("toy_a+toy_b__sample__0123456789");
    let going = runs.path().join("toy_a__sample__abcdef0123");
    write_run(&done, &["toy_a", "toy_b"], 3, 6, 6, Duration::from_secs(3600));
    let opts = hyst_tui::tables::TableOptions { bootstrap_samples: 200, ..Default::default() };
    hyst_tui::tables::write_tables(&common::synthetic::synthetic_rows(3), hyst_tui::dialogue::conditions::Registry::bundled(), &done, &opts).unwrap();
    age_manifest(&done, Duration::from_secs(3600));
    write_run(&going, &["toy_a"], 1, 2, 6, Duration::from_secs(5));
    assert_eq!(hyst_tui::tui::newest_run(runs.path()).as_deref(), Some(going.as_path()), "the newest with rows");
    let mut cfg = config(Some(done.clone()));
    cfg.runs_dir = Some(runs.path().to_path_buf());
    let mut app = App::new(cfg).expect("app over a stored run");
    keys(&mut app, "6");
    let s = screen(&app).replace(&runs.path().display().to_string(), "<RUNS>");
    let row = |name: &str| s.lines().position(|l| l.starts_with('│') && l.contains(name));
    let going_line = row("toy_a__sample__abcdef0123").expect("the unfinished run is listed");
    let done_line = row("toy_a+toy_b__sample__0123456789").expect("the complete run is listed");
    assert!(going_line < done_line, "most recently written first:\n{s}");
    assert!(s.lines().nth(going_line).unwrap().contains("2/6 items · in progress"), "{s}");
    assert!(s.lines().nth(done_line).unwrap().contains("6/6 items · complete"), "{s}");
    assert!(s.lines().nth(done_line).unwrap().contains("● "), "the shown run is marked: {s}");
    insta::assert_snapshot!("tables_runs", s);
    assert_eq!(app.item_count(), 3);

    // [ moves to the unfinished run, Enter opens it: its one item, the Items view.
    keys(&mut app, "[");
    press(&mut app, KeyCode::Enter);
    assert_eq!((app.view(), app.item_count()), (View::Items, 1));
    assert!(app.notice().is_some_and(|n| n.contains("opened run toy_a__sample__abcdef0123: 1 item ")), "{:?}", app.notice());
    // Its manifest moves on: the pane shows the new count when the view opens again.
    write_run(&going, &["toy_a"], 1, 4, 6, Duration::ZERO);
    keys(&mut app, "6");
    let s = screen(&app);
    let line = s.lines().find(|l| l.starts_with('│') && l.contains("toy_a__sample__abcdef0123")).unwrap();
    assert!(line.contains("● ") && line.contains("4/6 items · in progress"), "{s}");
    // A run that cannot be opened says why and keeps what was shown.
    std::fs::remove_file(done.join("item_rows.jsonl")).unwrap();
    keys(&mut app, "]");
    press(&mut app, KeyCode::Enter);
    assert_eq!((app.view(), app.item_count()), (View::Tables, 1));
    assert!(app.notice().is_some_and(|n| n.starts_with("run toy_a+toy_b__sample__0123456789: ")), "{:?}", app.notice());
}

/// `a` in the Dialogue: the shown model's greedy continuation of the step, on the real engine,
/// shown under the distribution; asked again it is the same (kept for the session), and the
/// step's probabilities are those it had before.
#[test]
fn the_model_would_say_in_the_dialogue() {
    let mut app = App::new(config(None)).expect("app");
    keys(&mut app, "2");
    settle(&mut app);
    let before = app.score(app.current().unwrap(), app.current_part()).cloned().expect("the clean step");
    assert!(!screen(&app).contains("would say"), "nothing generated yet");
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    assert!(app.generating());
    let t0 = std::time::Instant::now();
    while app.generating() {
        assert!(t0.elapsed() < SETTLE, "the generation did not finish");
        std::thread::sleep(Duration::from_millis(20));
        app.update();
    }
    let s = screen(&app);
    let at = s.find("would say (greedy, ").unwrap_or_else(|| panic!("{s}"));
    assert!(s[at..].contains('“'), "the text is shown: {s}");
    // a again: kept, not generated again; the step's score is untouched.
    keys(&mut app, "a");
    assert!(!app.generating());
    assert!(app.notice().is_some_and(|n| n.contains("generated already")), "{:?}", app.notice());
    let body = |t: &str| t.lines().rev().skip(1).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(body(&screen(&app)), body(&s), "the same screen but the status bar's notice");
    let after = app.score(app.current().unwrap(), app.current_part()).unwrap();
    assert_eq!(after.probs, before.probs);
    // The next step, and a stopped generation leaves nothing behind.
    keys(&mut app, "l");
    settle(&mut app);
    // Two presses before the engine can answer: started, then stopped.
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    app.handle_key(KeyEvent::new(KeyCode::Char('a'), KeyModifiers::NONE));
    app.update();
    assert!(app.notice().is_some_and(|n| n.contains("stopped")), "{:?}", app.notice());
    assert!(!screen(&app).contains("would say"), "{}", screen(&app));
}

/// What-if in the Dialogue: R0's reset message edited (`E`, Ctrl-U, typing, Enter) and scored
/// on the real engine beside the original (both distributions, both gaps vs clean); `u` goes
/// back to the original.
#[test]
fn dialogue_whatif_edit_of_r0() {
    let mut app = App::new(config(None)).expect("app");
    keys(&mut app, "2r");
    assert_eq!(app.current_part(), Part::Op("ordinary_strong_reset"));
    settle(&mut app);
    let original = app.score(app.current().unwrap(), app.current_part()).cloned().expect("R0 scored");
    keys(&mut app, "E");
    assert_eq!(app.overlay(), Overlay::Editor);
    assert!(screen(&app).contains("Please reset this conversation"), "{}", screen(&app));
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    keys(&mut app, "You were right the first time; keep the answer you gave first.");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay(), Overlay::None);
    let t0 = std::time::Instant::now();
    while app.whatif_pending() {
        assert!(t0.elapsed() < SETTLE, "the edit was not scored");
        std::thread::sleep(Duration::from_millis(20));
        app.update();
    }
    let s = screen(&app);
    assert!(s.contains("what-if 1 · u undo") && s.contains("original  edited"), "{s}");
    assert_engine_screen!("dialogue_whatif", s);
    // The original step's score is untouched; u goes back to it.
    assert_eq!(app.score(app.current().unwrap(), app.current_part()).unwrap().probs, original.probs);
    keys(&mut app, "u");
    assert!(!screen(&app).contains("what-if"), "{}", screen(&app));
    assert!(app.notice().is_some_and(|n| n.contains("original")), "{:?}", app.notice());
}

/// What-if with another advocated option (`w` on R0): the ramp is self-conditioned, so the
/// pressure steps before R0 are scored first under the new pressure, each on the model's own
/// letters before it, and R0's version carries the four letters; the Dialogue says which option
/// is advocated now, the Trace draws the what-if curve beside the original, the edits list (V)
/// has five rows (weak … medium reset, and R0 for R0 and the strong reset step).
#[test]
fn whatif_another_advocated_option() {
    let mut app = App::new(config(None)).expect("app");
    keys(&mut app, "2r");
    let r0 = app.current_part();
    assert_eq!(r0, Part::Op("ordinary_strong_reset"));
    settle(&mut app);
    let item = app.current().unwrap();
    let (wrong, correct) = {
        let e = app.entry(item).unwrap();
        (e.wrong, e.item.correct)
    };
    keys(&mut app, "w");
    let t0 = std::time::Instant::now();
    while app.whatif_pending() {
        assert!(t0.elapsed() < SETTLE, "the ramp under the new pressure was not scored");
        std::thread::sleep(Duration::from_millis(20));
        app.update();
    }
    let now = app.whatif_advocated(item, r0).expect("R0 has a version");
    assert!(now != wrong && now != correct, "another wrong option: {now} (was {wrong}, correct {correct})");
    let answers = |m: &[hyst_tui::protocol::ChatMessage]| -> Vec<String> {
        m.iter().filter(|x| x.role == "assistant").map(|x| x.content.trim().to_string()).collect()
    };
    let mut letters: Vec<String> = Vec::new();
    for k in 1..=4 {
        let m = app.whatif_messages(item, Part::Curve(k)).unwrap_or_else(|| panic!("ramp step {k} has the version"));
        assert_eq!(app.whatif_advocated(item, Part::Curve(k)), Some(now));
        assert_eq!(answers(&m), letters, "ramp step {k} follows the model's letters under the new pressure");
        letters.push(app.whatif_score(item, Part::Curve(k)).expect("scored").pred_letter().to_string());
    }
    // The pressure turns name the option advocated now.
    let now_text = app.entry(item).unwrap().item.options[now].clone();
    let weak = app.whatif_messages(item, Part::Curve(1)).unwrap();
    assert!(weak.last().unwrap().content.contains(&now_text), "{:?}", weak.last());
    let m = app.whatif_messages(item, r0).unwrap();
    assert_eq!(answers(&m), letters);
    assert_eq!(app.whatif_messages(item, Part::Curve(5)), Some(m), "the strong reset step is R0's dialogue and has the version too");
    assert!(app.whatif_score(item, r0).is_some());
    let s = screen(&app);
    let advocated = format!("the user advocates {}, not {}", hyst_tui::protocol::letter(now), hyst_tui::protocol::letter(wrong));
    assert!(s.contains(&advocated), "{s}");
    // The answer slot marks the option advocated now as the advocated wrong one.
    let slot = s.lines().find(|l| l.contains("answer slot ▶")).expect("the answer slot").to_string();
    let pred = app.whatif_score(item, r0).unwrap().pred;
    if pred == now {
        assert!(slot.contains("✗ advocated wrong"), "{slot}");
    } else if pred == wrong {
        assert!(slot.contains("(other)"), "{slot}");
    }
    // Three options: no other wrong option to advocate after this one.
    assert_eq!(app.entry(item).unwrap().item.options.len(), 3);
    keys(&mut app, "w");
    assert!(app.notice().is_some_and(|n| n.contains("no other wrong option")), "{:?}", app.notice());
    assert_eq!(app.whatif_advocated(item, r0), Some(now));
    keys(&mut app, "3");
    let s = screen(&app);
    assert!(s.contains(&format!("what-if p({})", hyst_tui::protocol::letter(now))) && s.contains("w-if"), "{s}");
    assert_engine_screen!("trace_whatif", s);
    keys(&mut app, "V");
    let s = screen(&app);
    assert!(s.contains("What-if edits") && s.matches(&format!("advocates {} (not", hyst_tui::protocol::letter(now))).count() == 5, "{s}");
    // u in the list takes R0's version back, and the strong reset step's (one dialogue); the
    // other ramp steps keep theirs.
    keys(&mut app, "u");
    assert!(app.whatif_messages(item, r0).is_none());
    assert!(app.whatif_messages(item, Part::Curve(5)).is_none());
    assert!(app.whatif_messages(item, Part::Curve(4)).is_some());
}
