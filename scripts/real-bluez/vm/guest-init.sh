#!/bin/sh
# Stage 2 of scripts/real-bluez/vm.sh, PID 1 on the guest's overlay root. Brings up the real stack: a system
# dbus-daemon, two btvirt LE controllers on one emulated air, bluetoothd 5.66, and on hci0 BlueZ's example Heart
# Rate peripheral with our advertiser; then runs the command from the run dir (mounted at /vm) as the central on
# hci1, records its status and powers off. Anything that fails before the command leaves no /vm/rc, which the host
# reports as a failure of the VM (status 125) with the console's tail.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
now() { cut -d' ' -f1 /proc/uptime; }
say() { echo "[vm $(now)s] $*"; }
power_off() {
  # The HCI trace of both controllers (RUN_DIR/btmon.txt), which tells a link the emulated radio never made.
  [ -n "${btmon:-}" ] && { kill "$btmon"; wait "$btmon"; cp /tmp/btmon.txt /vm/ 2>/dev/null; }
  sync; say "power off"; busybox poweroff -f; sleep 30
}
give_up() { say "FAIL: $*"; power_off; }
deadline_in() { awk -v s="$1" '{ print $1 + s }' /proc/uptime; }
before() { awk -v limit="$1" '{ exit !($1 < limit) }' /proc/uptime; }
property() { # object interface name: prints the property's value as dbus-send shows it
  dbus-send --system --print-reply=literal --dest=org.bluez "$1" org.freedesktop.DBus.Properties.Get \
    "string:$2" "string:$3" 2>/dev/null | awk '{ print $NF }'
}

mkdir -p /vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=none run /vm || give_up "cannot mount the run dir"
. /vm/config
mkdir -p /vm/out
echo "stage2 $(now)" > /vm/timing
say "kernel $(uname -r)"

# Loaded now, at once: bluetoothd and the kernel would otherwise ask for them one by one (over 9p, under emulation)
# when pairing needs its ciphers.
modprobe -a bluetooth hci_vhci cmac ecb ctr af_alg algif_hash algif_skcipher drbg jitterentropy_rng sha512_generic \
  2>/dev/null
[ -e /dev/vhci ] || give_up "no /dev/vhci: the bluetooth modules did not load"
stdbuf -oL btmon > /tmp/btmon.txt 2>&1 &
btmon=$!
mkdir -p /run/dbus
dbus-daemon --system --fork || give_up "dbus-daemon did not start"

# btvirt's controllers are ready once each has its address. On a loaded host the kernel's first HCI Reset can time
# out (dmesg: "Opcode 0x0c03 failed") and leave a dead adapter: then btvirt starts again.
ready=0
for attempt in 1 2 3; do
  btvirt -L -l2 > /vm/btvirt.log 2>&1 &
  btvirt=$!
  limit=$(deadline_in 20)
  while before "$limit"; do
    ready=1
    for n in 0 1; do
      hciconfig "hci$n" 2>/dev/null | grep 'BD Address' | grep -qv '00:00:00:00:00:00' || ready=0
    done
    [ $ready = 1 ] && break
    dmesg | grep -q 'Opcode 0x0c03 failed' && break
    sleep 0.2
  done
  [ $ready = 1 ] && break
  say "the controllers did not come up (attempt $attempt): $(dmesg | grep -i hci | tail -3)"
  kill $btvirt; wait $btvirt 2>/dev/null; dmesg -C; sleep 1
done
[ $ready = 1 ] || give_up "btvirt's controllers did not come up"

/usr/libexec/bluetooth/bluetoothd -n -E > /vm/bluetoothd.log 2>&1 &
limit=$(deadline_in 60)
until [ "$(property /org/bluez/hci0 org.bluez.Adapter1 Powered)" = true ] &&
      [ "$(property /org/bluez/hci1 org.bluez.Adapter1 Powered)" = true ]; do
  before "$limit" || { tail -5 /vm/bluetoothd.log; give_up "bluetoothd did not power both adapters in 60 s"; }
  sleep 0.2
done
export BZ_PERIPHERAL_ADAPTER=hci0 BZ_CENTRAL_ADAPTER=hci1 BZ_OUT=/vm/out
BZ_PERIPHERAL_ADDR=$(property /org/bluez/hci0 org.bluez.Adapter1 Address)
BZ_CENTRAL_ADDR=$(property /org/bluez/hci1 org.bluez.Adapter1 Address)
export BZ_PERIPHERAL_ADDR BZ_CENTRAL_ADDR
say "bluetoothd is up: hci0 $BZ_PERIPHERAL_ADDR (peripheral), hci1 $BZ_CENTRAL_ADDR (central)"

# The peripheral must be advertising before the command scans: btvirt reports advertisements only when scanning or
# advertising is switched on, which our advertiser does every second.
python3 "$VM_LIB/hr-peripheral.py" /org/bluez/hci0 > /vm/peripheral-gatt.log 2>&1 &
python3 "$VM_LIB/hr-advertiser.py" /org/bluez/hci0 > /vm/peripheral-adv.log 2>&1 &
limit=$(deadline_in 60)
until grep -q '^GATT application registered' /vm/peripheral-gatt.log && grep -q '^advertising' /vm/peripheral-adv.log
do
  if ! before "$limit" || grep -qi 'error\|failed' /vm/peripheral-gatt.log /vm/peripheral-adv.log; then
    cat /vm/peripheral-gatt.log /vm/peripheral-adv.log; give_up "the Heart Rate peripheral did not start"
  fi
  sleep 0.2
done
say "the Heart Rate peripheral is advertising on hci0"
echo "ready $(now)" >> /vm/timing

cd "$COMMAND_DIR" 2>/dev/null || cd /
sh /vm/command > /vm/stdout 2> /vm/stderr < /dev/null
echo $? > /vm/rc.partial && mv /vm/rc.partial /vm/rc
echo "done $(now)" >> /vm/timing
say "the command exited with $(cat /vm/rc)"
power_off
