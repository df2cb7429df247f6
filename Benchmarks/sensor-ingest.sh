#!/usr/bin/env bash
# sensor-ingest.sh — how many heart-rate notifications a bare libdbus consumer and systole's HeartRateSensor take
# from one private bus, and the CPU each spends per notification, measured side by side in one run.
#
# usage: Benchmarks/sensor-ingest.sh [--sensors N] [--rate HZ] [--seconds S] [--warmup S]
#   defaults: 100 sensors at 20 Hz (2 000 notifications/s), 20 s measured after a 5 s warm-up.
#
# A private dbus-daemon is started (never the system bus); systole-sim plays bluetoothd with N sensors; the
# HeartRateSensor consumer connects them all and subscribes; the null consumer only eavesdrops on the same
# PropertiesChanged signals. Both measure the same window; the simulator's emit log says what was sent.
set -euo pipefail
cd "$(dirname "$0")/.."

SENSORS=100 RATE=20 SECONDS_=20 WARMUP=5
while [ $# -gt 0 ]; do
  case "$1" in
    --sensors) SENSORS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --seconds) SECONDS_=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "sensor-ingest: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

source scripts/lib/release-build.sh
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systole-sim >&2
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systole-sensor-ingest >&2
BIN=$(swift build "${RELEASE_BUILD_FLAGS[@]}" --show-bin-path)

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-bench.XXXXXX)
trap cleanup_private_run EXIT

start_private_bus "$WORK"

"$BIN/systole-sim" --bus "$BUS" --sensors "$SENSORS" --rate "$RATE" --emit-log "$WORK/emit.jsonl" > "$WORK/sim.out" &
SIM_PID=$!
for _ in $(seq 100); do grep -q '^ready' "$WORK/sim.out" 2>/dev/null && [ "$(grep -c '^sensor ' "$WORK/sim.out")" = "$SENSORS" ] && break; sleep 0.1; done
mapfile -t ADDRESSES < <(awk '/^sensor /{print $3}' "$WORK/sim.out")

"$BIN/systole-sensor-ingest" sensors "$BUS" "$WARMUP" "$SECONDS_" "${ADDRESSES[@]}" > "$WORK/sensors.json" &
SENSORS_PID=$!
"$BIN/systole-sensor-ingest" null "$BUS" "$WARMUP" "$SECONDS_" > "$WORK/null.json" &
NULL_PID=$!
START=$(date +%s.%N)
wait "$NULL_PID" "$SENSORS_PID"

python3 - "$WORK" "$SENSORS" "$RATE" "$SECONDS_" <<'PY'
import json, sys
work, sensors, rate, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
null = json.load(open(f"{work}/null.json"))
hrs = json.load(open(f"{work}/sensors.json"))
emitted = sum(1 for _ in open(f"{work}/emit.jsonl"))
print(f"sensor-ingest: {sensors} sensors × {rate:g} Hz = {sensors*rate:g} notifications/s offered, {seconds:g} s measured")
print(f"simulator emitted {emitted} notifications over the whole run")
print(f"{'consumer':<16} {'received':>9} {'per s':>9} {'CPU s':>7} {'µs CPU/notif':>13} {'peak RSS MiB':>13}")
for row in (null, hrs):
    print(f"{row['consumer']:<16} {row['notifications']:>9} {row['notifications']/seconds:>9.0f} {row['cpuSeconds']:>7.2f} "
          f"{row['cpuMicrosecondsPerNotification']:>13.1f} {row['peakRSSKiB']/1024:>13.1f}")
ratio = hrs['cpuMicrosecondsPerNotification'] / null['cpuMicrosecondsPerNotification'] if null['cpuMicrosecondsPerNotification'] else float('nan')
share = hrs['notifications'] / null['notifications'] if null['notifications'] else float('nan')
print(f"HeartRateSensor / null: {ratio:.2f}× CPU per notification; received {share*100:.1f} % of what the null consumer did")
PY
