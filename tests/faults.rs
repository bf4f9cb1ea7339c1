//! Cluster faults on a real model (SmolLM2), as root (CI runs as root; tmpfs mounts need it):
//!
//! - the fault campaign: a small batch run many times, each time stopped by SIGKILL or SIGTERM
//!   at a seeded random moment — from outside while it starts or scores, or from inside a write
//!   (`HYST_FAULT_AT`: halfway through a score-store append, the item rows, their parquet file,
//!   a table, a figure, the manifest) — or by a full disk (the run directory on a tmpfs of a
//!   seeded random size); each run is then resumed and its tables, figures, summary,
//!   reproduction files and item rows compared byte for byte with an uninterrupted run. The
//!   figures are printed (`cargo test --release --test faults -- --nocapture`) and reported in
//!   docs/measurements.md. `HYST_FAULT_SEED` and `HYST_FAULT_TRIALS` change the seed and the number of
//!   trials;
//! - readers and writers together: a second batch on a run directory being written and a merge
//!   of it are refused naming the writer's pid;
//! - read-only places (`--out`, the score store, the models directory) are refused in seconds.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

/// The campaign's batch: two items of the test set, the hierarchy suite (28 contexts), tables
/// only at the end (so the number of writes of each file is fixed).
fn batch_args(out: &Path) -> Vec<String> {
    let ds = format!("jsonl:{}/tests/data/tiny.jsonl", env!("CARGO_MANIFEST_DIR"));
    ["--threads", "2", "--batch", "--datasets", &ds, "--suites", "hierarchy", "--limit", "2", "--tables-every", "0", "--out"]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect()
}

fn bin() -> Command {
    let mut c = Command::new(BIN);
    c.env("HYST_SCORE_STORE", "off").env_remove("HYST_FAULT_AT");
    c
}

fn run(out: &Path, fault: Option<&str>) -> Output {
    let mut c = bin();
    c.args(batch_args(out));
    if let Some(f) = fault {
        c.env("HYST_FAULT_AT", f);
    }
    c.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn error_lines(o: &Output) -> Vec<String> {
    stderr(o).lines().filter(|l| l.starts_with("error:")).map(str::to_string).collect()
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

/// Temporary files of interrupted writes (`.NAME.tmpPID`) anywhere in `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if name.starts_with('.') && name.rsplit_once(".tmp").is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())) {
                out.push(p);
            }
        }
    }
    out
}

/// A tmpfs mounted for the life of the value (unmounted on drop, also when a test fails).
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(dir: &Path, opts: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let o = Command::new("mount").args(["-t", "tmpfs", "-o", opts, "tmpfs"]).arg(dir).output().unwrap();
        assert!(
            o.status.success(),
            "this test mounts a tmpfs and needs root (CI runs as root): mount -t tmpfs -o {opts} {}: {}",
            dir.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        Tmpfs { dir: dir.to_path_buf() }
    }
    fn remount(&self, opts: &str) {
        let o = Command::new("mount").args(["-o", &format!("remount,{opts}")]).arg(&self.dir).output().unwrap();
        assert!(o.status.success(), "remount {}: {}", self.dir.display(), String::from_utf8_lossy(&o.stderr));
    }
    /// Bytes in use (tmpfs counts whole pages).
    fn used(&self) -> u64 {
        let c = std::ffi::CString::new(self.dir.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statvfs(3) writes into the zeroed struct we own; `c` is a valid C string.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut s) }, 0);
        (s.f_blocks - s.f_bfree) * s.f_frsize
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// splitmix64: the campaign's seeded choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Where a trial stops the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// A signal from outside after a random delay: model loading or scoring.
    Scoring,
    /// From inside the N-th write of a file (`HYST_FAULT_AT`).
    Write(&'static str),
    /// The run directory on a tmpfs that fills at a random byte while the second item is
    /// scored (its store append, or the manifest).
    DiskFullScoring,
    /// The run directory on a tmpfs that fills at a random byte of the final writes.
    DiskFull,
}

impl Phase {
    fn label(self) -> String {
        match self {
            Phase::Scoring => "starting / scoring (signal from outside)".into(),
            Phase::Write(t) => format!("writing {t}"),
            Phase::DiskFullScoring => "disk full while scoring (tmpfs of random size)".into(),
            Phase::DiskFull => "disk full while writing (tmpfs of random size)".into(),
        }
    }
}

/// How many writes of each target a run from a full score store makes (`--tables-every 0`):
/// the store append happens only while scoring; then item rows and parquet once, 66 table
/// files, 3 figures and the manifest at the start and the end.
const WRITES: &[(&str, u64)] = &[
    ("scores.jsonl", 1),
    ("item_rows.jsonl", 1),
    ("item_rows.parquet", 1),
    ("tables/", 66),
    ("figures/", 3),
    ("manifest.json", 2),
    ("reproduction.csv", 1),
];

#[derive(Default)]
struct Tally {
    trials: u32,
    kills: u32,
    terms: u32,
    full: u32,
    identical: u32,
    quarantined: u32,
    torn: u32,
    swept: u32,
}

#[test]
fn fault_campaign_resumes_byte_identical() {
    let seed: u64 = std::env::var("HYST_FAULT_SEED").ok().map(|s| s.parse().expect("HYST_FAULT_SEED: a number")).unwrap_or(20261204);
    let trials: u64 = std::env::var("HYST_FAULT_TRIALS").ok().map(|s| s.parse().expect("HYST_FAULT_TRIALS: a number")).unwrap_or(22);
    println!("fault campaign: seed {seed}, {trials} trials (HYST_FAULT_SEED / HYST_FAULT_TRIALS)");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();

    // The reference: uninterrupted, on a tmpfs, to learn how much space a complete run takes.
    let mnt = Tmpfs::mount(&dir.path().join("ref-mnt"), "size=64m");
    let reference = mnt.dir.join("run");
    let o = run(&reference, None);
    assert!(o.status.success(), "the reference run failed: {}", stderr(&o));
    let full_bytes = mnt.used();
    let ref_outputs = common::run_outputs(&reference);
    let ref_rows = rows(&reference);
    let store_lines: Vec<String> = std::fs::read_to_string(reference.join("cache/scores.jsonl")).unwrap().lines().map(|l| format!("{l}\n")).collect();
    let per_item = store_lines.len() / 2;
    assert_eq!(store_lines.len(), 2 * per_item, "two items' records");

    // Phases in turn (so every phase is hit in a short campaign), the details drawn at random.
    let phases: Vec<Phase> = std::iter::once(Phase::Scoring)
        .chain(WRITES.iter().map(|(t, _)| Phase::Write(t)))
        .chain([Phase::DiskFullScoring, Phase::DiskFull, Phase::DiskFull])
        .collect();
    let mut tally: BTreeMap<Phase, Tally> = BTreeMap::new();
    for trial in 0..trials {
        let phase = phases[trial as usize % phases.len()];
        // SIGKILL in the first round of phases, SIGTERM in the second, and so on.
        let kill = (trial as usize / phases.len()) % 2 == 0;
        let sig = if kill { "kill" } else { "term" };
        let t = tally.entry(phase).or_default();
        t.trials += 1;
        let mnt = Tmpfs::mount(&dir.path().join(format!("t{trial}")), "size=64m");
        let out = mnt.dir.join("run");
        // What the score store holds before the fault: scoring phases start with 0 or 1 item
        // stored, the writing phases with both (they score nothing and go straight to writing).
        let stored_items = match phase {
            Phase::Write("scores.jsonl") | Phase::Scoring => rng.range(0, 1) as usize,
            Phase::DiskFullScoring => 1,
            Phase::DiskFull => 2,
            Phase::Write(_) => 2,
        };
        std::fs::create_dir_all(out.join("cache")).unwrap();
        std::fs::write(out.join("cache/scores.jsonl"), store_lines[..stored_items * per_item].concat()).unwrap();
        let what = match phase {
            Phase::Scoring => {
                t.kills += kill as u32;
                t.terms += !kill as u32;
                let delay = rng.range(300, 6000);
                let mut c = bin();
                c.args(batch_args(&out)).stdout(Stdio::null()).stderr(Stdio::piped());
                let child = c.spawn().unwrap();
                let t0 = Instant::now();
                // While it runs: a second batch and a merge of this directory are refused,
                // naming the writer.
                while !out.join(".lock").exists() || std::fs::read_to_string(out.join(".lock")).unwrap().trim() != child.id().to_string() {
                    assert!(t0.elapsed() < Duration::from_secs(60), "the batch never took its lock");
                    std::thread::sleep(Duration::from_millis(5));
                }
                let holder = format!("is in use by pid {}", child.id());
                let second = run(&out, None);
                assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
                let e = error_lines(&second);
                assert!(e.len() == 1 && e[0].contains(&holder), "a second batch: {e:?}");
                let merge = bin().arg("merge").arg(&out).arg("--out").arg(dir.path().join(format!("merged{trial}"))).output().unwrap();
                let e = error_lines(&merge);
                assert!(!merge.status.success() && e.len() == 1 && e[0].contains(&holder) && e[0].contains("still being written"), "merge: {e:?}");
                std::thread::sleep(Duration::from_millis(delay.saturating_sub(t0.elapsed().as_millis() as u64)));
                let signal = if kill { libc::SIGKILL } else { libc::SIGTERM };
                // SAFETY: kill(2) on our own child, not yet waited for.
                unsafe { libc::kill(child.id() as libc::pid_t, signal) };
                let o = child.wait_with_output().unwrap();
                check_stopped(&o, kill, None);
                format!("{sig} after {delay} ms, {stored_items} item(s) stored before")
            }
            Phase::Write(target) => {
                t.kills += kill as u32;
                t.terms += !kill as u32;
                let count = WRITES.iter().find(|(w, _)| *w == target).unwrap().1;
                let nth = rng.range(1, count);
                let spec = format!("{target}@{nth}:{sig}");
                let o = run(&out, Some(&spec));
                check_stopped(&o, kill, Some(&spec));
                format!("{spec}, {stored_items} item(s) stored before")
            }
            Phase::DiskFullScoring | Phase::DiskFull => {
                t.full += 1;
                let start = mnt.used();
                // While scoring: room for less than the second item's records (7 pages).
                let size = if phase == Phase::DiskFull { rng.range(start + 4096, full_bytes - 4096) } else { rng.range(start + 1, start + 7 * 4096) };
                mnt.remount(&format!("size={size}"));
                let o = run(&out, None);
                let e = error_lines(&o);
                assert_eq!(o.status.code(), Some(1), "disk full at {size} bytes: {}", stderr(&o));
                assert!(
                    e.len() == 1 && e[0].contains(&out.display().to_string()) && e[0].contains("No space left"),
                    "disk full at {size} bytes: one line naming the file: {e:?}"
                );
                assert_eq!(temp_files(&out), Vec::<PathBuf>::new(), "a full disk left temporary files: {}", e[0]);
                mnt.remount("size=64m");
                format!("tmpfs of {size} bytes (a full run takes {full_bytes}), {stored_items} item(s) stored before: {}", e[0])
            }
        };
        let left = temp_files(&out).len() as u32;
        let resumed = run(&out, None);
        assert!(resumed.status.success(), "trial {trial} ({what}): the resume failed: {}", stderr(&resumed));
        assert_eq!(temp_files(&out), Vec::<PathBuf>::new(), "trial {trial} ({what}): temporary files survived the resume");
        let err = stderr(&resumed);
        let quarantined = std::fs::read_to_string(out.join("cache/quarantine.jsonl")).map(|s| s.lines().count()).unwrap_or(0) as u32;
        let torn = err.contains("an incomplete last record") as u32;
        let same = common::run_outputs(&out) == ref_outputs && rows(&out) == ref_rows;
        println!("trial {trial:>2}: {:<40} {what}: {} (temporary files swept {left}, quarantined {quarantined}, torn tail cut {torn})", phase.label(), if same { "identical" } else { "DIFFERENT" });
        assert!(same, "trial {trial} ({what}): the resumed run differs from the uninterrupted one");
        // At most the record a SIGKILL cut in half; none after SIGTERM or a full disk.
        let may_quarantine = kill && !matches!(phase, Phase::DiskFull | Phase::DiskFullScoring);
        assert!(quarantined <= may_quarantine as u32, "trial {trial} ({what}): {quarantined} records quarantined");
        t.identical += same as u32;
        t.quarantined += quarantined;
        t.torn += torn;
        t.swept += left;
    }

    println!("\n| phase | trials | SIGKILL | SIGTERM | full disk | resumed identical | quarantined | torn tails cut | temp files swept |");
    println!("|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for (p, t) in &tally {
        println!("| {} | {} | {} | {} | {} | {} | {} | {} | {} |", p.label(), t.trials, t.kills, t.terms, t.full, t.identical, t.quarantined, t.torn, t.swept);
    }
}

/// A batch stopped by a fault: SIGKILL ends it by the signal; SIGTERM stops it after the prompts
/// in flight with one line and 143, or, when the signal comes after the last item (while writing
/// the final files), lets it finish.
fn check_stopped(o: &Output, kill: bool, spec: Option<&str>) {
    use std::os::unix::process::ExitStatusExt;
    let e = error_lines(o);
    if kill {
        assert_eq!(o.status.signal(), Some(libc::SIGKILL), "{spec:?}: not killed: {}", stderr(o));
    } else {
        match o.status.code() {
            Some(143) => assert!(e.len() == 1 && e[0].starts_with("error: stopped by SIGTERM: "), "{spec:?}: {e:?}"),
            Some(0) => assert!(e.is_empty(), "{spec:?}: {e:?}"),
            _ => panic!("{spec:?}: SIGTERM gave {:?}: {}", o.status, stderr(o)),
        }
    }
}

/// Read-only places are refused before any work, in seconds: `--out`, the shared score store, and
/// the models directory for `models fetch`.
#[test]
fn read_only_places_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ro = Tmpfs::mount(&dir.path().join("ro"), "ro,size=1m");
    let ro_path = ro.dir.display().to_string();
    let check = |what: &str, o: Output, t: Duration| {
        let e = error_lines(&o);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        assert!(e.len() == 1 && e[0].contains(&ro_path) && e[0].contains("Read-only file system"), "{what}: {e:?}");
        assert!(t < Duration::from_secs(5), "{what}: refused after {t:?}");
    };
    let t0 = Instant::now();
    let o = bin().args(batch_args(&ro.dir.join("run"))).output().unwrap();
    check("--out", o, t0.elapsed());
    let t0 = Instant::now();
    let o = bin().args(batch_args(&dir.path().join("run"))).env("HYST_SCORE_STORE", ro.dir.join("scores.jsonl")).output().unwrap();
    check("the score store", o, t0.elapsed());
    let t0 = Instant::now();
    let o = bin().args(["models", "fetch", common::GEMMA]).env("HYST_MODELS_DIR", &ro.dir).output().unwrap();
    check("models fetch", o, t0.elapsed());
}
