#!/usr/bin/env bash
# The GPU bundle's rehearsal on this CPU machine: scripts/gpu-bundle.sh --cpu (the CPU build in the
# CUDA binary's place), the archive unpacked in a fresh directory as on a node, and its `gpu-check`
# run there with the small shapes, with the gguf package taken from the bundle's wheels. Then it
# checks what a node run must leave: at most 8 result files, a summary.json with every measure,
# every exactness verdict. About 5 minutes on 2 cores. Not part of .ci/run (tests/gpu_check.rs
# is: the generator's models scored by the CPU build).
#
#   bash scripts/check-gpu-bundle.sh            # --shapes small,tiny --items 1 --curve 1,4
#   HYST_BUNDLE_CHECK_DIR=DIR bash scripts/check-gpu-bundle.sh   # keep the bundle and results in DIR
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${HYST_BUNDLE_CHECK_DIR:-$(mktemp -d)}
mkdir -p "$dir"
start=$(date +%s)
bash scripts/gpu-bundle.sh --cpu --out "$dir/build"
mkdir -p "$dir/node"
tar -C "$dir/node" -xJf "$dir/build/hyst-gpu-check-cpu.tar.xz"
echo "== on the 'node': $dir/node/hyst-gpu-check-cpu/gpu-check"
(cd "$dir/node" && env -u HYST_GGUF_WHEELS -u HYST_TOKENIZER_GGUF -u HYST_MODELS_CONFIG \
  ./hyst-gpu-check-cpu/gpu-check --shapes small,tiny --items 1 --curve 1,4 --out results)

python3 - "$dir/node/results" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
files = sorted(p.name for p in out.iterdir())
problems = []
if len(files) > 8:
    problems.append(f"{len(files)} result files (at most 8): {files}")
s = json.loads((out / "summary.json").read_text())
need = {
    "raw pp512 rate": s["engine"]["raw_pp512_tok_s"],
    "engine reuse rate": s["engine"]["reuse_tok_s"],
    "doctor's reuse verdict": s["doctor"]["prefix_reuse"],
    "doctor's packing verdict": s["doctor"]["packing"],
    "bench batch modes": s["batch"]["modes"] or None,
    "curve": s["batch"]["curve"] or None,
    "packed vs sequential": s["batch"].get("packed_vs_sequential"),
    "letters GPU vs CPU": s["letters_gpu_vs_cpu"].get("max_abs_dp"),
    "paper plan": s.get("paper_plan"),
    "bundle commit": s["bundle"].get("commit"),
}
problems += [f"summary.json lacks {k}" for k, v in need.items() if v is None]
if s["letters_gpu_vs_cpu"].get("conversations") != 6:
    problems.append("the letters were not scored for the 6 conversations")
print(f"results: {', '.join(files)}")
if problems:
    sys.exit("check-gpu-bundle: " + "; ".join(problems))
print("check-gpu-bundle: the rehearsal left every measure (summary.json) in", len(files), "files")
PY
echo "check-gpu-bundle: $(( $(date +%s) - start )) s; bundle and results in $dir"
