#!/usr/bin/env bash
# The real-stack scenario (scripts/real-bluez/in-vm.sh: scan, systoled, pair, a workout with a pause, then a second
# workout during which bluetoothd is restarted and systoled killed; SHORT=1 for ten seconds of notifications only)
# played against systole-sim on a private bus instead of bluetoothd, with the bus recorded by dbus-monitor; then
# scripts/real-bluez/bluez-trace.py compares that recording with one from the VM.
#
# usage: scripts/real-bluez/against-sim.sh OUT_DIR [REAL_MONITOR.txt] [workout seconds, default 20]
#   OUT_DIR gets bus-monitor.txt and the scenario's other files; with REAL_MONITOR.txt (a VM run's
#   out/bus-monitor.txt) it prints the differences and exits 1 if there are any.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=$(realpath -m "$1")
REAL=${2:-}
WORKOUT=${3:-20}
mkdir -p "$OUT"
swift build --product systole-sim >&2
swift build --product systoled >&2
swift build --product systole >&2
BIN=$(swift build --show-bin-path)

source scripts/lib/private-bus.sh
# shellcheck source=../lib/wait.sh
source scripts/lib/wait.sh
WORK=$(mktemp -d /tmp/systole-against-sim.XXXXXX)
trap cleanup_private_run EXIT
start_private_bus "$WORK"

# A strap like BlueZ's example peripheral: advertised as BZ-HRM, GAP name "BlueZ 5.66", once a second, energy on
# every 10th notification; and bluetoothd as the VM's showed it on a first connect (no Connected: true signal).
cat > "$WORK/scenario.json" <<'JSON'
{"seed": 5, "quietConnected": true,
 "sensors": [{"model": "garmin-hrm", "rate": 1, "name": "BZ-HRM", "gapName": "BlueZ 5.66"}]}
JSON
"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" > "$WORK/sim.out" &
SIM_PID=$!
wait_until "the simulator starting" has_line "$WORK/sim.out" '^ready'
ADDRESS=$(grep -m1 -oE '([0-9A-F]{2}:){5}[0-9A-F]{2}' "$WORK/sim.out")

SYSTOLE_BUS=$BUS BZ_OUT=$OUT BZ_CENTRAL_ADAPTER=hci0 BZ_PERIPHERAL_ADDR=$ADDRESS STATE=$WORK/state SIM_PID=$SIM_PID \
  bash scripts/real-bluez/in-vm.sh "$BIN" "$WORKOUT"

if [ -n "$REAL" ]; then
  python3 scripts/real-bluez/bluez-trace.py compare "$REAL" "$OUT/bus-monitor.txt"
fi
