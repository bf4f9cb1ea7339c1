//! `hyst-tui slurm` on a real Slurm: a single-node cluster from Debian's packages (munged,
//! slurmctld, slurmd; `.ci/run` installs them) started by the test in a temporary directory,
//! on free ports, with its own munge key and socket, and stopped at the end (nothing is left
//! running). A 2-task array of a 2-item SmolLM2 run plus its merge job, submitted through
//! `hyst-tui slurm --submit`, must give the tables of the same run unsharded byte for byte;
//! so must a second submission whose task is cancelled mid-run and then resubmitted, and a third
//! whose one task runs into its one-minute time limit and is resubmitted with more. Also here:
//! four concurrent batches on one shared score store leave every line of it readable.
//!
//! Stopped by SIGTERM, SIGINT or SIGHUP (a check script that is stopped, a time limit), a test
//! with a cluster unwinds: its jobs are cancelled and its daemons stopped before the signal ends
//! the process, as after a failed assertion (`Cluster`'s drop); a test sends SIGTERM to a copy of
//! itself whose job runs, and checks that nothing of it is left.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

fn need(program: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
        let p = Path::new(dir).join(program);
        if p.is_file() {
            return p;
        }
    }
    panic!("{program} is not installed: this test needs Debian's slurmctld, slurmd, slurm-client and munge (.ci/run installs them)");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// The signal that asked this process to stop while a cluster ran (0: none).
static SIGNALLED: AtomicI32 = AtomicI32::new(0);
/// Clusters of this process not yet stopped.
static LIVE: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNALLED.store(sig, Ordering::SeqCst);
    if LIVE.load(Ordering::SeqCst) == 0 {
        // Nothing to clean up: the signal's own action, as if it had not been caught.
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// From the first cluster on, SIGTERM, SIGINT and SIGHUP are noted instead of ending the process
/// (where its jobs and daemons would outlive it); [`wait_for`] and [`Cluster::hyst`] then panic,
/// and the last cluster's drop raises the signal again once it has cleaned up.
fn catch_stop_signals() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            // SAFETY: the handler only stores to atomics and calls async-signal-safe functions.
            unsafe { libc::signal(sig, on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t) };
        }
    });
}

/// Panics (so the test unwinds and its guards clean up) once a stop signal has come.
fn stop_if_signalled() {
    let sig = SIGNALLED.load(Ordering::SeqCst);
    assert_eq!(sig, 0, "stopped by signal {sig}: cancelling this test's Slurm jobs and stopping its cluster");
}

/// A single-node Slurm of this test's own. Its daemons run in process groups of their own (a
/// signal to the test's group must not stop the controller before the jobs are cancelled) and
/// get SIGTERM should the test's thread die without dropping it (SIGKILL).
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<Child>,
}

/// A daemon of the cluster (see [`Cluster`]).
fn daemon(program: &str) -> Command {
    let mut c = Command::new(need(program));
    c.process_group(0).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: prctl(2) is async-signal-safe, as code between fork and exec must be.
    unsafe {
        c.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        })
    };
    c
}

impl Cluster {
    fn start() -> Cluster {
        catch_stop_signals();
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("slurm.conf");
        LIVE.fetch_add(1, Ordering::SeqCst);
        // From here on its drop stops whatever has started.
        let mut cluster = Cluster { dir, conf, daemons: Vec::new() };
        let dir_path = cluster.dir.path().to_path_buf();
        let d = dir_path.as_path();
        for sub in ["state", "spool"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // A munge key of our own (munged wants at least 32 bytes, readable by its user only).
        let key = d.join("munge.key");
        let mut bytes = vec![0u8; 128];
        use std::io::Read;
        std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut bytes).unwrap();
        std::fs::write(&key, &bytes).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let sock = d.join("munge.sock");
        let munged = daemon("munged")
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", sock.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--log-file={}", d.join("munged.log").display()))
            .arg(format!("--pid-file={}", d.join("munged.pid").display()))
            .arg(format!("--seed-file={}", d.join("munged.seed").display()))
            .spawn()
            .unwrap();
        cluster.daemons.push(munged);
        wait_for(Duration::from_secs(20), "munged's socket", || sock.exists());
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout).unwrap().trim().to_string();
        let conf = cluster.conf.clone();
        let p = |s: &str| d.join(s).display().to_string();
        std::fs::write(
            &conf,
            format!(
                "ClusterName=hysttest\nSlurmctldHost={host}\nSlurmUser=root\nSlurmdUser=root\n\
                 SlurmctldPort={}\nSlurmdPort={}\nAuthType=auth/munge\nCredType=cred/munge\n\
                 AuthInfo=socket={}\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
                 SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\n\
                 ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
                 JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
                 SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
                 ReturnToService=2\nMpiDefault=none\nMinJobAge=3600\nKillWait=5\n\
                 NodeName={host} CPUs=2 State=UNKNOWN\n\
                 PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4\n",
                free_port(),
                free_port(),
                sock.display(),
                p("state"),
                p("spool"),
                p("slurmctld.pid"),
                p("slurmd.pid"),
                p("slurmctld.log"),
                p("slurmd.log"),
            ),
        )
        .unwrap();
        for (name, extra) in [("slurmctld", vec!["-D", "-i"]), ("slurmd", vec!["-D"])] {
            let c = daemon(name).env("SLURM_CONF", &conf).arg("-f").arg(&conf).args(extra).spawn().unwrap();
            cluster.daemons.push(c);
        }
        wait_for(Duration::from_secs(60), "the node to be idle", || {
            let o = cluster.cmd("sinfo").args(["-h", "-o", "%t"]).output().unwrap();
            String::from_utf8_lossy(&o.stdout).trim() == "idle"
        });
        cluster
    }

    /// A Slurm client or hyst-tui command that talks to this cluster.
    fn cmd(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).env("HYST_SCORE_STORE", "off");
        c
    }

    fn hyst(&self, args: &[&str]) -> Output {
        let o = self.cmd(BIN).args(args).output().unwrap();
        stop_if_signalled();
        assert!(o.status.success(), "hyst-tui {args:?}: {}\n{}", text(&o), self.logs());
        o
    }

    fn logs(&self) -> String {
        ["slurmctld.log", "slurmd.log"]
            .iter()
            .map(|f| {
                let t = std::fs::read_to_string(self.dir.path().join(f)).unwrap_or_default();
                let tail: Vec<&str> = t.lines().rev().take(15).collect();
                format!("--- {f}:\n{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Job id → state (`squeue -t all`).
    fn states(&self) -> BTreeMap<String, String> {
        let o = self.cmd("squeue").args(["-h", "-r", "-t", "all", "-o", "%i|%T"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.split_once('|').map(|(a, b)| (a.trim().to_string(), b.trim().to_string())))
            .collect()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.cmd("scancel").args(["--full", "-u", "root"]).output();
        // The daemons end the jobs' processes (a server job's server among them): wait for that
        // before stopping them, else those processes outlive the test.
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            let o = self.cmd("squeue").args(["-h", "-t", "running,completing,configuring"]).output();
            if o.map_or(true, |o| String::from_utf8_lossy(&o.stdout).trim().is_empty()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        for c in self.daemons.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if LIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
            let sig = SIGNALLED.load(Ordering::SeqCst);
            if sig != 0 {
                // Cleaned up: now the signal ends the process, as it would have (the directory
                // first: the fields are dropped only after this).
                let _ = std::fs::remove_dir_all(self.dir.path());
                // SAFETY: signal(2) and raise(3) with a valid signal number.
                unsafe {
                    libc::signal(sig, libc::SIG_DFL);
                    libc::raise(sig);
                }
            }
        }
    }
}

fn wait_for(limit: Duration, what: &str, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        stop_if_signalled();
        assert!(t0.elapsed() < limit, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

use common::run_outputs as outputs;

/// The job ids of `hyst-tui slurm --submit`'s line `submitted: array job A (tasks …), merge job M …`.
fn submitted(o: &Output) -> (String, String) {
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let line = out.lines().find(|l| l.starts_with("submitted: ")).unwrap_or_else(|| panic!("{out}"));
    let word_after = |w: &str| line.split(w).nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    (word_after("array job "), word_after("merge job "))
}

#[test]
fn a_slurm_array_and_its_merge_give_the_unsharded_tables_also_after_a_cancelled_and_a_timed_out_task() {
    let c = Cluster::start();
    let t = tempfile::tempdir().unwrap();
    // The run has a steering operation too (R0's context steered by a random vector): its tasks
    // read the vector from the experiment file's folder and score it through the probe.
    let (n_layer, n_embd) = common::engine(common::SMOL).shape().unwrap();
    let vector = hyst_tui::engine::inside::ControlVector::new(n_embd, (1..n_layer).map(|l| (l, (0..n_embd).map(|i| ((i * 7 + l) % 13) as f32 / 13.0 - 0.5).collect()))).unwrap();
    vector.write(&t.path().join("v.gguf"), "smollm2").unwrap();
    let exp = t.path().join("steer.toml");
    std::fs::write(&exp, "[[operation]]\nname = \"r0_steered\"\nshort = \"S1\"\ncontext = \"ordinary_strong_reset\"\n[operation.steering]\nvector = \"v.gguf\"\nalpha = 2\nlayers = \"5-20\"\n").unwrap();
    let run = ["--models", common::SMOL, "--limit", "2", "--experiment", exp.to_str().unwrap()];
    // The same run, unsharded.
    let reference = t.path().join("reference");
    let mut args = vec!["--threads", "2", "batch"];
    args.extend(run);
    args.extend(["--out", reference.to_str().unwrap()]);
    c.hyst(&args);
    let expected = outputs(&reference);

    // The dry run names each task's model and item range; nothing is written.
    let s1 = t.path().join("s1");
    let slurm_with = |dir: &Path, tasks: &str, time: &str, extra: &[&str]| {
        let mut a = vec!["--threads", "2", "slurm", "--tasks", tasks, "--time", time];
        a.extend(run);
        a.extend(["--out", dir.to_str().unwrap()]);
        a.extend(extra);
        c.hyst(&a)
    };
    let slurm = |dir: &Path, extra: &[&str]| slurm_with(dir, "2", "20:00", extra);
    let dry = text(&slurm(&s1, &["--dry-run"]));
    assert!(dry.contains("sample items 1-1 of 2 (") && dry.contains("sample items 2-2 of 2 ("), "{dry}");
    assert!(!s1.exists(), "a dry run writes nothing");

    // Submit; wait for the merge job; the merged tables are the unsharded run's.
    let o = slurm(&s1, &["--submit"]);
    let (array, merge) = submitted(&o);
    let script = std::fs::read_to_string(s1.join("slurm/array.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --time=20:00") && script.contains("--shard-by model"), "{script}");
    assert!(script.contains("# task 1: smollm2-135m") && script.contains("# task 2: smollm2-135m"), "{script}");
    wait_for(Duration::from_secs(900), "the first submission's merge job", || {
        c.states().get(&merge).is_some_and(|s| s == "COMPLETED" || s == "FAILED")
    });
    assert_eq!(c.states().get(&merge).map(String::as_str), Some("COMPLETED"), "{}", c.logs());
    assert_eq!(c.states().get(&format!("{array}_1")).map(String::as_str), Some("COMPLETED"));
    let st = c.cmd(BIN).args(["status", s1.to_str().unwrap()]).output().unwrap();
    assert!(st.status.success(), "{}", text(&st));
    let st = text(&st);
    assert!(st.contains("task 1/2") && st.contains("task 2/2") && st.contains("merged"), "{st}");
    assert!(st.contains(&format!("{array}_2 COMPLETED")), "{st}");
    assert_eq!(outputs(&s1.join("merged")), expected, "merged tables differ from the unsharded run's");
    let ops = std::fs::read_to_string(s1.join("merged/tables/experiment_operations.csv")).unwrap();
    assert!(ops.lines().any(|l| l.contains("r0_steered")), "{ops}");
    assert!(s1.join("merged/vectors").read_dir().unwrap().count() == 1, "the merge keeps the vector");
    // merge is idempotent, and takes the parent directory or a glob.
    let again = t.path().join("again");
    c.hyst(&["merge", s1.join("tasks/task-*").to_str().unwrap(), "--out", again.to_str().unwrap()]);
    assert_eq!(outputs(&again), expected);
    c.hyst(&["merge", s1.to_str().unwrap(), "--out", s1.join("merged").to_str().unwrap()]);
    assert_eq!(outputs(&s1.join("merged")), expected);
    // A missing shard is refused, naming it.
    let o = c.cmd(BIN).args(["merge", s1.join("tasks/task-001").to_str().unwrap(), "--out", t.path().join("bad").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("shard 2/2 is missing"), "{}", text(&o));

    // A second submission: cancel a task while it runs, resubmit, same tables.
    let s2 = t.path().join("s2");
    let (array2, merge2) = submitted(&slurm(&s2, &["--submit"]));
    let victim = format!("{array2}_1");
    wait_for(Duration::from_secs(300), "task 1 to run", || c.states().get(&victim).is_some_and(|s| s == "RUNNING"));
    let o = c.cmd("scancel").arg(&victim).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    wait_for(Duration::from_secs(300), "the array to end", || {
        let s = c.states();
        [format!("{array2}_1"), format!("{array2}_2")].iter().all(|j| s.get(j).is_some_and(|x| !matches!(x.as_str(), "RUNNING" | "PENDING" | "COMPLETING" | "SIGNALING")))
    });
    assert_eq!(c.states().get(&victim).map(String::as_str), Some("CANCELLED"), "{}", c.logs());
    let st = c.cmd(BIN).args(["status", s2.to_str().unwrap()]).output().unwrap();
    assert_eq!(st.status.code(), Some(1), "an incomplete run is not exit 0: {}", text(&st));
    assert!(text(&st).contains("runs are not complete"), "{}", text(&st));
    let o = slurm(&s2, &["--submit"]);
    let out = text(&o);
    assert!(out.contains(&format!("cancelled the earlier merge job {merge2}")), "{out}");
    assert!(out.contains("(tasks 1)"), "only the cancelled task is submitted again: {out}");
    let (_, merge3) = submitted(&o);
    wait_for(Duration::from_secs(900), "the resubmission's merge job", || {
        c.states().get(&merge3).is_some_and(|s| s == "COMPLETED" || s == "FAILED")
    });
    assert_eq!(c.states().get(&merge3).map(String::as_str), Some("COMPLETED"), "{}", c.logs());
    assert_eq!(outputs(&s2.join("merged")), expected, "tables after a cancelled and resubmitted task differ");
    let st = c.cmd(BIN).args(["status", s2.to_str().unwrap()]).output().unwrap();
    assert!(st.status.success(), "{}", text(&st));

    // A third submission runs into its time limit: one task of both items with one minute
    // (Slurm's smallest limit). The test freezes the task (SIGSTOP) once its first item is
    // stored, so that it cannot finish before the limit. Slurm's warning signal
    // (`--signal=B:TERM@300`, due at once with so short a limit) comes with a SIGCONT, and the
    // task starts to stop after the prompts in flight; the test freezes it again. At the limit Slurm
    // sends SIGCONT and SIGTERM: the second SIGTERM ends the task at once (TIMEOUT), with the
    // first item stored. (Had the warning come before the first item was stored, the task
    // would have stopped after it by itself: FAILED, exit 143, its line in the log.)
    // Submitting again with more time resumes the task's own directory, and the merged run is
    // the unsharded one byte for byte.
    let s3 = t.path().join("s3");
    let (array3, _) = submitted(&slurm_with(&s3, "1", "1", &["--submit"]));
    let task = format!("{array3}_1");
    let task_dir = s3.join("tasks/task-001");
    let log_file = s3.join("slurm/logs/task-1.out");
    // (SIGNALING: Slurm is still delivering the time limit's signals; not an end.)
    let over = |x: &str| !matches!(x, "RUNNING" | "PENDING" | "CONFIGURING" | "COMPLETING" | "SIGNALING");
    let freeze = || {
        if let Ok(pid) = std::fs::read_to_string(task_dir.join(".lock")).map(|p| p.trim().parse::<i32>().unwrap()) {
            // SAFETY: kill(2) with SIGSTOP on the task's hyst-tui (if it ended already: ESRCH).
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
    };
    let (mut frozen, mut refrozen) = (false, false);
    let t0 = Instant::now();
    while !c.states().get(&task).is_some_and(|x| over(x)) {
        assert!(t0.elapsed() < Duration::from_secs(400), "the one-minute task did not end: {}", c.logs());
        if !frozen && std::fs::read_to_string(task_dir.join("cache/scores.jsonl")).is_ok_and(|s| !s.is_empty()) {
            freeze();
            frozen = true;
        }
        if frozen && !refrozen && std::fs::read_to_string(&log_file).is_ok_and(|l| l.contains("SIGTERM: stopping after the work in flight")) {
            freeze();
            refrozen = true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let ended = c.states().get(&task).cloned().unwrap_or_default();
    let log = std::fs::read_to_string(&log_file).unwrap_or_default();
    let job_log = |f: &str| std::fs::read_to_string(c.dir.path().join(f)).unwrap_or_default().lines().filter(|l| l.contains(&format!("JobId={array3}")) || l.contains(&format!("job {array3}")) || l.contains(&format!("[{array3}"))).collect::<Vec<_>>().join("\n");
    assert!(ended == "TIMEOUT" || ended == "FAILED", "the one-minute task ended {ended}: {log}\n{}\n{}", job_log("slurmctld.log"), job_log("slurmd.log"));
    if ended == "FAILED" {
        assert!(log.contains("error: stopped by SIGTERM: "), "a failed task says where it stopped: {log}");
    }
    let manifest = std::fs::read_to_string(task_dir.join("manifest.json")).unwrap_or_default();
    assert!(!manifest.contains("\"complete\": true"), "{manifest}");
    println!("the one-minute task ended {ended} (frozen after its first item: {frozen}, again after the warning signal: {refrozen})");
    let (_, merge4) = submitted(&slurm_with(&s3, "1", "20:00", &["--submit"]));
    wait_for(Duration::from_secs(900), "the resubmitted task's merge job", || {
        c.states().get(&merge4).is_some_and(|s| s == "COMPLETED" || s == "FAILED")
    });
    assert_eq!(c.states().get(&merge4).map(String::as_str), Some("COMPLETED"), "{}", c.logs());
    assert_eq!(outputs(&s3.join("merged")), expected, "tables after a timed-out and resubmitted task differ");
}

/// The server of the server-job test: the command that serves (the job script's last line, with
/// `$PORT` and `$HYST_SLURM_TEST_KEY` left to the shell) and the models.toml endpoint of its model.
/// llama-server by default (scripts/build-llama-server.sh, SmolLM2's GGUF); vLLM's CPU build
/// when HYST_SLURM_VLLM_PYTHON, HYST_SLURM_VLLM_MODEL (a Hugging Face folder) and
/// HYST_SLURM_VLLM_GGUF (the file name, in the models directory, of the same weights as GGUF,
/// for the prompts) are set, as scripts/check-vllm.sh sets them; HYST_SLURM_VLLM_MODULE names
/// the module that serves (default: the CPU build's, docs/guide/served.md).
fn server_of_the_test() -> (String, String, Duration) {
    if let (Ok(py), Ok(model), Ok(gguf)) = (std::env::var("HYST_SLURM_VLLM_PYTHON"), std::env::var("HYST_SLURM_VLLM_MODEL"), std::env::var("HYST_SLURM_VLLM_GGUF")) {
        let module = std::env::var("HYST_SLURM_VLLM_MODULE").unwrap_or_else(|_| "vllm.entrypoints.launchers.api_server.entry".into());
        let cmd = format!(
            "VLLM_CPU_KVCACHE_SPACE=2 HF_HUB_OFFLINE=1 exec {py} -m {module} --model {model} \\\n  \
             --served-model-name served --dtype float32 --max-model-len 2048 --max-logprobs 100 --enforce-eager \\\n  \
             --no-enable-prefix-caching --host 127.0.0.1 --port \"$PORT\" --api-key \"$HYST_SLURM_TEST_KEY\""
        );
        let entry = format!(
            "file = \"{gguf}\"\nendpoint = {{ api = \"completions\", url = \"http://${{HYST_SERVER_HOST}}:PORT/v1\", model = \"served\", api_key_env = \"HYST_SLURM_TEST_KEY\" }}"
        );
        return (cmd, entry, Duration::from_secs(900));
    }
    let out = Command::new("bash").arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/build-llama-server.sh")).output().unwrap();
    assert!(out.status.success(), "scripts/build-llama-server.sh: {}", text(&out));
    let server = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let name = "SmolLM2-135M-Instruct.Q4_1.gguf";
    let gguf = hyst_tui::config::models_dir().join(name);
    assert!(gguf.is_file(), "{} is missing: run `bash scripts/fetch-test-models.sh`", gguf.display());
    let cmd = format!(
        "exec {server} -m {} --host 127.0.0.1 --port \"$PORT\" -fa off -np 1 -c 8192 -t 2 --api-key \"$HYST_SLURM_TEST_KEY\"",
        gguf.display()
    );
    let entry = format!("file = \"{name}\"\nendpoint = {{ api = \"llama-server\", url = \"http://${{HYST_SERVER_HOST}}:PORT\", api_key_env = \"HYST_SLURM_TEST_KEY\" }}");
    (cmd, entry, Duration::from_secs(300))
}

/// The README's cluster recipe, executed: a server job serves the model, `hyst-tui slurm
/// --server-job` submits it, then a 2-task array that starts once the server job runs, reads the
/// host it published, waits for the server and scores through it, then the merge job, and a job
/// that cancels the server once the array has ended. The merged tables are those of the same
/// served run unsharded (the same server command, started by the test), byte for byte.
#[test]
fn a_served_run_through_a_server_job_gives_the_unsharded_tables() {
    let (serve, entry, patience) = server_of_the_test();
    let c = Cluster::start();
    let t = tempfile::tempdir().unwrap();
    let port = free_port();
    let key = format!("slurm-test-{}", std::process::id());
    let cfg = t.path().join("models.toml");
    let bundled = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/models.toml")).unwrap();
    std::fs::write(
        &cfg,
        format!("{bundled}\n[models.\"served\"]\nname = \"the server job's model\"\nfamily = \"smollm2\"\nsystem = \"native\"\n{}\n", entry.replace("PORT", &port.to_string())),
    )
    .unwrap();
    let script = t.path().join("server.sbatch");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\n#SBATCH --job-name=hyst-test-server\n#SBATCH --time=30:00\n#SBATCH --output={}/server-%j.out\n\
             # publish this node's name for the tasks, then serve\nhostname > \"$HYST_SERVER_HOST_FILE\"\nPORT={port}\n{serve}\n",
            t.path().display()
        ),
    )
    .unwrap();
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap().trim().to_string();
    let run = ["--models", "served", "--limit", "2"];
    let with_env = |mut cmd: Command| {
        cmd.env("HYST_SLURM_TEST_KEY", &key).env("HYST_MODELS_CONFIG", &cfg);
        cmd
    };

    // The same served run, unsharded, through the same server command started here.
    let reference = t.path().join("reference");
    let mut server = with_env(Command::new("bash"));
    // In a process group of its own: vLLM's engine runs in child processes, which go with it.
    let server = server
        .process_group(0)
        .arg("-c")
        .arg(format!("PORT={port}\n{serve}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(t.path().join("reference-server.log")).unwrap())
        .spawn()
        .unwrap();
    struct KillOnDrop(Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            // SAFETY: kill(2) of the server's process group (its id is the server's pid).
            unsafe { libc::kill(-(self.0.id() as i32), libc::SIGKILL) };
            let _ = self.0.wait();
        }
    }
    let server = KillOnDrop(server);
    let mut b = with_env(c.cmd(BIN));
    b.env("HYST_SERVER_HOST", &host).args(["--threads", "2", "batch", "--wait-for-server", &patience.as_secs().to_string()]).args(run);
    let o = b.args(["--out", reference.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "the unsharded served run: {}", text(&o));
    assert!(text(&o).contains("served: the server answered after"), "{}", text(&o));
    drop(server);
    wait_for(Duration::from_secs(60), "the reference server's port to be free", || std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
    let expected = outputs(&reference);

    let dir = t.path().join("s");
    let mut a = with_env(c.cmd(BIN));
    a.args(["--threads", "2", "--models-config", cfg.to_str().unwrap(), "slurm", "--tasks", "2", "--time", "20:00"]).args(run);
    a.args(["--server-job", script.to_str().unwrap(), "--out", dir.to_str().unwrap(), "--submit"]);
    let o = a.output().unwrap();
    assert!(o.status.success(), "hyst-tui slurm --server-job: {}\n{}", text(&o), c.logs());
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let line = out.lines().find(|l| l.starts_with("submitted: ")).unwrap_or_else(|| panic!("{out}"));
    let word_after = |w: &str| line.split(w).nth(1).unwrap_or_else(|| panic!("{line}")).split_whitespace().next().unwrap().trim_end_matches(',').to_string();
    let (server_job, array, merge, stop) = (word_after("server job "), word_after("array job "), word_after("merge job "), word_after("stop-server job "));
    let array_script = std::fs::read_to_string(dir.join("slurm/array.sbatch")).unwrap();
    assert!(array_script.contains("export HYST_SERVER_HOST=") && array_script.contains("--wait-for-server 3600"), "{array_script}");
    assert!(!array_script.contains(&key) && !std::fs::read_to_string(dir.join("slurm/server.sbatch")).unwrap().contains(&key));
    wait_for(Duration::from_secs(1500), "the merge job", || c.states().get(&merge).is_some_and(|s| s == "COMPLETED" || s == "FAILED" || s == "CANCELLED"));
    let logs = |k: usize| std::fs::read_to_string(dir.join(format!("slurm/logs/task-{k}.out"))).unwrap_or_default();
    assert_eq!(c.states().get(&merge).map(String::as_str), Some("COMPLETED"), "{}\n{}\n{}", logs(1), logs(2), c.logs());
    for k in 1..=2 {
        assert_eq!(c.states().get(&format!("{array}_{k}")).map(String::as_str), Some("COMPLETED"));
        let log = logs(k);
        assert!(log.contains("waiting up to 3600 s for the server of served (http://${HYST_SERVER_HOST}:") && log.contains("served: the server answered after"), "task {k}: {log}");
    }
    assert_eq!(std::fs::read_to_string(dir.join("slurm/server-host")).unwrap().trim(), host);
    let manifest = std::fs::read_to_string(dir.join("tasks/task-1/manifest.json")).unwrap_or_else(|_| std::fs::read_to_string(dir.join("tasks/task-001/manifest.json")).unwrap());
    assert!(manifest.contains("http://${HYST_SERVER_HOST}:"), "the identity keeps the url as written: {manifest}");
    assert_eq!(outputs(&dir.join("merged")), expected, "the merged tables differ from the unsharded served run's");
    // Once the array has ended the stop job cancels the server.
    wait_for(Duration::from_secs(120), "the server job to be cancelled", || {
        let s = c.states();
        s.get(&stop).is_some_and(|x| x == "COMPLETED") && s.get(&server_job).is_some_and(|x| x == "CANCELLED")
    });
    let mut grep = Command::new("grep");
    let found = grep.args(["-rlF", &key, dir.to_str().unwrap(), reference.to_str().unwrap()]).output().unwrap();
    assert!(found.stdout.is_empty(), "the API key is written in: {}", String::from_utf8_lossy(&found.stdout));
}

/// Every line of a score store: a sha256 of its JSON, a tab, the JSON; its key once.
fn check_store(path: &Path) -> usize {
    use sha2::Digest;
    let text = std::fs::read_to_string(path).unwrap();
    let mut keys = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let (sum, json) = line.split_once('\t').unwrap_or_else(|| panic!("line {}: no checksum: {line}", i + 1));
        assert_eq!(hex::encode(sha2::Sha256::digest(json.as_bytes())), sum, "line {} is torn", i + 1);
        let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        assert!(keys.insert(v["key"].as_str().unwrap().to_string()), "line {}: duplicate key", i + 1);
    }
    assert!(text.ends_with('\n'));
    keys.len()
}

#[test]
fn four_concurrent_batches_on_one_score_store_leave_every_line_readable() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("store/scores.jsonl");
    let tiny = format!("jsonl:{}/tests/data/tiny.jsonl", env!("CARGO_MANIFEST_DIR"));
    // Four configurations that share contexts (the clean and ramp prompts of the same items)
    // and differ in others (the advocated option follows the seed).
    let children: Vec<(u64, Child)> = (1..=4u64)
        .map(|seed| {
            let c = Command::new(BIN)
                .args(["--threads", "1", "--score-store", store.to_str().unwrap(), "batch", "--datasets", &tiny, "--limit", "2"])
                .args(["--seed", &seed.to_string(), "--tables-every", "0", "--out", t.path().join(format!("run{seed}")).to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (seed, c)
        })
        .collect();
    for (seed, c) in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "batch with seed {seed}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let records = check_store(&store);
    assert!(!store.with_file_name("quarantine.jsonl").exists(), "nothing was quarantined");
    // The store holds every context of every run once.
    let mut all = BTreeSet::new();
    for seed in 1..=4 {
        let cache = std::fs::read_to_string(t.path().join(format!("run{seed}/cache/scores.jsonl"))).unwrap();
        for l in cache.lines() {
            let v: serde_json::Value = serde_json::from_str(l.split_once('\t').unwrap().1).unwrap();
            all.insert(v["key"].as_str().unwrap().to_string());
        }
    }
    assert_eq!(records, all.len(), "the store holds each run's records once");
    assert!(records > 0);
}

/// SIGTERM to a test's process group (a stopped check script, `timeout`) while its job runs: the
/// test process cancels the job, stops its daemons, removes its directory and then dies of the
/// signal; nothing of its cluster or job is left. The test runs itself as the child that gets the
/// signal (HYST_SLURM_STOP_CHILD set), with a cluster and a running job of its own.
#[test]
fn a_stop_signal_cancels_the_jobs_and_stops_the_cluster() {
    const NAME: &str = "a_stop_signal_cancels_the_jobs_and_stops_the_cluster";
    let marker = format!("600.{}", std::process::id());
    if let Ok(marker) = std::env::var("HYST_SLURM_STOP_CHILD") {
        let c = Cluster::start();
        let o = c.cmd("sbatch").args(["--parsable", "--output=/dev/null", "--wrap", &format!("sleep {marker}")]).output().unwrap();
        assert!(o.status.success(), "sbatch: {}\n{}", text(&o), c.logs());
        let job = String::from_utf8_lossy(&o.stdout).trim().to_string();
        wait_for(Duration::from_secs(120), "the job to run", || c.states().get(&job).is_some_and(|s| s == "RUNNING"));
        println!("cluster ready: {}", c.dir.path().display());
        wait_for(Duration::from_secs(600), "a stop signal", || false);
        unreachable!("wait_for panics");
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([NAME, "--exact", "--nocapture", "--test-threads", "1"])
        .env("HYST_SLURM_STOP_CHILD", &marker)
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pgid = child.id() as libc::pid_t;
    // Both pipes drained to the end by threads (the child must never block on a full pipe, nor
    // write to a closed one); the directory of its cluster comes as soon as it is printed.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufRead::lines(std::io::BufReader::new(stdout)).map_while(Result::ok) {
            // (after the harness's "test NAME ... " on the same line)
            if let Some((_, d)) = l.split_once("cluster ready: ") {
                let _ = tx.send(PathBuf::from(d));
            }
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut err);
        err
    });
    let Ok(dir) = rx.recv_timeout(Duration::from_secs(300)) else {
        // SAFETY: kill(2) of the child's own process group.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = child.wait();
        panic!("the child never had its job running: {}", stderr.join().unwrap());
    };
    // Processes of the child's cluster and job: the daemons name its directory, the job's shell
    // its spool, the job itself the marker.
    let of_it = || -> Vec<String> {
        let mut v = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let zombie = std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z')));
            if !zombie && (cmd.contains(dir.to_str().unwrap()) || cmd.contains(&marker)) {
                v.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
        v
    };
    assert!(of_it().iter().any(|p| p.contains(&marker)), "the job is not running: {:?}", of_it());
    // SAFETY: kill(2) of the child's own process group.
    assert_eq!(unsafe { libc::kill(-pgid, libc::SIGTERM) }, 0);
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t0.elapsed() < Duration::from_secs(180), "the child did not end after SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    };
    use std::os::unix::process::ExitStatusExt;
    let err = stderr.join().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGTERM), "the child ends by the signal: {status:?}\n{err}");
    assert!(err.contains("stopped by signal 15: cancelling this test's Slurm jobs"), "{err}");
    assert!(!dir.exists(), "{} is left", dir.display());
    wait_for(Duration::from_secs(10), "the child's processes to be gone", || of_it().is_empty());
}

#[test]
fn without_slurm_submit_says_so_in_one_line_and_the_scripts_are_written() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("run");
    let o = Command::new(BIN)
        .env("PATH", t.path())
        .env("HYST_SCORE_STORE", "off")
        .args(["slurm", "--tasks", "2", "--limit", "2", "--out", dir.to_str().unwrap(), "--submit"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: --submit: sbatch is not on PATH (no Slurm here)"), "{err}");
    for f in ["slurm/array.sbatch", "slurm/merge.sbatch", "slurm/tasks.json"] {
        assert!(dir.join(f).is_file(), "{f} is written");
    }
    let merge = std::fs::read_to_string(dir.join("slurm/merge.sbatch")).unwrap();
    assert!(merge.contains(&format!("merge {} --out {}", dir.join("tasks").display(), dir.join("merged").display())), "{merge}");
    // Status of a run no task has started: every task listed, not complete.
    let st = Command::new(BIN).env("PATH", t.path()).args(["status", dir.to_str().unwrap()]).output().unwrap();
    assert_eq!(st.status.code(), Some(1));
    let out = text(&st);
    assert_eq!(out.matches("not started").count(), 3, "two tasks and the merged run: {out}");
}
