# Sourced by Benchmarks/ingest/outputs.sh, replication.sh and notify.sh: systoleds side by side, each on a private
# dbus-daemon of its own with a simulator of its own playing the same scenario (WORK/scenario.json), a workout
# running in each. Needs WORK, BIN, SENSORS and the array PIDS; sets BUS_PIDS. Each side's folder holds the
# process ids of its daemon (pid), simulator (sim.pid) and bus (bus.pid), and its bus's address (bus.address).
source scripts/lib/private-bus.sh
BUS_PIDS=""

# start_simulator_side NAME [SIMULATOR ARGUMENTS…]: the bus and the simulator for NAME; sets ADDRESSES.
start_simulator_side() {
  local name=$1
  shift
  mkdir -p "$WORK/$name"
  start_private_bus "$WORK/$name"
  BUS_PIDS="$BUS_PIDS $BUS_PID"
  printf '%s' "$BUS" > "$WORK/$name/bus.address"
  echo "$BUS_PID" > "$WORK/$name/bus.pid"
  "$BIN/systole-sim" --bus "$BUS" --scenario "$WORK/scenario.json" "$@" > "$WORK/$name/sim.out" &
  PIDS+=($!)
  echo $! > "$WORK/$name/sim.pid"
  for _ in $(seq 600); do
    grep -q '^ready ' "$WORK/$name/sim.out" 2> /dev/null && [ "$(grep -c '^sensor ' "$WORK/$name/sim.out")" = "$SENSORS" ] && break
    sleep 0.1
  done
  mapfile -t ADDRESSES < <(awk '/^sensor /{print $3}' "$WORK/$name/sim.out")
}

# start_side NAME EXTRA [SIMULATOR ARGUMENTS…]: the bus, the simulator and systoled for NAME, its configuration
# ending with EXTRA (TOML); top-level settings in SIDE_TOP_LEVEL (TOML lines) go before the tables.
start_side() {
  local name=$1 extra=$2
  shift 2
  start_simulator_side "$name" "$@"
  {
    echo "bus = \"$BUS\""
    echo "store = \"$WORK/$name/health.sqlite\""
    printf 'sensors = [%s]\n' "$(printf '"%s", ' "${ADDRESSES[@]}" | sed 's/, $//')"
    printf '%s\n' "${SIDE_TOP_LEVEL:-}"
    echo "[live_log]"
    echo "path = \"$WORK/$name/live.log\""
    echo "max_size = 1073741824"
    printf '%s' "$extra"
  } > "$WORK/$name/systoled.toml"
  chmod 600 "$WORK/$name/systoled.toml"
  "$BIN/systoled" --config "$WORK/$name/systoled.toml" 2> "$WORK/$name/systoled.err" &
  PIDS+=($!)
  echo $! > "$WORK/$name/pid"
}

# start_workouts NAME…: waits until every sensor of each side streams, then starts a workout there.
start_workouts() {
  local name bus streaming
  for name in "$@"; do
    bus=$(cat "$WORK/$name/bus.address")
    for _ in $(seq 600); do
      streaming=$("$BIN/systole" sensors --bus "$bus" --json 2> /dev/null | python3 -c \
        'import json,sys; print(sum(1 for s in json.load(sys.stdin) if s.get("state") == "streaming"))' 2> /dev/null \
        || echo 0)
      [ "$streaming" = "$SENSORS" ] && break
      sleep 0.2
    done
    "$BIN/systole" start --bus "$bus" --activity running > /dev/null
  done
}
