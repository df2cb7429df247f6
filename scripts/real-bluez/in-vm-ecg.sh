#!/bin/bash
# Runs inside the VM of scripts/real-bluez/vm.sh after in-vm-both-paths.sh: the real systoled records a Polar H10's
# ECG through the real bluetoothd. A PMD service (vm/pmd-peripheral.py) joins BlueZ's example Heart Rate peripheral
# on hci0; the central forgets the peripheral first (its services were discovered without PMD), then systoled with
# [ecg] connects, turns on the control point's indications and the data notifications, reads the features, starts
# ECG, stores the frames during a workout and stops the strap at its end. (On the device found again, bluetoothd
# 5.66 never announces Connected: systoled must go by ServicesResolved.) Leaves in $BZ_OUT: the frames the peripheral sent (pmd-frames.txt),
# the ECG systoled exported (ecg.csv), the sensors' status (sensors.json).
# usage (inside the VM): in-vm-ecg.sh BIN_DIR
set -uo pipefail
BIN=$1
OUT=${BZ_OUT:-/tmp}
ADDR=$BZ_PERIPHERAL_ADDR
step() { echo; echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }
# shellcheck source=../lib/wait.sh
source "$(dirname "$0")/../lib/wait.sh"
WAIT_SECONDS=120
VM_LIB=$(cd "$(dirname "$0")" && pwd)/vm

step "forget $ADDR on $BZ_CENTRAL_ADAPTER (its services were discovered without PMD), and the bond both ways"
dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$BZ_CENTRAL_ADAPTER" org.bluez.Adapter1.RemoveDevice \
  "objpath:/org/bluez/$BZ_CENTRAL_ADAPTER/dev_${ADDR//:/_}" || echo "(not known)"
# The peripheral keeps the keys of the earlier passes' pairing and would ask a central that has none to pair.
dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci0 org.bluez.Adapter1.RemoveDevice \
  "objpath:/org/bluez/hci0/dev_${BZ_CENTRAL_ADDR//:/_}" || echo "(not known)"

step "the PMD service on hci0"
python3 "$VM_LIB/pmd-peripheral.py" /org/bluez/hci0 "$OUT/pmd-frames.txt" > "$OUT/pmd-peripheral.log" 2>&1 &
PMD=$!
registered() { grep -q '^PMD application registered' "$OUT/pmd-peripheral.log"; }
wait_until "the PMD application registered" registered || fail "$(cat "$OUT/pmd-peripheral.log")"

# Everything on the bus, for the record when this pass fails.
dbus-monitor --system > "$OUT/bus-monitor.txt" 2>&1 &
MONITOR=$!
STATE=/tmp/systole-ecg
mkdir -p "$STATE"
printf '[ecg]\nenabled = true\n' > "$STATE/systoled.toml"
"$BIN/systoled" --config "$STATE/systoled.toml" --adapter "$BZ_CENTRAL_ADAPTER" --sensor "$ADDR" \
  --store "$STATE/health.sqlite" --live-log "$STATE/live.log" 2> "$OUT/systoled.err" &
DAEMON=$!
wait_until "systoled answering" "$BIN/systole" status
# Paired again as in-vm.sh does: forgetting the device dropped its keys, and the peripheral asks for pairing.
"$BIN/systole" pair "$ADDR" || echo "(pairing failed; the example peripheral may not need it)"
streaming() { "$BIN/systole" sensors | grep -q streaming; }
wait_until "the sensor streaming" streaming || fail "the sensor never streamed: $(tail -n 5 "$OUT/systoled.err")"

step "systole start: ECG streams during the workout"
"$BIN/systole" start --activity running || fail "start"
ecg_streaming() { "$BIN/systole" sensors | grep -q "ECG streaming"; }
wait_until "the ECG streaming" ecg_streaming || { "$BIN/systole" sensors; fail "no ECG: $(tail -n 5 "$OUT/systoled.err")"; }
"$BIN/systole" sensors
enough_frames() { [ "$(wc -l < "$OUT/pmd-frames.txt")" -ge 20 ]; }
wait_until "20 ECG frames" enough_frames || fail "only $(wc -l < "$OUT/pmd-frames.txt") frames"
"$BIN/systole" sensors --json > "$OUT/sensors.json"
"$BIN/systole" end || fail "end"
stopped() { grep -q '^ECG stopped by the central' "$OUT/pmd-peripheral.log"; }
wait_until "the strap told to stop at the workout's end" stopped || fail "the ECG was never stopped"
"$BIN/systole" export --last --format csv --source ecg -o "$OUT/ecg.csv" || fail "export"
grep -i "pmd\|ecg" "$OUT/systoled.err" | head -n 20
kill "$DAEMON"; wait "$DAEMON"; echo "systoled exited with $?"
kill "$PMD" "$MONITOR"
echo "ECG frames sent: $(wc -l < "$OUT/pmd-frames.txt"), values exported: $(($(wc -l < "$OUT/ecg.csv") - 1))"
