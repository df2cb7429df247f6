#!/usr/bin/env bash
# The demo (the README's first command), with no Bluetooth hardware: a private dbus-daemon, systole-sim playing
# bluetoothd with three simulated sensors (a Polar H10-like strap, a Garmin HRM-like strap, Powerbeats Pro 2-like
# earbuds that need pairing), then `systole scan` and `systole monitor` against it, as you would run them against
# the real bluetoothd.
#
# usage: scripts/demo.sh [seconds to monitor each sensor, default 8]
# The daemon (systoled) and workout recording are not built yet; this demo shows the BlueZ side that exists.
set -euo pipefail
cd "$(dirname "$0")/.."
MONITOR_SECONDS=${1:-8}

scripts/install-deps.sh
swift build --product systole >&2
swift build --product systole-sim >&2
BIN=$(swift build --show-bin-path)

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-demo.XXXXXX)
trap cleanup_private_run EXIT

start_private_bus "$WORK"

cat > "$WORK/scenario.json" <<'JSON'
{
  "seed": 2026,
  "sensors": [
    {"model": "polar-h10", "profile": {"kind": "ramp", "from": 95, "to": 150, "duration": 20}},
    {"model": "garmin-hrm", "profile": {"kind": "intervals", "low": 120, "high": 165, "work": 4, "rest": 4},
     "faults": [{"kind": "disconnect", "at": 14, "for": 3}]},
    {"model": "powerbeats-pro-2", "rate": 1, "profile": {"kind": "steady", "bpm": 88}}
  ]
}
JSON
"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" --emit-log "$WORK/emitted.jsonl" > "$WORK/sim.out" &
SIM_PID=$!
for _ in $(seq 100); do grep -q '^ready' "$WORK/sim.out" 2>/dev/null && break; sleep 0.1; done
mapfile -t SENSORS < <(awk '/^sensor /{print $3}' "$WORK/sim.out")

echo "== systole-sim is playing bluetoothd on a private bus ($BUS)"
echo
echo "== systole scan --seconds 2"
"$BIN/systole" scan --bus "$BUS" --seconds 2
for address in "${SENSORS[@]}"; do
  echo
  echo "== systole monitor $address --seconds $MONITOR_SECONDS"
  "$BIN/systole" monitor "$address" --bus "$BUS" --seconds "$MONITOR_SECONDS" || true
done
echo
echo "== the simulator sent $(wc -l < "$WORK/emitted.jsonl") notifications; the first one it logged:"
head -1 "$WORK/emitted.jsonl"
