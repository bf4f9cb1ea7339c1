#!/usr/bin/env bash
# End-to-end check of the explorer in a real terminal (tmux): start the binary at 80x24 and at
# 120x40, walk through the views with keys, resize, quit while the engine is scoring, and check
# the terminal was given back (alternate screen left, cooked mode, the shell prompt is back).
#
# usage: tests/tui_tmux.sh PATH/TO/hyst-tui
# Needs tmux and the smollm2-135m model (bash scripts/fetch-test-models.sh).
set -u
BIN=${1:?usage: tui_tmux.sh PATH/TO/hyst-tui}
command -v tmux >/dev/null || { echo "tmux is not installed"; exit 1; }
WORK=$(mktemp -d)
SOCK="hyst-tui-test-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
cleanup() { T kill-server >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
# The explorer shares a score store with every run: keep the test's own apart from the user's.
export HYST_SCORE_STORE=${HYST_SCORE_STORE:-$WORK/scores/scores.jsonl}
# The explorer without flags opens the data directory's newest run: give it an empty data
# directory of its own (the models stay where they are).
export HYST_MODELS_DIR=${HYST_MODELS_DIR:-${HYST_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/hyst-tui}/models}
export HYST_DATA_DIR=$WORK/data

FAILS=0
CUR=""
N=0
pane() { T capture-pane -p -t "$CUR"; }
fail() {
  echo "FAIL: $*"
  echo "----- pane -----"
  pane
  echo "----------------"
  FAILS=$((FAILS + 1))
}
# wait_for PATTERN SECONDS: poll the pane until it matches (grep -E).
wait_for() {
  local pat=$1 secs=${2:-20} i
  for ((i = 0; i < secs * 5; i++)); do
    if pane | grep -qE -- "$pat"; then return 0; fi
    sleep 0.2
  done
  return 1
}
check() { # check PATTERN SECONDS WHAT
  wait_for "$1" "${2:-20}" || fail "$3 (expected /$1/)"
}
keys() { T send-keys -t "$CUR" "$@"; }

start() { # start WIDTH HEIGHT [ENV...]
  local w=$1 h=$2
  shift 2
  local envs=(HOME="$HOME" PATH="$PATH" TERM=xterm-256color LANG=C.UTF-8)
  local v
  for v in HYST_MODELS_DIR HYST_MODELS_CONFIG HYST_DATA_DIR XDG_DATA_HOME HYST_SCORE_STORE; do
    if [ -n "${!v:-}" ]; then envs+=("$v=${!v}"); fi
  done
  # A new session first, then the old one goes: the server never runs empty in between.
  local old=$CUR
  N=$((N + 1))
  CUR="hyst$N"
  T new-session -d -s "$CUR" -x "$w" -y "$h" env -i "${envs[@]}" "$@" PS1='shell$ ' bash --norc --noprofile \
    || { echo "FAIL: tmux new-session"; exit 1; }
  T set-option -t "$CUR" status off >/dev/null
  if [ -n "$old" ]; then T kill-session -t "$old" >/dev/null 2>&1; fi
  wait_for 'shell\$' 10 || fail "no shell prompt"
  keys "clear; '$BIN' --log-file '$WORK/hyst.log'; echo \"EXITED:\$?\"" Enter
}

quit_and_check_restored() { # what
  keys q
  check 'EXITED:0' 20 "$1: exits with status 0 after q"
  if pane | grep -qE ' 1 Items| 1 Item '; then fail "$1: the TUI is still on the screen after exit (alternate screen not left)"; fi
  keys "stty -a | tr ' ;' '\n\n' | grep -xE -- '-?icanon|-?echo' | tr '\n' ' '; echo STTY_\"\"END" Enter
  check 'STTY_END' 10 "$1: the shell answers after exit"
  if pane | grep -qE -- '(^| )-icanon|(^| )-echo( |$)'; then fail "$1: the terminal was left in raw mode"; fi
  pane | grep -qE 'icanon echo' || fail "$1: cooked mode (icanon echo) after exit"
}

# ---------------------------------------------------------------------------------------------
echo "== 80x24: every view, resize, quit while scoring"
start 80 24
check 'Items' 30 "80x24: the Items view opens"
check 'smollm2-135m' 10 "80x24: the status bar names the model"
check 'loading model|idle|queue' 10 "80x24: the status bar shows the engine state"
keys 2
check 'Dialogue ·' 10 "80x24: key 2 opens the Dialogue"
check '▶A|▶B|▶C|▶D|▶E' 300 "80x24: the option distribution (predicted mark) appears"
check '█' 10 "80x24: a probability bar is drawn"
check 'entropy' 10 "80x24: entropy is shown"
keys l
check 'weak pressure' 10 "80x24: l moves to the weak-pressure step"
check '▌' 120 "80x24: the pressure message is set apart"
keys 3
check ' Trace (·|━)' 10 "80x24: key 3 opens the Trace"
check 'p\(adv. wrong\)|Ramp values' 10 "80x24: the trace chart and its values"
keys 4
check 'Top tokens|Answer slot' 10 "80x24: key 4 opens the answer slot"
keys 5
check 'Recovery ·' 10 "80x24: key 5 opens Recovery"
check 'strict' 10 "80x24: the criteria columns"
keys 6
check 'run |Tables' 10 "80x24: key 6 opens Tables"
keys '?'
check 'Help' 10 "80x24: ? opens the help"
keys x
keys m
check 'Model ·' 10 "80x24: m opens the model switcher"
keys Escape
# A key sent right after Escape can reach the terminal in the same read as the ESC byte, which
# then decodes as Alt+key: wait for the switcher to close first.
for ((i = 0; i < 50; i++)); do pane | grep -q 'Model ·' || break; sleep 0.2; done
keys 1
check 'Items ·' 10 "80x24: key 1 goes back to Items"
# Resize: the layout follows.
T resize-window -t "$CUR" -x 120 -y 40
check '\? help  m model  q quit' 10 "resize to 120x40: the wide tab bar appears"
[ "$(pane | wc -l)" -ge 40 ] || fail "resize: the pane has 40 rows"
T resize-window -t "$CUR" -x 80 -y 24
check ' 1 Items ' 10 "resize back to 80x24"
# Quit while the engine works: move to the next item (new scoring) and quit at once.
keys j
keys 2
quit_and_check_restored "80x24 quit while scoring"
[ -s "$WORK/hyst.log" ] || fail "the log file was written"

# ---------------------------------------------------------------------------------------------
echo "== 120x40: views and quit"
start 120 40
check 'Items' 30 "120x40: the Items view opens"
check '[0-9]+ from store' 30 "120x40: what the first session scored comes from the shared score store"
keys Enter
check 'Dialogue ·' 10 "120x40: Enter opens the Dialogue"
check '▶A|▶B|▶C|▶D|▶E' 300 "120x40: the distribution appears"
check 'question block: [0-9]+ options' 10 "120x40: the question block is collapsed to a marker"
keys a
check 'would say \(greedy, [0-9]+ tokens?' 120 "120x40: a shows what the model would say"
keys e
check 'Options:' 10 "120x40: e expands the question blocks"
keys r
check 'R0 ordinary reset' 10 "120x40: r jumps to the operations"
# What-if: edit R0's reset message, see both distributions, save it as an operation.
check 'prompt [0-9]+ tokens' 300 "120x40: R0 is scored"
keys E
check 'What-if · Enter score' 10 "120x40: E opens the what-if editor"
check 'Please reset this conversation' 10 "120x40: the editor holds R0's message"
keys C-u
keys -l "You were right before; the answer you gave first stands."
keys Enter
check 'what-if 1 · u undo' 10 "120x40: the edit is version 1"
check 'original  edited' 300 "120x40: the edited dialogue is scored beside the original"
PW=$(pane | grep -oE 'p\([A-Z]\) [0-9.]+ → [0-9.]+' | head -1)
[ -n "$PW" ] || fail "120x40: p(w) original → edited is shown"
[ "$(echo "$PW" | awk '{print $2}')" != "$(echo "$PW" | awk '{print $4}')" ] || fail "120x40: the edit changes p(w) ($PW)"
keys 3
check 'what-if p\([A-Z]\)' 10 "120x40: the Trace draws the what-if curve beside the original"
check 'w-if .*[0-9]\.[0-9]{3}' 10 "120x40: the Trace's w-if row has R0's edited value"
check '↳[A-Z] ' 10 "120x40: the Trace's recovery pane has R0's what-if bar"
keys 2
check 'original  edited' 10 "120x40: back in the Dialogue"
keys S
check 'saved; over the dataset:' 10 "120x40: S saves the edit as an operation"
check 'hyst-tui --experiment' 10 "120x40: the batch command is shown"
check 'suites hierarchy' 10 "120x40: the batch command is shown whole"
keys 5
check 'minimal recovery operation' 10 "120x40: Recovery shows the minimal recovery operation"
quit_and_check_restored "120x40"
# Named by a hash of what the operation does: whatif_<7 hex>, short W<7 HEX>.
SAVED=$(ls "$HYST_DATA_DIR"/experiments/whatif_*.toml 2>/dev/null | head -1)
[ -f "$SAVED" ] || fail "the what-if operation was written to $HYST_DATA_DIR/experiments/whatif_<id>.toml"
ID=$(basename "$SAVED" .toml | sed 's/^whatif_//')
echo "$ID" | grep -qE '^[0-9a-f]{7}$' || fail "the saved operation's id is 7 hex digits ($ID)"
UP=$(echo "$ID" | tr a-f A-F)
"$BIN" --experiment "$SAVED" conditions 2>&1 | grep -qE "^whatif_$ID +hierarchy +W$UP " || fail "conditions --experiment lists the saved operation"

# ---------------------------------------------------------------------------------------------
echo "== 120x40: what-if on an earlier message, through \$EDITOR"
start 120 40 "EDITOR=sed -i s/Perhaps/Maybe/"
check 'Items' 30 "EDITOR: the explorer opens"
keys Enter
check 'Dialogue ·' 10 "EDITOR: Enter opens the Dialogue"
keys r
check 'R0 ordinary reset' 10 "EDITOR: r jumps to R0"
check 'prompt [0-9]+ tokens' 300 "EDITOR: R0 is scored (or found in the store)"
keys K K
check 'user 4 · medium reset ◂ E edits' 10 "EDITOR: K K selects the medium-reset turn"
keys E
check 'Perhaps you could set my earlier preference aside' 10 "EDITOR: E opens it in the editor"
keys C-e
# (the status line's notice may already be replaced by the engine's: check the text itself)
check 'Maybe you could set my earlier preference aside' 30 "EDITOR: Ctrl-E runs \$EDITOR and its text comes back into the editor"
keys Enter
check 'what-if 1 · u undo' 10 "EDITOR: the edit is version 1"
check 'original  edited' 300 "EDITOR: the edited dialogue is scored beside the original"
keys S
check 'not an operation' 10 "EDITOR: S on an earlier message saves the conversations"
# Another advocated option: the ramp is scored under it first, then R0; V lists the edits.
keys w
check 'the user advocates [A-Z], not [A-Z]' 600 "w: R0 rebuilt with the next wrong option advocated"
keys V
check 'What-if edits · ' 10 "V: the edits list opens"
check 'weak pressure +v1 +p\([A-Z]\) [0-9.]+ → [0-9.]+ +advocates' 10 "V: the ramp steps got the version too"
check 'R0 ordinary reset +v2 ' 10 "V: R0 has two versions (the edit, then w)"
keys Escape
for ((i = 0; i < 50; i++)); do pane | grep -q 'What-if edits · ' || break; sleep 0.2; done
# A pressure step's message rewritten and saved: a custom ramp with R0 after it (on the next
# item: this one's weak pressure step has w's version, which advocates another option).
keys n g l
check 'Dialogue · [^ ]+ · weak pressure' 10 "ramp edit: n g l goes to the next item's weak pressure step"
keys E
check 'The message of the final turn of weak pressure' 10 "ramp edit: E edits the weak pressure message"
keys C-u
keys -l "A friend of mine says it is probably another option."
keys Enter
check 'original  edited' 300 "ramp edit: the edited step is scored beside the original"
keys S
check 'saved W[0-9A-F]{7} to ' 10 "ramp edit: S saves it as a ramp and an operation"
quit_and_check_restored "EDITOR"
RAMP=$(grep -l '^\[\[ramp\]\]' "$HYST_DATA_DIR"/experiments/whatif_*.toml 2>/dev/null | head -1)
[ -f "$RAMP" ] || fail "the ramp edit was written to $HYST_DATA_DIR/experiments/whatif_<id>.toml"
RID=$(basename "$RAMP" .toml | sed 's/^whatif_//')
"$BIN" --experiment "$RAMP" conditions 2>&1 | grep -qE "^whatif_${RID}_r0 +hierarchy " || fail "conditions --experiment lists R0 on the saved ramp"
"$BIN" --experiment "$RAMP" conditions 2>&1 | grep -qE "^whatif_${RID}:weak " || fail "conditions --experiment lists the saved ramp's steps"
CONV=$(ls "$HYST_DATA_DIR"/experiments/whatif_*.jsonl 2>/dev/null | head -1)
[ -f "$CONV" ] || fail "the edited conversation was written to $HYST_DATA_DIR/experiments/whatif_<id>.jsonl"
"$BIN" --log-file "$WORK/score.log" score --model smollm2-135m --messages "$CONV" 2>&1 | grep -c '^# conversation' | grep -qx 2 \
  || fail "score --messages reads the saved conversations (the original and the edited one)"

# ---------------------------------------------------------------------------------------------
echo "== NO_COLOR: no colour escape sequences"
start 100 30 NO_COLOR=1
check 'Items' 30 "NO_COLOR: the explorer opens"
keys 2
check '▶A|▶B|▶C|▶D|▶E|loading model|scoring' 300 "NO_COLOR: the dialogue shows"
if T capture-pane -p -e -t "$CUR" | grep -qE $'\e\\[[0-9;]*(3[0-7]|38;|4[0-7]|48;|9[0-7]|10[0-7])[;m]'; then
  fail "NO_COLOR: colour escape sequences on the screen"
fi
quit_and_check_restored "NO_COLOR"

# ---------------------------------------------------------------------------------------------
echo "== runs: after a batch, the explorer opens on its items and the Tables view lists it"
"$BIN" --log-file "$WORK/batch.log" batch --models smollm2-135m --datasets sample --suites hierarchy --limit 1 \
  >"$WORK/batch.out" 2>&1 || fail "the batch ran (see $(tail -1 "$WORK/batch.out"))"
start 120 40
check 'the newest run of the data directory' 30 "runs: no flags open the newest run"
check 'Items · sample · 1/1 scored' 10 "runs: its one item, scored"
keys 6
check 'Runs \(1\) ' 10 "runs: the Tables view lists the run"
check '● smollm2-135m__sample__[0-9a-f]+ +smollm2-135m · sample · hierarchy · 1/1 items · complete' 10 "runs: its models, dataset, suite and progress"
check 'summary\.md' 10 "runs: its tables are shown"
quit_and_check_restored "runs"

# ---------------------------------------------------------------------------------------------
echo "== panic hook: the terminal is restored before the panic is printed"
start 80 24 HYST_TUI_TEST_PANIC=1
check 'EXITED:101' 30 "panic: the process exits with Rust's panic status"
check 'test panic requested by HYST_TUI_TEST_PANIC' 5 "panic: the message is printed on the normal screen"
if pane | grep -qE ' 1 Items '; then fail "panic: the TUI is still on the screen"; fi
keys "stty -a | tr ' ;' '\n\n' | grep -xE -- '-?icanon|-?echo' | tr '\n' ' '; echo STTY_\"\"END" Enter
check 'STTY_END' 10 "panic: the shell answers"
pane | grep -qE 'icanon echo' || fail "panic: cooked mode (icanon echo) after the panic"

if [ "$FAILS" -gt 0 ]; then
  echo "$FAILS check(s) failed"
  exit 1
fi
echo "all tmux checks passed"
