# Sourced by Benchmarks/ingest/outputs.sh, replication.sh and notify.sh: systoleds side by side, each on a private
# dbus-daemon of its own with a simulator of its own playing the same scenario (WORK/scenario.json), a workout
# running in each. side_setup first; the sides need SENSORS and set BUS_PIDS. Each side's folder holds the process
# ids of its daemon (pid), simulator (sim.pid) and bus (bus.pid), and its bus's address (bus.address).
source scripts/lib/private-bus.sh
source scripts/lib/release-build.sh
BUS_PIDS=""

# side_setup NAME: builds systole-sim, systoled and systole (CONFIG: release or debug) and sets BIN; makes WORK
# (/tmp/systole-NAME.XXXXXX) and the array PIDS, and on exit stops every process in PIDS (continuing a stopped one
# first: a stopped process does not act on SIGTERM), runs SIDE_CLEANUP (a command, if set), kills the buses and
# removes WORK.
side_setup() {
  build_flags "$CONFIG"
  local product
  for product in systole-sim systoled systole; do
    swift build "${BUILD_FLAGS[@]}" --product "$product" >&2
  done
  BIN=$(swift build "${BUILD_FLAGS[@]}" --show-bin-path)
  WORK=$(mktemp -d "/tmp/systole-$1.XXXXXX")
  chmod 755 "$WORK"
  PIDS=()
  trap side_cleanup EXIT
}

side_cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -CONT "$pid" 2> /dev/null || true; kill "$pid" 2> /dev/null || true; done
  [ -n "${SIDE_CLEANUP:-}" ] && eval "$SIDE_CLEANUP"
  wait 2> /dev/null || true
  for pid in ${BUS_PIDS:-}; do kill -9 "$pid" 2> /dev/null || true; done
  rm -rf "$WORK"
}

# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

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
  if [ "${#ADDRESSES[@]}" != "$SENSORS" ]; then
    echo "ingest: the simulator of $name announced ${#ADDRESSES[@]} of $SENSORS sensors; its output:" >&2
    tail -5 "$WORK/$name/sim.out" >&2
    exit 1
  fi
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
