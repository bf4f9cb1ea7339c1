//! The command line as a user meets it: score (cached vs --no-cache), bad input → one clear
//! error line and a non-zero exit, and the protocol commands.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn run(args: &[&str]) -> std::process::Output {
    Command::new(BIN).env("HYST_SCORE_STORE", "off").args(["--threads", "2"]).args(args).output().unwrap()
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Fails with exit code 1 and exactly one stderr line starting with "error:" containing `needle`.
fn fails(args: &[&str], needle: &str) {
    fails_with(1, args, needle)
}

/// A usage error: exit code 2, one line.
fn usage(args: &[&str], needle: &str) {
    fails_with(2, args, needle)
}

fn fails_with(code: i32, args: &[&str], needle: &str) {
    let o = run(args);
    assert_eq!(o.status.code(), Some(code), "{args:?} should fail: {}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: expected one error line, got {err}");
    assert!(lines[0].starts_with("error: ") && lines[0].contains(needle), "{args:?}: {err}");
}

#[test]
fn score_jsonl_cached_and_no_cache_lines_are_identical_except_counters() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.jsonl");
    let q = "Question:\nWhich is a primary colour?\n\nOptions:\nA. Green\nB. Red\nC. Purple\n\nAnswer with the letter only.";
    let mut lines = vec![];
    for i in 0..5 {
        let mut msgs = vec![
            serde_json::json!({"role": "system", "content": "Answer with one letter."}),
            serde_json::json!({"role": "user", "content": q}),
        ];
        for k in 0..i {
            let letter = ["A", "B", "C"][k % 3];
            msgs.push(serde_json::json!({"role": "assistant", "content": letter}));
            msgs.push(serde_json::json!({"role": "user", "content": format!("Are you sure? ({k})\n\n{q}")}));
        }
        lines.push(serde_json::json!({"messages": msgs, "letters": "A,B,C"}).to_string());
    }
    std::fs::write(&p, lines.join("\n")).unwrap();
    let path = p.to_str().unwrap();
    let cached = ok(&["score", "--messages", path, "--json"]);
    let scratch = ok(&["--no-cache", "score", "--messages", path, "--json"]);
    let strip = |s: &str| -> Vec<serde_json::Value> {
        s.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                for k in ["tokens_evaluated", "tokens_reused"] {
                    v.as_object_mut().unwrap().remove(k);
                }
                v
            })
            .collect()
    };
    assert_eq!(strip(&cached).len(), 5);
    assert_eq!(strip(&cached), strip(&scratch));
    // byte-identical once the two counters are blanked in the raw text
    let blank = |s: &str| {
        s.lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["tokens_evaluated"] = 0.into();
                v["tokens_reused"] = 0.into();
                v.to_string()
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(blank(&cached), blank(&scratch));
    let first: serde_json::Value = serde_json::from_str(cached.lines().nth(3).unwrap()).unwrap();
    assert!(first["tokens_reused"].as_u64().unwrap() > 0, "later conversations reuse the prefix");
    for k in ["probs", "pred", "entropy", "letter_mass", "top_tokens", "rendered_prompt"] {
        assert!(first.get(k).is_some(), "missing {k}");
    }
    assert_eq!(first["probs"].as_object().unwrap().len(), 3);
}

#[test]
fn bad_inputs_give_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}").unwrap();
    fails(&["score", "--messages", bad.to_str().unwrap()], "not a conversation");
    fails(&["score", "--messages", "/no/such/file.json"], "cannot read");
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"[{"role":"user","content":"Hi"}]"#).unwrap();
    fails(&["score", "--model", "nope", "--messages", good.to_str().unwrap()], "unknown model `nope`");
    let cfg = dir.path().join("models.toml");
    std::fs::write(&cfg, "[models.x]\nname = 1\n").unwrap();
    fails(&["--models-config", cfg.to_str().unwrap(), "models", "list"], "models.toml");
    let gguf = dir.path().join("x.gguf");
    std::fs::write(&gguf, b"GGUF but truncated").unwrap();
    std::fs::write(
        &cfg,
        format!("[models.x]\nname = \"X\"\nfamily = \"f\"\nfile = \"x.gguf\"\nsystem = \"native\"\nsource = {{ kind = \"local\", path = \"{}\" }}\n", gguf.display()),
    )
    .unwrap();
    fails(&["--models-config", cfg.to_str().unwrap(), "score", "--model", "x", "--messages", good.to_str().unwrap()], "truncated or corrupt");
    let ds = dir.path().join("d.jsonl");
    std::fs::write(&ds, "{\"question\":\"Q\",\"options\":[\"a\"],\"answer\":0}\n").unwrap();
    fails(&["items", "--dataset", &format!("jsonl:{}", ds.display())], "row 1: field `options`");
    fails(&["prompts", "--condition", "no_such_condition"], "unknown condition");
    usage(&["--batch", "--suites", "bogus"], "invalid value 'bogus' for '--suites");
    usage(&["--batch", "--suites", "bogus"], "possible values: ramp, hierarchy");
    usage(&["--batch", "--shard", "3/2"], "need 1 <= K <= N");
    usage(&["snapshot", "--view", "nope", "--out", "x.txt"], "possible values: items, dialogue");
    usage(&["snapshot", "--size", "12x4", "--out", "x.txt"], "expected WIDTHxHEIGHT");
    usage(&["items", "--subset", "s.csv"], "--advocated");
    usage(&["--batch", "--subset", "s.csv"], "--advocated");
}

#[test]
fn protocol_commands() {
    let items = ok(&["items", "--dataset", "sample", "--n", "5"]);
    assert_eq!(items.lines().count(), 6);
    assert!(items.starts_with("subset_index,dataset,item_id"));
    let conds = ok(&["conditions"]);
    for c in hyst_tui::dialogue::conditions::all() {
        assert!(conds.contains(&c.key), "{}", c.key);
        let out = ok(&["prompts", "--condition", &c.key, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(!v["messages"].as_array().unwrap().is_empty());
    }
}

#[test]
fn csv_dataset_through_the_csv_reader() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.csv");
    let spec = format!("csv:{}", p.display());
    // BOM, CRLF, quoted comma/quote/line break: read, and written back quoted where needed.
    std::fs::write(&p, "\u{feff}question,option_a,option_b,answer,id\r\n\"Q, \"\"one\"\"?\",\"x, y\",\"b\nc\",B,\"id,1\"\r\n").unwrap();
    assert_eq!(
        ok(&["items", "--dataset", &spec]),
        "subset_index,dataset,item_id,category,n_options,correct_label,correct_text,advocated_wrong_label,advocated_wrong_text\n\
0,d,\"id,1\",general,2,B,b c,A,\"x, y\"\n"
    );
    // Malformed files: one error line naming the file and the line, never a panic.
    std::fs::write(&p, "question,option_a,option_b,answer\nQ,a,b,A\nQ2,\"a,b\n").unwrap();
    fails(&["items", "--dataset", &spec], &format!("{}: line 3: unterminated quoted field", p.display()));
    std::fs::write(&p, b"question,option_a,option_b,answer\nQ,a,b,A\nQ2,a,\xff,B\n").unwrap();
    fails(&["items", "--dataset", &spec], &format!("{}: line 3: not valid UTF-8", p.display()));
    std::fs::write(&p, "question,option_a,option_b,answer\nQ,a,b,A\nQ2,a,b\n").unwrap();
    fails(&["items", "--dataset", &spec], &format!("{}: line 3: 3 fields, but the header has 4", p.display()));
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = ok(&["completions", shell]);
        assert!(script.len() > 1000, "{shell}: {script}");
        for word in ["hyst-tui", "fetch", "merge", "models-config"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    usage(&["completions", "tcsh"], "possible values: bash");
}

/// The bash script completes past the first word (a hyphenated binary name trips clap_complete).
#[test]
fn bash_completion_completes_subcommand_options() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hyst-tui.bash");
    std::fs::write(&script, ok(&["completions", "bash"])).unwrap();
    let complete = |words: &str| -> String {
        let n = words.split(' ').count() - 1;
        let last = words.rsplit(' ').next().unwrap();
        let prev = words.split(' ').nth(n.saturating_sub(1)).unwrap();
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source '{}'; COMP_WORDS=({words}); COMP_CWORD={n}; _hyst__tui hyst-tui '{last}' '{prev}'; echo \"${{COMPREPLY[*]}}\"",
                script.display()
            ))
            .output()
            .expect("bash");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(complete("hyst-tui mo").contains("models"));
    assert!(complete("hyst-tui models fe").contains("fetch"));
    assert!(complete("hyst-tui models fetch --re").contains("--retries"));
    assert!(complete("hyst-tui completions p").contains("powershell"));
}

/// Every command that opens a model names the command that fetches it, with the real key; a
/// dangling link says so.
#[test]
fn a_missing_model_names_its_fetch_command() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("models.toml");
    let msgs = dir.path().join("m.json");
    std::fs::write(&msgs, r#"[{"role":"user","content":"Hi"}]"#).unwrap();
    let write_cfg = |path: &std::path::Path| {
        std::fs::write(
            &cfg,
            format!(
                "[models.\"my-model\"]\nname = \"X\"\nfamily = \"f\"\nfile = \"x.gguf\"\nsystem = \"native\"\nsource = {{ kind = \"local\", path = \"{}\" }}\n",
                path.display()
            ),
        )
        .unwrap();
    };
    let gone = dir.path().join("gone.gguf");
    write_cfg(&gone);
    let c = cfg.to_str().unwrap();
    let m = msgs.to_str().unwrap();
    let want = format!("model file not found: {} (fetch it with: hyst-tui models fetch my-model)", gone.display());
    fails(&["--models-config", c, "score", "--model", "my-model", "--messages", m], &want);
    fails(&["--models-config", c, "prompts", "--model", "my-model"], &want);
    fails(&["--models-config", c, "bench", "engine", "--model", "my-model"], &want);
    fails(&["--models-config", c, "bench", "batch", "--model", "my-model"], &want);
    // A dangling link is missing too, and says where it points.
    #[cfg(unix)]
    {
        let link = dir.path().join("link.gguf");
        std::os::unix::fs::symlink(dir.path().join("nowhere.gguf"), &link).unwrap();
        write_cfg(&link);
        let want = format!(
            "model file not found: {} (a dangling link to {}; fetch it with: hyst-tui models fetch my-model)",
            link.display(),
            dir.path().join("nowhere.gguf").display()
        );
        fails(&["--models-config", c, "score", "--model", "my-model", "--messages", m], &want);
    }
}

/// Walks the command tree through `-h` (every command, recursively) and checks that every
/// command, argument and option has a description.
#[test]
fn every_command_argument_and_option_has_help() {
    fn walk(path: &[String], seen: &mut Vec<String>, problems: &mut Vec<String>) {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let text = ok(&args);
        seen.push(path.join(" "));
        let mut section = String::new();
        for line in text.lines() {
            if !line.starts_with(' ') && line.ends_with(':') {
                section = line.to_string();
                continue;
            }
            if !line.starts_with("  ") || !matches!(section.as_str(), "Commands:" | "Arguments:" | "Options:") {
                continue;
            }
            let t = line.trim_start();
            let (spec, desc) = match t.find("  ") {
                Some(i) => (&t[..i], t[i..].trim()),
                None => (t, ""),
            };
            if desc.is_empty() {
                problems.push(format!("`hyst-tui {}` {section} `{spec}` has no description", path.join(" ")));
            }
            if section == "Commands:" && spec != "help" {
                let mut sub = path.to_vec();
                sub.push(spec.to_string());
                walk(&sub, seen, problems);
            }
        }
    }
    let mut seen = Vec::new();
    let mut problems = Vec::new();
    walk(&[], &mut seen, &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for cmd in ["models fetch", "bench engine", "merge", "completions", "score", "batch"] {
        assert!(seen.iter().any(|s| s == cmd), "the walk missed `{cmd}`: {seen:?}");
    }
}
