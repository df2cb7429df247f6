# Sourced (POSIX sh) by both ways the VM of scripts/real-bluez/vm.sh brings up the real Bluetooth stack: a shell as
# PID 1 (guest-init.sh) and systemd as PID 1 (guest-systemd.sh, then guest-systemd-stack.sh from its units). Each
# function says what failed and returns 1; the caller decides how the VM ends. VM_LIB is set by /vm/config.
now() { cut -d' ' -f1 /proc/uptime; }
say() { echo "[vm $(now)s] $*"; }
deadline_in() { awk -v s="$1" '{ print $1 + s }' /proc/uptime; }
before() { awk -v limit="$1" '{ exit !($1 < limit) }' /proc/uptime; }
property() { # object interface name: prints the property's value as dbus-send shows it
  dbus-send --system --print-reply=literal --dest=org.bluez "$1" org.freedesktop.DBus.Properties.Get \
    "string:$2" "string:$3" 2>/dev/null | awk '{ print $NF }'
}

# Loaded now, at once: bluetoothd and the kernel would otherwise ask for them one by one (over 9p, under emulation)
# when pairing needs its ciphers.
load_bluetooth_modules() {
  modprobe -a bluetooth hci_vhci cmac ecb ctr af_alg algif_hash algif_skcipher drbg jitterentropy_rng \
    sha512_generic 2>/dev/null
  [ -e /dev/vhci ] || { say "no /dev/vhci: the bluetooth modules did not load"; return 1; }
}

# Two btvirt LE controllers on one emulated air (hci0, hci1), ready once each has its address; BTVIRT is the
# process. On a loaded host the kernel's first HCI Reset can time out (dmesg: "Opcode 0x0c03 failed") and leave a
# dead adapter: then btvirt starts again. LOG: where btvirt's output goes.
start_controllers() {
  ready=0
  for attempt in 1 2 3; do
    btvirt -L -l2 > "$1" 2>&1 &
    BTVIRT=$!
    limit=$(deadline_in 20)
    while before "$limit"; do
      ready=1
      for n in 0 1; do
        hciconfig "hci$n" 2>/dev/null | grep 'BD Address' | grep -qv '00:00:00:00:00:00' || ready=0
      done
      [ $ready = 1 ] && return 0
      dmesg | grep -q 'Opcode 0x0c03 failed' && break
      sleep 0.2
    done
    say "the controllers did not come up (attempt $attempt): $(dmesg | grep -i hci | tail -3)"
    kill "$BTVIRT"; wait "$BTVIRT" 2>/dev/null; dmesg -C; sleep 1
  done
  say "btvirt's controllers did not come up"
  return 1
}

# Waits (at most 60 s) for bluetoothd to power both adapters, then exports BZ_PERIPHERAL_ADAPTER, BZ_CENTRAL_ADAPTER
# and their addresses.
wait_for_adapters() {
  limit=$(deadline_in 60)
  until [ "$(property /org/bluez/hci0 org.bluez.Adapter1 Powered)" = true ] &&
        [ "$(property /org/bluez/hci1 org.bluez.Adapter1 Powered)" = true ]; do
    before "$limit" || { say "bluetoothd did not power both adapters in 60 s"; return 1; }
    sleep 0.2
  done
  BZ_PERIPHERAL_ADAPTER=hci0 BZ_CENTRAL_ADAPTER=hci1
  BZ_PERIPHERAL_ADDR=$(property /org/bluez/hci0 org.bluez.Adapter1 Address)
  BZ_CENTRAL_ADDR=$(property /org/bluez/hci1 org.bluez.Adapter1 Address)
  export BZ_PERIPHERAL_ADAPTER BZ_CENTRAL_ADAPTER BZ_PERIPHERAL_ADDR BZ_CENTRAL_ADDR
  say "bluetoothd is up: hci0 $BZ_PERIPHERAL_ADDR (peripheral), hci1 $BZ_CENTRAL_ADDR (central)"
}

# BlueZ's example Heart Rate peripheral and our advertiser on hci0, their logs in DIR; returns once both run. The
# peripheral must be advertising before a command scans: btvirt reports advertisements only when scanning or
# advertising is switched on, which our advertiser does every second.
start_peripheral() {
  python3 "$VM_LIB/hr-peripheral.py" /org/bluez/hci0 > "$1/peripheral-gatt.log" 2>&1 &
  python3 "$VM_LIB/hr-advertiser.py" /org/bluez/hci0 > "$1/peripheral-adv.log" 2>&1 &
  limit=$(deadline_in 60)
  until grep -q '^GATT application registered' "$1/peripheral-gatt.log" && grep -q '^advertising' "$1/peripheral-adv.log"
  do
    if ! before "$limit" || grep -qi 'error\|failed' "$1/peripheral-gatt.log" "$1/peripheral-adv.log"; then
      cat "$1/peripheral-gatt.log" "$1/peripheral-adv.log"
      say "the Heart Rate peripheral did not start"
      return 1
    fi
    sleep 0.2
  done
  say "the Heart Rate peripheral is advertising on hci0"
}

# Stage 2's first step: the run dir at /vm (its config sets VM_LIB and COMMAND_DIR), the command's out/, the time.
mount_run_dir() {
  mkdir -p /vm
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none run /vm ||
    { echo "vm: FAIL: cannot mount the run dir"; busybox poweroff -f; sleep 30; }
  . /vm/config
  mkdir -p /vm/out
  echo "stage2 $(now)" > /vm/timing
}

# Runs the VM's command (the run dir's `command`) from the directory it was given in, its output and status in the
# run dir; the host reads /vm/rc as the command's status.
run_command() {
  cd "$COMMAND_DIR" 2>/dev/null || cd /
  sh /vm/command > /vm/stdout 2> /vm/stderr < /dev/null
  echo $? > /vm/rc.partial && mv /vm/rc.partial /vm/rc
  echo "done $(now)" >> /vm/timing
  say "the command exited with $(cat /vm/rc)"
}
