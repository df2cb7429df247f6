#!/usr/bin/env bash
# Fuzz the decoders of what arrives from outside with libFuzzer: the Heart Rate Measurement decoder (and the other
# HeartRateProfile decoders), Polar's PMD decoders (frames, control-point answers, settings), and the activity files
# `systole import` reads (FIT and TCX).
#
# usage: scripts/fuzz-decoder.sh [seconds]      (default 60, for each)
#
# Builds Fuzz/DecoderFuzzer.swift with the HeartRateProfile sources, Fuzz/PMDFuzzer.swift with the
# PolarMeasurementData sources and Fuzz/ActivityFileFuzzer.swift with those of FITFormat, SafeText, WorkoutKit and
# WorkoutImport under -sanitize=fuzzer,address, seeds the radio's corpora with the project's vectors
# (Tests/HeartRateProfileTests/Resources/hrm-vectors.json, Tests/PolarMeasurementDataTests/Resources/pmd-vectors.json)
# and the files' with a small FIT activity and a TCX document, and runs each for the given time on one core.
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

# build NAME SOURCE_DIR FUZZER: the fuzzer and the sources, in one module, under ASan and libFuzzer.
build() {
  # ld.gold prints a warning per ASan helper symbol; keep the build log and show it only when the build fails.
  if ! swiftc -sanitize=fuzzer,address -parse-as-library -module-name "$(basename "$2")Fuzz" -O -g \
    "$2"/*.swift "$root/Fuzz/$3" -o "$out/$1-fuzzer" >"$out/$1-build.log" 2>&1; then
    grep -v 'Cannot export local symbol' "$out/$1-build.log" >&2
    echo "fuzz-decoder: building the $1 fuzzer failed (full log: $out/$1-build.log)" >&2
    exit 1
  fi
}
build heart-rate "$root/Sources/HeartRateProfile" DecoderFuzzer.swift
build pmd "$root/Sources/PolarMeasurementData" PMDFuzzer.swift
# The activity-file readers span three modules: their sources go into one, the imports between them dropped.
activity_sources="$out/ActivitySources"
rm -rf "$activity_sources"
mkdir -p "$activity_sources"
for module in FITFormat SafeText WorkoutKit WorkoutImport; do
  for file in "$root/Sources/$module"/*.swift; do
    grep -v -E '^import (FITFormat|SafeText|WorkoutKit)$' "$file" >"$activity_sources/$module-$(basename "$file")"
  done
done
build activity-file "$activity_sources" ActivityFileFuzzer.swift

# The seeds are the tests' vectors; without them the fuzzer would start blind, so their absence is an error.
vectors="$root/Tests/HeartRateProfileTests/Resources/hrm-vectors.json"
pmd_vectors="$root/Tests/PolarMeasurementDataTests/Resources/pmd-vectors.json"
mkdir -p "$out/pmd-corpus" "$out/activity-corpus"
python3 - "$vectors" "$out/corpus" "$pmd_vectors" "$out/pmd-corpus" "$out/activity-corpus" <<'PY' || { echo "fuzz-decoder: cannot seed the corpora from $vectors and $pmd_vectors" >&2; exit 1; }
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
# A small FIT activity (file ID, two heart-rate records, a session), whole and as its records alone, and a TCX.
activity = pathlib.Path(sys.argv[5])
def crc(data, value=0):
    table = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
             0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
    for byte in data:
        for nibble in (byte & 0xF, byte >> 4):
            tmp = table[value & 0xF]
            value = ((value >> 4) & 0x0FFF) ^ tmp ^ table[nibble]
    return value
start = (1_790_000_000 - 631_065_600).to_bytes(4, "little")
later = (1_790_000_060 - 631_065_600).to_bytes(4, "little")
records = bytes([0x40, 0, 0, 0, 0, 1, 0, 1, 0x00, 0, 4])
records += bytes([0x41, 0, 0, 20, 0, 2, 253, 4, 0x86, 3, 1, 0x02, 1]) + start + bytes([90])
records += bytes([1]) + later + bytes([91])
records += bytes([0x42, 0, 0, 18, 0, 2, 253, 4, 0x86, 2, 4, 0x86, 2]) + later + start
header = bytes([12, 0x20, 0x52, 0x54]) + len(records).to_bytes(4, "little") + b".FIT"
whole = header + records
(activity / "seed-fit").write_bytes(whole + crc(whole).to_bytes(2, "little"))
(activity / "seed-fit-records").write_bytes(records)
(activity / "seed-tcx").write_bytes(
    b'<?xml version="1.0"?><TrainingCenterDatabase><Activities><Activity Sport="Running">'
    b'<Id>2026-09-21T10:00:00Z</Id><Lap StartTime="2026-09-21T10:00:00Z"><TotalTimeSeconds>60</TotalTimeSeconds>'
    b'<Calories>9</Calories><Track><Trackpoint><Time>2026-09-21T10:00:01Z</Time><HeartRateBpm><Value>90</Value>'
    b'</HeartRateBpm></Trackpoint></Track></Lap><Creator><Name>Edge &amp; strap</Name></Creator></Activity>'
    b'</Activities></TrainingCenterDatabase>')
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
run activity-file activity-corpus 4096
echo "fuzz-decoder: no crash in ${seconds}s of each fuzzer"
