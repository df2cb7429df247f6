#!/bin/sh
# Stage 2 of scripts/real-bluez/vm.sh --plain: PID 1 on the guest's overlay root, with no Bluetooth stack. A disk
# given with --disk (/dev/vda) is checked as a boot checks it (e2fsck -p: the journal replayed after a power cut;
# its output in RUN_DIR/fsck.log) and mounted at /store; then the command runs, and the disk is unmounted before
# the power goes off, unless the host cuts it first.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
power_off() {
  mountpoint -q /store && umount /store
  sync; say "power off"; busybox poweroff -f; sleep 30
}
give_up() { say "FAIL: $*"; power_off; }

. "$(dirname "$0")/stack.sh"
mount_run_dir
say "kernel $(uname -r)"
modprobe -a virtio_blk ext4 2>/dev/null
limit=$(deadline_in 10)
while [ ! -b /dev/vda ] && before "$limit"; do sleep 0.1; done
if [ -b /dev/vda ]; then
  e2fsck -p /dev/vda > /vm/fsck.log 2>&1
  fsck_status=$?
  echo "e2fsck -p: status $fsck_status" >> /vm/fsck.log
  # 0: clean, 1: errors corrected (a replayed journal among them); 4 and up: left uncorrected.
  [ "$fsck_status" -lt 4 ] || give_up "e2fsck found errors it did not correct on /dev/vda (status $fsck_status)"
  mkdir -p /store
  mount -t ext4 /dev/vda /store || give_up "cannot mount /dev/vda"
  say "the disk is mounted at /store"
fi
echo "ready $(now)" >> /vm/timing
run_command
power_off
