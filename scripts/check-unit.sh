#!/usr/bin/env bash
# Checks systemd/systoled.service without installing it: 'systemd-analyze verify' (ExecStart pointed at /bin/true in
# a copy, since systoled need not be installed here), then 'systemd-analyze security --offline', whose overall
# exposure must stay at 0.5 or lower; above that it prints the settings that cost points and fails.
#
# usage: scripts/check-unit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
unit=systemd/systoled.service
limit=0.5
fail() { echo "check-unit: FAIL: $*" >&2; exit 1; }
command -v systemd-analyze > /dev/null || fail "no systemd-analyze (Debian package systemd)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's#^ExecStart=.*#ExecStart=/bin/true#' "$unit" > "$work/systoled.service"
systemd-analyze verify "$work/systoled.service" || fail "systemd-analyze verify rejects $unit (see above)"

report=$(systemd-analyze security --offline=true "$work/systoled.service" 2>&1) || true
exposure=$(sed -n 's/.*Overall exposure level for systoled.service: \([0-9.]*\).*/\1/p' <<< "$report")
[ -n "$exposure" ] || { echo "$report" >&2; fail "systemd-analyze security printed no exposure level"; }
if awk -v exposure="$exposure" -v limit="$limit" 'BEGIN { exit !(exposure > limit) }'; then
  grep '✗' <<< "$report" >&2 || true
  fail "$unit: exposure $exposure, above $limit"
fi
echo "check-unit: $unit verifies; exposure $exposure (at most $limit)"
