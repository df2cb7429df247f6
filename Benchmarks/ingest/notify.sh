#!/usr/bin/env bash
# Benchmarks/ingest.sh --notify: the two ways notifications reach systoled, and bleak, side by side in one window.
# Three sides, each a private dbus-daemon of its own with a simulator of its own playing the same N sensors at R Hz
# (the same seed) and logging what it sent:
#   signal   systoled with [bluetooth] notify = "signal": StartNotify, each notification a PropertiesChanged signal
#            through dbus-daemon
#   acquire  systoled with notify = "acquire": AcquireNotify, each notification a datagram on a socket, past the bus
#   bleak    a Python client on bleak (PyPI, in a venv) decoding 0x2A37 and appending a line per notification
# For each side, over the window: what its consumer received against what its simulator sent (loss), and the CPU
# seconds (from /proc) per notification received of the consumer, its dbus-daemon and its simulator, each apart
# (the simulator stands in for bluetoothd, whose work differs between the paths: shown, not counted in a goal); for
# the systoleds the latency from the simulator's emit to the line being readable in the live log (p50/p99). Then
# the goals: (systoled + dbus-daemon) signal/acquire ≥ 3, bleak/acquire-systoled ≥ 5, no loss, latency on acquire
# no worse than on signal.
#
# usage: Benchmarks/ingest.sh --notify [signal|acquire|both] [--sensors N] [--rate HZ] [--seconds S] [--warmup S]
#                             [--no-bleak] [--json] [--debug] [--check]
#        Benchmarks/ingest.sh --notify --sweep [--sensors N] [--seconds S]
#            (each path alone, the rate doubled from 4 Hz until it loses notifications: the highest rate without loss)
#   --notify signal or acquire runs that path alone (with bleak unless --no-bleak); both (the default) runs both.
#   defaults: 100 sensors at 4 Hz, 60 s measured after 10 s of warm-up; --debug uses the debug build (smoke runs);
#   --check exits 1 when a side received nothing or lost more than 5 %. Loss is counted over the whole run: the
#   simulators are stopped after the window and what they sent is compared with what each consumer logged.
set -euo pipefail
cd "$(dirname "$0")/../.."
SENSORS=100 RATE=4 MEASURE=60 WARMUP=10 JSON=0 CONFIG=release CHECK=0 PATHS="signal acquire" BLEAK=1 SWEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --notify)
      case "${2:-}" in
        signal|acquire) PATHS=$2; shift ;;
        both) shift ;;
      esac ;;
    --sensors) SENSORS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --seconds) MEASURE=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --no-bleak) BLEAK=0 ;;
    --sweep) SWEEP=1 ;;
    --json) JSON=1 ;;
    --debug) CONFIG=debug ;;
    --check) CHECK=1 ;;
    *) echo "ingest --notify: unknown option $1 (see Benchmarks/ingest.sh --help)" >&2; exit 64 ;;
  esac
  shift
done

if [ "$SWEEP" = 1 ]; then
  step_seconds=$([ "$MEASURE" = 60 ] && echo 10 || echo "$MEASURE")
  echo "notify sweep: $SENSORS sensors, each path alone, ${step_seconds} s a step, the rate doubled until loss," \
    "then once halfway back"
  printf '%8s %10s %10s %10s\n' "path" "offered/s" "received/s" "loss"
  declare -A best=([signal]=0 [acquire]=0)
  # sweep_step PATH RATE: one step; prints its row, and succeeds when nothing was lost (counted over the whole run,
  # so exactly; a notification in ten thousand is allowed for one sent just as the simulator was stopped).
  sweep_step() {
    local out offered received loss
    # A failed run is not loss: stop the sweep and say so.
    out=$(Benchmarks/ingest/notify.sh --notify "$1" --no-bleak --sensors "$SENSORS" --rate "$2" \
      --seconds "$step_seconds" --warmup 5 --json) \
      || { echo "ingest --notify --sweep: the run at $2 Hz on $1 failed" >&2; exit 1; }
    read -r offered received loss < <(python3 -c '
import json, sys
side = json.loads(sys.argv[1])["sides"][sys.argv[2]]
print(side["sentPerSecond"], side["receivedPerSecond"], side["loss"])' "$out" "$1")
    printf '%8s %10.0f %10.0f %9.3f%%\n' "$1" "$offered" "$received" "$(python3 -c "print($loss * 100)")"
    python3 -c "import sys; sys.exit(0 if $loss <= 0.0001 else 1)" || return 1
    best[$1]=$offered
  }
  # The simulator plays at most 1000 notifications a second per sensor: 512 Hz is the last doubling.
  top=512
  for path in signal acquire; do
    rate=4
    while [ "$rate" -le "$top" ] && sweep_step "$path" "$rate"; do rate=$((rate * 2)); done
    if [ "$rate" -gt "$top" ]; then
      echo "$path: no loss up to the simulator's most ($top Hz a sensor); its highest rate is at least that"
    elif [ "$rate" -gt 4 ]; then
      sweep_step "$path" $((rate * 3 / 4)) || true
    fi
  done
  echo "highest rate without loss: signal $(printf %.0f "${best[signal]}")/s, acquire $(printf %.0f "${best[acquire]}")/s" \
    "(acquire/signal $(python3 -c "print(f'{${best[acquire]} / ${best[signal]}:.2f}' if ${best[signal]} else 'n/a')"), goal ≥ 2)"
  exit 0
fi

source Benchmarks/ingest/side-by-side.sh
side_setup notify
source scripts/lib/bleak-venv.sh
if [ "$BLEAK" = 1 ]; then ensure_bleak_venv; fi

# bleak takes services when ServicesResolved is signalled and fails when the GATT objects come after it (see
# ingest.sh), so the simulator announces them first; systoled handles both orders.
cat > "$WORK/scenario.json" <<JSON
{"seed": 42, "gattObjectsBeforeResolved": true,
 "sensors": [{"model": "polar-h10", "count": $SENSORS, "rate": $RATE}]}
JSON
# Flooding rates are the point of a sweep: the daemon's own bound (12 a second per sensor) must not be what stops it.
SIDE_TOP_LEVEL='notification_limit = 10000'
SIDES=()
for path in $PATHS; do
  start_side "$path" "$(printf '\n[bluetooth]\nnotify = "%s"\n' "$path")" --emit-log "$WORK/$path/emit.jsonl"
  SIDES+=("$path")
done
if [ "$BLEAK" = 1 ]; then
  start_simulator_side bleak --emit-log "$WORK/bleak/emit.jsonl"
  DBUS_SYSTEM_BUS_ADDRESS=$(cat "$WORK/bleak/bus.address") "$VENV/bin/python" Benchmarks/ingest/bleak_client.py \
    "$WORK/bleak/live.log" "${ADDRESSES[@]}" > "$WORK/bleak/bleak.out" 2> "$WORK/bleak/bleak.err" &
  PIDS+=($!)
  echo $! > "$WORK/bleak/pid"
  for _ in $(seq 1200); do grep -q '^subscribed' "$WORK/bleak/bleak.out" 2> /dev/null && break; sleep 0.1; done
  grep -q '^subscribed' "$WORK/bleak/bleak.out" \
    || { echo "ingest --notify: bleak did not subscribe:" >&2; tail "$WORK/bleak/bleak.err" >&2; exit 1; }
  SIDES+=(bleak)
fi
start_workouts $PATHS
for path in $PATHS; do
  grep -q . "$WORK/$path/live.log" 2> /dev/null || sleep 2
done

python3 Benchmarks/ingest/notify.py "$WORK" "$WARMUP" "$MEASURE" "$SENSORS" "$RATE" "$JSON" "$CHECK" "${SIDES[@]}"
