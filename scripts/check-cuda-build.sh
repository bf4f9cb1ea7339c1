#!/usr/bin/env bash
# hyst-tui's CUDA build without a GPU and without a system CUDA toolkit: the toolkit comes from
# NVIDIA's wheels on PyPI, installed (pinned, hashes checked) into a cache directory outside the
# repository, and `--features cuda` is built into a target directory of its own
# (~/.cache/hyst-tui/target-cuda), so the CPU build (the README's: $CARGO_TARGET_DIR when set,
# else target/ in the repository) is never touched. Then it prints the build
# time, the binary's size, `ldd` of the binary (what it needs at run time) and `doctor`.
#
#   bash scripts/check-cuda-build.sh              # for one card: CMAKE_CUDA_ARCHITECTURES=90 (H100/H200)
#   bash scripts/check-cuda-build.sh --arch 89    # another card (89: L4/RTX 40xx, 80: A100, 120: RTX 50xx)
#   HYST_CUDA_TARGET_DIR=DIR   where the CUDA build goes (default ~/.cache/hyst-tui/target-cuda)
#   HYST_CUDA_TOOLKIT_DIR=DIR  where the wheels are installed (default ~/.cache/hyst-tui/cuda-13.0-wheels)
#   HYST_CUDA_HOME=DIR         use this installed toolkit (DIR/bin/nvcc) instead of the wheels,
#                              e.g. /usr/local/cuda on a GPU machine that cannot reach PyPI
#   --print-bin                build (if needed) and print only the binary's path (scripts/gpu-check.sh)
#
# The toolkit is CUDA 13.0 (update 2): PyPI's CUDA 12 nvcc wheel (nvidia-cuda-nvcc-cu12, 12.9.86
# and every earlier 12.x) holds only ptxas and libnvvm, not nvcc, cicc, cudafe++, fatbinary or
# nvlink; CUDA 13's split wheels (nvidia-cuda-nvcc + nvidia-cuda-crt + nvidia-nvvm) hold the whole
# compiler. A CUDA 13 binary needs an NVIDIA driver 580 or later on the GPU machine.
#
# What the wheels lack, and this script arranges in the toolkit directory (nvidia/cu13):
#   lib64 -> lib      nvcc's own nvcc.profile links from TOOLKIT/lib64 (the wheels install lib/)
#   libcudart.so, libcublas.so, libcublasLt.so -> the .so.13 files (the wheels ship only the
#                     versioned runtime names; linkers and CMake's FindCUDAToolkit look for the
#                     unversioned ones)
# and for the build: CUDACXX / CUDAToolkit_ROOT (CMake's CUDA language and FindCUDAToolkit),
# CUDA_PATH (llama-cpp-sys-2's build script), the toolkit's bin on PATH.
#
# How it is linked, and why: llama-cpp-sys-2 links a static CUDA build against cudart_static,
# cublas_static, cublasLt_static and culibos; PyPI's cuBLAS wheel has no static libraries. So
# llama.cpp is built as shared libraries (llama-cpp-2's `dynamic-link`), linked against the
# wheels' libcudart.so.13 / libcublas.so.13, and installed beside the binary (RUNPATH $ORIGIN on
# the binary; $ORIGIN and the toolkit's lib on the llama.cpp libraries). And it is built with
# `cuda-no-vmm` (GGML_CUDA_NO_VMM): with ggml's VMM memory pool, libggml-cuda.so links the driver
# library libcuda.so.1 directly, and the binary cannot even start where no NVIDIA driver is
# installed (a login node, a CI runner). Without it only the CUDA runtime talks to the driver, and
# it loads libcuda.so.1 itself when it initialises: no driver means no CUDA device, and hyst-tui
# scores on the CPU (doctor says so). On the GPU, ggml then uses its legacy cudaMalloc pool
# instead of the VMM pool; the kernels, and so the scores, are the same.
#
# Not part of .ci/run: a second llama.cpp build with its CUDA kernels (and polars again, in the
# new target directory) takes well over an hour on 2 cores; see docs/measurements.md, GPU back-ends.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${CMAKE_CUDA_ARCHITECTURES:-90}
print_bin=
while [ $# -gt 0 ]; do
  case $1 in
    --arch) arch=${2:?--arch needs a value, e.g. 90}; shift 2 ;;
    --arch=*) arch=${1#--arch=}; shift ;;
    --print-bin) print_bin=1; shift ;;
    -h|--help) sed -n '2,/--print-bin/p' "$0"; exit 0 ;;
    *) echo "check-cuda-build: unknown argument $1 (--arch N, --print-bin)" >&2; exit 2 ;;
  esac
done
# Progress goes to stderr with --print-bin, so that stdout is the path alone.
say() { if [ -n "$print_bin" ]; then echo "$@" >&2; else echo "$@"; fi; }

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || { echo "check-cuda-build: the pinned wheels are for Linux x86_64" >&2; exit 1; }
need=()
for pkg in cmake libclang-dev; do dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg"); done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "check-cuda-build: missing packages: ${need[*]} (apt-get install them)" >&2
    exit 1
  fi
fi

# ---- the toolkit from PyPI --------------------------------------------------------------------
if [ -n "${HYST_CUDA_HOME:-}" ]; then
  cuda=$HYST_CUDA_HOME
  [ -x "$cuda/bin/nvcc" ] || { echo "check-cuda-build: no $cuda/bin/nvcc (HYST_CUDA_HOME)" >&2; exit 1; }
  cuda_lib=$cuda/lib64
else
  tk_root=${HYST_CUDA_TOOLKIT_DIR:-$HOME/.cache/hyst-tui/cuda-13.0-wheels}
  cuda=$tk_root/nvidia/cu13
  cuda_lib=$cuda/lib
  req=$(mktemp)
  trap 'rm -f "$req"' EXIT
  cat > "$req" <<'REQ'
nvidia-cuda-nvcc==13.0.88 --hash=sha256:56fe502eb77625a12f25172caa3cdddb4e4c8ba2c8c17dba44b164761b380f03
nvidia-cuda-crt==13.0.88 --hash=sha256:2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4
nvidia-nvvm==13.0.88 --hash=sha256:c5f41ffeb6466944a026dfa5317d7d85355c119bbec279205d22f1869d1054e0
nvidia-cuda-runtime==13.0.96 --hash=sha256:7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548
nvidia-cublas==13.1.0.3 --hash=sha256:ee8722c1f0145ab246bccb9e452153b5e0515fd094c3678df50b2a0888b8b171
nvidia-cuda-cccl==13.0.85 --hash=sha256:e0da7ad981f3a8aff08241b5bfc1af868742a63e2762f53a5171c492ef242649
REQ
  stamp=$tk_root/.hyst-installed
  if ! cmp -s "$req" "$stamp" || [ ! -x "$cuda/bin/nvcc" ]; then
    say "== CUDA toolkit: installing the pinned wheels into $tk_root (about 0.5 GB to download, 0.85 GB installed)"
    rm -rf "$tk_root"
    mkdir -p "$tk_root"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
      --only-binary=:all: --no-compile --require-hashes --target "$tk_root" -r "$req" >&2
    cp "$req" "$stamp"
  fi
  # The arrangement (see the top of this file).
  ln -sfn lib "$cuda/lib64"
  for l in cudart cublas cublasLt; do ln -sfn "lib$l.so.13" "$cuda/lib/lib$l.so"; done
fi
say "== CUDA toolkit: $("$cuda/bin/nvcc" --version | grep -o 'release [0-9.]*, V[0-9.]*') in $cuda"

# ---- the build --------------------------------------------------------------------------------
target=${HYST_CUDA_TARGET_DIR:-$HOME/.cache/hyst-tui/target-cuda}
cpu_target=${CARGO_TARGET_DIR:-$PWD/target}
if [ "$(realpath -m "$target")" = "$(realpath -m "$cpu_target")" ]; then
  echo "check-cuda-build: the CUDA target directory must not be the CPU build's ($cpu_target)" >&2
  exit 1
fi
export PATH=$cuda/bin:$PATH CUDA_PATH=$cuda CUDAToolkit_ROOT=$cuda CUDACXX=$cuda/bin/nvcc
# llama-cpp-sys-2 passes every CMAKE_* and GGML_* variable on to llama.cpp's CMake.
export CMAKE_CUDA_ARCHITECTURES=$arch
export CMAKE_BUILD_WITH_INSTALL_RPATH=ON CMAKE_INSTALL_RPATH="\$ORIGIN;$cuda_lib"
unset CARGO_TARGET_DIR
features=cuda,llama-cpp-2/cuda-no-vmm,llama-cpp-2/dynamic-link
say "== build: cargo rustc --release --features $features (CMAKE_CUDA_ARCHITECTURES=$arch) into $target"
start=$(date +%s)
# `cargo rustc` gives the binary alone its RUNPATH ($ORIGIN: llama.cpp's libraries beside it);
# the dependencies' flags, and so their build, stay those of `cargo build`.
if [ -n "$print_bin" ]; then exec 3>&1 1>&2; fi
CARGO_TARGET_DIR=$target nice -n 19 cargo rustc --release --locked --features "$features" \
  --bin hyst-tui -- -C 'link-arg=-Wl,-rpath,$ORIGIN'
secs=$(( $(date +%s) - start ))
bin=$target/release/hyst-tui
# llama-cpp-sys-2 copies llama.cpp's libraries into target/release under their unversioned names
# only, and as symbolic links to the versioned files it leaves in its build tree; the binary asks
# for the SONAMEs (libllama.so.0, …), and `common` stays in the build tree altogether. So put every
# library beside the binary under its SONAME, as a file.
for so in "$target"/release/build/llama-cpp-sys-2-*/out/lib/lib*.so.[0-9] \
  "$target"/release/build/llama-cpp-sys-2-*/out/build/common/lib*.so.[0-9]; do
  [ -e "$so" ] || continue
  dest=$target/release/$(basename "$so")
  if [ ! -f "$dest" ] || [ "$(readlink -f "$so")" -nt "$dest" ]; then cp -fL "$so" "$dest"; fi
done
if [ -n "$print_bin" ]; then exec 1>&3 3>&-; echo "$bin"; exit 0; fi

echo "== build time: $((secs / 60))m$((secs % 60))s"
echo "== binary: $bin, $(stat -c %s "$bin" | numfmt --to=iec-i --suffix=B) ($(stat -c %s "$bin") bytes); llama.cpp libraries beside it:"
for so in "$target"/release/lib*.so.[0-9]; do
  [ -e "$so" ] && echo "   $(basename "$so") $(stat -c %s "$so" | numfmt --to=iec-i --suffix=B)"
done
echo "== ldd $bin"
ldd "$bin"
echo "== ldd libggml-cuda.so"
ldd "$target/release/libggml-cuda.so"
if ldd "$bin" | grep -q 'not found'; then
  echo "check-cuda-build: the binary lacks a library (above: not found)" >&2
  exit 1
fi
echo "== hyst-tui doctor (CUDA build$(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU' || echo ', no NVIDIA driver or GPU here'))"
HYST_SCORE_STORE=off "$bin" doctor
