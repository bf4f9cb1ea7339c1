# shellcheck shell=bash
# Cleanup for the check scripts that start servers or submit Slurm jobs (check-served.sh,
# check-vllm.sh). Sourced, never run: it installs traps so that whatever ends the script (its own
# exit, an error under `set -e`, SIGTERM, SIGINT, SIGHUP) leaves nothing of it behind:
#   - every Slurm job recorded with `cleanup_slurm_job ID` is cancelled (scancel ID);
#   - every process group recorded with `cleanup_group PGID [GRACE]` gets SIGTERM, then SIGKILL
#     when it is still there GRACE seconds later (default 5);
#   - every process recorded with `cleanup_pid PID` is killed.
# On a signal the script then exits with 128 + the signal's number (143 for SIGTERM).
#
# Start a server in a process group of its own with `cleanup_spawn CMD ARGS...` (the script runs
# without job control, so `setsid` runs CMD in place and `$!` is the new group's id; $spawned holds
# it): the whole group goes at the end, with the child processes a server starts (vLLM's engine).
# A step that runs long in the foreground goes through `cleanup_run GRACE CMD ARGS...`: the same,
# waited for, so a signal to the script is handled at once (bash runs a trap only after the
# foreground command it waits for has ended) and the step gets GRACE seconds to clean up after
# itself (tests/slurm.rs turns SIGTERM into an unwind that cancels its jobs and stops its cluster).
#
# tests/cleanup.sh tests this file (tests/cleanup.rs runs it).

cleanup_groups=()   # "PGID:GRACE"
cleanup_pids=()
cleanup_jobs=()
spawned=

cleanup_group() { cleanup_groups+=("$1:${2:-5}"); }
cleanup_pid() { cleanup_pids+=("$1"); }
cleanup_slurm_job() { cleanup_jobs+=("$1"); }

# Forget a group, a process or a job the script has ended itself.
cleanup_forget() {
  local keep=() x
  for x in "${cleanup_groups[@]}"; do [ "${x%%:*}" = "$1" ] || keep+=("$x"); done
  cleanup_groups=("${keep[@]}")
  keep=()
  for x in "${cleanup_pids[@]}"; do [ "$x" = "$1" ] || keep+=("$x"); done
  cleanup_pids=("${keep[@]}")
  keep=()
  for x in "${cleanup_jobs[@]}"; do [ "$x" = "$1" ] || keep+=("$x"); done
  cleanup_jobs=("${keep[@]}")
}

# cleanup_spawn [--grace S] CMD ARGS...: CMD in the background, in a process group of its own.
cleanup_spawn() {
  local grace=5
  if [ "$1" = --grace ]; then grace=$2; shift 2; fi
  setsid "$@" &
  spawned=$!
  cleanup_group "$spawned" "$grace"
}

# cleanup_run GRACE CMD ARGS...: CMD in a process group of its own, waited for; its exit status.
cleanup_run() {
  local grace=$1 rc=0
  shift
  cleanup_spawn --grace "$grace" "$@"
  wait "$spawned" || rc=$?
  cleanup_forget "$spawned"
  return "$rc"
}

# True while a process of group $1 runs (zombies, which a container's init may never reap, do not
# count).
_cleanup_group_alive() { ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { f = 1 } END { exit !f }'; }

_cleanup_done=
cleanup_now() {
  [ -z "$_cleanup_done" ] || return 0
  _cleanup_done=1
  local x g t waited=0 longest=0
  for x in "${cleanup_jobs[@]}"; do
    scancel "$x" >/dev/null 2>&1 || echo "cleanup: scancel $x failed" >&2
  done
  for x in "${cleanup_groups[@]}"; do
    g=${x%%:*}
    t=${x##*:}
    kill -TERM -- "-$g" 2>/dev/null || true
    [ "$t" -gt "$longest" ] && longest=$t
  done
  # Each group gets its grace; what is still there after it is killed.
  while [ "$waited" -le "$longest" ]; do
    local alive=0
    for x in "${cleanup_groups[@]}"; do
      g=${x%%:*}
      t=${x##*:}
      _cleanup_group_alive "$g" || continue
      if [ "$waited" -ge "$t" ]; then kill -KILL -- "-$g" 2>/dev/null || true; else alive=1; fi
    done
    [ "$alive" = 1 ] || break
    sleep 1
    waited=$((waited + 1))
  done
  for x in "${cleanup_pids[@]}"; do kill -KILL "$x" 2>/dev/null || true; done
  # Reap what was killed (children of this shell), so nothing is left as a zombie either.
  for x in "${cleanup_groups[@]}"; do wait "${x%%:*}" 2>/dev/null || true; done
  for x in "${cleanup_pids[@]}"; do wait "$x" 2>/dev/null || true; done
  cleanup_groups=() cleanup_pids=() cleanup_jobs=()
}

_cleanup_on_signal() {
  trap '' TERM INT HUP   # a second signal must not cut the cleanup short
  echo "stopped by SIG$1: cleaning up" >&2
  cleanup_now
  trap - EXIT
  exit "$2"
}

trap cleanup_now EXIT
trap '_cleanup_on_signal TERM 143' TERM
trap '_cleanup_on_signal INT 130' INT
trap '_cleanup_on_signal HUP 129' HUP
