#!/usr/bin/env bash
# Benchmarks/ingest.sh --replication: what replication to PostgreSQL costs a receiver, and how fast it goes. Two
# systoleds side by side, each on a private dbus-daemon of its own with a simulator of its own playing the same N
# sensors at R Hz (the same seed), a workout running in both:
#   plain       no [replication]
#   replicated  [replication] into a real PostgreSQL (Debian's, in the run's folder, on a port of its own, run as
#               user postgres)
# Three phases (Benchmarks/ingest/replication.py):
#   backlog   PostgreSQL is not started yet for BACKLOG seconds: the replicated daemon keeps its changes
#   catch-up  PostgreSQL starts: how long until the daemon says it is caught up (its retry wait included), and the
#             throughput: the backlog's heart-rate samples over the time from the first arriving to the last
#   window    SECONDS of steady state: each daemon's CPU seconds (from /proc) per reading it logged, the ratio
#             replicated/plain (goal: at most 1.15), and the lag of the rows committed in the window, from their
#             commit in SQLite to their insert in PostgreSQL (p50/p99/max)
#
# PERF_OUT=FILE records a perf profile (cpu-clock, call graphs) of the replicated daemon in the window.
#
# usage: Benchmarks/ingest.sh --replication [--sensors N] [--rate HZ] [--seconds S] [--backlog S] [--json]
#        [--debug] [--check]   (--check: exit 1 when a daemon logged no reading or nothing arrived in PostgreSQL)
set -euo pipefail
cd "$(dirname "$0")/../.."
SENSORS=100 RATE=4 MEASURE=60 BACKLOG=60 JSON=0 CONFIG=release CHECK=0
while [ $# -gt 0 ]; do
  case "$1" in
    --replication) ;;
    --sensors) SENSORS=$2; shift ;;
    --rate) RATE=$2; shift ;;
    --seconds) MEASURE=$2; shift ;;
    --backlog) BACKLOG=$2; shift ;;
    --warmup) shift ;;
    --json) JSON=1 ;;
    --debug) CONFIG=debug ;;
    --check) CHECK=1 ;;
    *) echo "usage: Benchmarks/ingest.sh --replication [--sensors N] [--rate HZ] [--seconds S] [--backlog S] [--json] [--debug] [--check]" >&2; exit 2 ;;
  esac
  shift
done

source Benchmarks/ingest/side-by-side.sh
side_setup replication
# PostgreSQL's fast shutdown still writes a checkpoint into its folder: WORK is removed only once the server is gone
# (on a busy machine that takes seconds). The pid file names the server now running, restarted or not.
stop_postgres() {
  [ -f "$WORK/postgres.pid" ] || return 0
  local pid
  pid=$(cat "$WORK/postgres.pid")
  kill -INT "$pid" 2> /dev/null || return 0
  local state
  for _ in $(seq 1200); do
    # Gone, or exited and waiting to be reaped (a zombie: this shell started it).
    state=$(ps -o stat= -p "$pid" 2> /dev/null) || return 0
    [[ $state == Z* ]] && return 0
    sleep 0.1
  done
  echo "ingest: PostgreSQL (pid $pid) did not stop within 120 s of SIGINT" >&2
}
SIDE_CLEANUP=stop_postgres

PG_PORT=$(free_port)
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_postgres() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else "$@"; fi; }
mkdir -p "$WORK/postgres"
echo "bench-super" > "$WORK/postgres/pw"
[ "$(id -u)" = 0 ] && chown -R postgres:postgres "$WORK/postgres"
as_postgres "$PG_BIN/initdb" -D "$WORK/postgres/data" -U postgres --pwfile "$WORK/postgres/pw" \
  --auth-host scram-sha-256 --auth-local trust -E UTF8 --no-sync > /dev/null
# start_postgres: in the background, its pid in postgres.pid; returns once it answers.
start_postgres() {
  # Started directly (not through a function), so $! is the server's own pid, which a SIGINT stops.
  local command=("$PG_BIN/postgres" -D "$WORK/postgres/data" -p "$PG_PORT" -k "$WORK/postgres"
    -c listen_addresses=127.0.0.1 -c log_min_messages=fatal)
  if [ "$(id -u)" = 0 ]; then command=(setpriv --reuid=postgres --regid=postgres --init-groups -- "${command[@]}"); fi
  "${command[@]}" > /dev/null 2>&1 &
  echo $! > "$WORK/postgres.pid"
  for _ in $(seq 300); do
    psql "postgresql://postgres:bench-super@127.0.0.1:$PG_PORT/postgres" -XAtc 'SELECT 1' > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "replication: PostgreSQL did not start" >&2
  exit 1
}
start_postgres
psql "postgresql://postgres:bench-super@127.0.0.1:$PG_PORT/postgres" -XAtq \
  -c "CREATE ROLE systole LOGIN PASSWORD 'bench-replica'" -c "CREATE DATABASE systole OWNER systole"
# Stopped again: the backlog phase runs without it.
kill -INT "$(cat "$WORK/postgres.pid")"
while kill -0 "$(cat "$WORK/postgres.pid")" 2> /dev/null; do sleep 0.1; done

cat > "$WORK/scenario.json" <<JSON
{"seed": 42, "sensors": [{"model": "polar-h10", "count": $SENSORS, "rate": $RATE}]}
JSON

start_side plain ""
start_side replicated "$(printf '\n[replication]\npostgres = "postgresql://systole@127.0.0.1:%s/systole"\npassword = "bench-replica"\nreceiver = "bench"\n' "$PG_PORT")"
start_workouts plain replicated

export -f start_postgres as_postgres
export WORK PG_PORT PG_BIN
python3 Benchmarks/ingest/replication.py "$WORK" "$BIN" "$BACKLOG" "$MEASURE" "$PG_PORT" "$SENSORS" "$RATE" \
  "$JSON" "$CHECK"
