#!/bin/bash
# Runs inside the VM of ../shared/bluez-vm/run-real-bluez.sh (as root, the host's files read-only): the real
# systoled on the VM's system bus with BlueZ's example Heart Rate peripheral (on hci0) as its sensor, driven by
# the real systole CLI on hci1. Everything it prints, and the files it leaves in $BZ_OUT, are the evidence.
# usage (inside the VM): in-vm.sh BIN_DIR [workout seconds]
set -uo pipefail
BIN=$1
WORKOUT=${2:-20}
OUT=${BZ_OUT:-/tmp}
ADDR=$BZ_PERIPHERAL_ADDR
step() { echo; echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }

# Our D-Bus policy, as the package installs it, so systoled may own its name on this system bus.
install -m 0644 "$(dirname "$0")/../../systemd/org.systole.Daemon.conf" /etc/dbus-1/system.d/
dbus-send --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig

step "systole scan --adapter $BZ_CENTRAL_ADAPTER (bluetoothd directly)"
"$BIN/systole" scan --adapter "$BZ_CENTRAL_ADAPTER" --seconds 6 | tee "$OUT/scan.txt"
grep -q "$ADDR" "$OUT/scan.txt" || fail "scan did not find the peripheral $ADDR"

step "systoled --adapter $BZ_CENTRAL_ADAPTER --sensor $ADDR"
# The store lives in the VM's own tmpfs: SQLite's WAL needs shared memory maps, which $BZ_OUT (9p) lacks.
STATE=/tmp/systole
mkdir -p "$STATE"
"$BIN/systoled" --config /dev/null --adapter "$BZ_CENTRAL_ADAPTER" --sensor "$ADDR" \
  --store "$STATE/health.sqlite" --live-log "$STATE/live.log" 2> "$OUT/systoled.err" &
DAEMON=$!
for _ in $(seq 100); do "$BIN/systole" status > /dev/null 2>&1 && break; sleep 0.2; done
"$BIN/systole" status || fail "systoled did not come up: $(cat "$OUT/systoled.err")"

step "systole pair $ADDR"
"$BIN/systole" pair "$ADDR" || echo "(pairing failed; the example peripheral may not need it)"

for _ in $(seq 60); do "$BIN/systole" sensors | grep -q streaming && break; sleep 0.5; done
step "systole sensors"
"$BIN/systole" sensors
"$BIN/systole" sensors --json > "$OUT/sensors.json"

step "systole start --activity cycling"
"$BIN/systole" start --activity cycling --location indoor || fail "start"
sleep "$WORKOUT"
"$BIN/systole" pause && sleep 3 && "$BIN/systole" resume
sleep 5
step "systole end"
"$BIN/systole" end --json | tee "$OUT/workout.json"
"$BIN/systole" workouts
step "the live log (first and last lines)"
cp "$STATE/live.log" "$OUT/live.log"
head -3 "$OUT/live.log"; echo "…"; tail -3 "$OUT/live.log"
kill "$DAEMON"; wait "$DAEMON"
echo "systoled exited with $?"
