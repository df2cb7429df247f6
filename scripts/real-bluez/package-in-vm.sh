#!/bin/bash
# Runs inside the VM of scripts/real-bluez/vm.sh --systemd (root; systemd as PID 1; Debian's dbus and bluetoothd;
# BlueZ's example Heart Rate peripheral advertising on hci0): installs systole's .deb with apt as a Debian user
# would and checks, with the configuration the package ships, what the package promises. Each check prints "ok" or
# "FAIL"; the evidence goes to $BZ_OUT. scripts/test-package.sh is how to run it.
#   - with PREVIOUS_DEB first: that version installed, a workout recorded, the configuration changed, then the
#     upgrade keeps the workout and the change and restarts systoled;
#   - systoled active, READY sent (Type=notify), the watchdog fed, systemd-analyze's exposure at most 0.5;
#   - as a member of group systole: scan, start, status, tail, end, workouts, with heart rate recorded;
#   - a user outside the group refused by systoled, kept out of the store and the live log, refused the strap's
#     notifications by bluetoothd (systoled holds them), and seeing no heart rate on the system bus: none of
#     systoled's signals, none of bluetoothd's (the acquire path);
#   - kill -9 mid-workout: systemd restarts systoled, the same workout carries on with heart rate;
#   - the journal free of the two noise lines once seen (thread priority, a refused bus name); apt remove stops it and keeps the data; apt purge leaves nothing of it.
# usage (inside the VM): package-in-vm.sh DEB [PREVIOUS_DEB]
set -uo pipefail
DEB=$1
PREVIOUS=${2:-}
OUT=${BZ_OUT:-/tmp}
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/wait.sh
source "$HERE/../lib/wait.sh"
# Emulated without KVM on a busy host, the guest can be slow: deadlines only a real failure reaches.
WAIT_SECONDS=180
export DEBIAN_FRONTEND=noninteractive
problems=0
started=$(cut -d' ' -f1 /proc/uptime)
step() { echo; echo "== $* ($(awk -v s="$started" '{ printf "%.0f", $1 - s }' /proc/uptime) s)"; }
pass() { echo "ok   $1"; }
flunk() { echo "FAIL $1"; problems=$((problems + 1)); }
check() { # DESCRIPTION COMMAND [ARGUMENT...]: ok when COMMAND succeeds
  local what=$1
  shift
  if "$@" > /dev/null 2>&1; then pass "$what"; else flunk "$what"; fi
}
refused() { # DESCRIPTION COMMAND [ARGUMENT...]: ok when COMMAND fails
  local what=$1
  shift
  if "$@" > /dev/null 2>&1; then flunk "$what"; else pass "$what"; fi
}
member() { runuser -u alice -- "$@"; }
outsider() { runuser -u mallory -- "$@"; }
json() { # FILTER (a Python expression over `j`): reads JSON on standard input
  python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"
}
status_json() { member systole status --json 2> /dev/null; }
heart_rate_count() { status_json | json 'j["workout"].get("heartRate", {}).get("count", 0)' 2> /dev/null || echo 0; }
count_above() { [ "$(heart_rate_count)" -gt "$1" ]; }
main_pid() { systemctl show -p MainPID --value systoled; }
running_with_new_pid() { # OLD_PID
  local now
  now=$(main_pid)
  [ "$now" != 0 ] && [ "$now" != "$1" ] && systemctl is-active --quiet systoled
}
watchdog_fed_after() { [ "$(systemctl show -p WatchdogTimestampMonotonic --value systoled)" -gt "$1" ]; }
apt_install() { # DEB LOG: the conffile a user changed is kept (what dpkg asks an administrator at the terminal)
  apt install -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$1" > "$OUT/$2" 2>&1
}
apt_logged() { # LOG COMMAND...: apt's output into OUT/LOG
  local log=$1
  shift
  apt "$@" > "$OUT/$log" 2>&1
}
# Paths as a Debian system has them, before the package and after its purge.
paths() {
  find /etc /var /usr/lib/systemd /lib/systemd /usr/share/dbus-1 /usr/lib/sysusers.d /usr/lib/tmpfiles.d \
    /usr/bin /usr/sbin /usr/share/doc /usr/share/man /usr/share/bash-completion /usr/share/zsh \
    /usr/share/fish -xdev 2> /dev/null | sort
}
paths > /run/paths-before
useradd --create-home mallory

record_workout() { # ACTIVITY: a workout as the member, ended once it has five heart-rate samples
  member systole start --activity "$1" > /dev/null || return 1
  wait_until "five heart-rate samples" count_above 4 || return 1
  member systole end --json > "$OUT/workout-$1.json"
}

if [ -n "$PREVIOUS" ]; then
  step "the previous version: apt install $PREVIOUS"
  check "the previous version installs" apt_install "$PREVIOUS" apt-previous.log
  useradd --create-home --groups systole alice
  wait_until "systoled active" systemctl is-active --quiet systoled
  check "a workout recorded with the previous version" record_workout walking
  echo '# A local change: dpkg keeps it across upgrades.' >> /etc/systole/systoled.toml
  old_pid=$(main_pid)
  step "the upgrade: apt install $DEB"
  since=$(date '+%Y-%m-%d %H:%M:%S')
  check "the upgrade installs" apt_install "$DEB" apt.log
  check "systoled restarted by the upgrade" wait_until "systoled restarted" running_with_new_pid "$old_pid"
  check "the configuration keeps the local change" grep -q '^# A local change' /etc/systole/systoled.toml
  walking=$(json 'j["id"]' < "$OUT/workout-walking.json" 2> /dev/null)
  member systole workouts > "$OUT/workouts-after-upgrade.txt" 2>&1
  check "the workout of the previous version is still there (${walking:0:8})" \
    grep -q "${walking:0:8}" "$OUT/workouts-after-upgrade.txt"
else
  step "apt install $DEB"
  since=$(date '+%Y-%m-%d %H:%M:%S')
  check "the package installs" apt_install "$DEB" apt.log
  useradd --create-home --groups systole alice
fi
check "the installed version is $(dpkg-deb -f "$DEB" Version)" \
  test "$(dpkg-query -W -f '${Version}' systole)" = "$(dpkg-deb -f "$DEB" Version)"

step "the service"
check "systoled started by the installation" wait_until "systoled active" systemctl is-active --quiet systoled
systemctl status --no-pager systoled | head -n 12
check "systoled is enabled and active (running)" test "$(systemctl is-enabled systoled) $(systemctl show -p \
  ActiveState,SubState --value systoled | paste -sd' ')" = "enabled active running"
check "systoled started at its first attempt (no restart: NRestarts $(systemctl show -p NRestarts --value \
  systoled))" test "$(systemctl show -p NRestarts --value systoled)" = 0
# Type=notify: systemd calls it active only once READY=1 came.
check "Type=notify and active: systoled sent READY" \
  test "$(systemctl show -p Type,ActiveState --value systoled | paste -sd' ')" = "notify active"
fed=$(systemctl show -p WatchdogTimestampMonotonic --value systoled)
check "the watchdog (WatchdogSec=$(systemctl show -p WatchdogUSec --value systoled)) is fed" \
  wait_until "a watchdog ping" watchdog_fed_after "$fed"
exposure=$(systemd-analyze security --no-pager systoled | sed -n 's/.*Overall exposure level.*: \([0-9.]*\).*/\1/p')
check "systemd-analyze security: exposure $exposure, at most 0.5" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 0.5) }'
check "the configuration is 0640 root:systole" test "$(stat -c '%a %U:%G' /etc/systole/systoled.toml)" = "640 root:systole"

step "as a member of group systole (alice)"
# Everything an outsider can see on the system bus from here on; checked at the end.
runuser -u mallory -- stdbuf -oL dbus-monitor --system > "$OUT/outsider-bus.txt" 2>&1 &
outsider_monitor=$!
member systole scan --seconds 8 | tee "$OUT/scan.txt"
check "systole scan lists the strap" grep -q "$BZ_PERIPHERAL_ADDR" "$OUT/scan.txt"
streaming() { member systole sensors --json | json '[s for s in j if s.get("state") == "streaming"][0]["address"]'; }
check "the default configuration (sensors = [\"any\"]) finds the strap and streams" \
  wait_until "the sensor streaming" streaming
member systole sensors --json > "$OUT/sensors.json"
member systole sensors
notify=$(json 'j[0].get("notify")' < "$OUT/sensors.json" 2> /dev/null)
check "its notifications travel by AcquireNotify ($notify)" test "$notify" = acquire

member systole start --activity running | tee "$OUT/start.txt"
check "a workout started with heart rate" wait_until "five heart-rate samples" count_above 4
member systole status | tee "$OUT/status.txt"
check "systole status shows the heart rate" grep -Eq '^Heart rate: [0-9]+ bpm' "$OUT/status.txt"
member systole tail -n 3 | tee "$OUT/tail.txt"
check "systole tail shows readings" grep -q ' bpm=' "$OUT/tail.txt"
# -f into a pipe: each line must arrive as it is written.
member systole tail -f -n 0 | cat > "$OUT/tail-follow.txt" &
follower=$!
check "systole tail -f writes each reading at once, into a pipe" \
  wait_until "two readings followed" has_lines "$OUT/tail-follow.txt" ' bpm=' 2
pkill -u alice -f 'systole tail' ; wait "$follower" 2> /dev/null
id=$(status_json | json 'j["workout"]["id"]')

step "as a user outside group systole (mallory)"
outsider systole status > "$OUT/outsider-status.txt" 2>&1
outsider_status=$?
cat "$OUT/outsider-status.txt"
check "systole status refused (status $outsider_status), no heart rate shown" \
  test "$outsider_status" != 0 -a "$(grep -c bpm "$OUT/outsider-status.txt")" = 0
refused "systole pause refused" outsider systole pause
outsider systole tail > "$OUT/outsider-tail.txt" 2>&1
cat "$OUT/outsider-tail.txt"
check "systole tail refused: permission denied" grep -qi 'permission denied' "$OUT/outsider-tail.txt"
refused "the live log unreadable" outsider cat /var/log/systole/live.log
refused "the store's folder closed" outsider ls /var/lib/systole

# The outsider tries the strap itself, through bluetoothd: while systoled holds AcquireNotify's socket, bluetoothd
# refuses every other subscription (and the measurement cannot be read).
hrm=$(busctl --json=short call org.bluez / org.freedesktop.DBus.ObjectManager GetManagedObjects | python3 -c '
import json, sys
objects = json.load(sys.stdin)["data"][0]
print(" ".join(p for p, i in objects.items()
               if i.get("org.bluez.GattCharacteristic1", {}).get("UUID", {}).get("data", "").startswith("00002a37")))')
echo "the Heart Rate Measurement characteristic, as bluetoothd shows it: $hrm"
check "bluetoothd shows the strap's Heart Rate Measurement characteristic" test -n "$hrm"
for path in $hrm; do
  outsider busctl call org.bluez "$path" org.bluez.GattCharacteristic1 StartNotify > "$OUT/outsider-notify.txt" 2>&1
  subscribed=$?
  check "the outsider's StartNotify on the strap refused: $(head -c 100 "$OUT/outsider-notify.txt")" \
    test "$subscribed" != 0
  refused "the outsider's AcquireNotify on the strap refused" \
    outsider busctl call org.bluez "$path" org.bluez.GattCharacteristic1 AcquireNotify 'a{sv}' 0
done

step "kill -9 systoled mid-workout"
count=$(heart_rate_count)
pid=$(main_pid)
killed_at=$(date +%s)
kill -9 "$pid"
check "systemd restarts it" wait_until "systoled restarted" running_with_new_pid "$pid"
restarted_at=$(date +%s)
same_workout() { [ "$(status_json | json 'j["workout"]["id"]')" = "$id" ]; }
check "the same workout carries on (${id:0:8})" wait_until "the workout recovered" same_workout
check "heart rate comes back" wait_until "new heart-rate samples" count_above "$count"
echo "restarted $((restarted_at - killed_at)) s after the kill; heart rate back $(($(date +%s) - killed_at)) s after it"
check "systemd counts the restart" test "$(systemctl show -p NRestarts --value systoled)" -ge 1

step "systole end, systole workouts"
member systole end --json > "$OUT/workout.json"
head -c 600 "$OUT/workout.json"; echo
samples=$(json 'j["statistics"]["heartRate"]["count"]' < "$OUT/workout.json")
check "the ended workout has its heart rate ($samples samples)" test "${samples:-0}" -gt "$count"
member systole workouts | tee "$OUT/workouts.txt"
check "systole workouts lists it" grep -q "${id:0:8}" "$OUT/workouts.txt"

step "what the outsider saw on the system bus"
kill "$outsider_monitor"; wait "$outsider_monitor" 2> /dev/null
# What reached the outsider, message by message (dbus-monitor's text). systoled's signals: any from a name that owned
# org.systole.Daemon. bluetoothd's heart rate: a PropertiesChanged with Value on the Heart Rate Measurement
# characteristic of a device (/org/bluez/hciN/dev_…; on the signal path there would be one per notification). The
# stand-in strap's own GATT objects (BlueZ's example peripheral, on this same bus; a real strap is across the radio)
# announce every value they send: that the parser finds those shows it would find bluetoothd's.
read -r systoled_signals bluetoothd_values peripheral_values < <(python3 - "$OUT/outsider-bus.txt" "$hrm" <<'PY2'
import re, sys
text = open(sys.argv[1], errors="replace").read()
hrm = set(sys.argv[2].split())
messages = re.split(r"\n(?=(?:signal|method call|method return|error) )", text)
owners, systoled, bluetoothd, peripheral = set(), 0, 0, 0
for m in messages:
    head = m.split("\n", 1)[0]
    sender = re.search(r"sender=(\S+)", head)
    path = re.search(r"path=([^;]+);", head)
    if "member=NameOwnerChanged" in head:
        names = re.findall(r'string "([^"]*)"', m)
        if len(names) == 3 and names[0] == "org.systole.Daemon" and names[2]:
            owners.add(names[2])
        continue
    if not head.startswith("signal") or not sender or not path:
        continue
    if sender.group(1) in owners or path.group(1).startswith("/org/systole"):
        systoled += 1
    if "member=PropertiesChanged" in head and '"org.bluez.GattCharacteristic1"' in m and '"Value"' in m:
        if path.group(1) in hrm:
            bluetoothd += 1
        elif not path.group(1).startswith("/org/bluez/hci"):
            peripheral += 1
print(systoled, bluetoothd, peripheral)
PY2
)
check "the outsider's monitor and this check see values (the stand-in strap's own: $peripheral_values)" \
  test "${peripheral_values:-0}" -gt 0
check "none of systoled's signals reached the outsider ($systoled_signals)" test "${systoled_signals:-x}" = 0
check "no heart rate of bluetoothd's reached the outsider ($bluetoothd_values)" test "${bluetoothd_values:-x}" = 0

step "the journal"
# Since this version's installation (an upgrade's previous version wrote its own lines before).
journalctl -u systoled -o cat --no-pager --since "$since" > "$OUT/systoled-journal.txt"
cat "$OUT/systoled-journal.txt"
check "no thread-priority noise" test "$(grep -c 'thread priority' "$OUT/systoled-journal.txt")" = 0
check "no start refused by the bus policy" test "$(grep -c 'not allowed to own' "$OUT/systoled-journal.txt")" = 0
echo "$(wc -l < "$OUT/systoled-journal.txt") lines from systoled and systemd about it"

step "apt remove"
check "apt remove" apt_logged apt-remove.log remove -y systole
refused "systoled stopped" systemctl is-active --quiet systoled
check "the store kept" test -n "$(ls -A /var/lib/systole 2> /dev/null)"
check "the live log kept" test -e /var/log/systole/live.log
check "the configuration kept" test -e /etc/systole/systoled.toml

step "apt purge"
check "apt purge" apt_logged apt-purge.log purge -y systole
paths > /run/paths-after
comm -13 /run/paths-before /run/paths-after > "$OUT/paths-left.txt"
echo "paths that were not there before the package (the users' own and apt's, nothing of systole's):"
cat "$OUT/paths-left.txt"
check "nothing of systole's left" test "$(grep -v '^/home/' "$OUT/paths-left.txt" | grep -c systole)" = 0
check "no statoverride left" test -z "$(dpkg-statoverride --list | grep systole)"
check "the package is gone" test "$(dpkg-query -W -f '${db:Status-Abbrev}' systole 2> /dev/null)" != "ii "

echo
echo "$problems problem(s)"
[ "$problems" = 0 ]
