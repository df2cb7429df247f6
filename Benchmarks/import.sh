#!/usr/bin/env bash
# What `systole import` costs, and whether recording goes on while it runs: the release systoled records a workout
# from one simulated strap (4 Hz) while the CLI imports FIT files of growing size (a heart rate a second, RR
# intervals at about 150 bpm): ten hours (36 000 readings, 90 000 RR), and the most an activity may hold (200 000 of
# each, 400 000 together). For each: the import's wall time, the CLI's peak memory, systoled's CPU for it and its
# peak memory after, and the live log's lag (a line's arrival after the reading it shows) before and during the
# import. Prints one line per file.
#
# usage: Benchmarks/import.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/release-build.sh
for product in systoled systole systole-sim; do swift build "${RELEASE_BUILD_FLAGS[@]}" --product $product >&2; done
BIN=$(swift build "${RELEASE_BUILD_FLAGS[@]}" --show-bin-path)
PYTHON=$(bash scripts/python-tools.sh)

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-import.XXXXXX)
cleanup() {
  [ -n "${WATCH_PID:-}" ] && kill "$WATCH_PID" 2>/dev/null || true
  [ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null || true
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"
echo '{"seed": 5, "sensors": [{"model": "polar-h10", "rate": 4}]}' > "$WORK/scenario.json"
"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" > "$WORK/sim.out" &
SIM_PID=$!
for _ in $(seq 600); do grep -q '^sensor ' "$WORK/sim.out" && break; sleep 0.1; done
SENSOR=$(grep '^sensor ' "$WORK/sim.out" | awk '{print $3; exit}')
echo "sensors = [\"$SENSOR\"]" > "$WORK/systoled.toml"
"$BIN/systoled" --bus "$BUS" --config "$WORK/systoled.toml" --store "$WORK/health.sqlite" \
  --live-log "$WORK/live.log" 2> "$WORK/d.err" &
DAEMON_PID=$!
for _ in $(seq 600); do "$BIN/systole" status --bus "$BUS" > /dev/null 2>&1 && break; sleep 0.1; done
"$BIN/systole" start --bus "$BUS" > /dev/null
for _ in $(seq 600); do [ -s "$WORK/live.log" ] && break; sleep 0.1; done

# Each live-log line's arrival, against the time of the reading it shows.
"$PYTHON" - "$WORK/live.log" "$WORK/lag.txt" <<'PY' &
import sys, time
from datetime import datetime
log, out = sys.argv[1], open(sys.argv[2], "w", buffering=1)
with open(log) as f:
    f.seek(0, 2)
    while True:
        line = f.readline()
        if not line:
            time.sleep(0.005)
            continue
        stamp = datetime.fromisoformat(line.split(" ", 1)[0].replace("Z", "+00:00")).timestamp()
        out.write(f"{time.time():.3f} {time.time() - stamp:.3f}\n")
PY
WATCH_PID=$!

cpu() { awk '{print $14 + $15}' /proc/$DAEMON_PID/stat; }
hwm() { awk '/VmHWM/ {print $2}' /proc/$DAEMON_PID/status; }
for spec in "ten-hours 36000 90000" "the-limit 200000 200000"; do
  read -r name heart_rates rr <<< "$spec"
  "$PYTHON" Benchmarks/import/make_fit.py "$WORK/$name.fit" "$heart_rates" "$rr"
  sleep 5
  before=$(cpu); began=$(date +%s.%N)
  # The CLI's peak memory from the kernel's accounting of its child.
  cli_kib=$("$PYTHON" -c '
import resource, subprocess, sys
result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
if result.returncode != 0: sys.exit("import failed: " + result.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$BIN/systole" import --bus "$BUS" "$WORK/$name.fit")
  ended=$(date +%s.%N); after=$(cpu)
  sleep 2
  "$PYTHON" - "$WORK/lag.txt" "$began" "$ended" "$name" "$heart_rates" "$rr" "$(stat -c %s "$WORK/$name.fit")" \
    "$before" "$after" "$(getconf CLK_TCK)" "$cli_kib" "$(hwm)" <<'PY'
import sys
lags, began, ended = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
name, hr, rr, size, before, after, tick, cli, hwm = sys.argv[4:]
rows = [tuple(map(float, line.split())) for line in open(lags)]
during = [lag for at, lag in rows if began <= at <= ended + 1]
earlier = [lag for at, lag in rows if began - 5 <= at < began]
print(f"{name}: {hr} heart rates + {rr} RR, {int(size) / 1e6:.1f} MB: import {float(ended) - float(began):.2f} s; "
      f"systoled CPU {(int(after) - int(before)) / int(tick):.2f} s, peak RSS {int(hwm) / 1024:.0f} MiB; "
      f"CLI peak RSS {int(cli) / 1024:.0f} MiB; live-log lag before max {max(earlier, default=0) * 1000:.0f} ms, "
      f"during max {max(during, default=0) * 1000:.0f} ms ({len(during)} lines)")
PY
done
"$BIN/systole" end --bus "$BUS" > /dev/null
