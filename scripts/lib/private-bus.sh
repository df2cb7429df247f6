# Sourced by scripts that need a dbus-daemon of their own (never the machine's buses).
# start_private_bus WORKDIR: starts one listening on WORKDIR/bus, with limits high enough for benchmarks, and sets
# BUS (its address) and BUS_PID. stop_private_bus kills it (dbus-daemon ignores SIGTERM).
# cleanup_private_run (for `trap … EXIT`) stops the simulator ($SIM_PID), the bus, and removes $WORK.
start_private_bus() {
  local dir=$1
  cat > "$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
  dbus-daemon --config-file="$dir/bus.conf" --fork --print-address=1 --print-pid=1 > "$dir/bus.info"
  BUS=$(sed -n 1p "$dir/bus.info" | cut -d, -f1)
  BUS_PID=$(sed -n 2p "$dir/bus.info")
}

stop_private_bus() {
  [ -n "${BUS_PID:-}" ] && kill -9 "$BUS_PID" 2>/dev/null || true
}

cleanup_private_run() {
  [ -n "${SIM_PID:-}" ] && kill "$SIM_PID" 2>/dev/null || true
  stop_private_bus
  [ -n "${WORK:-}" ] && rm -rf "$WORK"
}
