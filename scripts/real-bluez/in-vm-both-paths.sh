#!/bin/bash
# Runs inside the VM of scripts/real-bluez/vm.sh: scripts/real-bluez/in-vm.sh twice on one boot, first with systoled
# on D-Bus signals (StartNotify; its results in $BZ_OUT), then on AcquireNotify's socket (in $BZ_OUT/acquire, its
# store in a folder of its own); then in-vm-ecg.sh: a Polar H10's ECG through bluetoothd (in $BZ_OUT/ecg).
# usage (inside the VM): in-vm-both-paths.sh BIN_DIR [workout seconds]
set -uo pipefail
here=$(dirname "$0")
NOTIFY=signal bash "$here/in-vm.sh" "$@" || exit $?
OUT=${BZ_OUT:-/tmp}
mkdir -p "$OUT/acquire"
echo
echo "==== the same again, with systoled on AcquireNotify"
NOTIFY=acquire BZ_OUT=$OUT/acquire STATE=/tmp/systole-acquire bash "$here/in-vm.sh" "$@" || exit $?
mkdir -p "$OUT/ecg"
echo
echo "==== a Polar H10's ECG through bluetoothd (PMD beside the Heart Rate service)"
BZ_OUT=$OUT/ecg bash "$here/in-vm-ecg.sh" "$1"
