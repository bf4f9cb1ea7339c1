//! The result store: item rows as JSONL and a typed Parquet table; a damaged score cache costs
//! only the damaged records; one writer per run directory; old records are read; non-finite
//! floats round-trip; a full disk leaves the store readable; scores of another numeric
//! provenance are never mixed in. Real-model runs use SmolLM2 on the 4-item tests/data/tiny.jsonl,
//! one reference run shared by every test (copied per test).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use hyst_tui::store::run_dir::{load_item_rows, ITEM_ROWS_JSONL, ITEM_ROWS_PARQUET};
use hyst_tui::store::{read_item_rows, write_item_rows, ItemRow};

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn tiny() -> String {
    format!("jsonl:{}/tests/data/tiny.jsonl", env!("CARGO_MANIFEST_DIR"))
}

fn batch_args(out: &Path) -> Vec<String> {
    ["--threads", "2", "--batch", "--datasets", &tiny(), "--suites", "hierarchy", "--out", out.to_str().unwrap()]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The binary without the shared score store (these tests count what a run scores itself).
fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env("HYST_SCORE_STORE", "off");
    c
}

fn run(args: &[String]) -> Output {
    bin().args(args).output().unwrap()
}

fn ok(args: &[String]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A complete hierarchy run on tiny.jsonl, made once.
fn reference() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("hyst-store-ref-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        ok(&batch_args(&dir));
        dir
    })
}

/// A copy of the reference run in a fresh temp dir.
fn copy_of_reference() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let dst = t.path().join("run");
    let st = Command::new("cp").arg("-a").arg(reference()).arg(&dst).status().unwrap();
    assert!(st.success());
    (t, dst)
}

fn cache_file(dir: &Path) -> PathBuf {
    dir.join("cache/scores.jsonl")
}

fn tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("tables"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v.push(("summary.md".into(), std::fs::read(dir.join("summary.md")).unwrap()));
    v
}

/// The number of contexts the engine scored, from the run's summary line.
fn scored(o: &Output) -> usize {
    let e = stderr(o);
    // "… · C contexts: S scored, …"
    let line = e.lines().find(|l| l.contains(" contexts: ")).unwrap_or_else(|| panic!("no summary line in {e}"));
    let after = line.split(" contexts: ").nth(1).unwrap();
    after.split(" scored").next().unwrap().parse().unwrap()
}

fn keys(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(cache_file(dir))
        .unwrap()
        .lines()
        .map(|l| {
            let json = l.split_once('\t').unwrap().1;
            serde_json::from_str::<serde_json::Value>(json).unwrap()["key"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn parquet_has_one_typed_column_per_field() {
    use polars::prelude::*;
    let rows = common::synthetic::synthetic_rows(2);
    let dir = tempfile::tempdir().unwrap();
    write_item_rows(dir.path(), &rows).unwrap();
    let f = std::fs::File::open(dir.path().join(ITEM_ROWS_PARQUET)).unwrap();
    let df = ParquetReader::new(f).finish().unwrap();
    let names: Vec<String> = df.get_column_names().iter().map(|s| s.to_string()).collect();
    // Rows without a served letter bound (every in-process row) have no letter_bound_json, and
    // letters rows no open-answer columns.
    let sometimes = ["letter_bound_json", "answer_format", "open_answers_json"];
    let fields: Vec<&str> = ItemRow::FIELDS.iter().copied().filter(|f| !sometimes.contains(f)).collect();
    assert_eq!(names, fields);
    // The JSON keys are the same names in the same order.
    let json = serde_json::to_string(&rows[0]).unwrap();
    let pos: Vec<usize> = fields
        .iter()
        .map(|f| json.find(&format!("\"{f}\":")).unwrap_or_else(|| panic!("{f} not in {json}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "JSON key order differs from FIELDS");
    let n_keys = serde_json::to_value(&rows[0]).unwrap().as_object().unwrap().len();
    assert_eq!(n_keys, fields.len());
    assert_eq!(df.column("p_wrong").unwrap().dtype(), &DataType::Float64);
    assert_eq!(df.column("subset_index").unwrap().dtype(), &DataType::Int64);
    assert_eq!(df.column("correct").unwrap().dtype(), &DataType::Boolean);
    assert_eq!(df.column("item_id").unwrap().dtype(), &DataType::String);
    assert_eq!(df.height(), rows.len());
    assert_eq!(read_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap(), rows);
    // Open-answer rows have both open-answer columns, typed, and read back unchanged.
    let mut open = rows.clone();
    for r in &mut open {
        r.answer_format = "open".into();
        r.open_answers_json = "{\"options\":[],\"eot_token\":\"<e>\"}".into();
    }
    let dir = tempfile::tempdir().unwrap();
    write_item_rows(dir.path(), &open).unwrap();
    let df = ParquetReader::new(std::fs::File::open(dir.path().join(ITEM_ROWS_PARQUET)).unwrap()).finish().unwrap();
    assert_eq!(df.column("answer_format").unwrap().dtype(), &DataType::String);
    assert_eq!(df.column("open_answers_json").unwrap().dtype(), &DataType::String);
    assert_eq!(read_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap(), open);
}

#[test]
fn old_rows_are_read_non_finite_values_round_trip_and_newer_rows_are_refused() {
    let mut rows = common::synthetic::synthetic_rows(1);
    rows.truncate(3);
    rows[0].entropy = f64::NAN;
    rows[1].margin_top2 = f64::INFINITY;
    rows[2].max_prob = f64::NEG_INFINITY;
    let dir = tempfile::tempdir().unwrap();
    write_item_rows(dir.path(), &rows).unwrap();
    let back = read_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap();
    assert!(back[0].entropy.is_nan());
    assert_eq!(back[1].margin_top2, f64::INFINITY);
    assert_eq!(back[2].max_prob, f64::NEG_INFINITY);
    assert_eq!(back[1].p_wrong.to_bits(), rows[1].p_wrong.to_bits());

    // Version 1 rows: no schema_version, paper_key or provenance; `null` for a NaN.
    let p = dir.path().join(ITEM_ROWS_JSONL);
    let v1: Vec<String> = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let o = v.as_object_mut().unwrap();
            for k in ["schema_version", "paper_key", "provenance"] {
                o.remove(k);
            }
            o.insert("entropy".into(), serde_json::Value::Null);
            v.to_string()
        })
        .collect();
    std::fs::write(&p, v1.join("\n") + "\n").unwrap();
    let old = read_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap();
    assert_eq!(old.len(), 3);
    assert!(old.iter().all(|r| r.schema_version == 1 && r.paper_key.is_empty() && r.entropy.is_nan()));
    assert_eq!(old[0].p_correct, rows[0].p_correct);

    // A row of a newer schema stops the load with its line, rather than being dropped.
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push_str("{\"schema_version\":7,\"future\":true}\n");
    std::fs::write(&p, text).unwrap();
    let e = load_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap_err().to_string();
    assert!(e.contains("line 4") && e.contains("newer hyst-tui"), "{e}");
}

#[test]
fn malformed_rows_are_skipped_with_their_line_by_tables_from() {
    let rows = common::synthetic::synthetic_rows(3);
    let dir = tempfile::tempdir().unwrap();
    write_item_rows(dir.path(), &rows).unwrap();
    let p = dir.path().join(ITEM_ROWS_JSONL);
    let mut lines: Vec<String> = std::fs::read_to_string(&p).unwrap().lines().map(str::to_string).collect();
    let mut damage = |i: usize, f: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        let mut v: serde_json::Value = serde_json::from_str(&lines[i]).unwrap();
        f(v.as_object_mut().unwrap());
        lines[i] = v.to_string();
    };
    damage(2, &|o| {
        o.insert("option_probs_json".into(), "{}".into());
    });
    damage(5, &|o| {
        o.insert("correct_option_letter".into(), "Z".into());
    });
    damage(7, &|o| {
        o.insert("condition".into(), "no_such_condition".into());
    });
    lines[9] = "{not json".into();
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let loaded = load_item_rows(dir.path(), hyst_tui::dialogue::conditions::Registry::bundled()).unwrap();
    let bad: Vec<usize> = loaded.skipped.iter().map(|s| s.line).collect();
    assert_eq!(bad, vec![3, 6, 8, 10]);
    assert!(loaded.skipped[0].reason.contains("option_probs_json"), "{:?}", loaded.skipped[0]);
    assert!(loaded.skipped[1].reason.contains("correct_option_letter"), "{:?}", loaded.skipped[1]);
    assert!(loaded.skipped[2].reason.contains("unknown condition"), "{:?}", loaded.skipped[2]);
    assert_eq!(loaded.rows.len(), rows.len() - 4);
    // `tables --from` builds the tables from the rest and says so in one line.
    let o = run(&["tables".into(), "--from".into(), dir.path().to_str().unwrap().into()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("4 malformed rows skipped (line 3:"), "{e}");
    assert!(dir.path().join("tables/table04_recovery_counts.csv").exists());
}

#[test]
fn a_flipped_byte_mid_cache_costs_only_that_record() {
    let (_t, dir) = copy_of_reference();
    let reference_tables = tables(reference());
    let cache = cache_file(&dir);
    let text = std::fs::read_to_string(&cache).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len();
    assert!(n >= 20, "{n} records");
    // Flip one byte in the JSON of the middle record.
    let mid = n / 2;
    let mut bytes = text.clone().into_bytes();
    let offset: usize = lines[..mid].iter().map(|l| l.len() + 1).sum::<usize>() + 80;
    bytes[offset] ^= 0x01;
    std::fs::write(&cache, &bytes).unwrap();

    let o = ok(&batch_args(&dir));
    let e = stderr(&o);
    let notice: Vec<&str> = e.lines().filter(|l| l.contains("damaged record")).collect();
    assert_eq!(notice.len(), 1, "{e}");
    assert!(notice[0].contains(&format!("line {}", mid + 1)) && notice[0].contains("quarantine.jsonl"), "{}", notice[0]);
    assert_eq!(scored(&o), 1, "only the damaged record is scored again: {e}");
    assert_eq!(tables(&dir), reference_tables);
    let q = std::fs::read_to_string(dir.join("cache/quarantine.jsonl")).unwrap();
    assert_eq!(q.lines().count(), 1);
    // Every key once; the re-scored record went to the end.
    let k = keys(&dir);
    assert_eq!(k.len(), n);
    let mut sorted = k.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), n, "no key twice");
}

#[test]
fn a_second_writer_fails_at_once_and_a_stale_lock_is_taken_over() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    // The first writer: a fresh run (several seconds of scoring).
    let mut first = bin().args(batch_args(&dir)).stderr(Stdio::null()).spawn().unwrap();
    let t0 = Instant::now();
    while !dir.join(".lock").exists() && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let listing = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    };
    let t1 = Instant::now();
    let second = run(&batch_args(&dir));
    assert_eq!(second.status.code(), Some(1));
    assert!(t1.elapsed() < Duration::from_secs(30), "the second writer waited");
    let e = stderr(&second);
    assert_eq!(e.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{e}");
    assert!(e.contains(&format!("error: run directory {} is in use by pid {}", dir.display(), first.id())), "{e}");
    let before = listing(&dir);
    assert!(first.wait().unwrap().success());
    // The second process wrote nothing: no key appears twice, nothing it would have made.
    let k = keys(&dir);
    let mut d = k.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), k.len(), "a key appears twice");
    assert!(before.iter().all(|f| listing(&dir).contains(f)));
    // A lock file left by a process that is gone: taken over.
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    std::fs::write(dir.join(".lock"), format!("{pid}\n")).unwrap();
    let again = ok(&batch_args(&dir));
    assert_eq!(scored(&again), 0, "{}", stderr(&again));
}

#[test]
fn a_full_disk_fails_cleanly_and_leaves_the_store_readable() {
    let (_t, dir) = copy_of_reference();
    let reference_tables = tables(reference());
    // Drop the last item's records so that the next run has to append them.
    let cache = cache_file(&dir);
    let text = std::fs::read_to_string(&cache).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len() - 8;
    std::fs::write(&cache, lines[..keep].join("\n") + "\n").unwrap();
    let size = std::fs::metadata(&cache).unwrap().len();
    // A file-size limit just above the current cache: the append must fail.
    let limit_blocks = size / 1024 + 1;
    let args = batch_args(&dir).iter().map(|a| format!("'{a}'")).collect::<Vec<_>>().join(" ");
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -f {limit_blocks}; exec '{BIN}' {args}"))
        .env("HYST_SCORE_STORE", "off")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    let errors: Vec<&str> = e.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{e}");
    assert!(errors[0].contains("scores.jsonl") && errors[0].contains("File too large"), "{}", errors[0]);
    // Every earlier record is still there and readable; nothing half-written.
    let after = std::fs::read_to_string(&cache).unwrap();
    assert!(after.ends_with('\n'));
    assert_eq!(after.lines().count(), keep);
    // Without the limit the run completes, scoring only what is missing.
    let o = ok(&batch_args(&dir));
    assert!(scored(&o) <= 8, "{}", stderr(&o));
    assert_eq!(tables(&dir), reference_tables);
}

#[test]
fn scores_of_another_numeric_provenance_are_never_mixed() {
    let (_t, dir) = copy_of_reference();
    // Pretend the run was made by a GPU build: rewrite the provenance of every record (with
    // valid checksums) and of the manifest.
    let rewrite = |d: &Path, other: &str| {
        let cache = cache_file(d);
        let text = std::fs::read_to_string(&cache).unwrap();
        let mut out = String::new();
        for l in text.lines() {
            let mut v: serde_json::Value = serde_json::from_str(l.split_once('\t').unwrap().1).unwrap();
            v["provenance"] = other.into();
            let json = serde_json::to_string(&v).unwrap();
            let sum = {
                use sha2::Digest;
                hex::encode(sha2::Sha256::digest(json.as_bytes()))
            };
            out.push_str(&format!("{sum}\t{json}\n"));
        }
        std::fs::write(&cache, out).unwrap();
        let m = d.join("manifest.json");
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
        v["config"]["provenance"] = other.into();
        std::fs::write(&m, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    };
    rewrite(&dir, "llama.cpp test-build; backend CUDA0 (a GPU)");
    let before = std::fs::read(cache_file(&dir)).unwrap();
    let o = run(&batch_args(&dir));
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("another numeric provenance") && e.contains("backend CUDA0 (a GPU)") && e.contains("backend CPU"), "{e}");
    assert_eq!(std::fs::read(cache_file(&dir)).unwrap(), before, "nothing was written");
    // Only the cache differs (a manifest that matches this build): still refused.
    let m = dir.join("manifest.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["config"]["provenance"] = serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(reference().join("manifest.json")).unwrap()).unwrap()["config"]["provenance"].clone();
    std::fs::write(&m, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let o = run(&batch_args(&dir));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("another numeric provenance"));
    // merge refuses two runs of different provenance.
    let (_t2, other) = copy_of_reference();
    rewrite(&other, "llama.cpp test-build; backend Metal");
    let out = _t.path().join("merged");
    let o = run(&["merge".into(), reference().to_str().unwrap().into(), other.to_str().unwrap().into(), "--out".into(), out.to_str().unwrap().into()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("different numeric provenance cannot be merged"), "{}", stderr(&o));
    assert!(!out.join("item_rows.jsonl").exists());
}

#[test]
fn the_shared_store_serves_later_runs_with_other_configurations() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("shared/scores.jsonl");
    let with_store = |args: Vec<String>| {
        let o = Command::new(BIN).env("HYST_SCORE_STORE", &store).args(args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    // Fill the shared store from the reference run's configuration.
    let a = t.path().join("a");
    let first = with_store(batch_args(&a));
    assert!(scored(&first) > 0);
    let in_store = std::fs::read_to_string(&store).unwrap().lines().count();
    assert_eq!(in_store, keys(&a).len());
    // Another run directory, same contexts: nothing scored, identical tables, and the run's own
    // cache holds every record it used (run directories stay self-contained).
    let b = t.path().join("b");
    let second = with_store(batch_args(&b));
    assert_eq!(scored(&second), 0, "{}", stderr(&second));
    assert_eq!(tables(&b), tables(&a));
    let (mut ka, mut kb) = (keys(&a), keys(&b));
    ka.sort();
    kb.sort();
    assert_eq!(ka, kb);
    // A different configuration (more suites) scores only what the store lacks.
    let c = t.path().join("c");
    let mut args = batch_args(&c);
    let i = args.iter().position(|a| a == "hierarchy").unwrap();
    args[i] = "hierarchy,r7".into();
    let third = with_store(args);
    let n = scored(&third);
    assert!(n > 0 && n <= 4, "only the R7 contexts of the 4 items are new: {n}");
    // The store gained exactly the new records.
    assert_eq!(std::fs::read_to_string(&store).unwrap().lines().count(), in_store + n);
}
