#!/usr/bin/env bash
# Installs the Debian packages systole builds and tests against, when any is missing. Safe to run again.
#   libdbus-1-dev     libdbus-1 headers and pkg-config file (CDBus)
#   libbluetooth-dev  libbluetooth headers and pkg-config file (CBluetooth)
#   pkg-config        how SwiftPM finds both
#   dbus              dbus-daemon, for the private buses the tests start
#   libsqlite3-dev    SQLite, which GRDB (the HealthStore) links
#   python3-venv      the venv Benchmarks/ingest.sh installs bleak into (its smoke run is part of the tests)
set -euo pipefail
packages=(libdbus-1-dev libbluetooth-dev libsqlite3-dev pkg-config dbus python3 python3-venv)

if ! command -v swift >/dev/null 2>&1; then
  echo "install-deps: no 'swift' on PATH: install the Swift 6 toolchain (swift.org) and put its usr/bin on PATH" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "install-deps: missing ${missing[*]} and not root: run 'apt-get install ${missing[*]}' as root" >&2
    exit 1
  }
  sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
