#!/bin/sh
# Stage 2 of scripts/real-bluez/vm.sh --systemd: PID 1 for a moment, long enough to make the guest's overlay root a
# machine systemd can boot, then systemd itself as PID 1 (Debian's, with Debian's dbus.service and
# bluetooth.service). It boots into systole-vm.target: btvirt's controllers before bluetooth.service, BlueZ's
# example Heart Rate peripheral after it, then the command (guest-systemd-stack.sh runs each). Everything written
# here goes to the overlay's tmpfs, never to the host.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
. "$(dirname "$0")/stack.sh"
mount_run_dir
say "kernel $(uname -r); preparing the root for systemd"

# Debian's tmp.conf empties /tmp at boot (systemd-tmpfiles): masked, so the guest's /tmp stays the host's, seen
# through the overlay. A checkout under /tmp (a fresh clone, as scripts/stress-suite.sh makes) holds the scripts the
# units run and the package the command installs. The host's fstab names the host's disks: the guest has none.
ln -sf /dev/null /etc/tmpfiles.d/tmp.conf
: > /etc/fstab

# What a boot of this machine would start beside the test and only slows it under emulation, or touches a network
# the guest does not have: masked. man-db would rebuild its index over 9p after every package with man pages.
for unit in apt-daily.timer apt-daily-upgrade.timer man-db.timer dpkg-db-backup.timer e2scrub_all.timer \
  fstrim.timer systemd-timesyncd.service systemd-pstore.service getty@tty1.service serial-getty@ttyS0.service \
  packagekit.service; do
  ln -sf /dev/null "/etc/systemd/system/$unit"
done
rm -f /var/lib/man-db/auto-update
# A container image's policy-rc.d (exit 101) forbids starting services when a package is installed; a Debian
# machine has none, and the package's own start on install is part of the test.
rm -f /usr/sbin/policy-rc.d

units=/etc/systemd/system
stack="/bin/sh $VM_LIB/guest-systemd-stack.sh"
cat > "$units/systole-vm.target" <<EOF
[Unit]
Description=systole's VM test: the real Bluetooth stack, then the command
Wants=systole-vm-command.service
EOF
# stack_unit NAME DESCRIPTION STEP SERVICE_LINE [UNIT_LINE...]: a oneshot unit running guest-systemd-stack.sh STEP;
# when it fails, the VM gives up (systole-vm-failed@).
stack_unit() {
  name=$1 description=$2 step=$3 service_line=$4
  shift 4
  {
    printf '[Unit]\nDescription=%s\n' "$description"
    for line in "$@"; do echo "$line"; done
    printf 'OnFailure=systole-vm-failed@%%n.service\n[Service]\nType=oneshot\n%s\n' "$service_line"
    printf 'StandardOutput=journal+console\nExecStart=%s %s\n' "$stack" "$step"
  } > "$units/$name"
}
stack_unit systole-vm-controllers.service "Two btvirt LE controllers on one emulated air" controllers \
  RemainAfterExit=yes Before=bluetooth.service
mkdir -p "$units/bluetooth.service.d"
cat > "$units/bluetooth.service.d/systole-vm.conf" <<EOF
[Unit]
Requires=systole-vm-controllers.service
After=systole-vm-controllers.service
OnFailure=systole-vm-failed@%n.service
EOF
stack_unit systole-vm-peripheral.service "BlueZ's example Heart Rate peripheral on hci0" peripheral \
  RemainAfterExit=yes Requires=bluetooth.service After=bluetooth.service
stack_unit systole-vm-command.service "The VM's command, as the central on hci1" command \
  TimeoutStartSec=infinity Requires=systole-vm-peripheral.service After=systole-vm-peripheral.service
cat > "$units/systole-vm-failed@.service" <<EOF
[Unit]
Description=The VM gives up: %i failed
[Service]
Type=oneshot
StandardOutput=journal+console
ExecStart=/bin/sh -c '$stack failed %i || systemctl poweroff --force --force'
EOF
ln -sf systole-vm.target "$units/default.target"

say "starting systemd"
exec /lib/systemd/systemd
