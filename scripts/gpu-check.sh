#!/usr/bin/env bash
# The GPU check of hyst-tui on a machine with cargo and this repository (a GPU node with no Rust
# uses the bundle of scripts/gpu-bundle.sh instead; the checks are the same script). It builds the
# `cuda` feature with scripts/check-cuda-build.sh (the CUDA toolkit from PyPI wheels, or
# HYST_CUDA_HOME's; its own target directory), then runs scripts/gpu-node-check.sh with that
# binary: random-weight models in the 8B and 1B shapes, doctor, bench engine, bench batch over a
# curve of sequences per call, the GPU's letters against the CPU's, one summary table and JSON.
# Without a GPU (no nvidia-smi, or it lists none) it says so and runs the same checks on the CPU
# build with the small shapes (small,tiny), so the script itself is tested; HYST_GPU_CHECK_FEATURES=cuda
# runs them with the CUDA build there (which then scores on the CPU).
# Where it builds: the CPU build where the README's `cargo build --release` does ($CARGO_TARGET_DIR
# when set, else target/ in the repository), reusing it; a feature build in a directory of its
# own (~/.cache/hyst-tui/target-cuda, or target-<feature>; HYST_GPU_CHECK_TARGET_DIR), since it
# compiles llama.cpp again and must not replace the CPU build.
#
#   bash scripts/gpu-check.sh              # CUDA if there is a GPU, else the CPU build
#   bash scripts/gpu-check.sh --out DIR    # arguments go to gpu-node-check.sh (--items, --curve, ...)
#   HYST_GPU_CHECK_FEATURES=vulkan bash scripts/gpu-check.sh   # another back-end
#   HYST_GPU_CHECK_SHAPES=1b,tiny bash scripts/gpu-check.sh    # other shapes (scripts/random-gguf.py)
#   CMAKE_CUDA_ARCHITECTURES=90 bash scripts/gpu-check.sh      # the card's architecture
set -euo pipefail
cd "$(dirname "$0")/.."

features=${HYST_GPU_CHECK_FEATURES-}
if [ -z "${HYST_GPU_CHECK_FEATURES+set}" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    features=cuda
    if [ -z "${CMAKE_CUDA_ARCHITECTURES:-}" ]; then
      cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
      [ -n "$cap" ] && export CMAKE_CUDA_ARCHITECTURES="$cap"
    fi
    echo "GPU: $(nvidia-smi -L | head -1) (CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES:-default})"
  else
    echo "no CUDA GPU here (nvidia-smi missing or lists no GPU): running the same checks on the CPU build, so the figures below are the CPU's"
    features=
  fi
fi

if [ "$features" = cuda ]; then
  # The CUDA build path of scripts/check-cuda-build.sh (shared llama.cpp libraries beside the
  # binary, no direct link to the driver library); it prints the binary's path.
  echo "== build (release, --features cuda) with scripts/check-cuda-build.sh"
  bin=$(HYST_CUDA_TARGET_DIR=${HYST_GPU_CHECK_TARGET_DIR:-$HOME/.cache/hyst-tui/target-cuda} \
    bash scripts/check-cuda-build.sh --print-bin --arch "${CMAKE_CUDA_ARCHITECTURES:-90}")
else
  if [ -n "$features" ]; then
    target=${HYST_GPU_CHECK_TARGET_DIR:-$HOME/.cache/hyst-tui/target-$features}
    feature_args=(--features "$features")
  else
    target=${CARGO_TARGET_DIR:-$PWD/target}
    feature_args=()
  fi
  echo "== build (release${features:+, --features $features}) into $target"
  CARGO_TARGET_DIR=$target cargo build --release --locked "${feature_args[@]}"
  bin=$target/release/hyst-tui
fi
# The checks themselves are the GPU bundle's (scripts/gpu-node-check.sh), run with this build.
if [ "$features" = cuda ]; then shapes=${HYST_GPU_CHECK_SHAPES:-8b,1b}; else shapes=${HYST_GPU_CHECK_SHAPES:-small,tiny}; fi
exec bash scripts/gpu-node-check.sh --bin "$bin" --shapes "$shapes" "$@"
