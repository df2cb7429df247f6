#!/usr/bin/env bash
# Pulls the plug on systoled: proves the durability contract (docs/reliability.md) by cutting a VM's power mid-workout.
#
# The VM (scripts/real-bluez/vm.sh --plain) has the store on a virtual disk of its own: an ext4 image attached as a
# virtio block device, so the guest's page cache is really lost when QEMU is killed. In each boot
# (scripts/real-bluez/power-cut-in-vm.sh) systoled records a simulated Polar H10 at 4 Hz; the simulator's emit log
# and the guest's clock go to the run dir on this machine's disk, written at once, so they survive the cut. At a
# random moment 1–6 s after readings flow, QEMU is killed with SIGKILL. The next boot checks what the cut left:
#   - `PRAGMA integrity_check` is ok on the store exactly as the cut left it;
#   - systoled recovers the workout (the same one, running);
#   - the stored readings are the emitted ones, in order, value for value, each stored after it was emitted and
#     within 2 s: nothing invented, nothing lost in between;
#   - every reading emitted more than 1 s + one 75 ms tick before the cut is stored (sync = "second"); with
#     sync = "commit", every reading emitted more than one tick and 250 ms (the time the emulated disk may take to
#     sync a commit) before the cut.
# It prints a line per cut (readings emitted, stored, lost and how long before the cut the oldest lost one was
# emitted) and "N cuts, N passed".
#
# usage: scripts/power-cut.sh [--cuts N] [--sync second|commit|both] [--seed N] [--keep]
#   --cuts N     power cuts, each in a boot of its own, then one boot more to check the last (default 2)
#   --sync S     [store] sync for systoled (default second); both: second and commit by turns, second first
#   --seed N     seed for the moments of the cuts (default: from the clock; printed)
#   --keep       keep the run dir (with the disk image) even when every cut passed
# The run dir (under ~/.cache/systole-bzvm/runs/) is kept when a cut fails.
set -euo pipefail
cd "$(dirname "$0")/.."
CUTS=2
SYNC=second
SEED=$(date +%s)
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cuts | --sync | --seed) [ $# -ge 2 ] || { echo "power-cut: $1 needs a value (see --help)" >&2; exit 2; } ;;
  esac
  case "$1" in
    --cuts) CUTS=$2; shift 2 ;;
    --sync) SYNC=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "power-cut: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$SYNC" in second | commit | both) ;; *) echo "power-cut: --sync is second, commit or both" >&2; exit 2 ;; esac
sync_of() { # CUT: the [store] sync its workout records with
  if [ "$SYNC" != both ]; then echo "$SYNC"; elif [ $(($1 % 2)) = 1 ]; then echo second; else echo commit; fi
}
[ "$CUTS" -ge 1 ] 2> /dev/null || { echo "power-cut: --cuts is a number from 1" >&2; exit 2; }

scripts/install-deps.sh --vm >&2
for product in systoled systole systole-sim; do swift build --product "$product" >&2; done
BIN=$(swift build --show-bin-path)
mkdir -p "${XDG_CACHE_HOME:-$HOME/.cache}/systole-bzvm/runs"
RUN=$(mktemp -d "${XDG_CACHE_HOME:-$HOME/.cache}/systole-bzvm/runs/power-cut.XXXXXX")
IMAGE=$RUN/store.img
truncate -s 256M "$IMAGE"
# mkfs.ext4 is in /sbin, which a user's PATH may leave out.
PATH=$PATH:/usr/sbin:/sbin mkfs.ext4 -q -F "$IMAGE"
RANDOM=$SEED
echo "power-cut: $CUTS cuts, sync = \"$SYNC\", seed $SEED, run dir $RUN"

boot() { # CUT [--final]: one boot of the VM, its output in RUN/boot-CUT.log, in the background (VM_PID)
  scripts/real-bluez/vm.sh --plain --disk "$IMAGE" --run-dir "$RUN" --timeout 900 -- \
    bash "$PWD/scripts/real-bluez/power-cut-in-vm.sh" "$BIN" "$1" "$(sync_of "$1")" ${2:-} > "$RUN/boot-$1.log" 2>&1 &
  VM_PID=$!
}

for cut in $(seq 1 "$CUTS"); do
  boot "$cut"
  # Deadlines only a real failure reaches: the guest is emulated, on a machine that may be busy.
  deadline=$(($(date +%s) + 600))
  until [ -f "$RUN/out/cut-$cut/recording" ]; do
    if ! kill -0 "$VM_PID" 2> /dev/null || [ "$(date +%s)" -ge "$deadline" ]; then
      echo "power-cut: FAIL: boot $cut did not start recording (its output: $RUN/boot-$cut.log)" >&2
      cat "$RUN/boot-$cut.log" >&2
      kill "$VM_PID" 2> /dev/null || true
      exit 1
    fi
    sleep 0.1
  done
  delay=$(printf '%d.%03d' $((1 + RANDOM % 5)) $((RANDOM % 1000)))
  sleep "$delay"
  kill -KILL "$(cat "$RUN/qemu.pid")"
  wait "$VM_PID" || true
  echo "power-cut: cut $cut (sync = \"$(sync_of "$cut")\"), $delay s after readings reached the live log"
done
boot $((CUTS + 1)) --final
if ! wait "$VM_PID"; then
  echo "power-cut: FAIL: the boot after the last cut failed (its output: $RUN/boot-$((CUTS + 1)).log)" >&2
  cat "$RUN/boot-$((CUTS + 1)).log" >&2
  exit 1
fi

status=0
python3 scripts/lib/power-cut-check.py "$RUN/out" "$CUTS" "$SYNC" || status=$?
if [ "$status" = 0 ] && [ "$KEEP" = 0 ]; then
  rm -rf "$RUN"
else
  echo "power-cut: run dir $RUN"
fi
exit "$status"
