#!/usr/bin/env bash
# Fuzz the radio's decoders with libFuzzer: the Heart Rate Measurement decoder (and the other HeartRateProfile
# decoders), then Polar's PMD decoders (frames, control-point answers, settings).
#
# usage: scripts/fuzz-decoder.sh [seconds]      (default 60, for each of the two)
#
# Builds Fuzz/DecoderFuzzer.swift with the HeartRateProfile sources and Fuzz/PMDFuzzer.swift with the
# PolarMeasurementData sources under -sanitize=fuzzer,address, seeds each corpus with the project's vectors
# (Tests/HeartRateProfileTests/Resources/hrm-vectors.json, Tests/PolarMeasurementDataTests/Resources/pmd-vectors.json),
# and runs each for the given time on one core.
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

# build NAME MODULE_DIR FUZZER: the fuzzer and the module's sources, in one module, under ASan and libFuzzer.
build() {
  # ld.gold prints a warning per ASan helper symbol; keep the build log and show it only when the build fails.
  if ! swiftc -sanitize=fuzzer,address -parse-as-library -module-name "${2}Fuzz" -O -g \
    "$root/Sources/$2"/*.swift "$root/Fuzz/$3" -o "$out/$1-fuzzer" >"$out/$1-build.log" 2>&1; then
    grep -v 'Cannot export local symbol' "$out/$1-build.log" >&2
    echo "fuzz-decoder: building the $1 fuzzer failed (full log: $out/$1-build.log)" >&2
    exit 1
  fi
}
build heart-rate HeartRateProfile DecoderFuzzer.swift
build pmd PolarMeasurementData PMDFuzzer.swift

# The seeds are the tests' vectors; without them the fuzzer would start blind, so their absence is an error.
vectors="$root/Tests/HeartRateProfileTests/Resources/hrm-vectors.json"
pmd_vectors="$root/Tests/PolarMeasurementDataTests/Resources/pmd-vectors.json"
mkdir -p "$out/pmd-corpus"
python3 - "$vectors" "$out/corpus" "$pmd_vectors" "$out/pmd-corpus" <<'PY' || { echo "fuzz-decoder: cannot seed the corpora from $vectors and $pmd_vectors" >&2; exit 1; }
import json, sys, pathlib
data = json.load(open(sys.argv[1]))
corpus = pathlib.Path(sys.argv[2])
for section in ("valid", "truncated", "invalid"):
    for i, vector in enumerate(data[section]):
        (corpus / f"seed-{section}-{i}").write_bytes(bytes.fromhex(vector["hex"]))
pmd = json.load(open(sys.argv[3]))
pmd_corpus = pathlib.Path(sys.argv[4])
for section in ("frames", "controlPoint", "settings"):
    for name, hex in pmd[section].items():
        (pmd_corpus / f"seed-{name}").write_bytes(bytes.fromhex(hex))
PY

# run NAME CORPUS MAX_LEN
run() {
  echo "fuzz-decoder: running the $1 fuzzer for ${seconds}s"
  local status=0
  (cd "$out" && "$out/$1-fuzzer" -max_total_time="$seconds" -max_len="$3" -print_final_stats=1 "$2" >"$out/$1-last-run.log" 2>&1) || status=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY|Fatal error)|deadly signal' \
    "$out/$1-last-run.log" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz-decoder: libFuzzer stopped with status $status; see $out/$1-last-run.log and the crash-* file in $out" >&2
    exit 1
  fi
}
run heart-rate corpus 64
# A PMD frame may be as long as an attribute (512 bytes); a little longer checks the refusal.
run pmd pmd-corpus 600
echo "fuzz-decoder: no crash in ${seconds}s of each fuzzer"
