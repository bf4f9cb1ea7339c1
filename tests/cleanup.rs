//! Runs tests/cleanup.sh: the traps of scripts/lib/cleanup.sh, which check-served.sh and
//! check-vllm.sh source, leave no server, process or recorded Slurm job behind when a script is
//! stopped by SIGTERM in the middle of a long step, exits, or fails (no Slurm needed: `scancel`
//! is a fake that records what it is asked).

use std::process::Command;

#[test]
fn a_stopped_check_script_leaves_nothing_running() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cleanup.sh");
    let out = Command::new("bash").arg(script).output().expect("run tests/cleanup.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "cleanup checks failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("all cleanup checks passed"), "{stdout}");
}
