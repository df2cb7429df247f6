#!/usr/bin/env bash
# The test command (the README's second command; .ci/run runs exactly this).
# Installs what is missing, checks formatting, builds every target with warnings as errors, runs the whole test suite,
# runs the short form of the real-stack test (scripts/test-real-bluez.sh --short: the real systoled against bluetoothd
# and BlueZ's example Heart Rate peripheral in a VM, then the same steps against systole-sim, compared on D-Bus), then
# fuzzes the payload decoder briefly ($SYSTOLE_FUZZ_SECONDS, default 30; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== format (.swift-format)"
swift format lint --strict -r Sources Tests Fuzz Benchmarks Package.swift

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== tests"
swift test --skip-build

echo "== the real Bluetooth stack (bluetoothd 5.66 in a VM), short form, and systole-sim held to it"
scripts/test-real-bluez.sh --short

fuzz_seconds=${SYSTOLE_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" != 0 ]; then
  echo "== fuzz the decoder for ${fuzz_seconds}s"
  scripts/fuzz-decoder.sh "$fuzz_seconds"
fi
