//! The command line as a user meets it: score (cached vs --no-cache), bad input → one clear
//! error line and a non-zero exit, and the protocol commands.

mod common;

use std::collections::BTreeMap;
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
    for c in hyst_tui::dialogue::conditions::Registry::bundled().all() {
        assert!(conds.contains(&c.key), "{}", c.key);
        let out = ok(&["prompts", "--condition", &c.key, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(!v["messages"].as_array().unwrap().is_empty());
    }
}

/// `hyst-tui conditions | head -1`: the listing stops quietly when its reader goes away (as
/// other Unix tools do, by SIGPIPE), with no panic message.
#[cfg(unix)]
#[test]
fn a_listing_into_a_closed_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    for args in [&["conditions"][..], &["items", "--dataset", "sample", "--n", "200"]] {
        let mut child = Command::new(BIN)
            .env("HYST_SCORE_STORE", "off")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "{args:?} printed nothing");
        // The reader is gone: the rest of the listing meets a closed pipe.
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(o.status.success() || o.status.signal() == Some(libc::SIGPIPE), "{args:?}: {:?} {err}", o.status);
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

/// The synthetic rows of `tables::testutil` (tests/data/synthetic_rows.jsonl) (toy_a: TruthfulQA-MC, 4 options, A correct, B
/// advocated; toy_b: MMLU-Pro), each listed copy `(synthetic model, model key, paper key)`
/// keeping its dataset.
fn synthetic_pairs(copies: &[(&str, &str, &str)]) -> Vec<hyst_tui::store::ItemRow> {
    let rows = common::synthetic::synthetic_rows(3);
    let mut out = Vec::new();
    for (from, key, paper_key) in copies {
        for r in rows.iter().filter(|r| r.model_key == *from) {
            let mut r = r.clone();
            r.model_key = key.to_string();
            r.model_short_name = key.to_string();
            r.paper_key = paper_key.to_string();
            out.push(r);
        }
    }
    out
}

/// Status counts of a reproduction.csv, and the line of one printed cell.
fn reproduction(dir: &std::path::Path) -> (BTreeMap<String, usize>, impl Fn(&str) -> String) {
    let text = std::fs::read_to_string(dir.join("reproduction.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let status = rd.headers().unwrap().iter().position(|h| h == "status").unwrap();
    let mut counts = BTreeMap::new();
    for r in rd.records() {
        *counts.entry(r.unwrap()[status].to_string()).or_insert(0) += 1;
    }
    let line = move |prefix: &str| {
        text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line {prefix}")).to_string()
    };
    (counts, line)
}

#[test]
fn compare_paper_rewrites_the_side_by_side_from_stored_rows() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    std::fs::create_dir(&run_dir).unwrap();
    // toy_a as Qwen2.5-1.5B (TruthfulQA-MC), toy_b without a paper key; toy_a's clean p(w) is
    // the paper's Clean (0.166) on every item: options 0.6 / 0.166 / 0.117 / 0.117 (A correct)
    let mut rows = synthetic_pairs(&[("toy_a", "toy_a", "qwen25_15b"), ("toy_b", "toy_b", "")]);
    let probs = [0.6, 0.166, 0.117, 0.117];
    for r in rows.iter_mut().filter(|r| r.model_key == "toy_a" && r.condition.starts_with("clean_context")) {
        r.p_wrong = 0.166;
        r.p_correct = 0.6;
        r.option_probs_json = hyst_tui::store::rows::letter_map_json("ABCD", &probs);
        r.option_log_scores_json = hyst_tui::store::rows::letter_map_json("ABCD", &probs.map(f64::ln));
        r.entropy = -probs.iter().map(|p| p * p.ln()).sum::<f64>();
        r.max_prob = 0.6;
        r.margin_top2 = 0.6f64.ln() - 0.166f64.ln();
        assert!(r.correct && r.pred_letter == "A");
    }
    hyst_tui::store::write_item_rows(&run_dir, &rows).unwrap();
    let d = run_dir.to_str().unwrap();
    let out = ok(&["compare", "--paper", d]);
    assert_eq!(out.lines().count(), 1, "one paragraph: {out}");
    assert!(!run_dir.join("tables").exists(), "compare --paper writes no table files");
    let (counts, line) = reproduction(&run_dir);
    assert_eq!(counts.values().sum::<usize>(), 295);
    let n = |s: &str| counts.get(s).copied().unwrap_or(0);
    for (what, k) in [
        ("printed cells", 295),
        ("compared over the paper's pairs", n("compared")),
        ("produced over other pairs", n("other pairs")),
        ("not run", n("not run")),
        ("not computed", n("not computed")),
    ] {
        assert!(out.contains(&format!("{k} {what}")), "{k} {what}: {out}");
    }
    assert!(n("compared") > 0 && n("not run") > 0 && n("not computed") == 6, "{counts:?}");
    // equal to the paper: zero difference, the CI (one value on every resample) covers it
    assert!(line("Table 2,Qwen2.5-1.5B / TruthfulQA-MC,Clean,").starts_with(
        "Table 2,Qwen2.5-1.5B / TruthfulQA-MC,Clean,0.166,0.166000,0.166000,0.166,0.000000,0.166000,0.166000,True,True,compared,"
    ));
    // a value off the paper: Press. = mean(0.6, 0.7, 0.8) vs 0.897
    let l = line("Table 2,Qwen2.5-1.5B / TruthfulQA-MC,Press.,");
    assert!(l.starts_with("Table 2,Qwen2.5-1.5B / TruthfulQA-MC,Press.,0.897,0.897000,0.700000,0.700,-0.197000,"), "{l}");
    assert!(l.contains(",False,False,compared,"), "{l}");
    // toy_b has no paper key, Qwen2.5-7B is not in the run
    for row in ["Qwen2.5-1.5B / MMLU-Pro", "Qwen2.5-7B / TruthfulQA-MC"] {
        let l = line(&format!("Table 2,{row},Clean,"));
        assert!(l.contains(",,,,,,,,not run,"), "{l}");
    }
    let md = std::fs::read_to_string(run_dir.join("reproduction.md")).unwrap();
    assert!(md.contains("## Table 2") && md.contains("not run"));

    // tables --from writes the same two files
    let before: Vec<Vec<u8>> = ["reproduction.md", "reproduction.csv"].iter().map(|f| std::fs::read(run_dir.join(f)).unwrap()).collect();
    for f in ["reproduction.md", "reproduction.csv"] {
        std::fs::remove_file(run_dir.join(f)).unwrap();
    }
    ok(&["tables", "--from", d]);
    let after: Vec<Vec<u8>> = ["reproduction.md", "reproduction.csv"].iter().map(|f| std::fs::read(run_dir.join(f)).unwrap()).collect();
    assert!(before == after, "tables --from and compare --paper write the same reproduction files");

    // bad directories: one error line, exit 1; no --paper: a usage error
    fails(&["compare", "--paper", dir.path().join("nope").to_str().unwrap()], "no such run directory");
    fails(&["compare", "--paper", dir.path().to_str().unwrap()], "not a run directory");
    usage(&["compare"], "--paper");
}

#[test]
fn compare_paper_pools_over_the_scopes_of_the_runs_plan() {
    use hyst_tui::store::run_dir::{Manifest, RunConfig, RunPlan};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // the five truncation pairs of the paper's Table 18, and a sixth pair
    let five = [
        ("toy_a", "q15", "qwen25_15b"),
        ("toy_b", "q15", "qwen25_15b"),
        ("toy_b", "q14", "qwen25_14b"),
        ("toy_a", "mis", "mistral7b_v03"),
        ("toy_b", "mis", "mistral7b_v03"),
    ];
    let mut copies = five.to_vec();
    copies.push(("toy_b", "q7", "qwen25_7b"));
    hyst_tui::store::write_item_rows(dir.path(), &synthetic_pairs(&copies)).unwrap();
    let table5 = "Table 5,Full pressure history,Mean gap,";
    ok(&["compare", "--paper", d]);
    let (_, line) = reproduction(dir.path());
    assert!(line(table5).contains(",other pairs,"), "{}", line(table5));
    // a plan that scopes Table 5 to the five: compared
    let dataset = |m: &str| if m == "toy_a" { "truthfulqa_mc" } else { "mmlu_pro" };
    let scope = five.iter().map(|(from, key, _)| (key.to_string(), dataset(from).to_string())).collect();
    let plan = RunPlan {
        name: "test".into(),
        description: String::new(),
        pairs: Vec::new(),
        table_scopes: BTreeMap::from([("Table 5".to_string(), scope)]),
        datasets: Vec::new(),
        n: None,
        seed: None,
    };
    let cfg = RunConfig { plan: Some(plan), ..common::run_config(&["q15", "q14", "mis", "q7"]) };
    Manifest::new(cfg, "test".into(), 0).write(dir.path()).unwrap();
    let out = ok(&["compare", "--paper", d]);
    let (_, line) = reproduction(dir.path());
    assert!(line(table5).contains(",compared,"), "{}: {out}", line(table5));
}

/// The binary waits passively at llama.cpp's thread barriers unless the user chose a policy: it
/// starts itself again with OMP_WAIT_POLICY=PASSIVE (same process id), and leaves a policy that
/// was set as it is. Read from the running process's environment while it waits for its input.
#[cfg(target_os = "linux")]
#[test]
fn the_binary_waits_passively_unless_a_policy_is_set() {
    use std::process::Stdio;
    for (given, expected) in [(None, "PASSIVE"), (Some("ACTIVE"), "ACTIVE")] {
        let mut cmd = Command::new(BIN);
        cmd.env("HYST_SCORE_STORE", "off").env_remove("OMP_WAIT_POLICY");
        if let Some(p) = given {
            cmd.env("OMP_WAIT_POLICY", p);
        }
        // `score` reads its conversations from stdin, which stays open until the check is done.
        let mut child = cmd
            .args(["--threads", "2", "score", "--messages", "/dev/stdin", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let environ = format!("/proc/{}/environ", child.id());
        let t0 = std::time::Instant::now();
        let mut seen = None;
        while t0.elapsed() < std::time::Duration::from_secs(20) {
            let env = std::fs::read(&environ).unwrap_or_default();
            seen = env.split(|b| *b == 0).find_map(|v| v.strip_prefix(b"OMP_WAIT_POLICY=")).map(|v| String::from_utf8_lossy(v).into_owned());
            if seen.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        drop(child.stdin.take());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen.as_deref(), Some(expected), "OMP_WAIT_POLICY given {given:?}");
        // doctor says which policy it runs under.
        let mut doctor = Command::new(BIN);
        doctor.env("HYST_SCORE_STORE", "off").env_remove("OMP_WAIT_POLICY").args(["doctor", "--model", "none-such"]);
        if let Some(p) = given {
            doctor.env("OMP_WAIT_POLICY", p);
        }
        let text = String::from_utf8_lossy(&doctor.output().unwrap().stdout).into_owned();
        assert!(text.contains(&format!("OMP_WAIT_POLICY={expected}")), "doctor, policy given {given:?}:\n{text}");
    }
}

#[test]
fn score_reads_the_lens_and_steers_from_the_command_line_and_refuses_bad_vectors() {
    use hyst_tui::engine::inside::ControlVector;
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("q.json");
    let q = "Which planet is known as the Red Planet?\nA. Venus\nB. Mars\nC. Jupiter\nD. Saturn\nAnswer with the letter only.";
    std::fs::write(&m, serde_json::json!([{"role": "user", "content": q}]).to_string()).unwrap();
    let m = m.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value { serde_json::from_str(ok(args).trim()).unwrap() };

    let plain = json(&["score", "--messages", m, "--json"]);
    let lensed = json(&["score", "--messages", m, "--json", "--lens"]);
    assert_eq!(lensed["probs"], plain["probs"], "the lens does not change the score");
    let lens = lensed["lens"].as_array().unwrap();
    assert_eq!(lens.len(), 30, "SmolLM2-135M has 30 layers");
    for l in ["A", "B", "C", "D"] {
        let (a, b) = (lens[29][l].as_f64().unwrap(), plain["probs"][l].as_f64().unwrap());
        assert!((a - b).abs() < 1e-12, "lens {l} {a} vs score {b}");
    }
    assert!(lensed["lens_anchor"].as_f64().unwrap() < 1e-12);
    let human = ok(&["score", "--messages", m, "--lens"]);
    assert!(human.contains("letter lens") && human.contains("\n   29  "), "{human}");

    let v = dir.path().join("v.gguf");
    ControlVector::new(576, (1..30).map(|l| (l, vec![0.01 * l as f32; 576]))).unwrap().write(&v, "llama").unwrap();
    let v = v.to_str().unwrap();
    let zero = json(&["score", "--messages", m, "--json", "--steer", v, "--alpha", "0"]);
    assert_eq!(zero["probs"], plain["probs"], "alpha 0 steers nothing");
    assert_eq!(zero["steering"]["layers"], serde_json::json!([1, 29]));
    assert_eq!(zero["steering"]["hash"].as_str().unwrap().len(), 64);
    let pushed = json(&["score", "--messages", m, "--json", "--steer", v, "--alpha", "-40", "--steer-layers", "10-20"]);
    assert_ne!(pushed["probs"], plain["probs"]);
    assert_eq!(pushed["steering"]["alpha"], serde_json::json!(-40.0));

    let narrow = dir.path().join("narrow.gguf");
    ControlVector::new(8, [(1, vec![1.0; 8]), (2, vec![1.0; 8])]).unwrap().write(&narrow, "x").unwrap();
    fails(&["score", "--messages", m, "--steer", narrow.to_str().unwrap()], "the control vector is 8 wide but the model's residual stream is 576");
    let few = dir.path().join("few.gguf");
    ControlVector::new(576, [(3, vec![1.0; 576])]).unwrap().write(&few, "x").unwrap();
    fails(&["score", "--messages", m, "--steer", few.to_str().unwrap(), "--steer-layers", "2-5"], "no direction for layer(s) 2, 4-5");
    let nan = dir.path().join("nan.gguf");
    ControlVector::new(8, [(1, vec![1.0; 8])]).unwrap().write(&nan, "x").unwrap();
    let mut bytes = std::fs::read(&nan).unwrap();
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&nan, bytes).unwrap();
    fails(&["score", "--messages", m, "--steer", nan.to_str().unwrap()], "not finite");
    fails(&["score", "--messages", m, "--steer", m], "not a GGUF file");
    fails(&["score", "--messages", m, "--steer", "/no/such/vector.gguf"], "control vector /no/such/vector.gguf");
    usage(&["score", "--messages", m, "--alpha", "2"], "--steer");
    usage(&["score", "--messages", m, "--steer", v, "--generate", "5"], "--generate");
    let renamed = dir.path().join("renamed.gguf");
    let mut bytes = std::fs::read(&few).unwrap();
    let at = bytes.windows(11).position(|w| w == b"direction.3").unwrap();
    bytes[at + 10] = b'x';
    std::fs::write(&renamed, bytes).unwrap();
    fails(&["score", "--messages", m, "--steer", renamed.to_str().unwrap()], "is not a layer number");
    usage(&["score", "--messages", m, "--steer", v, "--steer-layers", "9-3"], "comes after");
}
