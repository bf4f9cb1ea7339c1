//! Served models against a real llama-server: runs scripts/check-served.sh with this build's
//! binary. The script builds llama-server once (llama.cpp from PyPI's llama-cpp-python source
//! distribution, about 5 minutes on 2 cores, cached under <data dir>/tools), starts it on
//! loopback with SmolLM2 and a random API key, and checks doctor, served vs in-process letter
//! distributions, a 2-item batch, kill -9 of the server mid-batch and the resume (tables
//! byte-identical to an uninterrupted served run), SIGTERM while retrying a server that is gone
//! (stops at once, resumes to the same bytes), injected 429/503 answers, the chat and /v1
//! completions kinds, a wrong key, and that the key is in nothing written.

use std::net::TcpListener;
use std::process::Command;

/// Two consecutive free loopback ports (the server's and the faulty proxy's).
fn free_port_pair() -> u16 {
    for _ in 0..50 {
        let a = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = a.local_addr().unwrap().port();
        if port < 65535 && TcpListener::bind(("127.0.0.1", port + 1)).is_ok() {
            return port;
        }
    }
    panic!("no two consecutive free loopback ports");
}

#[test]
fn served_llama_server_end_to_end() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/check-served.sh");
    let work = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(script)
        .env("HYST_BIN", env!("CARGO_BIN_EXE_hyst-tui"))
        .env("HYST_CHECK_PORT", free_port_pair().to_string())
        .env("HYST_CHECK_DIR", work.path())
        .output()
        .expect("run scripts/check-served.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "served checks failed:\n{stdout}\n{stderr}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    // Every check reported its verdict (a check that silently did not run would be missing).
    for must in [
        "doctor smollm2-served:",
        "doctor smollm2-served-exact:",
        "doctor smollm2-v1:",
        "doctor smollm2-chat",
        "smollm2-served vs in-process:",
        "smollm2-served-exact vs in-process:",
        "smollm2-v1 vs in-process:",
        "chat kind scores every conversation",
        "wrong key: error:",
        "batch: tables:",
        "server killed mid-batch: exit 1",
        "tables byte-identical to the uninterrupted run",
        "retried through 2 injected 429/503 answers",
        "the API key appears in no file",
        "verdict: all served checks passed",
    ] {
        assert!(stdout.contains(must), "no `{must}` line:\n{stdout}");
    }
}
