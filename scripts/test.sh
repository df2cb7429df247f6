#!/usr/bin/env bash
# The test command (the README's second command; .ci/run runs exactly this).
# Installs what is missing, checks formatting, builds every target with warnings as errors, runs the whole test suite,
# runs the short form of the real-stack test (scripts/test-real-bluez.sh --short: the real systoled against bluetoothd
# and BlueZ's example Heart Rate peripheral in a VM, then the same steps against systole-sim, compared on D-Bus), runs
# short smoke versions of the benchmark and torture scripts (so they cannot rot; their figures are not the product's:
# debug build, few sensors, few seconds), then fuzzes the payload decoder briefly ($SYSTOLE_FUZZ_SECONDS, default 30;
# 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

# The shared test data and the real-BlueZ VM live beside the clone; without them the suite cannot run, so say so
# before building anything.
SHARED=${SYSTOLE_SHARED:-../shared}
if [ ! -f "$SHARED/testdata/hrm-vectors.json" ] || [ ! -x "$SHARED/bluez-vm/run-real-bluez.sh" ]; then
  echo "test: $SHARED is missing or incomplete (testdata/, bluez-vm/): put the shared folder beside the clone" \
    "(or set SYSTOLE_SHARED to it) and run again" >&2
  exit 1
fi

scripts/install-deps.sh

echo "== format (.swift-format)"
swift format lint --strict -r Sources Tests Fuzz Benchmarks Package.swift

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== tests"
swift test --skip-build

echo "== the real Bluetooth stack (bluetoothd 5.66 in a VM), short form, and systole-sim held to it"
scripts/test-real-bluez.sh --short

echo "== smoke: Benchmarks/ingest.sh (5 sensors, 4 s, with bleak) and scripts/torture.sh (3 workouts, disk full)"
Benchmarks/ingest.sh --debug --check --sensors 5 --rate 4 --seconds 4 --warmup 2
scripts/torture.sh --debug --workouts 3
if [ "$(id -u)" = 0 ]; then
  scripts/torture.sh --debug --disk-full
else
  echo "NOT RUN: torture.sh --disk-full mounts a tmpfs and needs root; run it as root to check the full-disk case"
fi

fuzz_seconds=${SYSTOLE_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" != 0 ]; then
  echo "== fuzz the decoder for ${fuzz_seconds}s"
  scripts/fuzz-decoder.sh "$fuzz_seconds"
fi
