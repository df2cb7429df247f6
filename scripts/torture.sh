#!/usr/bin/env bash
# torture.sh — K workouts against systole-sim on a private bus; in each, systoled is killed at a random moment
# (SIGKILL, or SIGTERM in about one run in five) and started again, and the workout goes on. Sensor dropouts and
# bluetoothd restarts (SIGUSR1 to the simulator) are injected at random too. At the end it checks that:
#   - every workout was recovered and finished (listed by `systole workouts`, with an end);
#   - every reading the live log showed as `running` before a kill is in the store, at its time;
#   - every time systoled was down during a workout is marked as a gap;
#   - SQLite's `PRAGMA integrity_check` is ok;
# and prints `N passed, N failed` with every violation. Exit status 1 if any failed.
#
# --disk-full instead runs one workout with the store on a 4 MiB tmpfs (needs root, for mount), fills it, frees it
# again, and checks that the daemon said the disk is full and named the file, that the workout kept running and was
# saved once space returned, and that the store is intact. It reports how many readings the full disk cost.
#
# usage: scripts/torture.sh [--workouts K] [--seed N] [--debug] [--disk-full]
#   defaults: 50 workouts, seed from the clock; --debug uses the debug build (faster to build, for smoke runs).
set -euo pipefail

cd "$(dirname "$0")/.."
WORKOUTS=50 SEED=$(date +%s) CONFIG=release DISK_FULL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --workouts) WORKOUTS=$2; shift ;;
    --seed) SEED=$2; shift ;;
    --debug) CONFIG=debug ;;
    --disk-full) DISK_FULL=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "torture: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
  shift
done
source scripts/lib/release-build.sh
build_flags "$CONFIG"
for product in systole-sim systoled systole store-probe; do swift build "${BUILD_FLAGS[@]}" --product "$product" >&2; done
BIN=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)

source scripts/lib/private-bus.sh
# shellcheck source=lib/wait.sh
source scripts/lib/wait.sh
WORK=$(mktemp -d /tmp/systole-torture.XXXXXX)
cleanup() {
  local status=$?
  [ -n "${DAEMON_PID:-}" ] && kill -9 "$DAEMON_PID" 2> /dev/null || true
  [ -n "${SIM_PID:-}" ] && kill "$SIM_PID" 2> /dev/null || true
  wait 2> /dev/null || true
  mountpoint -q "$WORK/small" 2> /dev/null && umount "$WORK/small"
  # A failed run keeps its folder (systoled.err, live.log, events.jsonl, the store) for a look.
  if [ "$status" != 0 ]; then echo "torture: kept $WORK" >&2; WORK=; fi
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"
export SYSTOLE_BUS=$BUS
RANDOM=$SEED

if [ "$DISK_FULL" = 1 ]; then
  mkdir -p "$WORK/small"
  mount -t tmpfs -o size=4M,mode=0750 tmpfs "$WORK/small" || { echo "torture: FAIL: cannot mount a tmpfs (root needed)" >&2; exit 1; }
  "$BIN/systole-sim" --bus "$BUS" --rate 4 > "$WORK/sim.out" &
  SIM_PID=$!
  wait_until "the simulator starting" has_line "$WORK/sim.out" '^ready'
  printf 'bus = "%s"\nstore = "%s/small/health.sqlite"\nsensors = ["any"]\n\n[live_log]\npath = "%s/live.log"\n' \
    "$BUS" "$WORK" "$WORK" > "$WORK/systoled.toml"
  "$BIN/systoled" --config "$WORK/systoled.toml" 2> "$WORK/systoled.err" &
  DAEMON_PID=$!
  wait_until "systoled answering" "$BIN/systole" status
  "$BIN/systole" start --activity running > /dev/null
  running="bpm=.*state=running"
  wait_until "readings recorded" has_lines "$WORK/live.log" "$running" 8
  full_at=$(date +%s.%N)
  dd if=/dev/zero of="$WORK/small/filler" bs=64k 2> /dev/null || true
  store_full() { "$BIN/systole" status --json | grep -q 'is full'; }
  wait_until "systoled saying the disk is full" store_full || true
  "$BIN/systole" status --json > "$WORK/status-full.json"
  rm "$WORK/small/filler"
  freed_at=$(date +%s.%N)
  store_fine() { ! "$BIN/systole" status --json | grep -q 'storeError'; }
  wait_until "systoled storing again" store_fine || true
  recorded=$(count_lines "$WORK/live.log" "$running")
  wait_until "readings recorded after the disk was freed" has_lines "$WORK/live.log" "$running" $((recorded + 4)) || true
  "$BIN/systole" end --json > "$WORK/ended.json" 2> "$WORK/end.err" || true
  "$BIN/systole" workouts list --json > "$WORK/workouts.json"
  kill "$DAEMON_PID"; wait "$DAEMON_PID" 2> /dev/null || true
  DAEMON_PID=
  # What the store holds, through its own queries (the tables are the store's business).
  "$BIN/store-probe" "$WORK/small/health.sqlite" readings > "$WORK/readings.txt"
  python3 - "$WORK" "$full_at" "$freed_at" <<'PY'
import datetime, json, os, sqlite3, sys
work, full_at, freed_at = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
problems = []
errors = open(f"{work}/systoled.err").read()
if f"the disk holding {work}/small/health.sqlite is full" not in errors:
    problems.append("systoled did not say the disk holding the store is full")
status = json.load(open(f"{work}/status-full.json"))
if status.get("state") != "running":
    problems.append(f"the workout was {status.get('state')} while the disk was full, not running")
if "is full" not in (status.get("workout") or {}).get("storeError", ""):
    problems.append("systole status did not say the store is refusing readings because the disk is full")
ended = json.load(open(f"{work}/ended.json")) if open(f"{work}/ended.json").read().strip() else {}
if not ended or ended.get("id") not in {w["id"] for w in json.load(open(f"{work}/workouts.json"))}:
    problems.append(f"the workout was not saved once space returned: {open(work + '/end.err').read().strip()}")
db = sqlite3.connect(f"file:{work}/small/health.sqlite?mode=ro", uri=True)
if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
    problems.append("integrity_check failed")
stored = {round(float(line), 3) for line in open(f"{work}/readings.txt") if line.strip()}
def unix(t):
    return datetime.datetime.strptime(t[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
logged = [unix(l) for l in open(f"{work}/live.log") if " bpm=" in l and "state=running" in l]
lost = [t for t in logged if not any(abs(t - s) < 0.0015 for s in stored)]
# A reading received just before the disk filled is committed a moment later (with the next batch), when it is
# already full.
outside = [t for t in lost if not full_at - 0.1 <= t <= freed_at + 1]
if outside:
    problems.append(f"{len(outside)} readings outside the full-disk window are missing from the store: "
                    + ", ".join(f"{t - full_at:+.3f} s from filling ({t - freed_at:+.3f} s from freeing)" for t in outside))
print(f"disk full: {len(logged)} readings logged while running, {len(lost)} not stored, all while the disk was full"
      if not outside else "disk full: readings were lost outside the full-disk window")
print("disk full: passed" if not problems else "disk full: FAILED\n  " + "\n  ".join(problems))
sys.exit(1 if problems else 0)
PY
  exit $?
fi
echo "torture: $WORKOUTS workouts, seed $SEED, $CONFIG build, work folder $WORK"

# Two straps at 4 Hz, each out of range now and then on the simulator's own clock.
cat > "$WORK/scenario.json" <<JSON
{"seed": $SEED, "sensors": [
  {"model": "polar-h10", "rate": 4, "faults": [{"kind": "disconnect", "at": 20, "for": 3},
                                                {"kind": "disconnect", "at": 95, "for": 4}]},
  {"model": "garmin-hrm", "rate": 4, "faults": [{"kind": "disconnect", "at": 50, "for": 5}]}]}
JSON
"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" > "$WORK/sim.out" &
SIM_PID=$!
wait_until "the simulator starting" has_line "$WORK/sim.out" '^ready'

cat > "$WORK/systoled.toml" <<TOML
bus = "$BUS"
store = "$WORK/health.sqlite"
sensors = ["any"]

[live_log]
path = "$WORK/live.log"
TOML
start_daemon() {
  "$BIN/systoled" --config "$WORK/systoled.toml" 2>> "$WORK/systoled.err" &
  DAEMON_PID=$!
  wait_until "systoled answering" "$BIN/systole" status && return 0
  echo "torture: systoled did not come up; its log: $WORK/systoled.err" >&2
  return 1
}
pause_for() { sleep "$(printf '%d.%02d' $(( $1 + RANDOM % $2 )) $(( RANDOM % 100 )))"; }
start_daemon

# events.jsonl: what was done when, for the checks.
for i in $(seq "$WORKOUTS"); do
  if ! "$BIN/systole" start --activity running > /dev/null 2> "$WORK/start.err"; then
    echo "{\"workout\": $i, \"error\": \"start failed: $(tr -d '"\n' < "$WORK/start.err")\"}" >> "$WORK/events.jsonl"
    continue
  fi
  id=$("$BIN/systole" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["workout"]["id"])')
  pause_for 1 4
  [ $(( RANDOM % 4 )) = 0 ] && { kill -USR1 "$SIM_PID"; echo "{\"workout\": \"$id\", \"bluetoothdRestart\": $(date +%s.%N)}" >> "$WORK/events.jsonl"; }
  pause_for 0 3
  signal=KILL
  [ $(( RANDOM % 5 )) = 0 ] && signal=TERM
  at=$(date +%s.%N)
  kill -"$signal" "$DAEMON_PID"
  wait "$DAEMON_PID" 2> /dev/null || true
  echo "{\"workout\": \"$id\", \"kill\": \"$signal\", \"at\": $at}" >> "$WORK/events.jsonl"
  start_daemon
  pause_for 1 3
  "$BIN/systole" end > /dev/null 2>> "$WORK/end.err" \
    || echo "{\"workout\": \"$id\", \"error\": \"end failed: $(tail -1 "$WORK/end.err" | tr -d '"\n')\"}" >> "$WORK/events.jsonl"
  printf '.' >&2
done
echo >&2
"$BIN/systole" workouts list --json > "$WORK/workouts.json"
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2> /dev/null || true
DAEMON_PID=
# What the store holds, through its own queries (the tables are the store's business).
"$BIN/store-probe" "$WORK/health.sqlite" readings > "$WORK/readings.txt"

python3 - "$WORK" "$WORKOUTS" <<'PY'
import datetime, json, os, sqlite3, sys
work, expected = sys.argv[1], int(sys.argv[2])
events = [json.loads(l) for l in open(f"{work}/events.jsonl")] if __import__("os").path.exists(f"{work}/events.jsonl") else []
workouts = {w["id"]: w for w in json.load(open(f"{work}/workouts.json"))}
db = sqlite3.connect(f"file:{work}/health.sqlite?mode=ro", uri=True)
violations = []

integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
if integrity != "ok":
    violations.append(f"integrity_check: {integrity}")

# Every heart-rate reading in the store, by time.
stored = sorted(float(line) for line in open(f"{work}/readings.txt") if line.strip())

def unix(text):
    return datetime.datetime.strptime(text[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()

# A line says `running` only once its reading is committed, so every one must be in the store, kills or not.
import bisect
logged = [unix(l) for l in open(f"{work}/live.log") if " bpm=" in l and "state=running" in l]
for t in logged:
    i = bisect.bisect_left(stored, t - 0.0015)
    if i == len(stored) or stored[i] > t + 0.0015:
        violations.append(f"a reading the live log showed at {t:.3f} is not in the store")
kills = [e for e in events if "kill" in e]

failed = set()
for e in events:
    if "error" in e:
        violations.append(f"workout {e['workout']}: {e['error']}")
        failed.add(e["workout"])
ids = {e["workout"] for e in kills}
for wid in ids:
    workout = workouts.get(wid)
    if workout is None:
        violations.append(f"workout {wid} was not finished (not listed)")
        failed.add(wid)
        continue
    downs = sum(1 for k in kills if k["workout"] == wid)
    if workout.get("gaps", 0) < downs:
        violations.append(f"workout {wid}: {downs} time(s) down, {workout.get('gaps', 0)} gap(s) marked")
        failed.add(wid)
passed = len(ids - failed)
print(f"{passed} passed, {expected - passed} failed ({len(logged)} live-log readings checked, {len(stored)} stored)")
for v in violations[:50]:
    print("  " + v)
if len(violations) > 50:
    print(f"  … and {len(violations) - 50} more")
sys.exit(1 if violations or passed != expected else 0)
PY
