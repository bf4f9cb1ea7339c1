#!/usr/bin/env bash
# Tests scripts/lib/cleanup.sh, the traps of the check scripts that start servers and submit Slurm
# jobs (tests/cleanup.rs runs it). A small script sources the file, starts what a check starts (a
# server's process group, a group that ignores SIGTERM, a plain background process, a long step
# through cleanup_run) and records two Slurm jobs; `scancel` is a fake on PATH that writes down
# what it is asked to cancel (no Slurm is needed). Then:
#   1. SIGTERM to the script during the long step: it exits 143 within seconds, the step got
#      SIGTERM first (its own handler ran), every recorded job id went to scancel, and no process
#      of it is left;
#   2. an `exit 3` and a failing command under `set -e`: the same cleanup, and the script's own
#      exit status is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d /tmp/hyst-cleanup-test.XXXXXX)
fails=0
ok() { echo "ok    $*"; }
bad() { echo "FAIL  $*"; fails=$((fails + 1)); }

mkdir -p "$t/bin"
cat >"$t/bin/scancel" <<EOF
#!/bin/sh
echo "\$@" >>"$t/scancel.log"
EOF
chmod +x "$t/bin/scancel"

cat >"$t/subject.sh" <<'EOF'
set -euo pipefail
t=$1
source "$HYST_ROOT/scripts/lib/cleanup.sh"
cleanup_spawn sleep 300                                          # a server
echo "$spawned" >>"$t/groups"
cleanup_spawn bash -c 'trap "" TERM; sleep 300 & wait'            # deaf to SIGTERM: killed after 5 s
echo "$spawned" >>"$t/groups"
sleep 300 &                                                       # a plain background process
cleanup_pid $!
echo $! >>"$t/pids"
cleanup_slurm_job 4242
cleanup_slurm_job 4243_1
case $2 in
  term)
    # A long step (the Slurm test of check-vllm.sh): it must get SIGTERM and time to end itself.
    cleanup_run 20 bash -c "trap 'echo graceful >$t/graceful; exit 0' TERM; echo \$\$ >>$t/groups; echo >$t/ready; sleep 300 & wait"
    ;;
  exit) exit 3 ;;
  fail) false ;;
esac
echo "not reached" >"$t/reached"
EOF

# Processes (not zombies) of the recorded groups and pids that still run.
left() {
  local x
  for x in $(cat "$t/groups" 2>/dev/null); do
    ps -eo pid=,pgid=,stat=,args= | awk -v g="$x" '$2 == g && $3 !~ /^Z/'
  done
  for x in $(cat "$t/pids" 2>/dev/null); do
    ps -o pid=,stat=,args= -p "$x" | awk '$2 !~ /^Z/' || true   # (ps fails for a pid that is gone)
  done
}

# Whatever a failing case leaves is killed before the next one (and at the end).
sweep() {
  local x
  for x in $(cat "$t/groups" 2>/dev/null); do kill -KILL -- "-$x" 2>/dev/null || true; done
  for x in $(cat "$t/pids" 2>/dev/null); do kill -KILL "$x" 2>/dev/null || true; done
  rm -f "$t/groups" "$t/pids" "$t/scancel.log" "$t/graceful" "$t/ready" "$t/reached"
}
trap 'sweep; rm -rf "$t"' EXIT

run_subject() { HYST_ROOT=$root PATH="$t/bin:$PATH" bash "$t/subject.sh" "$t" "$1" 2>"$t/stderr"; }

# 1. SIGTERM during the long step.
# (A simple command, so that $! is the script's own bash, which the signal must reach.)
HYST_ROOT=$root PATH="$t/bin:$PATH" bash "$t/subject.sh" "$t" term 2>"$t/stderr" &
pid=$!
for _ in $(seq 1 100); do [ -e "$t/ready" ] && break; sleep 0.1; done
[ -e "$t/ready" ] || bad "the subject did not start its long step"
t0=$(date +%s.%N)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
took=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
[ "$rc" = 143 ] && ok "SIGTERM: exit 143 after $took s" || bad "SIGTERM: exit $rc after $took s ($(cat "$t/stderr"))"
python3 -c "import sys; sys.exit(float(sys.argv[1]) >= 15)" "$took" || bad "SIGTERM: the cleanup took $took s"
grep -q '^stopped by SIGTERM: cleaning up$' "$t/stderr" && ok "SIGTERM: the script says it cleans up" || bad "SIGTERM: no notice ($(cat "$t/stderr"))"
[ -e "$t/graceful" ] && ok "SIGTERM: the long step got SIGTERM and ended itself" || bad "SIGTERM: the long step was not given SIGTERM"
[ ! -e "$t/reached" ] || bad "SIGTERM: the script went on after the signal"
[ "$(sort "$t/scancel.log" 2>/dev/null | tr '\n' ' ')" = "4242 4243_1 " ] &&
  ok "SIGTERM: scancel was asked for every recorded job (4242, 4243_1)" || bad "SIGTERM: scancel calls: $(cat "$t/scancel.log" 2>/dev/null)"
[ "$(wc -l <"$t/groups")" = 3 ] || bad "SIGTERM: expected 3 recorded groups, got $(cat "$t/groups")"
still=$(left)
[ -z "$still" ] && ok "SIGTERM: no process of the script is left (3 groups, 1 process)" || bad "SIGTERM: left running: $still"
sweep

# 2. Exits without a signal: the status is the script's own, and the same cleanup runs.
for mode in exit:3 fail:1; do
  rc=0
  run_subject "${mode%%:*}" || rc=$?
  still=$(left)
  if [ "$rc" = "${mode##*:}" ] && [ -z "$still" ] && [ "$(sort "$t/scancel.log" | tr '\n' ' ')" = "4242 4243_1 " ]; then
    ok "${mode%%:*}: exit $rc kept, jobs cancelled, nothing left"
  else
    bad "${mode%%:*}: exit $rc (want ${mode##*:}), scancel: $(cat "$t/scancel.log" 2>/dev/null), left: $still"
  fi
  sweep
done

if [ "$fails" = 0 ]; then echo "all cleanup checks passed"; else echo "$fails cleanup check(s) failed"; fi
exit $((fails > 0))
