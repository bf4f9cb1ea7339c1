#!/usr/bin/env bash
# hyst-tui's GPU check, node side: what `gpu-check` in a bundle made by scripts/gpu-bundle.sh
# runs on a GPU node with no network and no Rust. It needs bash, Python 3 with numpy, ldd, and
# for a CUDA binary the CUDA 13 runtime libraries (found as below); nothing else.
#
#   ./gpu-check                          # in an unpacked bundle: the 8B and 1B shapes
#   ./gpu-check --out DIR                # where the results go (default ./gpu-check-results)
#   ./gpu-check --shapes small,tiny      # the rehearsal's shapes (scripts/check-gpu-bundle.sh)
#   ./gpu-check --bin PATH               # another hyst-tui binary (scripts/gpu-check.sh)
#   ./gpu-check --items N --curve 1,4,16,64,128 --work DIR
#   ./gpu-check --check-libs             # only find the CUDA runtime and check `ldd` (below)
#
# It writes two random-weight GGUF models (scripts/random-gguf.py; SmolLM2's tokenizer and chat
# template) into --work (default: a temporary directory, removed at the end; 15 GB for 8b), then:
#   doctor on the second shape (device, offload, template, prefix reuse and packing vs one prompt
#     per call);
#   bench engine on the first (raw llama.cpp decoding 512 prompt tokens in one call — the figure
#     comparable with llama.cpp's published pp512 — against the engine on the ramp and branches);
#   bench batch on the first (sequential vs --pack, throughput against sequences per call, the
#     pick of --pack, packed vs sequential scores);
#   score on the second, on the GPU and with CUDA_VISIBLE_DEVICES= (the CPU), max |Δp|;
#   the paper plan's prompt tokens turned into a wall time on this device.
# Results (at most 8 files): summary.md (one table), summary.json, gpu-check.log (every command's
# output), throughput.svg (the curve).
#
# Where the CUDA runtime comes from (the bundle does not carry cuBLAS, ~500 MB): the first place
# that holds libcudart.so.13, libcublas.so.13 and libcublasLt.so.13 among
#   $HYST_CUDA_LIBS; $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, /usr/local/cuda-13*/lib64;
#   each entry of sys.path of $HYST_PYTHON (else python3): nvidia/cu13/lib (CUDA 13 wheels, as
#   PyTorch cu130 installs them), then nvidia/cuda_runtime/lib + nvidia/cublas/lib.
# It goes on LD_LIBRARY_PATH, and `ldd` of the binary and of every library beside it must then
# resolve every library, else the check stops there with one line saying what is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=$here/bin/hyst-tui
out=$PWD/gpu-check-results
shapes=8b,1b
items=4
curve=1,4,16,64,128
work=
check_libs=
python=${HYST_PYTHON:-python3}
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --items) items=$2; shift 2 ;;
    --curve) curve=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --check-libs) check_libs=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
# The helpers sit beside this script in a bundle, and in scripts/ in a clone.
tools=$here
[ -f "$tools/random-gguf.py" ] || tools=$(cd "$here/../scripts" 2>/dev/null && pwd) || true
[ -f "$tools/random-gguf.py" ] || { echo "gpu-check: random-gguf.py not found beside $0" >&2; exit 1; }
[ -x "$bin" ] || { echo "gpu-check: no hyst-tui binary at $bin (--bin PATH)" >&2; exit 1; }
IFS=, read -r big small <<<"$shapes"
[ -n "$big" ] && [ -n "$small" ] || { echo "gpu-check: --shapes wants two shapes, BIG,SMALL" >&2; exit 2; }
if [ -n "$check_libs" ]; then
  log=/dev/null
else
  "$python" -c 'import numpy' 2>/dev/null || { echo "gpu-check: $python has no numpy (HYST_PYTHON=... names another Python)" >&2; exit 1; }
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  log=$out/gpu-check.log
  : > "$log"
fi
say() { echo "$@" | tee -a "$log"; }
start=$(date +%s)

# ---- the CUDA runtime ---------------------------------------------------------------------------
# The binary and the libraries beside it (llama.cpp's, in a CUDA bundle).
files=("$bin")
for f in "$(dirname "$bin")"/lib*.so*; do [ -e "$f" ] && files+=("$f"); done
ldd_all() { ldd "${files[@]}" 2>/dev/null || true; }
cuda_needed() { ldd_all | grep -q 'libcudart\|libcublas'; }
has_runtime() { [ -e "$1/libcudart.so.13" ] && [ -e "$1/libcublas.so.13" ] && [ -e "$1/libcublasLt.so.13" ]; }
find_cuda_libs() {
  local d
  for d in ${HYST_CUDA_LIBS:-} ${CUDA_HOME:+$CUDA_HOME/lib64} ${CUDA_PATH:+$CUDA_PATH/lib64} /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64; do
    if has_runtime "$d"; then echo "$d"; return; fi
  done
  local p
  while IFS= read -r p; do
    [ -n "$p" ] && [ -d "$p/nvidia" ] || continue
    if has_runtime "$p/nvidia/cu13/lib"; then echo "$p/nvidia/cu13/lib"; return; fi
    if [ -e "$p/nvidia/cuda_runtime/lib/libcudart.so.13" ] && [ -e "$p/nvidia/cublas/lib/libcublas.so.13" ]; then
      echo "$p/nvidia/cuda_runtime/lib:$p/nvidia/cublas/lib"; return
    fi
  done < <("$python" -c 'import sys; print("\n".join(sys.path))' 2>/dev/null)
}
if cuda_needed; then
  libs=$(find_cuda_libs)
  if [ -z "$libs" ]; then
    say "gpu-check: no CUDA 13 runtime found (libcudart.so.13, libcublas.so.13, libcublasLt.so.13): set HYST_CUDA_LIBS=DIR, CUDA_HOME, or HYST_PYTHON to a Python whose site-packages hold NVIDIA's CUDA 13 wheels" >&2
    exit 1
  fi
  export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  say "CUDA runtime libraries: $libs"
fi
missing=$(ldd_all | grep 'not found' | sort -u | tr -s ' \t' ' ' || true)
if [ -n "$missing" ]; then
  say "gpu-check: libraries not found by ldd: $(echo "$missing" | tr '\n' ';')" >&2
  exit 1
fi
say "ldd: every library of $(basename "$bin") and the $(( ${#files[@]} - 1 )) beside it resolves"
if [ -n "$check_libs" ]; then
  { ldd_all | grep -E 'cuda|cublas|llama|ggml' || true; } | sort -u -k1,1 | sed 's/^[[:space:]]*/   /'
  exit 0
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  say "GPU: $(nvidia-smi -L | head -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
else
  say "GPU: none (no nvidia-smi, or it lists no GPU): the figures below are this machine's CPU"
fi

# ---- the models ---------------------------------------------------------------------------------
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/hyst-gpu-check.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
# The bundle's tokenizer.gguf; in a clone, SmolLM2's own GGUF (fetched if missing).
tokenizer=${HYST_TOKENIZER_GGUF:-$here/tokenizer.gguf}
if [ ! -f "$tokenizer" ] && [ -z "${HYST_TOKENIZER_GGUF:-}" ]; then
  tokenizer=$("$bin" models fetch smollm2-135m 2>/dev/null | awk '{print $2}') || true
fi
[ -f "$tokenizer" ] || { echo "gpu-check: no tokenizer GGUF (the bundle's tokenizer.gguf, or HYST_TOKENIZER_GGUF=FILE)" >&2; exit 1; }
export HYST_GGUF_WHEELS=${HYST_GGUF_WHEELS:-$here/wheels}
for shape in "$big" "$small"; do
  [ -f "$work/random-$shape.gguf" ] || "$python" "$tools/random-gguf.py" --tokenizer-from "$tokenizer" \
    --shape "$shape" --out "$work/random-$shape.gguf" 2>&1 | tee -a "$log"
done
# 2048 tokens per sequence hold the sample's longest context; at --pack 128 the 8B shape's KV
# cache (128 KiB per token in F16) is then 32 GiB beside its 15 GB of weights.
cat > "$work/models.toml" <<EOF
default_model = "random-$big"
[models."random-$big"]
name = "random weights, shape $big"
family = "random"
file = "random-$big.gguf"
system = "native"
context = 2048
source = { kind = "local", path = "$work/random-$big.gguf" }
[models."random-$small"]
name = "random weights, shape $small"
family = "random"
file = "random-$small.gguf"
system = "native"
context = 2048
source = { kind = "local", path = "$work/random-$small.gguf" }
EOF
export HYST_MODELS_CONFIG=$work/models.toml HYST_DATA_DIR=$work/data HYST_SCORE_STORE=off

run() { # NAME COMMAND...: the command's output into the log and into $work/NAME.txt
  local name=$1; shift
  say "== $name: $*"
  local t0=$(date +%s) rc=0
  "$@" > "$work/$name.txt" 2>&1 || rc=$?
  cat "$work/$name.txt" >> "$log"
  say "   ($name: exit $rc, $(( $(date +%s) - t0 )) s)"
}
run doctor "$bin" doctor --model "random-$small" --log-file "$work/llama.log"
run engine "$bin" bench engine --model "random-$big" --items 1 --raw-tokens 512 --log-file "$work/llama.log"
run batch "$bin" bench batch --model "random-$big" --limit "$items" --pack 64 --curve "$curve" --workers 1 \
  --figure "$out/throughput.svg" --log-file "$work/llama.log"
# The same conversations scored on the GPU and on the CPU (no CUDA device visible).
"$python" "$tools/gpu-check-summary.py" conversations > "$work/conversations.jsonl"
run letters-gpu "$bin" score --model "random-$small" --messages "$work/conversations.jsonl" --json --log-file "$work/llama.log"
run letters-cpu env CUDA_VISIBLE_DEVICES= "$bin" score --model "random-$small" --messages "$work/conversations.jsonl" --json --log-file "$work/llama.log"

"$python" "$tools/gpu-check-summary.py" summary "$work" "$out" "$big" "$small" "$(( $(date +%s) - start ))" \
  "$here/bundle.txt" | tee -a "$log"
