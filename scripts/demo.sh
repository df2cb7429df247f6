#!/usr/bin/env bash
# The demo (the README's first command), with no Bluetooth hardware and without touching the machine's buses:
# a private dbus-daemon; systole-sim playing bluetoothd with a Polar H10-like strap running intervals; systoled
# (the real daemon) with its store and live log in a temporary folder; and a short workout run with the systole
# CLI as a user would: start (with its countdown), a lap, a marker, a pause, resume, end, then the summary with laps,
# zones, TRIMP and the energy estimate, the per-minute chart, and the workout exported as FIT and as RR intervals.
# The live bpm log scrolls by while the workout runs. It ends on its own (status 0 when every step worked) and stops
# everything it started: the bus, the simulator, systoled and the log's reader.
#
# With --hostile, the simulator plays `--preset hostile-neighbour` instead: an honest strap beside a device that
# sends impossible heart rates, energy jumps, a storm of a thousand notifications a second and flaps its link,
# under a name full of escape sequences. Both are systoled's sensors; the demo ends with what systoled rejected.
#
# usage: scripts/demo.sh [--hostile] [seconds of workout, default 30, 36 with --hostile]
set -euo pipefail
cd "$(dirname "$0")/.."
HOSTILE=0
if [ "${1:-}" = "--hostile" ]; then HOSTILE=1; shift; fi
SECONDS_OF_WORKOUT=${1:-$([ "$HOSTILE" = 1 ] && echo 36 || echo 30)}

scripts/install-deps.sh
swift build --product systole >&2
swift build --product systole-sim >&2
swift build --product systoled >&2
BIN=$(swift build --show-bin-path)

source scripts/lib/private-bus.sh
# shellcheck source=lib/wait.sh
source scripts/lib/wait.sh
WORK=$(mktemp -d /tmp/systole-demo.XXXXXX)
# stop PID...: asks each process to stop, gives it ten seconds (systoled commits and closes its store) and then
# kills it, and reaps it. Each is named by its PID: a bare `wait` would also wait for the simulator, which only
# stops when told to, and the demo would never end.
stop() {
  local pid
  for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
  for pid in "$@"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
cleanup() {
  stop ${TAIL_PID:-} ${PREFIX_PID:-} ${DAEMON_PID:-} ${SIM_PID:-}
  SIM_PID=
  cleanup_private_run
}
trap cleanup EXIT

start_private_bus "$WORK"
export SYSTOLE_BUS=$BUS

# Intervals: 20 s hard at 165 bpm, 10 s easy at 115.
cat > "$WORK/scenario.json" <<'JSON'
{"seed": 2026,
 "sensors": [{"model": "polar-h10", "rate": 1,
              "profile": {"kind": "intervals", "low": 115, "high": 165, "work": 20, "rest": 10}}]}
JSON
SENSORS='"any"'
if [ "$HOSTILE" = 1 ]; then
  # The honest strap and the attacker (Scenario.honestStrapAddress and .hostileDeviceAddress).
  "$BIN/systole-sim" --bus "$BUS" --preset hostile-neighbour > "$WORK/sim.out" &
  SENSORS='"A0:9E:1A:00:AA:AA", "A0:9E:1A:66:66:66"'
else
  "$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" > "$WORK/sim.out" &
fi
SIM_PID=$!
wait_until "the simulator starting" has_line "$WORK/sim.out" '^ready'

cat > "$WORK/systoled.toml" <<TOML
bus = "$BUS"
store = "$WORK/state/health.sqlite"
sensors = [$SENSORS]

[live_log]
path = "$WORK/logs/live.log"

[profile]
age = 38
sex = "female"
weight_kg = 61
resting_hr = 52
TOML
"$BIN/systoled" --config "$WORK/systoled.toml" 2> "$WORK/systoled.err" &
DAEMON_PID=$!
wait_until "systoled answering" "$BIN/systole" status
echo "== systoled is running on a private bus ($BUS), store and live log in $WORK"
streaming() { "$BIN/systole" sensors | grep -q streaming; }
wait_until "a strap streaming" streaming
"$BIN/systole" sensors
echo
echo "== systole start --activity running --location outdoor"
"$BIN/systole" start --activity running --location outdoor
echo
echo "== the live bpm log (systole tail -f) while the workout runs"
# Through a FIFO rather than a pipe, so both processes have a PID to stop: in `a | b &` only b's is known, and a
# stopped b leaves a running until its next write.
mkfifo "$WORK/tail.fifo"
sed -u 's/^/   /' < "$WORK/tail.fifo" &
PREFIX_PID=$!
"$BIN/systole" tail -f -n 0 --file "$WORK/logs/live.log" > "$WORK/tail.fifo" &
TAIL_PID=$!
third=$(( SECONDS_OF_WORKOUT / 3 ))
sleep "$third"
echo "== systole lap; systole marker 'gel'"
"$BIN/systole" lap
"$BIN/systole" marker gel
echo "== systole pause"
"$BIN/systole" pause
sleep 5
echo "== systole resume"
"$BIN/systole" resume
sleep $(( SECONDS_OF_WORKOUT - third ))
echo "== systole add water 250ml"
"$BIN/systole" add water 250ml
stop "$TAIL_PID" "$PREFIX_PID"
TAIL_PID= PREFIX_PID=
echo
echo "== systole end"
"$BIN/systole" end
ID=$("$BIN/systole" workouts --json | sed -n 's/.*"id" : "\([0-9A-F-]*\)".*/\1/p' | tail -1)
echo
echo "== systole workouts show ${ID:0:8}"
"$BIN/systole" workouts show "${ID:0:8}"
echo
echo "== systole export ${ID:0:8} (FIT, and the RR intervals for Kubios)"
(cd "$WORK" && "$BIN/systole" export "${ID:0:8}" && "$BIN/systole" export "${ID:0:8}" --format rr -o rr.txt)
if [ "$HOSTILE" = 1 ]; then
  echo
  echo "== systole sensors: what the attacker sent that systoled left out (its name cleaned of escape sequences)"
  "$BIN/systole" sensors
fi
