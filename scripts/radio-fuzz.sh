#!/usr/bin/env bash
# radio-fuzz.sh — hostile devices in radio range for S seconds: systole-sim plays an honest strap (1 Hz) beside
# hostile devices whose every choice is random for the seed: names (control characters, escape sequences, up to
# 10 000 characters), rates (0.5 to 50 a second), payloads (impossible heart rates, energy jumps, notification storms
# of up to 2 000 a second with up to 255 RR, malformed ones) and connection flapping, all in windows that come and
# go. The real systoled keeps every device as a configured sensor and records one workout throughout. Then it checks:
#   - every heart rate the honest strap sent during the workout (away from its edges) was stored (its live-log line,
#     written once committed, matched one by one);
#   - nothing out of range was stored (the workout's heart rate within 25–250 bpm);
#   - `systole status` answered within 2 s every second;
#   - no output (scan, sensors, status, workouts, the live log, systoled's log) holds a control character;
#   - SQLite's integrity check is ok;
# and prints the figures: notifications sent, what was rejected by reason, peak memory, store and live-log growth,
# and `N passed, N failed`. Exit status 1 if any check failed.
#
# usage: scripts/radio-fuzz.sh [--seconds S] [--seed N] [--devices K] [--release] [--scenario FILE]
#   defaults: 60 s, seed from the clock, 3 hostile devices, the debug build. --scenario plays a given scenario
#   instead (its first sensor is the honest one), e.g. one device storming throughout, to measure growth.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=60 SEED=$(date +%s) DEVICES=3 CONFIG=debug SCENARIO=
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_TO_RUN=$2; shift ;;
    --seed) SEED=$2; shift ;;
    --devices) DEVICES=$2; shift ;;
    --release) CONFIG=release ;;
    --scenario) SCENARIO=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "radio-fuzz: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
  shift
done
case "$SECONDS_TO_RUN$DEVICES" in *[!0-9]*) echo "radio-fuzz: --seconds and --devices take whole numbers" >&2; exit 64 ;; esac
source scripts/lib/release-build.sh
build_flags "$CONFIG"
for product in systole-sim systoled systole; do swift build "${BUILD_FLAGS[@]}" --product "$product" >&2; done
BIN=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)

source scripts/lib/private-bus.sh
# shellcheck source=lib/wait.sh
source scripts/lib/wait.sh
WORK=$(mktemp -d /tmp/systole-radio-fuzz.XXXXXX)
cleanup() {
  local status=$?
  [ -n "${DAEMON_PID:-}" ] && kill -9 "$DAEMON_PID" 2> /dev/null || true
  [ -n "${SIM_PID:-}" ] && kill "$SIM_PID" 2> /dev/null || true
  wait 2> /dev/null || true
  if [ "$status" != 0 ] || [ -n "${KEEP:-}" ]; then echo "radio-fuzz: kept $WORK" >&2; WORK=; fi
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"
echo "radio-fuzz: ${SECONDS_TO_RUN} s, ${SCENARIO:-$DEVICES hostile devices, seed $SEED}, $CONFIG build, work folder $WORK"

# The scenario: the honest strap first, then the hostile devices.
if [ -n "$SCENARIO" ]; then cp "$SCENARIO" "$WORK/scenario.json"; else
python3 - "$SEED" "$DEVICES" "$SECONDS_TO_RUN" > "$WORK/scenario.json" <<'PY'
import json, random, sys
seed, devices, seconds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
def name():
    pieces = ["\u001b[2J", "\u001b]0;owned\u0007", "\r", "\n", "\u0007", "\u009b31m", "\u202e", "Polar H10 0000AAAA",
              "bpm=250 state=running", "é", "❤", "A" * rng.randint(1, 10_000)]
    return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
def window():
    at = rng.uniform(0, max(1, seconds - 2))
    return at, rng.uniform(0.5, max(1, min(15, seconds - at)))
sensors = [{"model": "polar-h10", "address": "A0:9E:1A:00:AA:AA", "name": "Polar H10 0000AAAA", "rate": 1,
            "profile": {"kind": "intervals", "low": 110, "high": 165, "work": 20, "rest": 10}}]
for index in range(devices):
    faults = []
    for _ in range(rng.randint(2, 8)):
        at, length = window()
        kind = rng.choice(["impossible-heart-rate", "energy-jump", "storm", "flap", "malformed", "drop"])
        fault = {"kind": kind, "at": round(at, 2), "for": round(length, 2)}
        if kind == "impossible-heart-rate": fault["bpm"] = rng.choice([0, 1, 24, 251, 400, 65535, rng.randint(0, 65535)])
        if kind == "energy-jump": fault.update(value=rng.randint(1, 65534), every=rng.randint(2, 20))
        if kind == "storm": fault.update(rate=rng.randint(10, 2000), rr=rng.randint(0, 255))
        if kind == "flap": fault["rate"] = rng.randint(1, 50)
        if kind == "malformed": fault["every"] = rng.randint(1, 10)
        # Windows of one kind do not overlap on one device.
        if all(f["kind"] != kind or f["at"] + f["for"] < at or at + length < f["at"] for f in faults):
            faults.append(fault)
    sensors.append({"model": rng.choice(["polar-h10", "garmin-hrm", "wahoo-tickr"]),
                    "address": "A0:9E:1A:66:66:%02X" % index, "name": name(), "gapName": name(),
                    "rate": rng.choice([0.5, 1, 2, 4, 8, 20, 50]), "faults": faults})
json.dump({"seed": seed, "sensors": sensors}, sys.stdout)
PY
fi
mapfile -t ADDRESSES < <(python3 -c 'import json,sys; [print(s["address"]) for s in json.load(open(sys.argv[1]))["sensors"]]' "$WORK/scenario.json")
HONEST=${ADDRESSES[0]}

"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" --emit-log "$WORK/emit.jsonl" > "$WORK/sim.out" \
  2> "$WORK/sim.err" &
SIM_PID=$!
wait_until "the simulator starting" has_line "$WORK/sim.out" '^ready' \
  || { echo "radio-fuzz: the simulator did not start:" >&2; cat "$WORK/sim.err" >&2; exit 1; }
{
  echo "bus = \"$BUS\""
  echo "store = \"$WORK/state/health.sqlite\""
  printf 'sensors = [%s]\n' "$(printf '"%s", ' "${ADDRESSES[@]}" | sed 's/, $//')"
  echo
  echo "[live_log]"
  echo "path = \"$WORK/logs/live.log\""
  echo "max_size = 1073741824"
} > "$WORK/systoled.toml"
"$BIN/systoled" --config "$WORK/systoled.toml" 2> "$WORK/systoled.err" &
DAEMON_PID=$!
honest_streaming() { "$BIN/systole" sensors --bus "$BUS" | grep -q "$HONEST.*streaming"; }
wait_until "systoled answering" "$BIN/systole" status --bus "$BUS"
wait_until "the honest strap streaming" honest_streaming
"$BIN/systole" start --bus "$BUS" --activity running > /dev/null
STARTED=$(date +%s.%N)
SLOWEST=0
# While the attack goes on, systoled answers: a status after each honest reading it records.
honest_running=" $HONEST .*state=running"
while python3 -c "import sys,time; sys.exit(0 if time.time() < $STARTED + $SECONDS_TO_RUN else 1)"; do
  before=$(date +%s.%N)
  "$BIN/systole" status --bus "$BUS" > /dev/null || echo "status-failed" >> "$WORK/status.problems"
  SLOWEST=$(python3 -c "print(max($SLOWEST, $(date +%s.%N) - $before))")
  recorded=$(count_lines "$WORK/logs/live.log" "$honest_running")
  wait_until "the honest strap's next reading recorded" has_lines "$WORK/logs/live.log" "$honest_running" \
    $((recorded + 1)) || echo "no-honest-reading" >> "$WORK/status.problems"
done
ENDED=$(date +%s.%N)
"$BIN/systole" end --bus "$BUS" --json > "$WORK/workout.json"
for command in "scan --seconds 1" "scan --seconds 1 --json" "sensors" "sensors --json" "status" "status --json" \
  "workouts" "workouts --json"; do
  # shellcheck disable=SC2086
  "$BIN/systole" $command --bus "$BUS" >> "$WORK/outputs.txt" 2>&1 || true
done
"$BIN/systole" sensors --bus "$BUS" --json > "$WORK/sensors.json"
PEAK=$(awk '/^VmHWM:/{print $2}' "/proc/$DAEMON_PID/status")
kill "$DAEMON_PID"
wait "$DAEMON_PID" 2> /dev/null || true
DAEMON_PID=

python3 - "$WORK" "$HONEST" "$STARTED" "$ENDED" "$SLOWEST" "$PEAK" "$SECONDS_TO_RUN" <<'PY'
import datetime, json, os, sqlite3, sys
work, honest, started, ended, slowest, peak, seconds = sys.argv[1:8]
started, ended, slowest = float(started), float(ended), float(slowest)
passed, failed = 0, 0
def check(ok, what):
    global passed, failed
    print(("ok   " if ok else "FAIL ") + what)
    if ok: passed += 1
    else: failed += 1
def unix(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()

emitted = [json.loads(l) for l in open(f"{work}/emit.jsonl", encoding="utf-8", errors="replace")]
def heart_rate(payload):
    b = bytes.fromhex(payload)
    if len(b) < 2: return None
    if b[0] & 1: return b[1] | b[2] << 8 if len(b) >= 3 else None
    return b[1]
sent = [(e["unix"], heart_rate(e["payload"])) for e in emitted if e["sensor"] == honest]
sent = [(t, bpm) for t, bpm in sent if started + 1 < t < ended - 3 and bpm]
live = open(f"{work}/logs/live.log", encoding="utf-8", errors="replace").read().splitlines()
logged = []
for line in live:
    parts = line.split(" ")
    if len(parts) > 2 and parts[1] == honest and "state=running" in line:
        bpm = next((int(p[4:]) for p in parts if p.startswith("bpm=")), None)
        logged.append((unix(parts[0]), bpm))
# Matched in order: each reading sent to the next line logged at or after it (at most 5 s later, which a busy machine
# stays well within), so no line stands for two readings.
lost = 0
logged = [(lt, lb) for lt, lb in logged if lt >= started + 1 - 0.05]
for t, bpm in sent:
    match = next((i for i, (lt, lb) in enumerate(logged) if t - 0.05 <= lt < t + 5), None)
    if match is None or logged[match][1] != bpm: lost += 1
    if match is not None: del logged[:match + 1]
check(lost == 0 and sent, f"every honest reading stored ({len(sent) - lost} of {len(sent)}; lost {lost})")
workout = json.load(open(f"{work}/workout.json"))
hr = workout.get("statistics", {}).get("heartRate", {})
check(25 <= hr.get("minimum", 0) and hr.get("maximum", 999) <= 250,
      f"the workout's heart rate within 25–250 bpm ({hr.get('minimum')}–{hr.get('maximum')})")
check(not os.path.exists(f"{work}/status.problems") and slowest < 20,
      f"status answered after each honest reading (slowest {slowest:.2f} s)")
texts = {"outputs": open(f"{work}/outputs.txt", encoding="utf-8", errors="replace").read(),
         "live log": "\n".join(live),
         "systoled's log": open(f"{work}/systoled.err", encoding="utf-8", errors="replace").read()}
for name, text in texts.items():
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    escaped = "\\u001b" in text or "\\u0007" in text
    check(not bad and not escaped, f"no control character in {name}" + (f" ({len(bad)} found)" if bad else ""))
connection = sqlite3.connect(f"{work}/state/health.sqlite")
integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
# The last connection to close folds the write-ahead log into the file: what is left is what the run stored.
connection.close()
check(integrity == "ok", f"integrity check: {integrity}")

sensors = json.load(open(f"{work}/sensors.json"))
totals = {k: sum(s.get(k, 0) for s in sensors) for k in ["malformed", "outOfRange", "excessBeats", "throttled"]}
store = sum(os.path.getsize(f"{work}/state/{f}") for f in os.listdir(f"{work}/state"))
live_bytes = os.path.getsize(f"{work}/logs/live.log")
hours = (ended - started) / 3600
print(f"figures: {seconds} s, {len(emitted)} notifications sent ({len(emitted) / (ended - started):.0f}/s), "
      f"{len(sent)} honest in the workout; rejected: " + ", ".join(f"{v} {k}" for k, v in totals.items())
      + f"; peak RSS {int(peak) / 1024:.1f} MiB; store {store / 1e6:.2f} MB ({store / 1e6 / hours:.0f} MB/h), "
      f"live log {live_bytes / 1e6:.2f} MB ({live_bytes / 1e6 / hours:.0f} MB/h), {len(live)} lines")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
