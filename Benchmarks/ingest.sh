#!/usr/bin/env bash
# ingest.sh — heart-rate notifications from N simulated sensors at R Hz on one private dbus-daemon, taken side by
# side in one run by three consumers:
#   null      a bare libdbus loop counting the PropertiesChanged signals (the bus limit; systole-sensor-ingest null)
#   systoled  the real daemon with a workout running: decode → builder → store → live log
#   bleak     a Python client on bleak (PyPI, installed into a venv) decoding 0x2A37 and appending lines to a log,
#             what a Linux user would write instead (it reaches the simulator through DBUS_SYSTEM_BUS_ADDRESS)
# For each: notifications received vs sent in the measured window (loss), CPU seconds per notification (from
# /proc/PID/stat), peak RSS (VmHWM, since the process started), the largest RSS in the measured window (sampled
# twice a second) and the largest private memory (RssAnon); for systoled also the latency from the simulator's
# emit time to the line being readable in the live log (p50/p99/max), its memory idle (no workout, its sensor
# out of range, the N sensors on the bus), and the readings it dropped itself (the warnings in its log; the sweep
# prints them too). The whole machine's cost: the CPU of systoled, dbus-daemon and the simulator in the window per
# notification systoled received, together and each (the bus's and the simulator's work serves every consumer in
# the window, not systoled alone).
# Before that, on the same bus, two short phases, each with a fresh systoled and a simulator of its own, measure
# how often systoled wakes up (voluntary context switches of all its threads per second, Benchmarks/ingest/
# wakeups.py), 10 s after letting it settle 5 s:
#   idle            no sensor in range (the simulator plays an adapter alone), no workout, one sensor configured
#   one strap 1 Hz  one Polar H10 at 1 Hz, streaming, a workout running
# with their goals (≤ 1 and ≤ 5 a second) beside them.
# Prints a table, the ratios systoled/null and bleak/systoled, and with --json the same as one JSON object.
#
# usage: Benchmarks/ingest.sh [--sensors N] [--rate HZ] [--seconds S] [--warmup S] [--no-bleak] [--no-wakeups]
#                              [--json] [--debug] [--check]
#        Benchmarks/ingest.sh --wakeups [--json] [--debug] [--check]   (the two wakeup phases alone, about 40 s)
#        Benchmarks/ingest.sh --sweep [--sensors N] [--seconds S]   (doubles the rate until both consumers lose
#                                   notifications, then narrows in on each one's highest rate without loss)
#        Benchmarks/ingest.sh --outputs [--sensors N] [--rate HZ] [--seconds S] [--json] [--debug] [--check]
#                                   (what the web page, /metrics and MQTT cost: Benchmarks/ingest/outputs.sh)
#        Benchmarks/ingest.sh --replication [--sensors N] [--rate HZ] [--seconds S] [--backlog S] [--json] [--debug]
#                             [--check]   (replication to PostgreSQL: catch-up throughput, lag, and what it costs
#                                          systoled: Benchmarks/ingest/replication.sh)
#        Benchmarks/ingest.sh --notify [signal|acquire|both] [--sensors N] [--rate HZ] [--seconds S] [--no-bleak]
#                             [--json] [--debug] [--check] [--sweep]   (systoled over StartNotify signals and over
#                                          AcquireNotify sockets, and bleak: Benchmarks/ingest/notify.sh)
#   --sync second|commit: systoled's [store] sync (default second, its default; commit syncs every commit).
#   defaults: 100 sensors at 4 Hz, 60 s measured after a 10 s warm-up (a sweep step measures 10 s).
#   --debug uses the debug build (for smoke runs: its figures are not the product's); --check exits 1 when a
#   consumer lost more than 5 % of the notifications, systoled logged no reading, or in the one-strap phase it
#   logged no reading (the test command's smoke run). The wakeup goals are printed, not checked: the smoke run is
#   a debug build on a busy machine. --no-wakeups leaves the wakeup phases out (the sweep's steps do).
set -euo pipefail
cd "$(dirname "$0")/.."
for argument in "$@"; do
  if [ "$argument" = --outputs ]; then exec Benchmarks/ingest/outputs.sh "$@"; fi
  if [ "$argument" = --replication ]; then exec Benchmarks/ingest/replication.sh "$@"; fi
  if [ "$argument" = --notify ]; then exec Benchmarks/ingest/notify.sh "$@"; fi
done

SENSORS=100 RATE=4 MEASURE=60 WARMUP=10 BLEAK=1 JSON=0 SWEEP=0 CONFIG=release CHECK=0 WAKEUPS=both SYNC=second
while [ $# -gt 0 ]; do
  case "$1" in
    --sensors) SENSORS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --seconds) MEASURE=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --no-bleak) BLEAK=0 ;;
    --wakeups) WAKEUPS=only ;;
    --no-wakeups) WAKEUPS=none ;;
    --json) JSON=1 ;;
    --sweep) SWEEP=1 ;;
    --debug) CONFIG=debug ;;
    --check) CHECK=1 ;;
    --sync) SYNC=$2; shift ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
    *) echo "ingest: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
  shift
done
if [ "$WAKEUPS" = only ] && [ "$SWEEP" = 1 ]; then echo "ingest: --wakeups and --sweep cannot be combined" >&2; exit 64; fi

if [ "$SWEEP" = 1 ]; then
  # Raising the rate step by step, without bleak (it falls behind long before): the highest rate each consumer
  # took without loss.
  step_seconds=$([ "$MEASURE" = 60 ] && echo 10 || echo "$MEASURE")
  echo "ingest sweep: $SENSORS sensors, ${step_seconds} s per step, doubling the rate until loss, then narrowing in"
  printf '%10s %12s %12s %12s %12s %9s\n' "offered/s" "null/s" "null loss" "systoled/s" "systoled loss" "dropped"
  best_null=0 best_systoled=0
  # "Without loss" allows half a percent: where the measured window starts and ends can cost a notification or two
  # that were not lost (at 100/s for 10 s, two are 0.2 %); a consumer that falls behind loses far more.
  limit=0.005
  # sweep_step RATE: one step at RATE Hz a sensor; prints its row, sets null_ok and sd_ok, and raises the bests.
  sweep_step() {
    local out offered null_rate null_loss sd_rate sd_loss sd_dropped
    out=$("$0" --sensors "$SENSORS" --rate "$1" --seconds "$step_seconds" --warmup 5 --no-bleak --no-wakeups --json \
      --sync "$SYNC")
    read -r offered null_rate null_loss sd_rate sd_loss sd_dropped < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
n, s = r["consumers"]["null"], r["consumers"]["systoled"]
print(r["offeredPerSecond"], n["perSecond"], n["loss"], s["perSecond"], s["loss"], s["dropped"])' "$out")
    printf '%10.0f %12.0f %11.2f%% %12.0f %11.2f%% %9d\n' "$offered" "$null_rate" "$(python3 -c "print($null_loss*100)")" \
      "$sd_rate" "$(python3 -c "print($sd_loss*100)")" "$sd_dropped"
    null_ok=0 sd_ok=0
    python3 -c "import sys; sys.exit(0 if $null_loss <= $limit else 1)" && null_ok=1
    # Readings systoled read but dropped from its own backlog are lost as much as notifications it never read.
    python3 -c "import sys; sys.exit(0 if $sd_loss <= $limit and $sd_dropped == 0 else 1)" && sd_ok=1
    if [ "$null_ok" = 1 ] && python3 -c "import sys; sys.exit(0 if $null_rate > $best_null else 1)"; then
      best_null=$null_rate
    fi
    if [ "$sd_ok" = 1 ] && python3 -c "import sys; sys.exit(0 if $sd_rate > $best_systoled else 1)"; then
      best_systoled=$sd_rate
    fi
  }
  # Doubling first, from 5 Hz a sensor: each consumer's last rate without loss and first with it.
  rate=5 null_good=0 null_bad=0 sd_good=0 sd_bad=0
  while :; do
    sweep_step "$rate"
    if [ "$null_ok" = 1 ]; then [ "$null_bad" = 0 ] && null_good=$rate; elif [ "$null_bad" = 0 ]; then null_bad=$rate; fi
    if [ "$sd_ok" = 1 ]; then [ "$sd_bad" = 0 ] && sd_good=$rate; elif [ "$sd_bad" = 0 ]; then sd_bad=$rate; fi
    if [ "$null_bad" != 0 ] && [ "$sd_bad" != 0 ] || [ "$rate" -ge 640 ]; then break; fi
    rate=$((rate * 2))
  done
  # Then three halvings of each consumer's interval: doubling alone could put one at 8 000/s and the other at
  # 16 000/s when both take 15 000.
  for consumer in systoled null; do
    if [ "$consumer" = systoled ]; then good=$sd_good bad=$sd_bad; else good=$null_good bad=$null_bad; fi
    for _ in 1 2 3; do
      [ "$bad" != 0 ] && [ $((bad - good)) -gt 1 ] || break
      mid=$(((good + bad) / 2))
      sweep_step "$mid"
      ok=$([ "$consumer" = systoled ] && echo "$sd_ok" || echo "$null_ok")
      if [ "$ok" = 1 ]; then good=$mid; else bad=$mid; fi
    done
  done
  echo "highest rate without loss: null $(printf %.0f "$best_null")/s, systoled $(printf %.0f "$best_systoled")/s" \
    "($(python3 -c "print(f'{$best_systoled / $best_null * 100:.0f}' if $best_null else 'n/a')") % of null)"
  exit 0
fi

source scripts/lib/release-build.sh
build_flags "$CONFIG"
for product in systole-sim systoled systole systole-sensor-ingest; do
  swift build "${BUILD_FLAGS[@]}" --product "$product" >&2
done
BIN=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)

source scripts/lib/bleak-venv.sh
if [ "$BLEAK" = 1 ] && [ "$WAKEUPS" != only ]; then ensure_bleak_venv; fi

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-ingest.XXXXXX)
cleanup() {
  for pid in ${BLEAK_PID:-} ${DAEMON_PID:-} ${PHASE_PID:-} ${NULL_PID:-} ${SIM_PID:-}; do
    kill "$pid" 2> /dev/null || true
  done
  wait 2> /dev/null || true
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"

# start_simulator SCENARIO OUT SENSORS [FLAG…]: plays SCENARIO on $BUS (SIM_PID) and waits until it owns org.bluez
# and has listed its SENSORS sensors in OUT.
start_simulator() {
  local scenario=$1 out=$2 count=$3
  shift 3
  "$BIN/systole-sim" --bus "$BUS" --scenario "$scenario" "$@" > "$out" &
  SIM_PID=$!
  for _ in $(seq 600); do
    grep -q '^ready ' "$out" 2> /dev/null && [ "$(grep -c '^sensor ' "$out")" = "$count" ] && return 0
    sleep 0.1
  done
  echo "ingest: the simulator did not get ready ($scenario)" >&2
  exit 1
}

# stop_simulator: ends it and waits, so that org.bluez is free for the next one.
stop_simulator() {
  kill "$SIM_PID" 2> /dev/null || true
  wait "$SIM_PID" 2> /dev/null || true
  SIM_PID=
}

# wait_streaming N: until systoled (on $BUS) answers and N of its sensors stream; 0 when they do.
wait_streaming() {
  local want=$1 streaming=0
  for _ in $(seq 600); do "$BIN/systole" status --bus "$BUS" > /dev/null 2>&1 && break; sleep 0.1; done
  for _ in $(seq 600); do
    streaming=$("$BIN/systole" sensors --bus "$BUS" --json 2> /dev/null | python3 -c \
      'import json,sys; print(sum(1 for s in json.load(sys.stdin) if s.get("state") == "streaming"))' || echo 0)
    [ "$streaming" = "$want" ] && return 0
    sleep 0.2
  done
  return 1
}

# The wakeup phases: each a simulator and a systoled of its own on the bus, one after the other (two simulators
# would both claim org.bluez and the same object paths), before the main run so that its sensors, bleak's notify
# sessions and their signals (systoled matches everything org.bluez sends) are not there to wake systoled.
WAKEUP_SETTLE=5 WAKEUP_SECONDS=10

# wakeup_phase NAME ADDRESS WORKOUT(0|1): a systoled configured with the one sensor ADDRESS, its wakeups measured
# into $WORK/wakeups-NAME.json. With WORKOUT=1 it waits for the sensor to stream and starts a workout first, and the
# readings logged in the window are counted too (they show it streamed while measured).
wakeup_phase() {
  local name=$1 address=$2 workout=$3 live_log=()
  # On signals, as the main run below (docs/performance.md's wakeups are the signal path's).
  printf 'bus = "%s"\nsensors = ["%s"]\n\n[store]\npath = "%s/wakeups-%s.sqlite"\nsync = "%s"\n\n[live_log]\npath = "%s/wakeups-%s.log"\n\n[bluetooth]\nnotify = "signal"\n' \
    "$BUS" "$address" "$WORK" "$name" "$SYNC" "$WORK" "$name" > "$WORK/wakeups-$name.toml"
  "$BIN/systoled" --config "$WORK/wakeups-$name.toml" 2> "$WORK/wakeups-$name.err" &
  PHASE_PID=$!
  if [ "$workout" = 1 ]; then
    if ! wait_streaming 1; then
      { echo "ingest: the sensor of the $name phase never streamed; the end of systoled's log:"
        tail -20 "$WORK/wakeups-$name.err"; } >&2
      exit 1
    fi
    "$BIN/systole" start --bus "$BUS" --activity running > /dev/null
    live_log=("$WORK/wakeups-$name.log")
  fi
  if ! python3 Benchmarks/ingest/wakeups.py "$PHASE_PID" "$WAKEUP_SETTLE" "$WAKEUP_SECONDS" "${live_log[@]}" \
    > "$WORK/wakeups-$name.json"; then
    { echo "ingest: measuring systoled's wakeups ($name) failed; the end of its log:"
      tail -20 "$WORK/wakeups-$name.err"; } >&2
    exit 1
  fi
  if [ "$workout" = 1 ]; then "$BIN/systole" end --bus "$BUS" > /dev/null 2>&1 || true; fi
  kill "$PHASE_PID" 2> /dev/null || true
  wait "$PHASE_PID" 2> /dev/null || true
  PHASE_PID=
}

if [ "$WAKEUPS" != none ]; then
  # Idle: the adapter alone, nothing in range; the configured sensor is searched for, given up on, and searched
  # for again with a growing delay, as when the strap is not worn. 5 to 15 s after start are the first searches;
  # later, the delay grown to 30 s, searches are rarer and idle wakes less. This window is idle's busier start,
  # where a goal should hold too.
  echo '{"seed": 42, "sensors": []}' > "$WORK/wakeups-idle.scenario.json"
  start_simulator "$WORK/wakeups-idle.scenario.json" "$WORK/wakeups-idle.sim.out" 0
  wakeup_phase idle 02:00:00:00:00:01 0
  stop_simulator

  echo '{"seed": 42, "sensors": [{"model": "polar-h10", "count": 1, "rate": 1}]}' > "$WORK/wakeups-strap.scenario.json"
  start_simulator "$WORK/wakeups-strap.scenario.json" "$WORK/wakeups-strap.sim.out" 1
  wakeup_phase strap "$(awk '/^sensor /{print $3}' "$WORK/wakeups-strap.sim.out")" 1
  stop_simulator
fi
if [ "$WAKEUPS" = only ]; then
  python3 Benchmarks/ingest/report.py --wakeups "$WORK" "$JSON" "$CHECK"
  exit
fi

# bleak takes services when ServicesResolved is signalled; bluetoothd 5.66 announces the GATT objects just
# before that in some runs and just after in others, and bleak 3.1 fails on the second order (0x2A37 not
# found), so the simulator plays the first here. systoled handles both.
cat > "$WORK/scenario.json" <<JSON
{"seed": 42, "gattObjectsBeforeResolved": true,
 "sensors": [{"model": "polar-h10", "count": $SENSORS, "rate": $RATE}]}
JSON
start_simulator "$WORK/scenario.json" "$WORK/sim.out" "$SENSORS" --emit-log "$WORK/emit.jsonl"
mapfile -t ADDRESSES < <(awk '/^sensor /{print $3}' "$WORK/sim.out")
# bleak first: it finds the sensors by discovery, and a connected sensor no longer advertises. systoled then
# finds them connected and opens its own notify sessions beside bleak's, as two clients of one bluetoothd do.
if [ "$BLEAK" = 1 ]; then
  DBUS_SYSTEM_BUS_ADDRESS=$BUS "$VENV/bin/python" Benchmarks/ingest/bleak_client.py "$WORK/bleak.log" \
    "${ADDRESSES[@]}" > "$WORK/bleak.out" 2> "$WORK/bleak.err" &
  BLEAK_PID=$!
  for _ in $(seq 1200); do grep -q '^subscribed' "$WORK/bleak.out" 2> /dev/null && break; sleep 0.1; done
  grep -q '^subscribed' "$WORK/bleak.out" || { echo "ingest: bleak did not subscribe:" >&2; tail "$WORK/bleak.err" >&2; exit 1; }
fi

# Idle: systoled with no workout and its one sensor out of range (not worn); its largest memory from 10 to 20 s
# after it started, sampled each second (then stopped). It releases the pages start-up touched 5 s after starting,
# and what it runs idle maps back in the seconds after.
printf 'bus = "%s"\nstore = "%s/idle.sqlite"\nsensors = ["02:00:00:00:00:01"]\n\n[live_log]\npath = "%s/idle.log"\n' "$BUS" "$WORK" "$WORK" \
  > "$WORK/idle.toml"
"$BIN/systoled" --config "$WORK/idle.toml" 2> "$WORK/idle.err" &
IDLE_PID=$!
IDLE_RSS=0 IDLE_PRIVATE=0
sleep 9
for _ in $(seq 11); do
  sleep 1
  read -r rss private < <(awk '/^VmRSS:/{r=$2} /^RssAnon:/{a=$2} END{print r, a}' "/proc/$IDLE_PID/status")
  if [ "${rss:-0}" -gt "$IDLE_RSS" ]; then IDLE_RSS=$rss IDLE_PRIVATE=$private; fi
done
printf '{"rssKiB": %d, "privateKiB": %d}\n' "$IDLE_RSS" "$IDLE_PRIVATE" > "$WORK/idle.json"
kill "$IDLE_PID"
wait "$IDLE_PID" 2> /dev/null || true

{
  echo "bus = \"$BUS\""
  # The sweep floods on purpose: lift the per-sensor rate bound (12 a second) out of its way.
  echo "notification_limit = 10000"
  printf 'sensors = [%s]\n' "$(printf '"%s", ' "${ADDRESSES[@]}" | sed 's/, $//')"
  echo
  echo "[store]"
  echo "path = \"$WORK/health.sqlite\""
  echo "sync = \"$SYNC\""
  echo
  echo "[live_log]"
  echo "path = \"$WORK/live.log\""
  # One file for the whole run: the report and the latency follower read live.log only, and at thousands of
  # readings a second the default size limit would rotate it in the middle of the window.
  echo "max_size = 1073741824"
  # StartNotify beside bleak's own sessions, as two clients of one bluetoothd share a sensor (AcquireNotify, the
  # default, would be refused while bleak listens; Benchmarks/ingest.sh --notify compares the two paths).
  echo
  echo "[bluetooth]"
  echo "notify = \"signal\""
} > "$WORK/systoled.toml"
"$BIN/systoled" --config "$WORK/systoled.toml" 2> "$WORK/systoled.err" &
DAEMON_PID=$!
# Every sensor streaming before the workout starts.
wait_streaming "$SENSORS" || true
"$BIN/systole" start --bus "$BUS" --activity running > /dev/null

# The measured window: the null consumer runs it; the others are sampled at its edges.
"$BIN/systole-sensor-ingest" null "$BUS" "$WARMUP" "$MEASURE" > "$WORK/null.json" &
NULL_PID=$!
python3 Benchmarks/ingest/window.py "$WORK" "$WARMUP" "$MEASURE" "$DAEMON_PID" "${BLEAK_PID:-0}" "$BUS_PID" "$SIM_PID" \
  > "$WORK/window.json"
wait "$NULL_PID"
NULL_PID=
"$BIN/systole" end --bus "$BUS" > /dev/null || echo "ingest: ending the workout failed (see below)" >&2

if ! grep -q ' bpm=' "$WORK/live.log" 2> /dev/null; then
  { echo "ingest: systoled logged no reading; the end of its log:"; tail -20 "$WORK/systoled.err"; } >&2
fi
[ "$JSON" = 1 ] || echo "systoled's [store] sync = \"$SYNC\""
python3 Benchmarks/ingest/report.py "$WORK" "$SENSORS" "$RATE" "$JSON" "$CHECK"
