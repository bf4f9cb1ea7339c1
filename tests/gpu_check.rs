//! The parts of the GPU check (scripts/gpu-bundle.sh, scripts/gpu-node-check.sh) that run
//! without a GPU. The random-weight models (scripts/random-gguf.py, which the bundle runs on the
//! node): a tiny one is written with SmolLM2's tokenizer, loaded and scored by this build; it has
//! the shape it was asked for (the parameter count llama.cpp reports), it renders and tokenizes
//! prompts exactly as SmolLM2 does (same prompt, same token count, same letter tokens), and its
//! letter probabilities are a distribution that is not SmolLM2's. The node's search for the CUDA
//! runtime: a binary linked against stand-ins for libcudart/libcublas/libcublasLt is resolved
//! through a Python environment's `nvidia/cu13/lib`, through `HYST_CUDA_LIBS` and through
//! `CUDA_HOME`, and without any of them the check stops with one line.

mod common;

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_hyst-tui");

/// The `tiny` shape of random-gguf.py: width, layers, heads, KV heads, FFN width.
const TINY: (u64, u64, u64, u64, u64) = (64, 2, 4, 2, 128);
const VOCAB: u64 = 49152;

fn hyst(config: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .env("HYST_SCORE_STORE", "off")
        .env("HYST_MODELS_CONFIG", config)
        .args(["--threads", "2"])
        .args(args)
        .output()
        .unwrap()
}

fn scores(o: &std::process::Output) -> Vec<serde_json::Value> {
    assert!(o.status.success(), "score failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn a_random_tiny_model_loads_and_scores_with_smollm2s_tokenizer() {
    let dir = tempfile::tempdir().unwrap();
    let smol = common::entry(common::SMOL).path(&hyst_tui::config::models_dir());
    assert!(smol.exists(), "run `bash scripts/fetch-test-models.sh` ({} is missing)", smol.display());
    let model = dir.path().join("random-tiny.gguf");
    let made = Command::new("python3")
        .args(["scripts/random-gguf.py", "--shape", "tiny", "--seed", "7", "--tokenizer-from"])
        .arg(&smol)
        .arg("--out")
        .arg(&model)
        .output()
        .unwrap();
    assert!(made.status.success(), "random-gguf.py: {}", String::from_utf8_lossy(&made.stderr));

    let config = dir.path().join("models.toml");
    let bundled = std::fs::read_to_string("models.toml").unwrap();
    let smol_entry = &bundled[bundled.find("[models.\"smollm2-135m\"]").unwrap()..];
    let smol_entry = &smol_entry[..smol_entry[1..].find("\n[").unwrap() + 1];
    std::fs::write(
        &config,
        format!(
            "default_model = \"random-tiny\"\n{smol_entry}\n[models.\"random-tiny\"]\nname = \"random tiny\"\nfamily = \"random\"\n\
             file = \"random-tiny.gguf\"\nsystem = \"native\"\ncontext = 4096\nsource = {{ kind = \"local\", path = \"{}\" }}\n",
            model.display()
        ),
    )
    .unwrap();

    // The shape: llama.cpp's parameter count is the generator's tensors, to the parameter.
    let doctor = hyst(&config, &["doctor", "--model", "random-tiny"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    let (w, layers, heads, kv, ffn) = TINY;
    let kv_width = kv * (w / heads);
    let per_layer = 2 * w + 2 * w * w + 2 * kv_width * w + 3 * w * ffn;
    let expected = 2 * VOCAB * w + layers * per_layer + w;
    assert!(
        text.contains(&format!("loads: {expected} params, vocab {VOCAB}")),
        "doctor does not report {expected} params, vocab {VOCAB}:\n{text}"
    );

    let conv = dir.path().join("conv.jsonl");
    std::fs::write(
        &conv,
        concat!(
            r#"{"messages":[{"role":"system","content":"Answer with one letter."},{"role":"user","content":"Which is a primary colour?\nA. Green\nB. Red\nC. Purple"}],"letters":"A,B,C"}"#,
            "\n",
            r#"{"messages":[{"role":"user","content":"What is 2 + 3?\nA. 4\nB. 5\nC. 6\nD. 7\nE. 8"},{"role":"assistant","content":"B"},{"role":"user","content":"I think it is E. Answer again."}],"letters":"A,B,C,D,E"}"#,
            "\n"
        ),
    )
    .unwrap();
    let conv = conv.to_str().unwrap();
    let random = scores(&hyst(&config, &["score", "--model", "random-tiny", "--messages", conv, "--json"]));
    let reference = scores(&hyst(&config, &["score", "--model", "smollm2-135m", "--messages", conv, "--json"]));
    assert_eq!(random.len(), 2);
    for (r, s) in random.iter().zip(&reference) {
        assert_eq!(r["rendered_prompt"], s["rendered_prompt"], "the chat template is SmolLM2's");
        assert_eq!(r["prompt_tokens"], s["prompt_tokens"], "the tokenizer is SmolLM2's");
        for (letter, spellings) in r["letter_tokens"].as_object().unwrap() {
            let ids = |v: &serde_json::Value| v.as_array().unwrap().iter().map(|t| t["id"].as_i64().unwrap()).collect::<Vec<_>>();
            assert_eq!(ids(spellings), ids(&s["letter_tokens"][letter]), "letter {letter} tokenizes as in SmolLM2");
        }
        let probs: Vec<f64> = r["probs"].as_object().unwrap().values().map(|p| p.as_f64().unwrap()).collect();
        assert!(probs.iter().all(|p| p.is_finite() && *p > 0.0), "{probs:?}");
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{probs:?}");
        assert_ne!(r["probs"], s["probs"], "random weights give SmolLM2's letters");
    }
}

/// Stand-ins for the CUDA 13 runtime: shared libraries with the real SONAMEs and no code, laid
/// out as NVIDIA's wheels install them (`site-packages/nvidia/cu13/lib`), and a "binary" that
/// needs all three, as the CUDA build's libggml-cuda does.
#[cfg(target_os = "linux")]
#[test]
fn the_node_finds_the_cuda_runtime_where_a_node_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site-packages");
    let lib = site.join("nvidia/cu13/lib");
    std::fs::create_dir_all(&lib).unwrap();
    let empty = dir.path().join("empty.c");
    std::fs::write(&empty, "int hyst_stand_in;\n").unwrap();
    let gcc = |args: &[&std::ffi::OsStr]| {
        let o = Command::new("gcc").args(args).output().expect("gcc");
        assert!(o.status.success(), "gcc: {}", String::from_utf8_lossy(&o.stderr));
    };
    for name in ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"] {
        let soname = format!("-Wl,-soname,{name}");
        gcc(&["-shared".as_ref(), "-fPIC".as_ref(), soname.as_ref(), "-o".as_ref(), lib.join(name).as_os_str(), empty.as_os_str()]);
    }
    let bin_dir = dir.path().join("bundle/bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let main_c = dir.path().join("main.c");
    std::fs::write(&main_c, "int main(void) { return 0; }\n").unwrap();
    let link = format!("-L{}", lib.display());
    gcc(&[
        main_c.as_os_str(), "-o".as_ref(), bin_dir.join("hyst-tui").as_os_str(), "-Wl,--no-as-needed".as_ref(), link.as_ref(),
        "-l:libcudart.so.13".as_ref(), "-l:libcublas.so.13".as_ref(), "-l:libcublasLt.so.13".as_ref(),
    ]);
    let check = |env: &[(&str, &std::path::Path)]| {
        let mut c = Command::new("bash");
        c.arg("scripts/gpu-node-check.sh").arg("--bin").arg(bin_dir.join("hyst-tui")).arg("--check-libs");
        for v in ["CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "HYST_CUDA_LIBS", "PYTHONPATH", "HYST_PYTHON"] {
            c.env_remove(v);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    // Found in a Python environment (its sys.path), as on a node with PyTorch cu130.
    let o = check(&[("PYTHONPATH", &site)]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(&format!("CUDA runtime libraries: {}", lib.display())), "{out}");
    for name in ["libcudart.so.13", "libcublas.so.13", "libcublasLt.so.13"] {
        assert!(out.contains(&format!("{name} => {}", lib.join(name).display())), "{name} not resolved: {out}");
    }
    // Named directly, and as a system CUDA's lib64.
    assert!(check(&[("HYST_CUDA_LIBS", &lib)]).status.success());
    let cuda_home = dir.path().join("cuda");
    std::fs::create_dir_all(&cuda_home).unwrap();
    std::os::unix::fs::symlink(&lib, cuda_home.join("lib64")).unwrap();
    assert!(check(&[("CUDA_HOME", &cuda_home)]).status.success());
    // Nowhere: one line that says what to set, exit 1 (unless this machine has a CUDA 13 runtime
    // of its own, in /usr/local/cuda or in python3's environment).
    let o = check(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.success() {
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(!out.contains(&lib.display().to_string()), "found the stand-ins without being told where: {out}");
        eprintln!("this machine has a CUDA 13 runtime of its own ({out}): the case without one is not checked here");
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no CUDA 13 runtime found") && err.contains("HYST_CUDA_LIBS"), "{err}");
}
