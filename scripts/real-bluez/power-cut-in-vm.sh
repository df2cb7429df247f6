#!/usr/bin/env bash
# Runs inside the VM of scripts/power-cut.sh (scripts/real-bluez/vm.sh --plain --disk: the store's ext4 disk at
# /store, the run dir's out/ on the host's disk through 9p, written at once). One boot between two power cuts:
#   1. When the disk holds a store, what the last cut left is checked first, into OUT/cut-(K-1)/: a copy of the
#      store's files as the cut left them gets `PRAGMA integrity_check` (integrity.txt); systoled is started on the
#      store and must recover the workout (recovered.json: `systole status --json`); the workout is ended and its
#      readings exported as CSV (stored.csv), which the host compares with what the simulator emitted.
#   2. Unless --final: a workout recorded until the host cuts the power, into OUT/cut-K/. systoled ([store] sync =
#      SYNC) on a private bus starts the workout (recording.json), then systole-sim plays one Polar H10 at 4 Hz with
#      its emit log in emit.jsonl; once readings reach the live log, `recording` is written and the guest's clock
#      goes to `clock` every 20 ms, so the host knows when the power went.
# usage (inside the VM): power-cut-in-vm.sh BIN CUT SYNC [--final]
set -euo pipefail
BIN=$1
CUT=$2
SYNC=$3
FINAL=${4:-}
OUT=/vm/out
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/wait.sh
source "$HERE/../lib/wait.sh"
# shellcheck source=../lib/private-bus.sh
source "$HERE/../lib/private-bus.sh"
# Emulated without KVM on a busy host, the guest can be slow: deadlines only a real failure reaches.
WAIT_SECONDS=180
STORE=/store/health.sqlite
WORK=$(mktemp -d /tmp/power-cut.XXXXXX)
say() { echo "[power-cut in the VM, cut $CUT] $*"; }

start_systoled() { # LIVE_LOG
  printf 'bus = "%s"\nsensors = ["any"]\n\n[store]\npath = "%s"\nsync = "%s"\n\n[live_log]\npath = "%s"\n' \
    "$BUS" "$STORE" "$SYNC" "$1" > "$WORK/systoled.toml"
  "$BIN/systoled" --config "$WORK/systoled.toml" 2>> "$WORK/systoled.err" &
  DAEMON_PID=$!
  wait_until "systoled answering" "$BIN/systole" status
}

stop_systoled() {
  kill "$DAEMON_PID"
  wait "$DAEMON_PID" || true
}

start_private_bus "$WORK"
export SYSTOLE_BUS=$BUS

if [ -f "$STORE" ]; then
  previous=$OUT/cut-$((CUT - 1))
  say "checking what cut $((CUT - 1)) left"
  mkdir -p "$WORK/copy"
  cp -a /store/. "$WORK/copy/"
  ls -la /store > "$previous/store-files.txt"
  python3 - "$WORK/copy/health.sqlite" > "$previous/integrity.txt" <<'PY'
import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])
PY
  start_systoled "$WORK/recovery.log"
  recovered() { "$BIN/systole" status --json | grep -q '"state" *: *"running"'; }
  wait_until "systoled recovering the workout" recovered
  "$BIN/systole" status --json > "$previous/recovered.json"
  "$BIN/systole" end --json > "$previous/ended.json"
  "$BIN/systole" export --last --format csv -o "$previous/stored.csv"
  stop_systoled
  cp "$WORK/systoled.err" "$previous/systoled-after.err"
  say "checked"
fi

if [ "$FINAL" = --final ]; then
  say "the last boot: nothing more to record"
  exit 0
fi

out=$OUT/cut-$CUT
mkdir -p "$out"
start_systoled "$WORK/live.log"
"$BIN/systole" start --activity running > /dev/null
"$BIN/systole" status --json > "$out/recording.json"
"$BIN/systole-sim" --bus "$BUS" --sensors 1 --model polar-h10 --rate 4 --emit-log "$out/emit.jsonl" \
  > "$WORK/sim.out" 2>&1 &
wait_until "readings in the live log" has_lines "$WORK/live.log" "bpm=.*state=running" 8
touch "$out/recording"
say "recording; the host cuts the power when it likes"
exec python3 - "$out/clock" <<'PY'
import os, sys, time
# The guest's clock, overwritten every 20 ms: after the cut it tells when the power went (to 20 ms, on the clock
# the emit log and the store use).
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
while True:
    os.pwrite(fd, b"%.6f\n" % time.time(), 0)
    time.sleep(0.02)
PY
