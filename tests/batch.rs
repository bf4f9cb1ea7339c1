//! Batch mode end to end on a real model (SmolLM2): every table and figure file, `tables --from`
//! byte for byte, resume after SIGKILL, after a torn record, after Ctrl-C (SIGINT: exit code
//! 130) and after SIGTERM (exit code 143; also in the middle of items, whose scores are kept),
//! sharding + merge. Every comparison covers tables/, figures/, summary.md and
//! reproduction.md/.csv.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn tiny() -> String {
    format!("jsonl:{}/tests/data/tiny.jsonl", env!("CARGO_MANIFEST_DIR"))
}

/// The binary, without the shared score store (each run here scores what its own cache lacks).
fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env("HYST_SCORE_STORE", "off");
    c
}

fn hyst(args: &[&str]) -> std::process::Output {
    let out = bin().args(["--threads", "2"]).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "hyst-tui {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

use common::run_outputs as outputs;

/// The files of one subdirectory in [`outputs`].
fn count(files: &BTreeMap<String, Vec<u8>>, sub: &str) -> usize {
    files.keys().filter(|k| k.starts_with(&format!("{sub}/"))).count()
}

/// Item rows without the token counters (which depend on what the cache held).
fn rows(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("item_rows.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("tokens_evaluated");
            o.remove("tokens_reused");
            v
        })
        .collect()
}

#[test]
fn all_suites_write_every_table_and_tables_from_reproduces_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = out.to_str().unwrap();
    hyst(&["--batch", "--limit", "3", "--suites", "all", "--out", o]);
    let first = outputs(&out);
    assert!(count(&first, "figures") > 0, "no figure written: {:?}", first.keys().collect::<Vec<_>>());
    for t in [
        "table01_recovery_operations", "table02_pressure_ramp", "table03_controls", "table04_recovery_counts",
        "table05_truncation_boundary", "table06_r7_evidence", "table07_behavioral_controls",
        "table08_expanded_family_ramp", "table09_ordinary_reset_gap", "table10_failure_decomposition",
        "table11_plausibility_tertiles", "table12_pressure_vs_false_context", "table13_relabel_restoration",
        "table14_relabel_outcome", "table15_semantic_vs_letter", "table16_strict_vs_mro",
        "table17_minimal_recovery_operation", "table18_truncation_by_pair", "table19_r0_to_r7_by_dataset",
        "table20_cctp_tube_definition", "table21_cctp_summary", "table22_criterion_families", "table23_examples",
    ] {
        for ext in ["csv", "md", "tex"] {
            assert!(first.contains_key(&format!("tables/{t}.{ext}")), "missing {t}.{ext}");
        }
    }
    let n_rows = rows(&out).len();
    let in_all = hyst_tui::dialogue::conditions::Registry::bundled().all().iter().filter(|c| hyst_tui::dialogue::Suite::ALL.contains(&c.suite)).count();
    assert_eq!(n_rows, 3 * in_all, "every condition of the paper's suites (not the bundled experiments)");
    assert!(out.join("item_rows.parquet").exists());
    // Rebuild from stored rows, without a model: byte-identical tables and figures.
    for sub in ["tables", "figures"] {
        for f in std::fs::read_dir(out.join(sub)).unwrap() {
            std::fs::remove_file(f.unwrap().path()).unwrap();
        }
    }
    hyst(&["tables", "--from", o]);
    assert_eq!(outputs(&out), first);
    // The side by side with the paper alone, from the same rows: the same bytes.
    for f in ["reproduction.md", "reproduction.csv"] {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    hyst(&["compare", "--paper", o]);
    assert_eq!(outputs(&out), first);
    // Rerun of the same configuration: nothing is scored again, same bytes.
    let again = hyst(&["--batch", "--limit", "3", "--suites", "all", "--out", o]);
    let c = counts(&again);
    assert_eq!((c.contexts, c.scored, c.from_run_cache + c.repeated), (n_rows, 0, n_rows), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(outputs(&out), first);
}

/// The context counts of a batch's last line: "C contexts: S scored, R from this run's cache[,
/// H from the shared store], P repeated within an item".
#[derive(Debug)]
struct Counts {
    contexts: usize,
    scored: usize,
    from_run_cache: usize,
    from_shared: Option<usize>,
    repeated: usize,
}

fn counts(o: &std::process::Output) -> Counts {
    let err = String::from_utf8_lossy(&o.stderr);
    let line = err.lines().find(|l| l.contains(" contexts: ")).unwrap_or_else(|| panic!("no summary line: {err}"));
    let part = line.split(" · ").find(|p| p.contains(" contexts: ")).unwrap();
    let (contexts, rest) = part.split_once(" contexts: ").unwrap();
    let mut terms = BTreeMap::new();
    for t in rest.split(", ") {
        let (n, what) = t.split_once(' ').unwrap_or_else(|| panic!("{line}"));
        terms.insert(what.to_string(), n.parse::<usize>().unwrap_or_else(|_| panic!("{line}")));
    }
    let c = Counts {
        contexts: contexts.parse().unwrap(),
        scored: terms.remove("scored").unwrap_or_else(|| panic!("{line}")),
        from_run_cache: terms.remove("from this run's cache").unwrap_or_else(|| panic!("{line}")),
        from_shared: terms.remove("from the shared store"),
        repeated: terms.remove("repeated within an item").unwrap_or_else(|| panic!("{line}")),
    };
    assert!(terms.is_empty(), "unknown terms in {line}");
    assert_eq!(c.contexts, c.scored + c.from_run_cache + c.from_shared.unwrap_or(0) + c.repeated, "the terms do not add up: {line}");
    c
}

/// S of the summary line's "C contexts: S scored".
fn contexts_scored(o: &std::process::Output) -> usize {
    counts(o).scored
}

fn cache_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("cache/scores.jsonl")).map(|s| s.lines().count()).unwrap_or(0)
}

/// The last line says where the contexts came from, in terms that match the run: with
/// `--score-store off` nothing is said to come from a store; the contexts are the run's item
/// rows, those scored its cache's records; a rerun takes them from the run's own cache, and a new
/// run with a shared store that holds them from that store.
#[test]
fn the_last_line_says_where_the_contexts_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let args = ["--batch", "--limit", "2", "--out", a.to_str().unwrap()];
    let first = hyst(&args);
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(!err.contains("from the store") && !err.contains("shared store"), "no store is used: {err}");
    assert!(err.contains("2 of 2 items in "), "{err}");
    let c = counts(&first);
    let n_rows = rows(&a).len();
    assert_eq!(c.contexts, n_rows, "{err}");
    assert_eq!(c.scored, cache_lines(&a), "{err}");
    assert_eq!((c.from_run_cache, c.from_shared), (0, None), "{err}");
    assert!(c.repeated > 0, "the clean probe repeats the clean context: {err}");
    let manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(a.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["items_done"], 2);
    // The same command again: everything from the run's own cache.
    let again = counts(&hyst(&args));
    assert_eq!((again.contexts, again.scored, again.from_run_cache, again.repeated), (n_rows, 0, c.scored, c.repeated));
    // With a shared store: a first run fills it, a second run (another directory) takes from it.
    let store = dir.path().join("store/scores.jsonl");
    let with_store = |out: &str| {
        let o = bin().env("HYST_SCORE_STORE", &store).args(["--threads", "2", "--batch", "--limit", "2", "--out"]).arg(dir.path().join(out)).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        counts(&o)
    };
    let b = with_store("b");
    assert_eq!((b.scored, b.from_shared), (c.scored, Some(0)));
    let d = with_store("d");
    assert_eq!((d.contexts, d.scored, d.from_run_cache, d.from_shared, d.repeated), (n_rows, 0, 0, Some(c.scored), c.repeated));
}

#[test]
fn workers_change_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let ds = tiny();
    let run = |n: &str| {
        let out = dir.path().join(format!("w{n}"));
        hyst(&["--batch", "--datasets", ds.as_str(), "--suites", "hierarchy,r7", "--workers", n, "--out", out.to_str().unwrap()]);
        out
    };
    let one = run("1");
    for n in ["2", "3"] {
        // Three workers on four items: more items than workers, handed out unevenly.
        let other = run(n);
        assert_eq!(rows(&other), rows(&one), "item rows differ with {n} workers");
        assert_eq!(outputs(&other), outputs(&one), "tables or figures differ with {n} workers");
    }
}

#[test]
fn tables_appear_while_the_batch_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live");
    let ds = tiny();
    let mut child = bin()
        .args(["--threads", "2", "--batch", "--datasets", ds.as_str(), "--suites", "hierarchy", "--tables-every", "1"])
        .args(["--out", out.to_str().unwrap()])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let mut seen_early = false;
    while t0.elapsed() < Duration::from_secs(900) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap_or_default();
        if out.join("tables/table04_recovery_counts.csv").exists() && manifest.contains("\"complete\": false") {
            seen_early = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(child.wait().unwrap().success());
    assert!(seen_early, "no table was written before the run ended");
    // The final tables are those of every item.
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains(&format!("Built from {} item rows", rows(&out).len())), "{summary}");
}

#[test]
fn kill_9_and_a_torn_record_resume_to_identical_tables_and_shards_merge() {
    let dir = tempfile::tempdir().unwrap();
    let ds = tiny();
    let base = ["--batch", "--datasets", ds.as_str(), "--suites", "hierarchy"];
    // Reference: uninterrupted.
    let a: PathBuf = dir.path().join("a");
    let mut args = base.to_vec();
    args.extend(["--out", a.to_str().unwrap()]);
    let ref_scored = contexts_scored(&hyst(&args));

    // Killed with SIGKILL once the first item is stored, with two workers (no tables on the
    // way, so nothing but the cache is written before the kill).
    let b = dir.path().join("b");
    let mut args_b = base.to_vec();
    args_b.extend(["--workers", "2", "--tables-every", "0", "--out", b.to_str().unwrap()]);
    let mut child = bin().args(["--threads", "2"]).args(&args_b).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    while cache_lines(&b) == 0 && t0.elapsed() < Duration::from_secs(600) {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!b.join("item_rows.jsonl").exists(), "killed before the end");
    // A torn last record, as if the crash hit mid-write.
    let mut f = std::fs::OpenOptions::new().append(true).open(b.join("cache/scores.jsonl")).unwrap();
    std::io::Write::write_all(&mut f, b"0123abcd\t{\"key\":\"torn").unwrap();
    drop(f);
    hyst(&args_b);
    assert_eq!(outputs(&b), outputs(&a));
    assert_eq!(rows(&b), rows(&a));

    // Ctrl-C (SIGINT), and SIGTERM (Slurm's time limit, preemption, scancel), once the first
    // item's contexts are being stored: the batch stops after the prompts in flight, says in one line
    // where it stopped and how to resume, and exits with 130 / 143; the same command then
    // completes it with the reference's bytes.
    #[cfg(unix)]
    for (sig, code, reason, sub) in [(libc::SIGINT, 130, "interrupted", "c"), (libc::SIGTERM, 143, "stopped by SIGTERM", "t")] {
        let c = dir.path().join(sub);
        let mut args_c = base.to_vec();
        args_c.extend(["--out", c.to_str().unwrap()]);
        let child = bin().args(["--threads", "2"]).args(&args_c).stderr(Stdio::piped()).spawn().unwrap();
        let t0 = Instant::now();
        while cache_lines(&c) == 0 && t0.elapsed() < Duration::from_secs(600) {
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill(2) on our own child's pid, which has not been waited for yet.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{err}");
        let line = errors[0];
        let stored = format!(" of 4 items are stored in {} ", c.display());
        let prefix = format!("error: {reason}: ");
        assert!(line.starts_with(&prefix) && line.contains(&stored), "{line}");
        let done: usize = line[prefix.len()..].split(' ').next().unwrap().parse().unwrap();
        assert!((1..4).contains(&done), "{line}");
        assert!(line.ends_with(&format!("resume (nothing is recomputed) with: {BIN} --threads 2 {} --out {}", base.join(" "), c.display())), "{line}");
        let manifest = std::fs::read_to_string(c.join("manifest.json")).unwrap();
        assert!(manifest.contains("\"complete\": false"), "{manifest}");
        hyst(&args_c);
        assert_eq!(outputs(&c), outputs(&a));
        assert_eq!(rows(&c), rows(&a));
    }

    // SIGTERM in the middle of items, raised right after the engine's N-th context: the second
    // item's 6th of one worker; with `--pack 32` (two items in flight on two lanes, each item's
    // branches decoded as one group after its ramp) during the ramps. The batch abandons its
    // items in flight once the prompts being scored are done, stores what they scored, says how
    // many such scores it kept, and the resume asks the engine only for the rest, ending with
    // the reference's bytes.
    #[cfg(unix)]
    for (sub, extra, n) in [("m1", &[][..], 20), ("m32", &["--pack", "32"][..], 8)] {
        let m = dir.path().join(sub);
        let mut args_m = base.to_vec();
        args_m.extend(extra);
        args_m.extend(["--out", m.to_str().unwrap()]);
        let o = bin().env("HYST_FAULT_AT", format!("context@{n}:term")).args(["--threads", "2"]).args(&args_m).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(143), "{sub}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{sub}: {err}");
        let kept: usize = errors[0]
            .split("; ")
            .find_map(|p| p.strip_suffix(" scores of unfinished items are kept too)"))
            .unwrap_or_else(|| panic!("{sub}: no count of kept scores: {}", errors[0]))
            .parse()
            .unwrap();
        let stored = cache_lines(&m);
        assert!(kept > 0 && stored >= n, "{sub}: {kept} kept, {stored} stored: {}", errors[0]);
        let resumed = bin().args(["--threads", "2"]).args(&args_m).output().unwrap();
        assert!(resumed.status.success(), "{sub}: {}", String::from_utf8_lossy(&resumed.stderr));
        assert_eq!(contexts_scored(&resumed), ref_scored - stored, "{sub}: the resume scored a kept context again");
        assert_eq!(outputs(&m), outputs(&a), "{sub}");
        assert_eq!(rows(&m), rows(&a), "{sub}");
    }

    // Two shards merged = the unsharded run.
    let mut dirs = vec![];
    for k in ["1/2", "2/2"] {
        let d = dir.path().join(format!("s{}", &k[..1]));
        let mut args_s = base.to_vec();
        args_s.extend(["--shard", k, "--out", d.to_str().unwrap()]);
        hyst(&args_s);
        dirs.push(d);
    }
    let m = dir.path().join("merged");
    hyst(&["merge", dirs[0].to_str().unwrap(), dirs[1].to_str().unwrap(), "--out", m.to_str().unwrap()]);
    assert_eq!(outputs(&m), outputs(&a));
    // Mixed configurations are refused.
    let other = dir.path().join("other");
    hyst(&["--batch", "--datasets", ds.as_str(), "--suites", "ramp", "--shard", "1/2", "--out", other.to_str().unwrap()]);
    let out = bin().args(["merge", dirs[0].to_str().unwrap(), other.to_str().unwrap(), "--out", dir.path().join("bad").to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("configuration differs"));
}
