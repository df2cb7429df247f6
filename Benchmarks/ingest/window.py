"""The measured window of Benchmarks/ingest.sh: after WARMUP seconds, samples the CPU time of systoled and bleak
from /proc, and that of the processes every consumer shares (dbus-daemon, the simulator), follows systoled's live
log and notes when each line becomes readable, and after SECONDS samples again; samples the private (anonymous)
memory of systoled and bleak twice a second for its peak. Prints one JSON object.

usage: window.py WORK WARMUP SECONDS DAEMON_PID BLEAK_PID(0: none) [BUS_PID SIM_PID]
"""
import json
import os
import sys
import time

work, warmup, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
pids = {"systoled": int(sys.argv[4]), "bleak": int(sys.argv[5])}
shared = {"dbus-daemon": int(sys.argv[6]), "systole-sim": int(sys.argv[7])} if len(sys.argv) > 7 else {}
ticks = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    """User + system CPU seconds of a process."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def status_kib(pid, field):
    """A memory figure from /proc/PID/status, in KiB: VmHWM (peak RSS) or RssAnon (private resident memory, RSS
    without the shared libraries' pages)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


time.sleep(warmup)
live = open(f"{work}/live.log")
live.seek(0, 2)
start = time.time()
cpu_start = {name: cpu(pid) for name, pid in pids.items() if pid}
shared_start = {name: cpu(pid) for name, pid in shared.items()}
arrivals, pending = [], ""
end = start + seconds
peak_private = {name: status_kib(pid, "RssAnon") for name, pid in pids.items() if pid}
window_rss = {name: status_kib(pid, "VmRSS") for name, pid in pids.items() if pid}
next_sample = start + 0.5
while time.time() < end:
    if time.time() >= next_sample:
        for name, pid in pids.items():
            if pid:
                peak_private[name] = max(peak_private[name], status_kib(pid, "RssAnon"))
                window_rss[name] = max(window_rss[name], status_kib(pid, "VmRSS"))
        next_sample += 0.5
    chunk = live.read()
    if not chunk:
        time.sleep(0.001)
        continue
    now = time.time()
    pending += chunk
    while "\n" in pending:
        line, pending = pending.split("\n", 1)
        arrivals.append([now, line])
stop = time.time()
result = {"start": start, "end": stop, "arrivals": arrivals,
          "shared": {name: {"cpuSeconds": cpu(pid) - shared_start[name]} for name, pid in shared.items()}}
for name, pid in pids.items():
    if pid:
        result[name] = {"cpuSeconds": cpu(pid) - cpu_start[name], "peakRSSKiB": status_kib(pid, "VmHWM"),
                        "peakPrivateKiB": max(peak_private[name], status_kib(pid, "RssAnon")),
                        "windowRSSKiB": max(window_rss[name], status_kib(pid, "VmRSS"))}
print(json.dumps(result))
