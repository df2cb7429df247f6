#!/usr/bin/env bash
# systole against the real Linux Bluetooth stack: builds systoled and systole, boots the throw-away VM of
# ../shared/bluez-vm/run-real-bluez.sh (Debian's kernel, dbus-daemon, bluetoothd 5.66, two btvirt LE
# controllers, BlueZ's example Heart Rate peripheral on hci0), runs scripts/real-bluez/in-vm.sh there, and checks
# what it left: the scan found the peripheral, the sensor reads "chest" and a battery level, and the workout's
# heart rate matches what the example peripheral sends (flags 0x06: contact detected; 90–130 bpm; energy, +1 kJ
# per notification, on every 10th). If the VM cannot start, it says so and fails.
#
# usage: scripts/test-real-bluez.sh [workout seconds, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
WORKOUT=${1:-20}
HARNESS=${SYSTOLE_SHARED:-../shared}/bluez-vm/run-real-bluez.sh
[ -x "$HARNESS" ] || { echo "test-real-bluez: $HARNESS is missing: put ../shared beside the clone" >&2; exit 1; }

swift build --product systoled >&2
swift build --product systole >&2
BIN=$(swift build --show-bin-path)

LOG=$(mktemp /tmp/systole-real-bluez.XXXXXX)
set +e
"$HARNESS" --timeout 600 --keep -- bash "$PWD/scripts/real-bluez/in-vm.sh" "$BIN" "$WORKOUT" > "$LOG" 2>&1
status=$?
set -e
cat "$LOG"
if [ "$status" = 125 ]; then
  echo "test-real-bluez: FAIL: the VM or the Bluetooth stack in it did not start (see above)" >&2
  exit 1
fi
[ "$status" = 0 ] || { echo "test-real-bluez: FAIL: the scenario failed in the VM (status $status)" >&2; exit 1; }
OUT=$(sed -n 's/.*logs kept in \(.*\)$/\1/p' "$LOG" | tail -1)/out
python3 - "$OUT" <<'PY'
import json, re, sys
out = sys.argv[1]
problems = []
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok: problems.append(what)

scan = open(f"{out}/scan.txt").read()
check("BZ-HRM" in scan, "scan lists the peripheral by its advertised name BZ-HRM")
sensors = json.load(open(f"{out}/sensors.json"))
check(sensors and sensors[0].get("location") == "chest", "Body Sensor Location reads chest")
check(sensors and isinstance(sensors[0].get("battery"), int), "Battery Level was read")
workout = json.load(open(f"{out}/workout.json"))
hr = workout.get("statistics", {}).get("heartRate", {})
check(hr.get("count", 0) >= 15, f"the workout has heart-rate samples ({hr.get('count')})")
check(90 <= hr.get("minimum", 0) and hr.get("maximum", 999) <= 130,
      f"heart rate within the peripheral's 90–130 bpm ({hr.get('minimum')}–{hr.get('maximum')})")
check(workout.get("pauses") == 1, "the pause was recorded")
energy = workout.get("statistics", {}).get("activeEnergyBurned", {}).get("sum")
check(energy is not None and energy % 10 == 0, f"energy comes in steps of 10 kJ ({energy})")
# live.log ends with the first workout; the faulted one restarts the peripheral, whose energy count restarts.
lines = [l for l in open(f"{out}/live.log").read().splitlines() if " bpm=" in l]
check(lines and all("contact=yes" in l for l in lines), "every reading says contact detected (flags 0x06)")
with_energy = [i for i, l in enumerate(lines) if "energy=" in l]
steps = {b - a for a, b in zip(with_energy, with_energy[1:])}
check(len(with_energy) >= 2 and steps == {10}, f"energy on every 10th notification (gaps {sorted(steps)})")
import os
if os.path.exists(f"{out}/workout-faults.json"):
    faults = json.load(open(f"{out}/workout-faults.json"))
    fhr = faults.get("statistics", {}).get("heartRate", {})
    check(faults.get("gaps") == 1, f"the time systoled was down is marked as a gap ({faults.get('gaps')})")
    check(fhr.get("count", 0) >= 10, f"the faulted workout kept collecting ({fhr.get('count')} readings)")
print(f"{len(lines)} readings in the live log; {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
PY
