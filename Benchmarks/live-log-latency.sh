#!/usr/bin/env bash
# How long a reading takes from systoled receiving it to its line being readable in the live log (the file a
# `tail -f` follows), during a workout, where each line waits for its samples' commit. Runs the release daemon
# against the simulator at 4 Hz on a private bus for 20 s and prints p50, p90 and the maximum.
#
# usage: Benchmarks/live-log-latency.sh [seconds, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-20}
source scripts/lib/release-build.sh
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systoled >&2
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systole >&2
swift build "${RELEASE_BUILD_FLAGS[@]}" --product systole-sim >&2
BIN=$(swift build "${RELEASE_BUILD_FLAGS[@]}" --show-bin-path)

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-latency.XXXXXX)
cleanup() {
  [ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null || true
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"
"$BIN/systole-sim" --bus "$BUS" --rate 4 > "$WORK/sim.out" &
SIM_PID=$!
"$BIN/systoled" --bus "$BUS" --config /dev/null --store "$WORK/health.sqlite" --live-log "$WORK/live.log" 2> "$WORK/d.err" &
DAEMON_PID=$!
for _ in $(seq 600); do "$BIN/systole" status --bus "$BUS" > /dev/null 2>&1 && break; sleep 0.1; done
sleep 2
"$BIN/systole" start --bus "$BUS" > /dev/null
python3 - "$WORK/live.log" "$DURATION" <<'PY'
import datetime, sys, time
path, duration = sys.argv[1], float(sys.argv[2])
log = open(path)
log.seek(0, 2)
latencies, pending = [], ""
end = time.time() + duration
while time.time() < end:
    chunk = log.read()
    if not chunk:
        time.sleep(0.001)
        continue
    now = time.time()
    pending += chunk
    while "\n" in pending:
        line, pending = pending.split("\n", 1)
        if "state=running" in line and "bpm=" in line:
            received = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f")
            received = received.replace(tzinfo=datetime.timezone.utc).timestamp()
            latencies.append((now - received) * 1000)
latencies.sort()
n = len(latencies)
print(f"{n} lines; received -> readable in the live log: p50 {latencies[n // 2]:.1f} ms, "
      f"p90 {latencies[int(n * 0.9)]:.1f} ms, max {latencies[-1]:.1f} ms")
PY
"$BIN/systole" end --bus "$BUS" > /dev/null
