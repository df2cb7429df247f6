#!/usr/bin/env bash
# Installs the Debian packages systole builds and tests against, when any is missing. Safe to run again.
#   libdbus-1-dev     libdbus-1 headers and pkg-config file (CDBus)
#   libbluetooth-dev  libbluetooth headers and pkg-config file (CBluetooth)
#   pkg-config        how SwiftPM finds both
#   dbus              dbus-daemon, for the private buses the tests start
#   libsqlite3-dev    SQLite, which GRDB (the HealthStore) links
#   python3-venv      the venv Benchmarks/ingest.sh installs bleak into (its smoke run is part of the tests)
#   systemd           systemd-analyze, which scripts/check-unit.sh runs on the unit
#   chromium          the headless browser the web page's tests drive (through Playwright)
#   libmosquitto-dev  libmosquitto headers and pkg-config file (CMosquitto: systoled's MQTT client)
#   mosquitto         the MQTT broker the MQTT tests start on a port of their own (never as a service)
#   openssl           makes the test CA and certificate of the MQTT TLS test
#   postgresql-15     the PostgreSQL server the replication tests start in a folder and on a port of their own, as
#                     user postgres (never the machine's cluster: none is made when this script installs it)
#   postgresql-client-15  psql, with which those tests read what arrived
# and then, with scripts/python-tools.sh, the Python venv the export and analysis tests decode and compare with.
# With --vm, instead, what scripts/real-bluez/vm.sh boots and runs (the real Bluetooth stack in a VM):
#   qemu-system-x86   the emulator (TCG: no KVM needed)
#   linux-image-amd64 the guest kernel, with its bluetooth, hci_vhci and 9p modules in /lib/modules
#   busybox-static    the initramfs's shell and tools, which must not need the host's libraries
#   cpio, kmod        packing the initramfs, and finding the modules it loads
#   dbus              the guest's system bus
#   bluez             bluetoothd 5.66 itself
#   bluez-test-tools  btvirt (virtual LE controllers), hciconfig
#   bluez-test-scripts example-gatt-server (the Heart Rate peripheral)
#   python3-dbus, python3-gi  what that example and our advertiser run on
#   e2fsprogs         mkfs.ext4 for scripts/power-cut.sh's virtual disk, e2fsck in the guest
# With --package, what scripts/package.sh builds and checks the Debian package with:
#   debhelper, dpkg-dev  dh and dpkg-buildpackage
#   fakeroot          not needed by the build (Rules-Requires-Root: no), but dpkg-buildpackage looks for it
#   lintian           the package's check
#
# usage: scripts/install-deps.sh [--vm | --package]
set -euo pipefail
packages=(libdbus-1-dev libbluetooth-dev libsqlite3-dev pkg-config dbus python3 python3-venv systemd chromium
  libmosquitto-dev mosquitto openssl postgresql-15 postgresql-client-15)
if [ "${1:-}" = --vm ]; then
  packages=(qemu-system-x86 linux-image-amd64 busybox-static cpio kmod dbus bluez bluez-test-tools
    bluez-test-scripts python3 python3-dbus python3-gi e2fsprogs)
elif [ "${1:-}" = --package ]; then
  packages=(debhelper dpkg-dev fakeroot lintian xz-utils python3)
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "install-deps: no 'swift' on PATH: install the Swift 6 toolchain (swift.org) and put its usr/bin on PATH" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || {
      echo "install-deps: missing ${missing[*]} and not root: run 'apt-get install ${missing[*]}' as root" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  # Installing PostgreSQL would make (and on some machines start) a 'main' cluster; the tests start their own.
  if [[ " ${missing[*]} " == *" postgresql-15 "* ]] && [ ! -e /etc/postgresql-common/createcluster.conf ]; then
    "${sudo[@]}" mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" | "${sudo[@]}" tee /etc/postgresql-common/createcluster.d/systole.conf >/dev/null
  fi
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv of decoders, schemas and references the export and analysis tests check output with.
[ "${1:-}" = --vm ] || "$(dirname "$0")/python-tools.sh" >/dev/null
