#!/usr/bin/env bash
# Benchmarks/ingest.sh --outputs: what the live outputs cost systoled. Two systoleds side by side in one window,
# each on a private dbus-daemon of its own with a simulator of its own playing the same N sensors at R Hz (the same
# seed), a workout running in both:
#   plain    no [http], no [mqtt]
#   outputs  [http] and [mqtt] on, and used as people use them: a live page's event stream open, /metrics scraped
#            every 15 s (Prometheus's example interval), and an MQTT subscriber on every topic of a real mosquitto (Debian's, on a port of its own)
# Each daemon's CPU seconds (from /proc) per reading it logged in the window, and the ratio outputs/plain (goal:
# at most 1.10). The clients run in one Python process whose CPU is not counted.
#
# usage: Benchmarks/ingest.sh --outputs [--sensors N] [--rate HZ] [--seconds S] [--warmup S] [--json] [--debug]
#        [--check]   (--check: exit 1 when a daemon logged no reading or a client received nothing)
set -euo pipefail
cd "$(dirname "$0")/../.."
SENSORS=100 RATE=4 MEASURE=60 WARMUP=10 JSON=0 CONFIG=release CHECK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --outputs) ;;
    --sensors) SENSORS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --seconds) MEASURE=$2; shift ;;
    --warmup) WARMUP=$2; shift ;;
    --json) JSON=1 ;;
    --debug) CONFIG=debug ;;
    --check) CHECK=1 ;;
    *) echo "usage: Benchmarks/ingest.sh --outputs [--sensors N] [--rate HZ] [--seconds S] [--warmup S] [--json] [--debug] [--check]" >&2; exit 2 ;;
  esac
  shift
done

source Benchmarks/ingest/side-by-side.sh
side_setup outputs
PYTHON=$(scripts/python-tools.sh)

HTTP_PORT=$(free_port)
MQTT_PORT=$(free_port)
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(16))')

# The broker: anonymous on loopback, in the run's folder (started as root it runs as user mosquitto).
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_dest none\n' "$MQTT_PORT" > "$WORK/mosquitto.conf"
chmod 644 "$WORK/mosquitto.conf"
mosquitto -c "$WORK/mosquitto.conf" &
PIDS+=($!)

cat > "$WORK/scenario.json" <<JSON
{"seed": 42, "sensors": [{"model": "polar-h10", "count": $SENSORS, "rate": $RATE}]}
JSON

start_side plain ""
start_side outputs "$(printf '\n[http]\nlisten = "127.0.0.1:%s"\ntoken = "%s"\n\n[mqtt]\nbroker = "mqtt://127.0.0.1:%s"\nclient_id = "systoled-bench"\n' \
  "$HTTP_PORT" "$TOKEN" "$MQTT_PORT")"
start_workouts plain outputs

"$PYTHON" Benchmarks/ingest/outputs.py "$WORK" "$WARMUP" "$MEASURE" "$(cat "$WORK/plain/pid")" \
  "$(cat "$WORK/outputs/pid")" "$HTTP_PORT" "$TOKEN" "$MQTT_PORT" "$SENSORS" "$RATE" "$JSON" "$CHECK"
