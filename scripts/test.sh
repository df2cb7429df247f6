#!/usr/bin/env bash
# The test command (the README's second command; .ci/run runs exactly this).
# Installs what is missing, checks the systemd unit and the formatting, builds every target with warnings as errors,
# runs the whole test suite (the decoder's vectors are in Tests/HeartRateProfileTests/Resources),
# runs the short form of the real-stack test (scripts/test-real-bluez.sh --short: the real systoled against bluetoothd
# and BlueZ's example Heart Rate peripheral in a VM, then the same steps against systole-sim, compared on D-Bus),
# installs the Debian package (of the debug build) under systemd in that VM and checks it (scripts/test-package.sh
# --short), cuts the power of a VM twice mid-workout and checks what the store kept (scripts/power-cut.sh), runs
# short smoke versions of the benchmark, torture and radio-fuzz scripts (so they cannot rot; their figures are
# not the product's: debug build, few sensors, few seconds), then fuzzes the decoders briefly (Heart Rate, Polar's
# PMD, the FIT and TCX files an import reads: $SYSTOLE_FUZZ_SECONDS each, default 30; 0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

echo "== the systemd unit (systemd-analyze verify; security exposure at most 0.5)"
scripts/check-unit.sh

echo "== format (.swift-format)"
swift format lint --strict -r Sources Tests Fuzz Benchmarks Package.swift

echo "== build (warnings are errors)"
swift build --build-tests -Xswiftc -warnings-as-errors

echo "== tests"
# The replication tests (three receivers with ten straps each, and PostgreSQL) run apart: beside them, on two cores,
# the tests that time the radio and the daemon would measure the load instead.
swift test --skip-build --skip ReplicationTests
echo "== the replication tests (PostgreSQL)"
swift test --skip-build --filter ReplicationTests

echo "== the real Bluetooth stack (bluetoothd 5.66 in a VM), short form, and systole-sim held to it"
scripts/test-real-bluez.sh --short

echo "== the Debian package under systemd (in the VM, systemd as PID 1), short form"
scripts/test-package.sh --short

echo "== pull the plug: scripts/power-cut.sh (the VM's power cut mid-workout twice: sync = second, then commit)"
scripts/power-cut.sh --cuts 2 --sync both

echo "== smoke: Benchmarks/ingest.sh (5 sensors, 4 s, with bleak; --notify; --outputs; --replication) and scripts/torture.sh (3 workouts, disk full)"
Benchmarks/ingest.sh --debug --check --sensors 5 --rate 4 --seconds 4 --warmup 2
Benchmarks/ingest.sh --notify --debug --check --sensors 5 --rate 4 --seconds 4 --warmup 2
Benchmarks/ingest.sh --outputs --debug --check --sensors 5 --rate 4 --seconds 4 --warmup 2
Benchmarks/ingest.sh --replication --debug --check --sensors 5 --rate 4 --seconds 4 --backlog 5
scripts/torture.sh --debug --workouts 3
if [ "$(id -u)" = 0 ]; then
  scripts/torture.sh --debug --disk-full
else
  echo "NOT RUN: torture.sh --disk-full mounts a tmpfs and needs root; run it as root to check the full-disk case"
fi

echo "== hostile devices beside an honest strap: scripts/radio-fuzz.sh (30 s, 3 devices, a fixed seed)"
scripts/radio-fuzz.sh --seconds 30 --seed 2026

fuzz_seconds=${SYSTOLE_FUZZ_SECONDS:-30}
if [ "$fuzz_seconds" != 0 ]; then
  echo "== fuzz the decoders (Heart Rate, PMD, FIT and TCX files) for ${fuzz_seconds}s each"
  scripts/fuzz-decoder.sh "$fuzz_seconds"
fi
