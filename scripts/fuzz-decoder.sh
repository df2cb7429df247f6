#!/usr/bin/env bash
# Fuzz the Heart Rate Measurement decoder (and the other HeartRateProfile decoders) with libFuzzer.
#
# usage: scripts/fuzz-decoder.sh [seconds]      (default 60)
#
# Builds Fuzz/DecoderFuzzer.swift with the HeartRateProfile sources under -sanitize=fuzzer,address, seeds the
# corpus with every payload in the project's vectors (Tests/HeartRateProfileTests/Resources/hrm-vectors.json), and
# runs for the given time on one core.
# Exits non-zero when libFuzzer finds a crash, an out-of-bounds read or a broken invariant; the input that did
# it is left in Fuzz/out/ as crash-*.
set -euo pipefail
# A Swift runtime trap should end the run with its own message, not with the backtracer under ASan.
export SWIFT_BACKTRACE=enable=no
seconds=${1:-60}
case "$seconds" in ''|*[!0-9]*) echo "fuzz-decoder: seconds must be a whole number, got '$seconds'" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/Fuzz/out"
mkdir -p "$out/corpus"
binary="$out/decoder-fuzzer"

# ld.gold prints a warning per ASan helper symbol; keep the build log and show it only when the build fails.
if ! swiftc -sanitize=fuzzer,address -parse-as-library -module-name HeartRateProfileFuzz -O -g \
  "$root"/Sources/HeartRateProfile/*.swift "$root/Fuzz/DecoderFuzzer.swift" -o "$binary" >"$out/build.log" 2>&1; then
  grep -v 'Cannot export local symbol' "$out/build.log" >&2
  echo "fuzz-decoder: building the fuzzer failed (full log: $out/build.log)" >&2
  exit 1
fi

# The seeds are the tests' vectors; without them the fuzzer would start blind, so their absence is an error.
vectors="$root/Tests/HeartRateProfileTests/Resources/hrm-vectors.json"
python3 - "$vectors" "$out/corpus" <<'PY' || { echo "fuzz-decoder: cannot seed the corpus from $vectors" >&2; exit 1; }
import json, sys, pathlib
data = json.load(open(sys.argv[1]))
corpus = pathlib.Path(sys.argv[2])
for section in ("valid", "truncated", "invalid"):
    for i, vector in enumerate(data[section]):
        (corpus / f"seed-{section}-{i}").write_bytes(bytes.fromhex(vector["hex"]))
PY

cd "$out"
echo "fuzz-decoder: running for ${seconds}s"
status=0
"$binary" -max_total_time="$seconds" -max_len=64 -print_final_stats=1 corpus >"$out/last-run.log" 2>&1 || status=$?
grep -E '^(stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Fatal error)|deadly signal' \
  "$out/last-run.log" || true
if [ "$status" -ne 0 ]; then
  echo "fuzz-decoder: libFuzzer stopped with status $status; see $out/last-run.log and the crash-* file in $out" >&2
  exit 1
fi
echo "fuzz-decoder: no crash in ${seconds}s"
