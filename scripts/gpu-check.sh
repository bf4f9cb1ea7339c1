#!/usr/bin/env bash
# The GPU check of hyst-tui, for a machine with an NVIDIA GPU (CUDA). It builds the `cuda`
# feature with scripts/check-cuda-build.sh (the CUDA toolkit from PyPI wheels, or HYST_CUDA_HOME's;
# its own target directory), fetches the model if it is missing, then runs, on that one model
# (HYST_GPU_CHECK_MODEL, default smollm2-135m):
#   doctor (device, offload, provenance, prefix reuse and packing vs one prompt per call), bench
#   engine (engine vs raw llama.cpp prompt rate, reuse), bench batch --pack 64 (sequential,
#   packed and from scratch against raw llama.cpp replaying the same calls; throughput against
#   tokens per decode call for 1 … 128 sequences; worker scaling)
# and prints one table of ratios, the --pack it picks for this device (the fewest sequences
# within 5% of the best throughput of the curve), and the paper plan's token count turned into
# a wall time.
# One command from a clean clone; needs no network once built and fetched. Without a GPU (no
# nvidia-smi, or it lists none) it says so and runs the same checks on the CPU build (features
# unset), so the script itself is tested; HYST_GPU_CHECK_FEATURES=cuda runs them with the CUDA
# build there (which then scores on the CPU).
#
#   bash scripts/gpu-check.sh              # CUDA if there is a GPU, else the CPU build
#   HYST_GPU_CHECK_FEATURES=vulkan bash scripts/gpu-check.sh   # another back-end
#   CMAKE_CUDA_ARCHITECTURES=90 bash scripts/gpu-check.sh      # the card's architecture
set -euo pipefail
cd "$(dirname "$0")/.."

model=${HYST_GPU_CHECK_MODEL:-smollm2-135m}
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
    target=${CARGO_TARGET_DIR:-$HOME/.cache/hyst-tui/target}
    feature_args=()
  fi
  echo "== build (release${features:+, --features $features}) into $target"
  CARGO_TARGET_DIR=$target cargo build --release --locked "${feature_args[@]}"
  bin=$target/release/hyst-tui
fi
echo "== models fetch $model (nothing to do when it is there)"
"$bin" models fetch "$model"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
export HYST_SCORE_STORE=off

echo "== doctor --model $model"
"$bin" doctor --model "$model" | tee "$log/doctor.txt" || true
echo "== bench engine --model $model"
"$bin" bench engine --model "$model" --items 2 | tee "$log/engine.txt"
curve=${HYST_GPU_CHECK_CURVE:-1,4,16,64,128}
echo "== bench batch --model $model --pack 64 --curve $curve --workers 4"
"$bin" bench batch --model "$model" --limit 4 --pack 64 --curve "$curve" --workers 4 --figure "$log/throughput.svg" | tee "$log/batch.txt"

# One table of what was measured above.
python3 - "$log" "$features" "$model" <<'PY'
import re, sys, pathlib
d = pathlib.Path(sys.argv[1]); features = sys.argv[2] or "none (CPU)"; model = sys.argv[3]
doctor = (d / "doctor.txt").read_text(); engine = (d / "engine.txt").read_text(); batch = (d / "batch.txt").read_text()
def grab(pattern, text, default="?"):
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else default
device = grab(r"scoring on (.+?)(?:; provenance|$)", doctor)
if "bit-identical to scratch" in doctor:
    dp = "0 (bit-identical)"
else:
    dp = grab(r"prefix-reused scores differ.*?max \|Δp\| ([0-9.e+-]+)", doctor)
if "bit-identical to one per call" in doctor:
    pack_dp = "0 (bit-identical)"
else:
    pack_dp = grab(r"packed scores differ.*?max \|Δp\| ([0-9.e+-]+)", doctor)
modes = {}
for m in re.finditer(r"^(sequential \(pack 1\)|packed \(pack \d+\)|from scratch)\s+([0-9.]+)s\s+(\d+)\s+([0-9.]+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)%\s+([0-9.]+)s\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", batch, re.M):
    modes[m.group(1).split(" ")[0]] = m.groups()
curve = [(int(a), float(b), float(c), e) for a, b, c, _, e in re.findall(r"^\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(identical|DIFFERENT)$", batch, re.M)]
raw = float(grab(r"raw llama.cpp prompt decode: \d+ tokens in one call = ([0-9.]+) tok/s", engine, "nan"))
reuse_rate = float(grab(r"engine, prefix reuse: .* = ([0-9.]+) tok/s", engine, "nan"))
rows = [
    ("features", features),
    ("model", model),
    ("scoring device", device),
    ("raw llama.cpp prompt rate (tok/s)", f"{raw:.1f}"),
    ("engine rate with reuse (tok/s)", f"{reuse_rate:.1f}"),
    ("engine vs raw prompt rate", grab(r"ratio engine/raw throughput:\s+([0-9.]+)", engine)),
    ("reuse speed-up, engine bench (wall time scratch/reuse)", grab(r"ratio wall time scratch/reuse: ([0-9.]+)", engine)),
    ("max |Δp| reused vs scratch (doctor)", dp),
    ("max |Δp| packed vs one prompt per call (doctor)", pack_dp),
]
for name, g in modes.items():
    rows.append((f"batch {g[0]}: tok/s, tok/call, end-to-end/matched raw, speed-up/token ratio", f"{g[3]}, {g[5]}, {g[8]}, {g[10]}"))
rows.append(("scores packed vs sequential (batch)", grab(r"packed vs sequential (\S+);", batch)))
for p, per_call, tps, same in curve:
    rows.append((f"curve pack {p}: tokens/call, tok/s (scores)", f"{per_call:.0f}, {tps:.1f} ({same})"))
if curve and all(c[3] == "identical" for c in curve):
    best = max(c[2] for c in curve)
    pick = min(c[0] for c in curve if c[2] >= 0.95 * best)
    rows.append(("--pack picked for this device (fewest sequences within 5% of the best)", str(pick)))
elif curve:
    rows.append(("--pack picked for this device", "1 (packed scores differ here: packing stays off)"))
for line in batch.splitlines():
    m = re.match(r"\s*(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)%\s+(\S+)", line)
    if m:
        rows.append((f"workers {m.group(1)}: speed-up (efficiency, probabilities)", f"{m.group(5)} ({m.group(6)}%, {m.group(7)})"))
paper_tokens = 51_000_000  # `hyst-tui --batch --plan paper --dry-run` with the paper's datasets (docs/guide/cluster.md)
if reuse_rate == reuse_rate and reuse_rate > 0:
    rows.append((f"paper plan (~{paper_tokens/1e6:.0f}M prompt tokens) at this rate", f"{paper_tokens / reuse_rate / 3600:.1f} h on one device ({model}; larger models are slower)"))
w = max(len(k) for k, _ in rows)
print("\n== gpu-check summary")
for k, v in rows:
    print(f"{k:<{w}}  {v}")
PY
