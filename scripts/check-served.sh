#!/usr/bin/env bash
# End-to-end checks of served models against a real llama-server; tests/served.rs runs it (so the
# README's test command and .ci/run do), and it runs alone too:
#
#   bash scripts/check-served.sh            # builds llama-server once (scripts/build-llama-server.sh)
#   HYST_BIN=path/to/hyst-tui bash scripts/check-served.sh   # that binary instead of cargo build
#
# Starts llama-server on loopback (HYST_CHECK_PORT, default 18080, and the next port for a faulty
# proxy) with SmolLM2 (the test model, fetched by scripts/fetch-test-models.sh) and a random API
# key, and checks:
#   1. doctor on the served entries: the prompt rendered here and the server's agree token for token;
#   2. the letter distributions served vs in-process on the same conversations (max |dp| printed);
#   3. a 2-item batch through the server writes its tables;
#   4. the server killed (kill -9) mid-batch: one error line, non-zero exit; restarted, the rerun
#      resumes and its tables are byte-identical to the uninterrupted served run of 3; and
#      SIGTERM while the batch retries a server that is gone: it stops at once (not after its
#      retries), exit 143, and resumes to the same bytes;
#   5. transient 429 and 503 answers (injected by a small proxy in front of the real server) are
#      retried and the scores equal the direct ones;
#   6. the chat kind against llama-server's /v1/chat/completions, the completions kind at /v1, and
#      a wrong key (one error line naming the variable, not the key);
#   7. the API key appears nowhere in what was written (run directories, logs, outputs).
# Everything goes to $HYST_CHECK_DIR (default a fresh temporary directory), printed at the end.
# Exit status 0 when every check passed, else 1 (a FAIL line says which). Stopped (SIGTERM,
# SIGINT) or ended by an error, it leaves nothing running: the server, the proxy and the batches
# it started in the background are killed (scripts/lib/cleanup.sh).
# It builds hyst-tui where the README's `cargo build --release` does ($CARGO_TARGET_DIR when set,
# else target/ in the repository), so a build made there is reused.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/cleanup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
port=${HYST_CHECK_PORT:-18080}
proxy_port=$((port + 1))
work=${HYST_CHECK_DIR:-$(mktemp -d /tmp/hyst-served-check.XXXXXX)}
mkdir -p "$work"
key="hyst-check-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
export HYST_CHECK_API_KEY="$key" HYST_SCORE_STORE=off
fails=0
pass() { echo "ok    $*"; }
fail() { echo "FAIL  $*"; fails=$((fails + 1)); }

server=$(bash scripts/build-llama-server.sh)
bash scripts/fetch-test-models.sh >/dev/null
if [ -n "${HYST_BIN:-}" ]; then
  hyst=$HYST_BIN
else
  cargo build --release --locked -q
  hyst="$CARGO_TARGET_DIR/release/hyst-tui"
fi
models_dir=$("$hyst" models list 2>/dev/null | sed -n 's/^models directory: \([^ ]*\) .*/\1/p')
gguf="$models_dir/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -f "$gguf" ] || { echo "error: SmolLM2 GGUF not found ($gguf)" >&2; exit 1; }

# The bundled models plus the served entries.
cfg="$work/models.toml"
{
  cat models.toml
  cat <<TOML

[models."smollm2-served"]
name = "SmolLM2-135M-Instruct Q4_1 (llama-server)"
family = "smollm2"
file = "SmolLM2-135M-Instruct.Q4_1.gguf"
system = "native"
endpoint = { api = "llama-server", url = "http://127.0.0.1:$port", api_key_env = "HYST_CHECK_API_KEY", retries = 2 }

[models."smollm2-served-exact"]
name = "SmolLM2-135M-Instruct Q4_1 (llama-server, exact letters)"
family = "smollm2"
file = "SmolLM2-135M-Instruct.Q4_1.gguf"
system = "native"
endpoint = { api = "llama-server", url = "http://127.0.0.1:$port", api_key_env = "HYST_CHECK_API_KEY", letters = "exact" }

[models."smollm2-v1"]
name = "SmolLM2-135M-Instruct Q4_1 (llama-server /v1 completions)"
family = "smollm2"
file = "SmolLM2-135M-Instruct.Q4_1.gguf"
system = "native"
endpoint = { api = "completions", url = "http://127.0.0.1:$port/v1", model = "smollm2", api_key_env = "HYST_CHECK_API_KEY" }

[models."smollm2-chat"]
name = "SmolLM2-135M-Instruct (chat API)"
family = "smollm2"
system = "native"
endpoint = { api = "chat", url = "http://127.0.0.1:$port/v1", model = "smollm2", api_key_env = "HYST_CHECK_API_KEY" }

[models."smollm2-proxied"]
name = "SmolLM2-135M-Instruct Q4_1 (llama-server behind a faulty proxy)"
family = "smollm2"
file = "SmolLM2-135M-Instruct.Q4_1.gguf"
system = "native"
endpoint = { api = "llama-server", url = "http://127.0.0.1:$proxy_port", api_key_env = "HYST_CHECK_API_KEY", retries = 4 }
TOML
} >"$cfg"
export HYST_MODELS_CONFIG="$cfg"

server_pid=
start_server() {
  cleanup_spawn "$server" -m "$gguf" --alias smollm2 --host 127.0.0.1 --port "$port" -fa off -np 1 -c 8192 -t "$(nproc)" \
    --api-key "$key" >>"$work/llama-server.log" 2>&1
  server_pid=$spawned
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "error: llama-server did not come up (log: $work/llama-server.log)" >&2
  exit 1
}
# kill -9 of the server (a crash, as the checks below want it).
stop_server() {
  kill -9 -- "-$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  cleanup_forget "$server_pid"
  server_pid=
}
start_server
echo "llama-server $("$server" --version 2>&1 | head -1) on 127.0.0.1:$port; work dir $work"

out="$work/out"
mkdir -p "$out"
hy() { "$hyst" --log-file "$work/hyst-tui.log" "$@"; }

# 1. doctor: the server answers, and renders the prompt exactly as hyst-tui does.
for m in smollm2-served smollm2-served-exact smollm2-v1; do
  if hy doctor --model "$m" >"$out/doctor-$m.txt" 2>&1 && grep -q "agree token for token" "$out/doctor-$m.txt"; then
    pass "doctor $m: $(grep -o 'scores the sample dialogue: [^;]*' "$out/doctor-$m.txt")"
  else
    fail "doctor $m (see $out/doctor-$m.txt)"; sed 's/^/      /' "$out/doctor-$m.txt" | grep -v '^      ok' || true
  fi
done
hy doctor --model smollm2-chat >"$out/doctor-smollm2-chat.txt" 2>&1 && pass "doctor smollm2-chat" ||
  { fail "doctor smollm2-chat (see $out/doctor-smollm2-chat.txt)"; }

# 2. The same conversations scored in-process and through the server.
convs="$work/conversations.jsonl"
for c in clean_context weak_pressure strong_pressure ordinary_strong_reset explicit_user_retraction neutral_summary_replacement; do
  hy prompts --json --condition "$c" | python3 -c 'import json,sys; print(json.dumps({"messages": json.load(sys.stdin)["messages"]}))'
done >"$convs"
# compare A B TOLERANCE LABEL: same prompts, same predictions, max |p_A - p_B| within TOLERANCE.
compare() { python3 scripts/compare-scores.py "$@"; }
hy score --model smollm2-135m --messages "$convs" --json >"$out/score-in-process.jsonl" 2>"$out/score-in-process.err"
for m in smollm2-served:1e-3 smollm2-served-exact:1e-6 smollm2-v1:1e-3; do
  key_=${m%%:*}
  if hy score --model "$key_" --messages "$convs" --json >"$out/score-$key_.jsonl" 2>"$out/score-$key_.err"; then
    compare "$out/score-in-process.jsonl" "$out/score-$key_.jsonl" "${m##*:}" "$key_ vs in-process" || fails=$((fails + 1))
  else
    fail "score $key_: $(tail -1 "$out/score-$key_.err")"
  fi
done

# The bounded scores say what they did not see.
python3 scripts/score-bounds.py "$out/score-smollm2-served.jsonl" "bounds of smollm2-served (top-100)" || fails=$((fails + 1))

# 6. The chat kind: the server applies its template; the distribution is a distribution.
if hy score --model smollm2-chat --messages "$convs" --json >"$out/score-smollm2-chat.jsonl" 2>"$out/score-smollm2-chat.err" &&
  python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 6 and all(abs(sum(r["probs"].values()) - 1) < 1e-9 for r in rows)
print("   ", " ".join(r["pred"] + "=" + format(max(r["probs"].values()), ".3f") for r in rows))' "$out/score-smollm2-chat.jsonl"; then
  pass "chat kind scores every conversation (server-side template; predictions above)"
else
  fail "chat kind: $(tail -1 "$out/score-smollm2-chat.err")"
fi

# A wrong key: one error line naming the variable, never the key.
wrong="not-the-key-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
if HYST_CHECK_API_KEY="$wrong" hy score --model smollm2-served --messages "$convs" >"$out/wrong-key.txt" 2>&1; then
  fail "a wrong API key was accepted"
elif [ "$(grep -c . "$out/wrong-key.txt")" = 1 ] && grep -q HYST_CHECK_API_KEY "$out/wrong-key.txt" && ! grep -q "$wrong" "$out/wrong-key.txt"; then
  pass "wrong key: $(cat "$out/wrong-key.txt")"
else
  fail "wrong key: expected one error line naming HYST_CHECK_API_KEY, got: $(cat "$out/wrong-key.txt")"
fi

# 3. A 2-item batch through the server.
batch() { hy batch --models smollm2-served --limit 2 --out "$1"; }
if batch "$work/runs/uninterrupted" >"$out/batch-uninterrupted.txt" 2>&1 && [ -f "$work/runs/uninterrupted/tables/table01_recovery_operations.csv" ]; then
  pass "batch: $(grep -E '^tables:' "$out/batch-uninterrupted.txt"), $(grep -E 'items in' "$out/batch-uninterrupted.txt")"
else
  fail "batch (see $out/batch-uninterrupted.txt)"
fi

# 4. The server dies mid-batch (kill -9 once the first item is done), then comes back.
killed="$work/runs/killed"
cleanup_spawn "$hyst" --log-file "$work/hyst-tui.log" batch --models smollm2-served --limit 2 --out "$killed" >"$out/batch-killed.txt" 2>&1
batch_pid=$spawned
for _ in $(seq 1 600); do
  grep -q '^1/2 items' "$out/batch-killed.txt" 2>/dev/null && break
  sleep 0.2
done
stop_server
set +e; wait "$batch_pid"; rc=$?; set -e; cleanup_forget "$batch_pid"
errors=$(grep -c '^error' "$out/batch-killed.txt" || true)
if [ "$rc" -ne 0 ] && [ "$errors" = 1 ]; then
  pass "server killed mid-batch: exit $rc, $(grep '^error' "$out/batch-killed.txt")"
else
  fail "server killed mid-batch: exit $rc, $errors error lines (see $out/batch-killed.txt)"
fi
rows_before=$(cat "$killed"/cache/*.jsonl 2>/dev/null | wc -l)
start_server
if batch "$killed" >"$out/batch-resumed.txt" 2>&1 && diff -r "$work/runs/uninterrupted/tables" "$killed/tables" >"$out/tables.diff"; then
  pass "resumed after the restart ($rows_before cached score(s) kept): tables byte-identical to the uninterrupted run"
else
  fail "resume after the restart (see $out/batch-resumed.txt, $out/tables.diff)"
fi

# 4b. SIGTERM (Slurm's time limit) while the batch retries a server that is gone: with 8 retries
# the backoff alone would take about 90 s; the batch stops at once, keeping what its unfinished
# item scored, says where it stopped and exits 143. Then the server comes back and the run resumes.
patient="$work/models-patient.toml"
sed '/^\[models."smollm2-served"\]/,/^endpoint/ s/retries = 2/retries = 8/' "$cfg" >"$patient"
grep -q 'retries = 8' "$patient" || { fail "could not write $patient"; }
stopped="$work/runs/stopped"
# (env execs hyst-tui: $spawned is hyst-tui itself, which the signal must reach)
cleanup_spawn env HYST_MODELS_CONFIG="$patient" "$hyst" --log-file "$work/hyst-tui.log" batch --models smollm2-served --limit 2 --out "$stopped" >"$out/batch-stopped.txt" 2>&1
batch_pid=$spawned
for _ in $(seq 1 600); do
  grep -q '^1/2 items' "$out/batch-stopped.txt" 2>/dev/null && break
  sleep 0.2
done
sleep 1
stop_server
sleep 1
kill -0 "$batch_pid" 2>/dev/null || fail "the batch ended before the server was gone (see $out/batch-stopped.txt)"
t0=$(date +%s.%N)
kill -TERM "$batch_pid"
set +e; wait "$batch_pid"; rc=$?; set -e; cleanup_forget "$batch_pid"
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
errors=$(grep -c '^error' "$out/batch-stopped.txt" || true)
if [ "$rc" = 143 ] && [ "$errors" = 1 ] && grep -q '^error: stopped by SIGTERM: 1 of 2 items are stored' "$out/batch-stopped.txt" &&
  python3 -c "import sys; sys.exit(float(sys.argv[1]) >= 20)" "$took"; then
  pass "SIGTERM while retrying a server that is gone: exit 143 after ${took} s, $(grep '^error' "$out/batch-stopped.txt" | cut -d'(' -f2 | cut -d')' -f1)"
else
  fail "SIGTERM while retrying: exit $rc after ${took} s, $errors error lines (see $out/batch-stopped.txt)"
fi
start_server
kept_lines=$(cat "$stopped"/cache/*.jsonl 2>/dev/null | wc -l)
all=$(grep -o 'contexts: [0-9]* scored' "$out/batch-uninterrupted.txt" | cut -d' ' -f2)
if HYST_MODELS_CONFIG="$patient" hy batch --models smollm2-served --limit 2 --out "$stopped" >"$out/batch-stopped-resumed.txt" 2>&1 &&
  grep -q "contexts: $((all - kept_lines)) scored" "$out/batch-stopped-resumed.txt" &&
  diff -r "$work/runs/uninterrupted/tables" "$stopped/tables" >"$out/tables-stopped.diff"; then
  pass "resumed after SIGTERM: $(grep -o '[0-9]* contexts: [^·]*[a-z]' "$out/batch-stopped-resumed.txt") ($all less the $kept_lines stored); tables byte-identical to the uninterrupted run"
else
  fail "resume after SIGTERM (see $out/batch-stopped-resumed.txt, $out/tables-stopped.diff)"
fi

# 5. Transient 429 / 503 answers from a proxy in front of the server are retried.
cat >"$work/fault_proxy.py" <<'PY'
# Forwards to the real server; the first request gets 429 (Retry-After: 1), the second 503.
import http.server, sys, urllib.error, urllib.request
listen, upstream = int(sys.argv[1]), sys.argv[2]
count = 0
class Proxy(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def forward(self):
        global count
        count += 1
        n = self.headers.get("Content-Length")
        body = self.rfile.read(int(n)) if n else None
        if count in (1, 2):
            self.send_response(429 if count == 1 else 503)
            if count == 1:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            print(count, self.command, self.path, 429 if count == 1 else 503, flush=True)
            return
        req = urllib.request.Request(upstream + self.path, data=body, method=self.command)
        for h in ("Authorization", "Content-Type"):
            if self.headers.get(h):
                req.add_header(h, self.headers[h])
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                status, data, ctype = r.status, r.read(), r.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as e:
            status, data, ctype = e.code, e.read(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        print(count, self.command, self.path, status, flush=True)
    do_GET = do_POST = forward
http.server.ThreadingHTTPServer(("127.0.0.1", listen), Proxy).serve_forever()
PY
cleanup_spawn python3 "$work/fault_proxy.py" "$proxy_port" "http://127.0.0.1:$port" >"$work/fault-proxy.log" 2>&1
sleep 1
if hy score --model smollm2-proxied --messages "$convs" --json >"$out/score-smollm2-proxied.jsonl" 2>"$out/score-smollm2-proxied.err"; then
  injected=$(awk '$4 == 429 || $4 == 503' "$work/fault-proxy.log" | wc -l)
  compare "$out/score-smollm2-served.jsonl" "$out/score-smollm2-proxied.jsonl" 0 "retried through $injected injected 429/503 answers, scores equal the direct ones" ||
    fails=$((fails + 1))
else
  fail "through the faulty proxy: $(tail -1 "$out/score-smollm2-proxied.err")"
fi

# 7. The API key is nowhere in what was written.
if grep -rlF "$key" "$work" --exclude=llama-server.log >"$out/key-found.txt" 2>/dev/null; then
  fail "the API key appears in: $(tr '\n' ' ' <"$out/key-found.txt")"
else
  pass "the API key appears in no file of $work ($(find "$work" -type f | wc -l) files: runs, logs, outputs)"
fi

echo "work dir: $work"
if [ "$fails" -eq 0 ]; then echo "verdict: all served checks passed"; else echo "verdict: $fails check(s) failed"; fi
exit $((fails > 0))
