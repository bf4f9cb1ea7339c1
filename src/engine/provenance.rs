//! Numeric provenance: what, besides the model file and the tokens, decides the digits of a
//! score. The same GGUF and the same tokens give different probabilities on different kernel
//! paths (measured here: an AVX-512 build of llama.cpp differs from the AVX2 build by up to 0.05
//! in an option probability on Q4 models, while two AVX2 builds of different bindings agree to
//! 1e-16). So a score is only comparable with scores of the same llama.cpp version, backend and
//! SIMD variant, under the same exactness settings; all of these go into every score record,
//! the manifest and the cache key.

use std::ffi::CStr;

/// The exactness settings of this engine (see `model.rs` and `prefix_reuse.rs`).
pub(crate) const EXACTNESS: &str = "flash attention off, one sequence per decode call, prefix in KV cells 0..n, decode calls of at least 32 tokens";

fn c_str(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: llama.cpp returns pointers to static NUL-terminated strings here.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// The version of the `llama-cpp-sys-2` crate this build links (it pins the llama.cpp source;
/// a unit test keeps this equal to Cargo.lock).
pub(crate) const LLAMA_CPP_SYS_VERSION: &str = "0.1.161";

/// The llama.cpp build: the binding crate that carries its source, and ggml's own version and
/// commit (`unknown` when built from a source tarball).
pub fn llama_cpp_build() -> String {
    // SAFETY: both return static strings and have no preconditions.
    let (v, c) = unsafe { (c_str(llama_cpp_sys_2::ggml_version()), c_str(llama_cpp_sys_2::ggml_commit())) };
    format!("llama-cpp-sys-2 {LLAMA_CPP_SYS_VERSION}, ggml {v} ({c})")
}

/// Compile-time CPU kernel variant of this build: the SIMD extensions ggml was compiled for,
/// and whether the CPU "repack" of quantised weights is on (`REPACK`), as llama.cpp reports
/// them (`llama_print_system_info`, the `NAME = 1` entries of the CPU backend).
pub fn cpu_variant() -> String {
    // SAFETY: returns a static string; no preconditions.
    let info = unsafe { c_str(llama_cpp_sys_2::llama_print_system_info()) };
    cpu_features(&info).join(" ")
}

/// The enabled features of the CPU section of `llama_print_system_info`'s text
/// (`CPU : SSE3 = 1 | AVX = 1 | … |`).
pub(crate) fn cpu_features(system_info: &str) -> Vec<String> {
    let Some(cpu) = system_info.split("CPU :").nth(1) else { return vec![] };
    // The CPU section ends where the next backend's `NAME :` starts.
    let mut out = Vec::new();
    for field in cpu.split('|') {
        let field = field.trim();
        if field.contains(" : ") {
            break;
        }
        if let Some((name, value)) = field.split_once('=') {
            if value.trim() == "1" {
                out.push(name.trim().to_string());
            }
        }
    }
    out
}

/// The compute devices llama.cpp offers (e.g. `CPU`, `CUDA0 (NVIDIA H200)`).
pub fn devices() -> Vec<String> {
    llama_cpp_2::list_llama_ggml_backend_devices()
        .into_iter()
        .map(|d| if d.description.is_empty() || d.description == d.name { d.name } else { format!("{} ({})", d.name, d.description) })
        .collect()
}

/// The GPU devices llama.cpp offers (every device but the CPU).
pub fn gpu_devices() -> Vec<String> {
    devices().into_iter().filter(|d| !d.starts_with("CPU")).collect()
}

/// In a CUDA build that finds no CUDA device (a login node, a CI runner, a machine without the
/// NVIDIA driver): one line saying so, why, and that scoring runs on the CPU. `None` in every
/// other build and wherever llama.cpp offers a CUDA device. Such a build still starts without the
/// driver because it leaves the driver library to the CUDA runtime, which loads `libcuda.so.1`
/// when it initialises (`scripts/check-cuda-build.sh` builds it that way).
pub fn cuda_absent_note() -> Option<String> {
    if !cfg!(feature = "cuda") || devices().iter().any(|d| d.starts_with("CUDA")) {
        return None;
    }
    let why = match cuda_driver_library_loads() {
        Some(false) => "no NVIDIA driver here (libcuda.so.1 not found)",
        Some(true) => "the NVIDIA driver (libcuda.so.1) is installed but offers no usable CUDA device (ggml_cuda_init's reason is in the log)",
        None => "the CUDA runtime found no device",
    };
    Some(format!("CUDA build without a CUDA device: {why}; scoring on the CPU"))
}

/// Can the NVIDIA driver library be loaded? `None` where that is not asked (not Unix).
fn cuda_driver_library_loads() -> Option<bool> {
    #[cfg(unix)]
    {
        // SAFETY: dlopen with a static NUL-terminated name; the handle is closed at once.
        let h = unsafe { libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        if !h.is_null() {
            // SAFETY: `h` came from dlopen above and is closed once.
            unsafe { libc::dlclose(h) };
        }
        Some(!h.is_null())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Does scoring with `gpu_layers` offloaded run on a GPU back-end?
pub fn on_gpu(gpu_layers: u32) -> bool {
    gpu_layers > 0 && !gpu_devices().is_empty()
}

/// The provenance string of scores from this build with `gpu_layers` offloaded (on the CPU the
/// offload changes nothing and is not named; 999 and more = every layer).
pub fn provenance(gpu_layers: u32) -> String {
    let backend = if on_gpu(gpu_layers) {
        let layers = if gpu_layers >= 999 { "all layers".to_string() } else { format!("{gpu_layers} layers") };
        format!("{} ({layers} offloaded)", gpu_devices().join(", "))
    } else {
        "CPU".to_string()
    };
    format!("llama.cpp {}; backend {backend}; cpu kernels {}; {EXACTNESS}", llama_cpp_build(), cpu_variant())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_binding_version_is_the_locked_one() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
        let entry = lock.split("[[package]]").find(|p| p.contains("name = \"llama-cpp-sys-2\"")).expect("in Cargo.lock");
        assert!(entry.contains(&format!("version = \"{LLAMA_CPP_SYS_VERSION}\"")), "{entry}");
    }

    #[test]
    fn cpu_features_of_the_system_info_text() {
        let info = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | REPACK = 1 | CUDA : ARCHS = 900 | FORCE_MMQ = 1 |";
        assert_eq!(cpu_features(info), ["SSE3", "SSSE3", "AVX", "AVX2", "REPACK"]);
        assert!(cpu_features("nothing here").is_empty());
    }

    #[test]
    fn only_a_cuda_build_without_a_cuda_device_has_the_cuda_note() {
        let note = cuda_absent_note();
        if !cfg!(feature = "cuda") || devices().iter().any(|d| d.starts_with("CUDA")) {
            assert_eq!(note, None);
        } else {
            let note = note.expect("a CUDA build without a CUDA device says so");
            assert!(note.ends_with("; scoring on the CPU"), "{note}");
        }
    }

    #[test]
    fn this_build_reports_its_llama_cpp_and_kernels() {
        let p = provenance(0);
        assert!(p.starts_with("llama.cpp llama-cpp-sys-2 "), "{p}");
        assert!(p.contains("backend CPU"), "{p}");
        // The project builds llama.cpp with GGML_CPU_REPACK=OFF (.cargo/config.toml).
        assert!(!cpu_variant().split(' ').any(|f| f == "REPACK"), "{}", cpu_variant());
    }
}
