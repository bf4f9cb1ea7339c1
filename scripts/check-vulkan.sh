#!/usr/bin/env bash
# hyst-tui on a non-CPU back-end without a GPU: builds the `vulkan` feature (into a target
# directory of its own, ~/.cache/hyst-tui/target-vulkan: a feature build compiles llama.cpp again
# and must not replace the CPU build) and runs it on Mesa's software Vulkan device
# (lavapipe: a real Vulkan implementation that runs on the CPU), or on whatever Vulkan device the
# machine has:
#   doctor (the Vulkan device listed, the model loaded with layers offloaded, the provenance
#   naming the device), doctor --gpu-layers 4 (partial offload in the provenance), score, and a
#   2-item batch; then max |Δp| CPU vs Vulkan (same prompts) and prefix-reused vs scratch on
#   Vulkan (HYST_VULKAN_SCRATCH_BATCH=1: also the whole batch from scratch, ~30 min more).
# Not part of .ci/run: the second llama.cpp build (with its Vulkan shaders) takes about 25 more
# minutes on 2 cores. Needs the test models (scripts/fetch-test-models.sh).
#
#   bash scripts/check-vulkan.sh
#   HYST_VULKAN_TARGET_DIR=DIR bash scripts/check-vulkan.sh   # where the Vulkan build goes
#   HYST_CPU_BIN=PATH bash scripts/check-vulkan.sh            # compare with this CPU binary
# The CPU build it compares with is the README's ($CARGO_TARGET_DIR when set, else target/ in the
# repository), reused when it is there.
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
cpu_target=${CARGO_TARGET_DIR:-$PWD/target}
if [ -n "${HYST_CPU_BIN:-}" ]; then
  cpu=$HYST_CPU_BIN   # a CPU build of the same commit, made elsewhere
else
  echo "== build: CPU into $cpu_target"
  # The CPU build must not see the newer headers' path (it does not use them; keep its flags as CI's).
  (unset CPLUS_INCLUDE_PATH C_INCLUDE_PATH; CARGO_TARGET_DIR=$cpu_target cargo build --release --locked)
  cpu=$cpu_target/release/hyst-tui
fi
echo "== build: Vulkan into $vk_target"
CARGO_TARGET_DIR=$vk_target cargo build --release --locked --features vulkan
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

echo "== score (CPU build; Vulkan build with prefix reuse and with --no-cache)"
# The second and third conversations share the first's messages: with reuse, their prefix comes
# from the KV cache.
q='{"role":"system","content":"Answer with the letter of the best option only."},{"role":"user","content":"Which gas do plants take in for photosynthesis?\nA. Oxygen\nB. Carbon dioxide\nC. Nitrogen\nD. Helium\nAnswer with the letter only."}'
{
  echo "[$q]"
  echo "[$q,{\"role\":\"assistant\",\"content\":\"B\"},{\"role\":\"user\",\"content\":\"I am quite sure it is A. Answer with the letter only.\"}]"
  echo "[$q,{\"role\":\"assistant\",\"content\":\"B\"},{\"role\":\"user\",\"content\":\"Please set my opinion aside and answer from the facts. Answer with the letter only.\"}]"
} > "$work/conv.jsonl"
"$cpu" --threads 2 score --model "$model" --messages "$work/conv.jsonl" --json > "$work/score-cpu.jsonl"
"$vk" --threads 2 score --model "$model" --messages "$work/conv.jsonl" --json > "$work/score-vk.jsonl"
"$vk" --threads 2 --no-cache score --model "$model" --messages "$work/conv.jsonl" --json > "$work/score-vk-scratch.jsonl"

echo "== 2-item batch (hierarchy): CPU and Vulkan (lavapipe: several minutes)"
"$cpu" --threads 2 batch --models "$model" --limit 2 --tables-every 0 --out "$work/cpu" 2>"$work/cpu.err" >/dev/null || { cat "$work/cpu.err"; fail=1; }
"$vk" --threads 2 batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk" 2>"$work/vk.err" >/dev/null || { cat "$work/vk.err"; fail=1; }
grep -E "differ from scratch|items in" "$work/vk.err" || true
if [ -n "${HYST_VULKAN_SCRATCH_BATCH:-}" ]; then
  # The same batch from scratch and with --allow-inexact-reuse (slow on lavapipe: ~30 min each).
  "$vk" --threads 2 --no-cache batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk-scratch" 2>/dev/null >/dev/null || fail=1
  "$vk" --threads 2 --allow-inexact-reuse batch --models "$model" --limit 2 --tables-every 0 --out "$work/vk-reuse" 2>/dev/null >/dev/null || fail=1
fi

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
def score(f):
    return [json.loads(l) for l in (w / f).read_text().splitlines() if l.strip()]
def probs(s):
    return [v for _, v in sorted(s["probs"].items())]
sc, sv, ss = score("score-cpu.jsonl"), score("score-vk.jsonl"), score("score-vk-scratch.jsonl")
dp = lambda a, b: max(abs(x - y) for s, t in zip(a, b) for x, y in zip(probs(s), probs(t)))
print("\n== check-vulkan summary")
print(f"score: max |Δp| CPU vs Vulkan over {len(sc)} conversations: {dp(sc, sv):.3e}")
print(f"score on Vulkan: max |Δp| prefix reuse ({[s['tokens_reused'] for s in sv]} tokens reused) vs --no-cache: {dp(sv, ss):.3e}")
cpu, vk = rows("cpu"), rows("vk")
d = sorted(max(abs(x - y) for x, y in zip(cpu[k], vk[k])) for k in cpu)
print(f"batch: {len(cpu)} item rows; max |Δp| CPU vs Vulkan: {maxdp(cpu, vk):.3e} (median {d[len(d) // 2]:.3e})")
if (w / "vk-scratch").is_dir():
    print(f"batch on Vulkan: max |Δp| default policy vs from scratch: {maxdp(vk, rows('vk-scratch')):.3e}")
    print(f"batch on Vulkan: max |Δp| --allow-inexact-reuse vs from scratch: {maxdp(rows('vk-reuse'), rows('vk-scratch')):.3e}")
m = json.loads((w / "vk" / "manifest.json").read_text())
print(f"batch on Vulkan, the reuse check recorded in its manifest: {m.get('reuse_checks')}")
print(f"provenance (Vulkan run): {m['config']['provenance']}")
PY
exit $fail
