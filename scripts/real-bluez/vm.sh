#!/usr/bin/env bash
# Runs a command next to the real Linux Bluetooth stack, in a throw-away QEMU VM: Debian's kernel (with its
# bluetooth and hci_vhci modules), a system dbus-daemon, bluetoothd 5.66, two virtual LE controllers from btvirt
# sharing one emulated air, and on hci0 BlueZ's example Heart Rate peripheral advertising as "BZ-HRM"
# (vm/guest-init.sh). The command runs as root, in the current directory, as the central on hci1, once the
# peripheral advertises. The guest sees this machine's files read-only under a tmpfs overlay, so nothing it writes
# stays, except in $BZ_OUT.
#
# With --systemd, systemd is PID 1 instead of a shell (vm/guest-systemd.sh): Debian's dbus.service and
# bluetooth.service bring up the stack as on an installed machine, btvirt's controllers before bluetoothd and the
# peripheral after it, and the command runs as a unit once they are up (the boot's journal is kept as
# RUN_DIR/journal.txt). Debian's tmp.conf, which would empty /tmp at boot, is masked: a checkout under /tmp stays
# visible.
#
# With --plain, no Bluetooth stack at all (vm/guest-plain.sh): the command runs on the bare guest. With --disk
# IMAGE, a raw ext4 image is the guest's /dev/vda, checked (e2fsck -p, as a boot does) and mounted at /store: a
# disk of its own whose page cache the guest really loses when QEMU is killed (scripts/power-cut.sh does, with
# QEMU's PID from RUN_DIR/qemu.pid).
#
# usage: scripts/real-bluez/vm.sh [--systemd | --plain] [--disk IMAGE] [--run-dir DIR] [--timeout SECONDS]
#                                 [--verbose] [--] COMMAND [ARGS...]
#   --run-dir DIR   where the VM's logs and $BZ_OUT (DIR/out) go; kept. Without it a folder under
#                   ~/.cache/systole-bzvm/runs/ is used and removed when the command succeeds.
#   --timeout S     the whole VM is killed after S seconds (default 300).
#   --verbose       the guest's console on standard error as it runs.
#   --systemd       systemd as PID 1 (above).
#   --plain         no Bluetooth stack (above).
#   --disk IMAGE    a raw ext4 image as /dev/vda, mounted at /store with --plain (above).
# The command sees BZ_PERIPHERAL_ADAPTER=hci0, BZ_PERIPHERAL_ADDR, BZ_CENTRAL_ADAPTER=hci1, BZ_CENTRAL_ADDR, and
# BZ_OUT. Its output is printed once the VM is off. Exit status: the command's, or 125 when the VM or the stack in
# it failed first (the console's tail says why).
#
# It installs its Debian packages when missing (scripts/install-deps.sh --vm; sudo when not root). It uses
# emulation (TCG), not KVM, so it works in containers and on machines without /dev/kvm: about 15 s to a ready
# stack on two cores. One VM runs at a time (a lock): two at once on two cores have left controllers dead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/systole-bzvm
run_dir=""
timeout=300
verbose=0
stage2=guest-init.sh
memory=512
disk=""
while [ $# -gt 0 ]; do
  case "$1" in
    --run-dir) run_dir=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --verbose) verbose=1; shift ;;
    # systemd, its journal and an installed package need more memory than the shell's stack alone.
    --systemd) stage2=guest-systemd.sh; memory=1024; shift ;;
    --plain) stage2=guest-plain.sh; shift ;;
    --disk) disk=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "vm: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "vm: no command to run (see --help)" >&2; exit 2; }
fail() { echo "vm: FAIL: $*" >&2; exit 125; }
sudo=()
[ "$(id -u)" = 0 ] || sudo=(sudo)

"$root/scripts/install-deps.sh" --vm >&2 || fail "the VM's Debian packages could not be installed (see above)"
mkdir -p "$cache/runs"
exec 9> "$cache/vm.lock"
if ! flock -n 9; then
  echo "vm: waiting for the VM already running here to finish" >&2
  flock -w "$timeout" 9 || fail "another VM has been running for over $timeout s"
fi

# The guest's kernel must be one whose modules are in this machine's /lib/modules, which the guest mounts: the
# newest installed one that has the two it needs, not necessarily the one running here.
kernel_version=""
for image in $(ls -1 /boot/vmlinuz-* 2> /dev/null | sort -V -r); do
  version=${image#/boot/vmlinuz-}
  if modinfo -k "$version" -n hci_vhci > /dev/null 2>&1 && modinfo -k "$version" -n 9p > /dev/null 2>&1; then
    kernel_version=$version
    break
  fi
done
[ -n "$kernel_version" ] || fail "no kernel in /boot with the hci_vhci and 9p modules: install linux-image-amd64"
kernel=/boot/vmlinuz-$kernel_version
if [ ! -r "$kernel" ]; then
  # Debian installs kernels readable by root only.
  "${sudo[@]}" install -m 0644 "$kernel" "$cache/vmlinuz-$kernel_version"
  kernel=$cache/vmlinuz-$kernel_version
fi

# The initramfs (busybox, the modules that reach the host's files, stage1-init) depends only on the kernel and on
# stage1-init, so it is built once per pair of them.
initrd=$cache/initramfs-$kernel_version-$(sha256sum "$here/vm/stage1-init" | cut -c1-12).cpio.gz
if [ ! -s "$initrd" ]; then
  echo "vm: building $initrd" >&2
  tree=$(mktemp -d "$cache/initramfs.XXXXXX")
  mkdir -p "$tree/bin" "$tree/modules" "$tree/proc" "$tree/sys" "$tree/dev"
  cp /bin/busybox "$tree/bin/busybox"
  cp "$here/vm/stage1-init" "$tree/init"
  for module in virtio_pci 9pnet_virtio 9p overlay; do
    modprobe -S "$kernel_version" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
  done | awk '!seen[$0]++' | while read -r file; do
    name=$(basename "$file")
    case "$name" in
      *.ko.xz) xz -dc "$file" > "$tree/modules/${name%.xz}"; name=${name%.xz} ;;
      *.ko.zst) zstd -qdc "$file" > "$tree/modules/${name%.zst}"; name=${name%.zst} ;;
      *) cp "$file" "$tree/modules/" ;;
    esac
    echo "$name" >> "$tree/modules/order"
  done
  (cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd.partial"
  mv "$initrd.partial" "$initrd"
  rm -rf "$tree"
  for old in "$cache"/initramfs-*.cpio.gz; do [ "$old" = "$initrd" ] || rm -f "$old"; done
fi

keep=1
if [ -z "$run_dir" ]; then
  run_dir=$(mktemp -d "$cache/runs/run.XXXXXX")
  keep=0
fi
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
rm -f "$run_dir/rc" "$run_dir/stdout" "$run_dir/stderr" "$run_dir/timing" "$run_dir/qemu.pid"
{ printf 'exec'; printf ' %q' "$@"; printf '\n'; } > "$run_dir/command"
{
  printf 'VM_LIB=%q\n' "$here/vm"
  printf 'COMMAND_DIR=%q\n' "$PWD"
} > "$run_dir/config"

echo "vm: kernel $kernel_version, run dir $run_dir" >&2
started=$(date +%s.%N)
: > "$run_dir/console.log"
console=""
if [ $verbose = 1 ]; then
  tail -n +1 -f "$run_dir/console.log" >&2 &
  console=$!
fi
status=0
drive=()
# cache=writeback: the guest's flushes reach this machine's disk, as a drive's write cache would on a sync.
[ -n "$disk" ] && drive=(-drive "file=$disk,if=virtio,format=raw,cache=writeback")
# The host's root is shared read-only (multidevs=remap: it spans several filesystems); the run dir read-write.
timeout -s KILL "$timeout" qemu-system-x86_64 -pidfile "$run_dir/qemu.pid" "${drive[@]}" \
  -accel tcg,thread=multi,tb-size=128 -m "$memory" -smp 2 \
  -nodefaults -no-user-config -display none -no-reboot \
  -serial "file:$run_dir/console.log" \
  -kernel "$kernel" -initrd "$initrd" \
  -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$run_dir,mount_tag=run,security_model=none" \
  -append "console=ttyS0 loglevel=4 panic=-1 systole.stage2=$here/vm/$stage2" \
  > "$run_dir/qemu.log" 2>&1 || status=$?
if [ -n "$console" ]; then
  sleep 0.3
  kill "$console" 2> /dev/null || true
  wait "$console" 2> /dev/null || true
fi
[ -f "$run_dir/stdout" ] && cat "$run_dir/stdout"
[ -f "$run_dir/stderr" ] && cat "$run_dir/stderr" >&2
awk -v wall="$(echo "$(date +%s.%N) $started" | awk '{ printf "%.1f", $1 - $2 }')" \
  '{ at[$1] = $2 } END { printf "vm: %s s wall; in the guest: stage 2 at %s s, stack ready at %s s, command done at %s s\n",
     wall, at["stage2"], at["ready"], at["done"] }' "$run_dir/timing" >&2 2> /dev/null || true
if [ ! -f "$run_dir/rc" ]; then
  echo "vm: the VM or the stack in it failed before the command ended (qemu: status $status, 137 when the" \
    "$timeout s timeout killed it); the console's last lines:" >&2
  tail -n 40 "$run_dir/console.log" >&2 || true
  cat "$run_dir/qemu.log" >&2 || true
  echo "vm: logs in $run_dir" >&2
  exit 125
fi
rc=$(cat "$run_dir/rc")
if [ $keep = 0 ] && [ "$rc" = 0 ]; then
  rm -rf "$run_dir"
else
  echo "vm: logs in $run_dir" >&2
fi
exit "$rc"
