#!/usr/bin/env bash
# Builds the Debian package, dist/systole_VERSION_ARCH.deb, from this checkout (a clean clone does), and checks it
# with lintian: any error or warning fails. Installs what it needs first (debhelper, lintian; idempotent).
#
# usage: scripts/package.sh [--no-lintian] [--test-build]
#   --no-lintian   leave lintian out
#   --test-build   package the debug build the test command makes (no release build, no lintian), into
#                  dist/test-build/: for scripts/test-package.sh --short only; it runs only where this machine's
#                  Swift toolchain is (its libraries are not in the package)
# Install it with: sudo apt install ./dist/systole_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
lintian=true
dist=dist
for argument in "$@"; do
  case "$argument" in
    --no-lintian) lintian=false ;;
    --test-build) export SYSTOLE_PACKAGE_BUILD=debug; lintian=false; dist=dist/test-build ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package: unknown argument '$argument' (see --help)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
scripts/install-deps.sh --package

# dpkg-buildpackage writes next to the source folder; what it writes is moved into dist/.
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
parent=$(dirname "$PWD")
dpkg-buildpackage --build=binary --no-sign
mkdir -p "$dist"
for file in "systole_${version}_${arch}.deb" "systole_${version}_${arch}.buildinfo" "systole_${version}_${arch}.changes"; do
  mv -f "$parent/$file" "$dist/"
done
deb=$dist/systole_${version}_${arch}.deb
echo "package: $deb, $(stat -c %s "$deb") bytes"
if $lintian; then
  # --fail-on error,warning: a warning fails the build as an error does; overrides carry their reason.
  lintian --fail-on error,warning --info "$deb"
  echo "package: lintian reports no error and no warning"
fi
