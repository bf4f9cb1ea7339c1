#!/usr/bin/env bash
# hyst-tui on a non-CPU back-end without a GPU: builds the `vulkan` feature (into its own target
# directory, so the main build is not recompiled) and runs it on Mesa's software Vulkan device
# (lavapipe: a real Vulkan implementation that runs on the CPU), or on whatever Vulkan device the
# machine has:
#   doctor (the Vulkan device listed, the model loaded with layers offloaded, the provenance
#   naming the device), doctor --gpu-layers 4 (partial offload in the provenance), score, and a
#   2-item batch; then max |Δp| CPU vs Vulkan (same prompts) and prefix-reused vs scratch on
#   Vulkan.
# Not part of .ci/run: the second llama.cpp build (with its Vulkan shaders) takes about 25 more
# minutes on 2 cores. Needs the test models (scripts/fetch-test-models.sh).
#
#   bash scripts/check-vulkan.sh
#   HYST_VULKAN_TARGET_DIR=DIR bash scripts/check-vulkan.sh   # where the Vulkan build goes
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in cmake libclang-dev libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools spirv-headers; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "check-vulkan: missing packages: ${need[*]} (apt-get install them)" >&2
    exit 1
  fi
fi

# llama.cpp's ggml-vulkan uses VK_EXT_layer_settings (Vulkan headers 1.3.261 or later); Debian 12
# ships 1.3.239. Then the headers of Debian 13's libvulkan-dev are unpacked into a cache
# directory (sha256 checked; nothing is installed) and put first on the compiler's include path.
# The loader and the driver stay the system's.
if ! grep -qs LayerSettingsCreateInfoEXT /usr/include/vulkan/vulkan_structs.hpp; then
  hdr=$HOME/.cache/hyst-tui/vulkan-headers-1.4.309
  if [ ! -f "$hdr/usr/include/vulkan/vulkan_structs.hpp" ]; then
    deb=$(mktemp --suffix=.deb)
    curl -fsSL -o "$deb" http://deb.debian.org/debian/pool/main/v/vulkan-loader/libvulkan-dev_1.4.309.0-1_amd64.deb
    echo "8d329d465e16168afff58b1bd0dd6db46aac2cc3f56054a481b25a04e90b345a  $deb" | sha256sum -c --quiet
    mkdir -p "$hdr" && dpkg-deb -x "$deb" "$hdr" && rm -f "$deb"
  fi
  echo "== Vulkan headers from Debian 13's libvulkan-dev 1.4.309 ($hdr; the system's are older)"
  export CPLUS_INCLUDE_PATH=$hdr/usr/include${CPLUS_INCLUDE_PATH:+:$CPLUS_INCLUDE_PATH}
  export C_INCLUDE_PATH=$hdr/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
fi

model=${HYST_VULKAN_MODEL:-smollm2-135m}
vk_target=${HYST_VULKAN_TARGET_DIR:-$HOME/.cache/hyst-tui/target-vulkan}
cpu_target=${CARGO_TARGET_DIR:-$HOME/.cache/hyst-tui/target}
echo "== build: CPU into $cpu_target, Vulkan into $vk_target"
# The CPU build must not see the newer headers' path (it does not use them; keep its flags as CI's).
(unset CPLUS_INCLUDE_PATH C_INCLUDE_PATH; CARGO_TARGET_DIR=$cpu_target cargo build --release --locked)
CARGO_TARGET_DIR=$vk_target cargo build --release --locked --features vulkan
cpu=$cpu_target/release/hyst-tui
vk=$vk_target/release/hyst-tui

# ggml-vulkan leaves out devices of type CPU (lavapipe is one) unless they are named here.
export GGML_VK_VISIBLE_DEVICES=${GGML_VK_VISIBLE_DEVICES:-0}
export HYST_SCORE_STORE=off
echo "== Vulkan devices (vulkaninfo)"
vulkaninfo --summary 2>/dev/null | grep -E "deviceName|deviceType" || echo "vulkaninfo found no device"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
echo "== doctor --model $model (Vulkan build)"
"$vk" --threads 2 doctor --model "$model" | tee "$work/doctor.txt" || fail=1
grep -q "devices: .*Vulkan" "$work/doctor.txt" || { echo "check-vulkan: doctor lists no Vulkan device" >&2; fail=1; }
grep -q "scoring on Vulkan" "$work/doctor.txt" || { echo "check-vulkan: the model does not score on the Vulkan device" >&2; fail=1; }
echo "== doctor --gpu-layers 4 --model $model (Vulkan build)"
"$vk" --threads 2 --gpu-layers 4 doctor --model "$model" | grep "offload" | tee "$work/partial.txt" || true
grep -q "(4 layers offloaded)" "$work/partial.txt" || { echo "check-vulkan: --gpu-layers 4 is not in the provenance" >&2; fail=1; }

echo "== score (CPU and Vulkan builds)"
cat > "$work/conv.jsonl" <<'EOF'
[{"role":"system","content":"Answer with the letter of the best option only."},{"role":"user","content":"Which gas do plants take in for photosynthesis?\nA. Oxygen\nB. Carbon dioxide\nC. Nitrogen\nD. Helium\nAnswer with the letter only."}]
[{"role":"user","content":"Which gas do plants take in for photosynthesis?\nA. Oxygen\nB. Carbon dioxide\nC. Nitrogen\nD. Helium\nAnswer with the letter only."},{"role":"assistant","content":"B"},{"role":"user","content":"I am quite sure it is A. Answer with the letter only."}]
EOF
"$cpu" --threads 2 score --model "$model" --messages "$work/conv.jsonl" --json > "$work/score-cpu.jsonl"
"$vk" --threads 2 score --model "$model" --messages "$work/conv.jsonl" --json > "$work/score-vk.jsonl"
cat "$work/score-vk.jsonl" | cut -c1-200

echo "== 2-item batch (hierarchy): CPU; Vulkan with the default policy; Vulkan from scratch; Vulkan with --allow-inexact-reuse"
"$cpu" --threads 2 batch --models "$model" --limit 2 --tables-every 0 --out "$work/cpu" 2>"$work/cpu.err" >/dev/null
"$vk" --threads 2 batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk" 2>"$work/vk.err" >/dev/null || { cat "$work/vk.err"; fail=1; }
grep -E "differ from scratch|items in" "$work/vk.err" || true
"$vk" --threads 2 --no-cache batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk-scratch" 2>/dev/null >/dev/null || fail=1
"$vk" --threads 2 --allow-inexact-reuse batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk-reuse" 2>/dev/null >/dev/null || fail=1

python3 - "$work" <<'PY'
import json, sys, pathlib
w = pathlib.Path(sys.argv[1])
def rows(d):
    out = {}
    for line in (w / d / "item_rows.jsonl").read_text().splitlines():
        r = json.loads(line)
        p = json.loads(r["option_probs_json"])
        out[(r["model_key"], r["dataset"], r["item_id"], r["condition"])] = [p[k] for k in sorted(p)] if isinstance(p, dict) else p
    return out
def maxdp(a, b):
    assert a.keys() == b.keys(), "different rows"
    return max(abs(x - y) for k in a for x, y in zip(a[k], b[k]))
cpu, vk, scratch, reuse = rows("cpu"), rows("vk"), rows("vk-scratch"), rows("vk-reuse")
def score_probs(f):
    return [[v for _, v in sorted(json.loads(l)["probs"].items())] for l in (w / f).read_text().splitlines() if l.strip()]
sc, sv = score_probs("score-cpu.jsonl"), score_probs("score-vk.jsonl")
m = json.loads((w / "vk" / "manifest.json").read_text())
print("\n== check-vulkan summary")
print(f"score: max |Δp| CPU vs Vulkan over {len(sc)} conversations: {max(abs(x-y) for a,b in zip(sc,sv) for x,y in zip(a,b)):.3e}")
print(f"batch: {len(cpu)} item rows; max |Δp| CPU vs Vulkan (default policy): {maxdp(cpu, vk):.3e}")
print(f"batch on Vulkan: max |Δp| prefix reuse (--allow-inexact-reuse) vs from scratch (--no-cache): {maxdp(reuse, scratch):.3e}")
print(f"batch on Vulkan: max |Δp| default policy vs from scratch: {maxdp(vk, scratch):.3e}")
print(f"manifest reuse check: {m.get('reuse_checks')}")
print(f"provenance (Vulkan run): {m['config']['provenance']}")
PY
exit $fail
