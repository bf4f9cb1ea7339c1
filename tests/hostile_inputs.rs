//! Hostile model files through the binary: a GGUF from the internet carries a Jinja chat template
//! and a header that llama.cpp trusts. A template that loops without end, recurses or builds a
//! huge string, one that raises, a header with absurd sizes and a truncated file each end in one
//! `error:` line and exit code 1 — never a hang, a crash or a screen of llama.cpp log lines.
//! Every input is built here (the templates also inside a copy of the real SmolLM2 GGUF). Files
//! from a colleague (experiments, run plans, models.toml) are input too: size, file type, control
//! characters and names that are paths are refused in one line; template syntax stays text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");
const SMOL: &str = "smollm2-135m";

fn smol_file() -> PathBuf {
    let cfg = hyst_tui::config::ModelsConfig::bundled().unwrap();
    let p = cfg.get(SMOL).unwrap().path(&hyst_tui::config::models_dir());
    assert!(p.exists(), "test model missing at {}: run `bash scripts/fetch-test-models.sh`", p.display());
    p
}

/// A temp dir with a models.toml of the given `[models.KEY]` bodies and a messages file.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(models: &[(&str, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut toml = String::new();
        for (key, body) in models {
            toml.push_str(&format!("[models.{key}]\nname = \"{key}\"\nfamily = \"test\"\nsystem = \"native\"\n{body}\n\n"));
        }
        std::fs::write(dir.path().join("models.toml"), toml).unwrap();
        std::fs::write(dir.path().join("m.json"), r#"[{"role":"user","content":"Answer A or B."}]"#).unwrap();
        Setup { dir }
    }

    /// `hyst-tui score --model KEY`, with the time it took (printed, not asserted).
    fn score(&self, key: &str) -> Output {
        let t0 = Instant::now();
        let o = Command::new(BIN)
            .arg("--models-config")
            .arg(self.dir.path().join("models.toml"))
            .args(["--threads", "2", "score", "--model", key, "--letters", "A,B", "--messages"])
            .arg(self.dir.path().join("m.json"))
            .env("HYST_DATA_DIR", self.dir.path().join("data"))
            .env("HYST_SCORE_STORE", "off")
            .output()
            .unwrap();
        eprintln!("{key}: exit {:?} after {:.2}s", o.status.code(), t0.elapsed().as_secs_f64());
        o
    }
}

/// Exit 1 and exactly one line on stderr: `error: …` with every needle.
fn one_error_line(o: &Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} not in {err}");
    }
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    lines[0].to_string()
}

/// An inline template on the real SmolLM2 GGUF.
fn inline(jinja: &str) -> String {
    format!("file = \"x.gguf\"\nsource = {{ kind = \"local\", path = {:?} }}\ntemplate = {{ kind = \"inline\", jinja = '''{jinja}''' }}", smol_file().display().to_string())
}

fn local(path: &Path) -> String {
    format!("file = \"x.gguf\"\nsource = {{ kind = \"local\", path = {:?} }}", path.display().to_string())
}

const NESTED_LOOPS: &str = "{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}";
const RECURSION: &str = "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}";
const GIGABYTE: &str = "{% set ns = namespace(s='0123456789abcdef') %}{% for i in range(30) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}";
const RAISES: &str = "{{ raise_exception('Only user and assistant roles are supported!\n(see the model card)') }}";

#[test]
fn hostile_chat_templates_are_one_error_line() {
    let s = Setup::new(&[
        ("loops", inline(NESTED_LOOPS)),
        ("recursion", inline(RECURSION)),
        ("gigabyte", inline(GIGABYTE)),
        ("raises", inline(RAISES)),
        ("broken", inline("{% for m in messages %}{{ m.content }")),
    ]);
    one_error_line(&s.score("loops"), &["chat template failed to render", "used up its budget", "loop or recursion without end"]);
    one_error_line(&s.score("recursion"), &["chat template failed to render", "recursion"]);
    one_error_line(&s.score("gigabyte"), &["chat template failed to render"]);
    one_error_line(&s.score("raises"), &["chat template failed to render", "Only user and assistant roles are supported! (see the model card)"]);
    one_error_line(&s.score("broken"), &["chat template does not compile", "syntax error"]);
}

/// GGUF value types (the GGUF specification's numbering).
const T_STRING: u32 = 8;
const T_ARRAY: u32 = 9;

fn gguf_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s);
}

/// A GGUF header: magic, version 3, the tensor and key-value counts.
fn header(n_tensors: u64, n_kv: u64) -> Vec<u8> {
    let mut v = b"GGUF".to_vec();
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&n_tensors.to_le_bytes());
    v.extend_from_slice(&n_kv.to_le_bytes());
    v
}

#[test]
fn absurd_and_truncated_gguf_files_are_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(&str, Vec<u8>)> = Vec::new();
    // Counts no file can hold.
    let mut v = header(u64::MAX / 2, u64::MAX / 2);
    v.extend_from_slice(&[0u8; 64]);
    files.push(("counts", v));
    // One key whose name is said to be an exabyte long.
    let mut v = header(0, 1);
    v.extend_from_slice(&(1u64 << 60).to_le_bytes());
    v.extend_from_slice(b"general.architecture");
    files.push(("key_length", v));
    // A string array of 2^60 elements.
    let mut v = header(0, 1);
    gguf_string(&mut v, b"tokenizer.ggml.tokens");
    v.extend_from_slice(&T_ARRAY.to_le_bytes());
    v.extend_from_slice(&T_STRING.to_le_bytes());
    v.extend_from_slice(&(1u64 << 60).to_le_bytes());
    gguf_string(&mut v, b"a");
    files.push(("array_length", v));
    // A tensor with absurd dimensions.
    let mut v = header(1, 1);
    gguf_string(&mut v, b"general.architecture");
    v.extend_from_slice(&T_STRING.to_le_bytes());
    gguf_string(&mut v, b"llama");
    gguf_string(&mut v, b"token_embd.weight");
    v.extend_from_slice(&2u32.to_le_bytes());
    v.extend_from_slice(&u64::MAX.to_le_bytes());
    v.extend_from_slice(&u64::MAX.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes()); // F32
    v.extend_from_slice(&0u64.to_le_bytes());
    files.push(("tensor_dims", v));
    // The real model cut inside its header, and cut after its header (tensor data missing).
    let real = std::fs::read(smol_file()).unwrap();
    files.push(("cut_header", real[..4096].to_vec()));
    files.push(("cut_data", real[..real.len() / 3].to_vec()));
    let mut models = Vec::new();
    for (key, bytes) in &files {
        let p = dir.path().join(format!("{key}.gguf"));
        std::fs::write(&p, bytes).unwrap();
        models.push((*key, local(&p)));
    }
    let s = Setup::new(&models);
    for (key, _) in &files {
        let line = one_error_line(&s.score(key), &["cannot load model", "truncated or corrupt"]);
        eprintln!("{key}: {line}");
    }
}

/// A copy of a GGUF with its `tokenizer.chat_template` replaced (tensor data moved to the new
/// aligned offset; everything else byte for byte).
fn with_chat_template(gguf: &[u8], template: &str) -> Vec<u8> {
    struct R<'a> {
        b: &'a [u8],
        at: usize,
    }
    impl R<'_> {
        fn take(&mut self, n: usize) -> &[u8] {
            let s = &self.b[self.at..self.at + n];
            self.at += n;
            s
        }
        fn u32(&mut self) -> u32 {
            u32::from_le_bytes(self.take(4).try_into().unwrap())
        }
        fn u64(&mut self) -> u64 {
            u64::from_le_bytes(self.take(8).try_into().unwrap())
        }
        fn string(&mut self) -> Vec<u8> {
            let n = self.u64() as usize;
            self.take(n).to_vec()
        }
        /// Skips one value of type `t`.
        fn skip(&mut self, t: u32) {
            match t {
                0 | 1 | 7 => self.at += 1,
                2 | 3 => self.at += 2,
                4..=6 => self.at += 4,
                10..=12 => self.at += 8,
                T_STRING => {
                    self.string();
                }
                T_ARRAY => {
                    let et = self.u32();
                    for _ in 0..self.u64() {
                        self.skip(et);
                    }
                }
                _ => panic!("unknown GGUF type {t}"),
            }
        }
    }
    let mut r = R { b: gguf, at: 0 };
    assert_eq!(r.take(4), b"GGUF");
    assert_eq!(r.u32(), 3, "GGUF version");
    let n_tensors = r.u64();
    let n_kv = r.u64();
    let mut out = header(n_tensors, n_kv);
    let mut alignment = 32u64;
    let mut replaced = false;
    for _ in 0..n_kv {
        let start = r.at;
        let key = r.string();
        let t = r.u32();
        if key == b"tokenizer.chat_template" {
            assert_eq!(t, T_STRING);
            r.skip(t);
            gguf_string(&mut out, &key);
            out.extend_from_slice(&T_STRING.to_le_bytes());
            gguf_string(&mut out, template.as_bytes());
            replaced = true;
            continue;
        }
        if key == b"general.alignment" {
            let a = r.at;
            alignment = r.u32() as u64;
            r.at = a;
        }
        r.skip(t);
        out.extend_from_slice(&gguf[start..r.at]);
    }
    assert!(replaced, "the GGUF has no tokenizer.chat_template");
    let infos = r.at;
    for _ in 0..n_tensors {
        r.string();
        let dims = r.u32();
        r.at += 8 * dims as usize + 4 + 8;
    }
    out.extend_from_slice(&gguf[infos..r.at]);
    let pad = |n: usize| (n as u64).div_ceil(alignment) as usize * alignment as usize;
    let data = pad(r.at);
    out.resize(pad(out.len()), 0);
    out.extend_from_slice(&gguf[data..]);
    out
}

/// Two nested `range(100000)` loops in the GGUF's own template (they hung the tool before render
/// fuel), and a template that raises, each one line. A rewritten file with a plain ChatML template
/// scores exactly as the original file with that template inline, so the rewrite itself is sound.
#[test]
fn a_gguf_whose_own_template_loops_or_raises_is_one_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::read(smol_file()).unwrap();
    let mut models = vec![("original", inline(SMOL_TEMPLATE_PROBE))];
    for (key, tmpl) in [("loops", NESTED_LOOPS), ("raises", RAISES), ("same", SMOL_TEMPLATE_PROBE)] {
        let p = dir.path().join(format!("{key}.gguf"));
        std::fs::write(&p, with_chat_template(&real, tmpl)).unwrap();
        models.push((key, local(&p)));
    }
    let s = Setup::new(&models);
    one_error_line(&s.score("loops"), &["chat template failed to render", "used up its budget"]);
    one_error_line(&s.score("raises"), &["chat template failed to render", "Only user and assistant roles are supported!"]);
    let same = s.score("same");
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stderr));
    let original = s.score("original");
    assert!(original.status.success(), "{}", String::from_utf8_lossy(&original.stderr));
    assert!(String::from_utf8_lossy(&same.stdout).contains("<- pred"));
    assert_eq!(String::from_utf8_lossy(&same.stdout), String::from_utf8_lossy(&original.stdout));
}

/// ChatML, as SmolLM2 is prompted.
const SMOL_TEMPLATE_PROBE: &str = "{% for m in messages %}{{ '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// Files from a colleague are input: an experiment, a run plan or a models.toml that is huge, a
/// FIFO, carries a control character (raw or as a TOML escape: a terminal escape sequence in a
/// label), or names an operation or a model with a path is one `error:` line and exit 1, in well
/// under a second; template syntax in a message stays text (nothing is rendered or executed).
#[test]
fn files_from_colleagues_are_one_error_line_and_template_syntax_stays_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let hyst = |args: &[&str]| {
        let t0 = Instant::now();
        let o = Command::new(BIN).args(args).env("HYST_DATA_DIR", d.join("data")).env("HYST_SCORE_STORE", "off").output().unwrap();
        assert!(t0.elapsed().as_secs() < 10, "{args:?} took {:?}", t0.elapsed());
        o
    };
    let path = |name: &str| d.join(name).display().to_string();
    let experiment = |label: &str, name: &str, text: &str| {
        format!(
            "description = \"from a colleague\"\n[prompts]\nmine = '''{text}'''\n[[operation]]\nname = \"{name}\"\nshort = \"X1\"\nlabel = \"{label}\"\nsuite = \"self-consistency\"\nhistory = \"kept\"\nassistant = \"model\"\nturn = [\"mine\"]\ndescription = \"a colleague's operation\"\n"
        )
    };
    let conditions = |file: &str| hyst(&["conditions", "--experiment", &path(file)]);

    // Template syntax in a message is sent as written.
    std::fs::write(d.join("ok.toml"), experiment("X1", "colleague_op", "Check again: {{ 7*7 }} {% for x in range(3) %}x{% endfor %} {question}")).unwrap();
    let o = hyst(&["prompts", "--experiment", &path("ok.toml"), "--condition", "colleague_op", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Check again: {{ 7*7 }} {% for x in range(3) %}x{% endfor %} "), "{out}");
    assert!(!out.contains("49"), "{out}");

    // A terminal escape sequence in a label (as a TOML escape), and a raw bell in a message.
    std::fs::write(d.join("esc.toml"), experiment("X1 \\u001b[2J\\u001b[31mred", "colleague_op", "{question}")).unwrap();
    one_error_line(&conditions("esc.toml"), &["esc.toml", "field `operation[0].label`", "control character (U+001B)"]);
    std::fs::write(d.join("bell.toml"), experiment("X1", "colleague_op", "ring \u{7} {question}")).unwrap();
    // (TOML itself refuses raw control characters in strings, with the position.)
    one_error_line(&conditions("bell.toml"), &["bell.toml", "line 3, column"]);
    // A name that is a path.
    std::fs::write(d.join("path.toml"), experiment("X1", "../../etc/passwd", "{question}")).unwrap();
    one_error_line(&conditions("path.toml"), &["path.toml", "../../etc/passwd"]);
    // Huge (sparse: 64 MiB that take no disk), and a FIFO (reading one would wait forever).
    std::fs::File::create(d.join("huge.toml")).unwrap().set_len(64 << 20).unwrap();
    one_error_line(&conditions("huge.toml"), &["huge.toml", "67108864 bytes: more than the"]);
    assert!(Command::new("mkfifo").arg(d.join("fifo.toml")).status().unwrap().success());
    one_error_line(&conditions("fifo.toml"), &["fifo.toml", "not a regular file"]);

    // models.toml: an escape in a name, a key that is a path, a FIFO.
    let models = |key: &str, name: &str| format!("[models.\"{key}\"]\nname = \"{name}\"\nfamily = \"test\"\nsystem = \"native\"\nfile = \"x.gguf\"\nsource = {{ kind = \"local\", path = \"/nonexistent/x.gguf\" }}\n");
    let list = |file: &str| hyst(&["--models-config", &path(file), "models", "list"]);
    std::fs::write(d.join("m-esc.toml"), models("mine", "x \\u001b]0;title\\u0007")).unwrap();
    one_error_line(&list("m-esc.toml"), &["m-esc.toml", "field `models.mine.name`", "U+001B"]);
    std::fs::write(d.join("m-path.toml"), models("../../x", "x")).unwrap();
    one_error_line(&list("m-path.toml"), &["m-path.toml", "../../x"]);
    assert!(Command::new("mkfifo").arg(d.join("m-fifo.toml")).status().unwrap().success());
    one_error_line(&list("m-fifo.toml"), &["m-fifo.toml", "not a regular file"]);

    // A run plan: huge, and with a control character.
    std::fs::File::create(d.join("plan-huge.toml")).unwrap().set_len(64 << 20).unwrap();
    one_error_line(&hyst(&["batch", "--plan", &path("plan-huge.toml"), "--dry-run"]), &["run plan", "plan-huge.toml", "bytes: more than the"]);
    std::fs::write(d.join("plan-esc.toml"), "[[run]]\nmodels = [\"smollm2-135m\\u001b[A\"]\ndatasets = [\"sample\"]\n").unwrap();
    one_error_line(&hyst(&["batch", "--plan", &path("plan-esc.toml"), "--dry-run"]), &["run plan", "plan-esc.toml", "U+001B"]);
}
