//! Runs tests/tui_tmux.sh: the explorer in a real terminal (tmux) at 80x24 and 120x40 — keys
//! through the views, a resize, quitting while the engine scores, and the terminal restored.

use std::process::Command;

#[test]
fn explorer_in_a_real_terminal() {
    let tmux = Command::new("tmux").arg("-V").output();
    assert!(
        tmux.as_ref().is_ok_and(|o| o.status.success()),
        "tmux is needed for this test (apt-get install tmux)"
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tui_tmux.sh");
    let out = Command::new("bash")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_hyst-tui"))
        .output()
        .expect("run tests/tui_tmux.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "tmux checks failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all tmux checks passed"), "{stdout}");
}
