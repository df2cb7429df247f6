#!/bin/sh
# Stage 2 of scripts/real-bluez/vm.sh, PID 1 on the guest's overlay root. Brings up the real stack: a system
# dbus-daemon, two btvirt LE controllers on one emulated air, bluetoothd 5.66, and on hci0 BlueZ's example Heart
# Rate peripheral with our advertiser; then runs the command from the run dir (mounted at /vm) as the central on
# hci1, records its status and powers off. Anything that fails before the command leaves no /vm/rc, which the host
# reports as a failure of the VM (status 125) with the console's tail.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
power_off() {
  # The HCI trace of both controllers (RUN_DIR/btmon.txt), which tells a link the emulated radio never made.
  [ -n "${btmon:-}" ] && { kill "$btmon"; wait "$btmon"; cp /tmp/btmon.txt /vm/ 2>/dev/null; }
  sync; say "power off"; busybox poweroff -f; sleep 30
}
give_up() { say "FAIL: $*"; power_off; }

. "$(dirname "$0")/stack.sh"
mount_run_dir
say "kernel $(uname -r)"

load_bluetooth_modules || give_up "the bluetooth modules"
stdbuf -oL btmon > /tmp/btmon.txt 2>&1 &
btmon=$!
mkdir -p /run/dbus
dbus-daemon --system --fork || give_up "dbus-daemon did not start"

start_controllers /vm/btvirt.log || give_up "the controllers"

/usr/libexec/bluetooth/bluetoothd -n -E > /vm/bluetoothd.log 2>&1 &
wait_for_adapters || { tail -5 /vm/bluetoothd.log; give_up "bluetoothd"; }
export BZ_OUT=/vm/out
start_peripheral /vm || give_up "the peripheral"
echo "ready $(now)" >> /vm/timing

run_command
power_off
