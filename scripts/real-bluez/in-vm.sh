#!/bin/bash
# Runs inside the VM of scripts/real-bluez/vm.sh (as root, the host's files read-only): the real
# systoled on the VM's system bus with BlueZ's example Heart Rate peripheral (on hci0) as its sensor, driven by
# the real systole CLI on hci1. Everything it prints, and the files it leaves in $BZ_OUT, are the evidence.
# With SYSTOLE_BUS set (scripts/real-bluez/against-sim.sh), the first part plays against systole-sim on that
# private bus instead, for comparison (SIM_PID: the simulator, restarted with SIGUSR1 where bluetoothd is); FAULTS=0
# leaves out the faults.
# SHORT=1 stops after ten seconds of notifications (no workout). NOTIFY=acquire has systoled take the notifications
# over AcquireNotify's socket ([bluetooth] notify = "acquire") instead of D-Bus signals.
# usage (inside the VM): in-vm.sh BIN_DIR [workout seconds]
set -uo pipefail
BIN=$1
WORKOUT=${2:-20}
OUT=${BZ_OUT:-/tmp}
ADDR=$BZ_PERIPHERAL_ADDR
step() { echo; echo "== $*"; }
fail() { echo "FAIL: $*"; exit 1; }
# Waits for conditions, never for fixed times: emulated without KVM on a busy host, the VM can be slow.
# shellcheck source=../lib/wait.sh
source "$(dirname "$0")/../lib/wait.sh"
WAIT_SECONDS=120

if [ -z "${SYSTOLE_BUS:-}" ]; then
  # Our D-Bus policy, as the package installs it, so systoled may own its name on this system bus.
  install -m 0644 "$(dirname "$0")/../../systemd/org.systole.Daemon.conf" /etc/dbus-1/system.d/
  dbus-send --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig
fi
BUS_OPTION=(--bus "${SYSTOLE_BUS:-system}")

# Everything on the bus, for scripts/real-bluez/bluez-trace.py to compare bluetoothd with systole-sim.
if [ -n "${SYSTOLE_BUS:-}" ]; then dbus-monitor --address "$SYSTOLE_BUS"; else dbus-monitor --system; fi \
  > "$OUT/bus-monitor.txt" 2>&1 &
MONITOR=$!

step "systole scan --adapter $BZ_CENTRAL_ADAPTER (bluetoothd directly)"
"$BIN/systole" scan "${BUS_OPTION[@]}" --adapter "$BZ_CENTRAL_ADAPTER" --seconds 6 | tee "$OUT/scan.txt"
grep -q "$ADDR" "$OUT/scan.txt" || fail "scan did not find the peripheral $ADDR"

step "systoled --adapter $BZ_CENTRAL_ADAPTER --sensor $ADDR"
# The store lives in the VM's own tmpfs: SQLite's WAL needs shared memory maps, which $BZ_OUT (9p) lacks.
STATE=${STATE:-/tmp/systole}
mkdir -p "$STATE"
printf '[bluetooth]\nnotify = "%s"\n' "${NOTIFY:-signal}" > "$STATE/systoled.toml"
CONFIG=$STATE/systoled.toml
"$BIN/systoled" --config "$CONFIG" "${BUS_OPTION[@]}" --adapter "$BZ_CENTRAL_ADAPTER" --sensor "$ADDR" \
  --store "$STATE/health.sqlite" --live-log "$STATE/live.log" 2> "$OUT/systoled.err" &
DAEMON=$!
wait_until "systoled answering" "$BIN/systole" status
"$BIN/systole" status || fail "systoled did not come up: $(cat "$OUT/systoled.err")"

step "systole pair $ADDR"
"$BIN/systole" pair "$ADDR" || echo "(pairing failed; the example peripheral may not need it)"

streaming() { "$BIN/systole" sensors | grep -q streaming; }
if ! wait_until "the sensor streaming" streaming; then
  "$BIN/systole" sensors
  kill "$DAEMON" "$MONITOR"
  fail "the sensor never streamed (systoled's log: $(tail -n 5 "$OUT/systoled.err"))"
fi
step "systole sensors"
"$BIN/systole" sensors
"$BIN/systole" sensors --json > "$OUT/sensors.json"

if [ "${SHORT:-0}" = 1 ]; then
  # The short form: eleven notifications (ten seconds), as the live log shows them outside a workout.
  wait_until "eleven readings in the live log" has_lines "$STATE/live.log" " bpm=" 11
  cp "$STATE/live.log" "$OUT/live.log"
  step "the live log"
  cat "$OUT/live.log"
  kill "$DAEMON"; wait "$DAEMON"; echo "systoled exited with $?"; sleep 0.5; kill "$MONITOR"; exit 0
fi

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
[ "${FAULTS:-1}" = 1 ] || {
  kill "$DAEMON"; wait "$DAEMON"; echo "systoled exited with $?"; sleep 0.5; kill "$MONITOR"; exit 0
}

# Faults with the real stack, during a second workout. After each, wait (at most 90 s) for readings again.
VM_LIB=$(cd "$(dirname "$0")" && pwd)/vm
start_peripheral() {
  python3 "$VM_LIB/hr-peripheral.py" /org/bluez/hci0 >> "$OUT/peripheral-gatt.log" 2>&1 &
}
readings_after() { # unix time -> succeeds once the live log has a heart rate received after it
  python3 - "$STATE/live.log" "$1" <<'PY'
import datetime, sys
after = float(sys.argv[2])
for line in open(sys.argv[1]):
    if " bpm=" in line and "state=running" in line:
        t = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
        if t.timestamp() > after: sys.exit(0)
sys.exit(1)
PY
}
wait_for_readings() { # label; by the clock (python is slow to start under emulation)
  local since=$(date +%s.%N) start=$(date +%s)
  while [ $(( $(date +%s) - start )) -lt 120 ]; do
    if readings_after "$since"; then echo "readings again after $(( $(date +%s) - start )) s ($1)"; return 0; fi
    sleep 0.5
  done
  echo "systoled's log:"; tail -n 30 "$OUT/systoled.err"
  fail "no readings within 120 s after $1"
}
step "second workout, with faults"
"$BIN/systole" start --activity rowing --location indoor || fail "start"
sleep 5
if [ -n "${SIM_PID:-}" ]; then
  step "restart bluetoothd (systole-sim: SIGUSR1; there is no peripheral process to restart)"
  kill -USR1 "$SIM_PID"
  wait_for_readings "bluetoothd restarted"
else
  step "stop the peripheral's GATT server and start it again"
  pkill -f hr-peripheral.py; sleep 3
  start_peripheral
  wait_for_readings "the peripheral came back"
  "$BIN/systole" sensors
  step "restart bluetoothd (the peripheral's registrations go with it, so it starts again too)"
  pkill -f hr-peripheral.py; pkill -f hr-advertiser.py; pkill -x bluetoothd
  while pgrep -x bluetoothd > /dev/null; do sleep 0.2; done
  # Supervised as systemd would (Restart=on-failure): bluetoothd 5.66 has been seen to crash (SIGSEGV) a few
  # seconds after such a restart. A crash is reported here and in the output; systoled must recover from it too.
  (
    while :; do
      /usr/libexec/bluetooth/bluetoothd -n -E >> "$OUT/bluetoothd-restarted.log" 2>&1
      status=$?
      [ -e "$STATE/.stopping" ] && exit 0
      echo "bluetoothd exited with status $status (139: it crashed with SIGSEGV); starting it again" \
        | tee -a "$OUT/bluetoothd-crashes.txt"
      pkill -f hr-peripheral.py; pkill -f hr-advertiser.py
      sleep 1
    done
  ) &
  # The peripheral registers with each bluetoothd once it is up.
  (
    owner=
    while [ ! -e "$STATE/.stopping" ]; do
      now=$(dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetNameOwner \
        string:org.bluez 2>/dev/null | sed -n 's/.*string "\(.*\)"/\1/p')
      if [ -n "$now" ] && [ "$now" != "$owner" ] && dbus-send --system --print-reply --dest=org.bluez /org/bluez/hci0 \
        org.freedesktop.DBus.Properties.Get string:org.bluez.Adapter1 string:Powered 2>/dev/null | grep -q true; then
        owner=$now
        start_peripheral
        python3 "$VM_LIB/hr-advertiser.py" /org/bluez/hci0 >> "$OUT/peripheral-adv.log" 2>&1 &
      fi
      sleep 0.5
    done
  ) &
  wait_for_readings "bluetoothd restarted"
fi
step "SIGKILL systoled and start it again"
kill -9 "$DAEMON"; wait "$DAEMON" 2>/dev/null
"$BIN/systoled" --config "$CONFIG" "${BUS_OPTION[@]}" --adapter "$BZ_CENTRAL_ADAPTER" --sensor "$ADDR" \
  --store "$STATE/health.sqlite" --live-log "$STATE/live.log" 2>> "$OUT/systoled.err" &
DAEMON=$!
wait_until "systoled answering" "$BIN/systole" status
"$BIN/systole" status
wait_for_readings "systoled was killed and restarted"
sleep 3
"$BIN/systole" sensors --json > "$OUT/sensors-after-faults.json"
touch "$STATE/.stopping"
[ -e "$OUT/bluetoothd-crashes.txt" ] && { echo "bluetoothd crashes during the run:"; cat "$OUT/bluetoothd-crashes.txt"; }
step "systole end (second workout)"
"$BIN/systole" end --json | tee "$OUT/workout-faults.json"
cp "$STATE/live.log" "$OUT/live-all.log"
kill "$DAEMON"; wait "$DAEMON"
echo "systoled exited with $?"
sleep 0.5; kill "$MONITOR"
