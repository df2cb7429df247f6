#!/usr/bin/env bash
# What recording ECG costs: ten simulated Polar H10s stream ECG (130 Hz, frames of 73 samples) and heart rate
# (1 Hz) into the release systoled during a workout, [ecg] on, the web server's live ECG stream read by a client.
# Over a window of SECONDS (default 60): systoled's CPU (user + system from /proc) per ECG sample and per second,
# the store's growth per strap-hour (the file after a checkpoint, and the waveform rows alone), and the live ECG's
# delay on the page: from the simulator's emit of a frame to its event arriving, and from the frame's first sample
# to that arrival (what a frame holds counts in it). Prints one line per figure.
#
# usage: Benchmarks/ecg.sh [seconds, default 60] [straps, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_WINDOW=${1:-60}
STRAPS=${2:-10}
source scripts/lib/release-build.sh
for product in systoled systole systole-sim; do swift build "${RELEASE_BUILD_FLAGS[@]}" --product $product >&2; done
BIN=$(swift build "${RELEASE_BUILD_FLAGS[@]}" --show-bin-path)
PYTHON=$(bash scripts/python-tools.sh)

source scripts/lib/private-bus.sh
WORK=$(mktemp -d /tmp/systole-ecg.XXXXXX)
cleanup() {
  [ -n "${CLIENT_PID:-}" ] && kill "$CLIENT_PID" 2>/dev/null || true
  [ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null || true
  cleanup_private_run
}
trap cleanup EXIT
start_private_bus "$WORK"
cat > "$WORK/scenario.json" <<JSON
{"seed": 17, "sensors": [{"model": "polar-h10", "count": $STRAPS, "rate": 1, "pmd": {}}]}
JSON
"$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" --emit-log "$WORK/emit.jsonl" > "$WORK/sim.out" &
SIM_PID=$!
for _ in $(seq 600); do [ "$(grep -c '^sensor ' "$WORK/sim.out" || true)" -ge "$STRAPS" ] && break; sleep 0.1; done
SENSORS=$(grep '^sensor ' "$WORK/sim.out" | awk '{printf "%s\"%s\"", (NR>1?", ":""), $3}')
PORT=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TOKEN=benchmark-token-0123456789
cat > "$WORK/systoled.toml" <<TOML
sensors = [$SENSORS]
[ecg]
enabled = true
[http]
listen = "127.0.0.1:$PORT"
token = "$TOKEN"
TOML
chmod 600 "$WORK/systoled.toml"
"$BIN/systoled" --bus "$BUS" --config "$WORK/systoled.toml" --store "$WORK/health.sqlite" \
  --live-log "$WORK/live.log" 2> "$WORK/d.err" &
DAEMON_PID=$!
for _ in $(seq 600); do "$BIN/systole" status --bus "$BUS" > /dev/null 2>&1 && break; sleep 0.1; done
"$BIN/systole" start --bus "$BUS" > /dev/null
# Every strap streaming ECG before the window opens.
for _ in $(seq 600); do
  streaming=$("$BIN/systole" sensors --bus "$BUS" --json | "$PYTHON" -c \
    'import json,sys; print(sum(1 for s in json.load(sys.stdin) if s.get("ecg") == "streaming"))')
  [ "$streaming" -ge "$STRAPS" ] && break
  sleep 0.2
done
sleep 3
"$PYTHON" Benchmarks/ingest/ecg_client.py "http://127.0.0.1:$PORT/api/ecg" "$TOKEN" "$WORK/received.jsonl" &
CLIENT_PID=$!
sleep 2
SIZE_BEFORE=$(sqlite3 "$WORK/health.sqlite" 'PRAGMA wal_checkpoint(TRUNCATE);' > /dev/null; stat -c %s "$WORK/health.sqlite")
read -r START_TICKS < <(awk '{print $14 + $15}' /proc/$DAEMON_PID/stat)
START=$(date +%s.%N)
sleep "$SECONDS_WINDOW"
read -r END_TICKS < <(awk '{print $14 + $15}' /proc/$DAEMON_PID/stat)
END=$(date +%s.%N)
kill "$CLIENT_PID"; wait "$CLIENT_PID" 2>/dev/null || true; CLIENT_PID=
"$BIN/systole" end --bus "$BUS" > /dev/null
kill "$DAEMON_PID"; wait "$DAEMON_PID" 2>/dev/null || true; DAEMON_PID=
sqlite3 "$WORK/health.sqlite" 'PRAGMA wal_checkpoint(TRUNCATE);' > /dev/null
SIZE_AFTER=$(stat -c %s "$WORK/health.sqlite")
# The pages the ECG's rows and indexes take (SQLite's dbstat), whatever else the file holds.
WAVEFORM_PAGES=$(sqlite3 "$WORK/health.sqlite" "SELECT sum(pgsize) FROM dbstat WHERE name IN
  ('waveform', 'waveformByKindAndStart', 'waveformByWorkout', 'waveformByAnchor')")
"$PYTHON" Benchmarks/ingest/ecg_report.py "$WORK" "$START" "$END" "$START_TICKS" "$END_TICKS" "$(getconf CLK_TCK)" \
  "$SIZE_BEFORE" "$SIZE_AFTER" "$STRAPS" "$WAVEFORM_PAGES"
