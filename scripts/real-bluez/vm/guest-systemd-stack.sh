#!/bin/sh
# The units of scripts/real-bluez/vm.sh --systemd (written by guest-systemd.sh) run this with what to do:
#   controllers   load the modules, start btmon and btvirt's two controllers (before bluetooth.service)
#   peripheral    wait for bluetoothd to power both adapters, start BlueZ's example Heart Rate peripheral on hci0
#   command       run the VM's command as the central on hci1, record its status, power off
#   failed UNIT   a unit above failed: say so and power off (the host then reports the VM's failure, status 125)
# Powering off saves the boot's journal as RUN_DIR/journal.txt and the HCI trace as RUN_DIR/btmon.txt.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
. /vm/config
. "$VM_LIB/stack.sh"
power_off() {
  journalctl -b --no-pager -o short-monotonic > /vm/journal.txt 2>&1
  pkill -x btmon && sleep 0.2 && cp /run/btmon.txt /vm/ 2>/dev/null
  sync; say "power off"; systemctl poweroff --force --force; sleep 30
}
give_up() { say "FAIL: $*"; power_off; }

case "$1" in
  controllers)
    load_bluetooth_modules || give_up "the bluetooth modules"
    stdbuf -oL btmon > /run/btmon.txt 2>&1 &
    start_controllers /vm/btvirt.log || give_up "the controllers"
    ;;
  peripheral)
    wait_for_adapters || { journalctl -u bluetooth --no-pager | tail -5; give_up "bluetoothd"; }
    start_peripheral /vm || give_up "the peripheral"
    echo "ready $(now)" >> /vm/timing
    ;;
  command)
    wait_for_adapters || give_up "bluetoothd"
    export BZ_OUT=/vm/out
    run_command
    power_off
    ;;
  failed)
    systemctl status --no-pager "$2" | tail -n 15
    give_up "$2 failed"
    ;;
  *)
    echo "guest-systemd-stack.sh: unknown step '$1'" >&2
    exit 2
    ;;
esac
