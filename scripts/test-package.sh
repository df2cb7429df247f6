#!/usr/bin/env bash
# The Debian package under a real systemd: boots the VM of scripts/real-bluez/vm.sh with systemd as PID 1
# (--systemd: Debian's dbus.service and bluetooth.service, btvirt's controllers, BlueZ's example Heart Rate
# peripheral as the strap), installs the package there with apt and runs scripts/real-bluez/package-in-vm.sh: the
# service with its READY and watchdog, a workout as a member of group systole with the shipped configuration, a
# user outside the group refused and seeing no heart rate on the bus, kill -9, the journal, remove and purge. This
# machine is never touched: the guest writes to a tmpfs over a read-only view of it.
#
# The long form (the default) builds the package as shipped (scripts/package.sh: release build, lintian) and the
# previous version's from a git revision (--previous, default 0055099, 0.1.0's commit) in a worktree, or takes it
# as built (--previous-deb), and installs the previous one first: the upgrade must keep the workout and the
# configuration. The short form (--short, run by scripts/test.sh) packages the test command's own debug build
# (scripts/package.sh --test-build) and leaves the upgrade out.
#
# usage: scripts/test-package.sh [--short] [--previous REVISION | --previous-deb FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
short=false
# 0.1.0, the first package (the tag v0.1.0 where tags were kept).
previous_revision=00550994d720cb1e40aa338db544e70ed6685aff
previous_deb=""
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=true ;;
    --previous) previous_revision=$2; shift ;;
    --previous-deb) previous_deb=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "test-package: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

started=$(date +%s)
previous=""
if $short; then
  scripts/package.sh --test-build
  deb=$(ls -t dist/test-build/systole_*.deb | head -n 1)
else
  scripts/package.sh
  version=$(dpkg-parsechangelog -S Version)
  deb=dist/systole_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
  if [ -n "$previous_deb" ]; then
    previous=$previous_deb
  else
    # The previous version, built from its own sources as its users installed it.
    tree=$(mktemp -d "${TMPDIR:-/tmp}/systole-previous.XXXXXX")
    trap 'git worktree remove --force "$tree/src" 2> /dev/null || true; rm -rf "$tree"' EXIT
    git worktree add --detach "$tree/src" "$previous_revision" > /dev/null
    (cd "$tree/src" && scripts/package.sh --no-lintian)
    previous=$(ls "$tree"/src/dist/systole_*.deb | head -n 1)
  fi
  previous_version=$(dpkg-deb -f "$previous" Version)
  dpkg --compare-versions "$previous_version" lt "$version" || {
    echo "test-package: FAIL: the previous package ($previous) is $previous_version, not older than $version" >&2
    exit 1
  }
  if [ -z "$previous_deb" ]; then
    mkdir -p dist/previous
    cp "$previous" dist/previous/
    previous=dist/previous/$(basename "$previous")
  fi
fi
deb=$(realpath "$deb")
[ -z "$previous" ] || previous=$(realpath "$previous")
echo "test-package: the packages took $(($(date +%s) - started)) s to build"

mkdir -p "${XDG_CACHE_HOME:-$HOME/.cache}/systole-bzvm/runs"
run=$(mktemp -d "${XDG_CACHE_HOME:-$HOME/.cache}/systole-bzvm/runs/package.XXXXXX")
status=0
scripts/real-bluez/vm.sh --systemd --run-dir "$run" --timeout 1800 -- \
  bash "$PWD/scripts/real-bluez/package-in-vm.sh" "$deb" ${previous:+"$previous"} || status=$?
echo "test-package: $(($(date +%s) - started)) s in all (the VM's run dir: $run)"
case $status in
  0) echo "test-package: passed"; rm -rf "$run" ;;
  125) echo "test-package: FAIL: the VM or the Bluetooth stack in it did not start (see above)" >&2; exit 1 ;;
  *) echo "test-package: FAIL: see the checks above and $run (journal.txt, out/)" >&2; exit 1 ;;
esac
