#!/usr/bin/env bash
# The test command (the README's second command; .ci/run runs exactly this).
# Installs what is missing, checks formatting, builds every target with warnings as errors, runs the whole test suite, then fuzzes
# the payload decoder briefly ($SYSTOLE_FUZZ_SECONDS, default 30; 0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== format (.swift-format)"
swift format lint --strict -r Sources Tests Fuzz Benchmarks Package.swift

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== tests"
swift test --skip-build

fuzz_seconds=${SYSTOLE_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" != 0 ]; then
  echo "== fuzz the decoder for ${fuzz_seconds}s"
  scripts/fuzz-decoder.sh "$fuzz_seconds"
fi
