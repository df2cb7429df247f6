"""Prints the results of Benchmarks/ingest.sh: a table, the ratios, systoled's wakeups, and with JSON=1 one JSON
object.

usage: report.py WORK SENSORS RATE JSON(0|1) [CHECK(0|1)]
       report.py --wakeups WORK JSON(0|1) [CHECK(0|1)]   (the wakeup phases alone)
With CHECK=1 it exits 1 when a consumer lost more than 5 % of the notifications, systoled logged no reading, or in
the one-strap wakeup phase it logged no reading. The wakeup goals are printed, not checked.
"""
import bisect
import datetime
import json
import os
import re
import sys

# The wakeup phases (Benchmarks/ingest/wakeups.py): their file, their name in the JSON, what is printed, the goal.
WAKEUP_PHASES = [
    ("idle", "idle", "idle", 1, "no sensor in range, no workout"),
    ("strap", "oneStrap1Hz", "one strap 1 Hz", 5, "one Polar H10 at 1 Hz streaming, a workout running"),
]


def load_wakeups(work):
    """{JSON name: the phase's measure with its goal} for the phases that ran."""
    result = {}
    for file, key, _, goal, _ in WAKEUP_PHASES:
        if os.path.exists(f"{work}/wakeups-{file}.json"):
            result[key] = {**json.load(open(f"{work}/wakeups-{file}.json")), "goalPerSecond": goal}
    return result


def wakeup_failures(wakeups):
    strap = wakeups.get("oneStrap1Hz")
    if strap is not None and not strap.get("readings"):
        return ["in the one-strap wakeup phase systoled logged no reading while measured"]
    return []


def print_wakeups(wakeups):
    for _, key, label, goal, scenario in WAKEUP_PHASES:
        if key not in wakeups:
            continue
        w = wakeups[key]
        verdict = "met" if w["perSecond"] <= goal else "MISSED"
        readings = f", {w['readings']} readings logged" if "readings" in w else ""
        print(f"systoled wakeups/s {label + ':':<16} {w['perSecond']:6.2f}   goal ≤ {goal} ({verdict}); {scenario}; "
              f"{w['wakeups']} in {w['seconds']:.1f} s after {w['settleSeconds']:g} s settling{readings}, {w['threads']} threads "
              f"({w['threadsBorn']} born, {w['threadsExited']} exited)")
        print("    by thread: " + ", ".join(f"{name or '?'} {count}" for name, count in w["byThread"].items()))


if sys.argv[1] == "--wakeups":
    wakeups = load_wakeups(sys.argv[2])
    as_json, check = sys.argv[3] == "1", len(sys.argv) > 4 and sys.argv[4] == "1"
    failures = wakeup_failures(wakeups) if check else []
    if as_json:
        print(json.dumps({"wakeups": wakeups}))
    else:
        print("systoled's wakeups: voluntary context switches of all its threads per second")
        print_wakeups(wakeups)
    for failure in failures:
        print(f"ingest check failed: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)

work, sensors, rate, as_json = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
check = len(sys.argv) > 5 and sys.argv[5] == "1"
window = json.load(open(f"{work}/window.json"))
start, end = window["start"], window["end"]
seconds = end - start

emitted = {}
sent = 0
for line in open(f"{work}/emit.jsonl"):
    entry = json.loads(line)
    emitted.setdefault(entry["sensor"], []).append(entry["unix"])
    if start <= entry["unix"] < end:
        sent += 1


def unix(text):
    return datetime.datetime.strptime(text[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


if os.path.exists(f"{work}/live.log.1"):
    # The counts below read live.log alone; a rotation would make them (and the latency) wrong without a word.
    sys.exit("ingest: systoled's live log rotated during the run, so its lines cannot all be counted; "
             "raise live_log.max_size in the benchmark's configuration")

# systoled: a live-log line per reading (time received, sensor address, …); duration-only lines have no address.
readings = []
for line in open(f"{work}/live.log"):
    parts = line.split()
    if len(parts) > 2 and parts[1].count(":") == 5:
        readings.append((unix(parts[0]), parts[1]))
systoled_received = sum(1 for t, _ in readings if start <= t < end)

# Latency: emitted (the simulator's clock) → readable in the live log (the follower's clock, same machine). The
# notification a line shows is the sensor's latest emitted at or before the line's receive time.
latencies = []
for arrival, line in window["arrivals"]:
    parts = line.split()
    if len(parts) > 2 and parts[1] in emitted:
        times = emitted[parts[1]]
        index = bisect.bisect_right(times, unix(parts[0]) + 1e-6) - 1
        if index >= 0:
            latencies.append((arrival - times[index]) * 1000)
latencies.sort()


def percentile(p):
    return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else float("nan")


# Readings systoled itself dropped (its queue before the workout overflowed): it logs each drop as a warning with
# the count. The loss column cannot tell these from the window's edges; this can.
dropped = 0
if os.path.exists(f"{work}/systoled.err"):
    for line in open(f"{work}/systoled.err", errors="replace"):
        match = re.search(r"(\d+) readings were dropped", line)
        if match:
            dropped += int(match.group(1))

null = json.load(open(f"{work}/null.json"))
consumers = {
    "null": {"received": null["notifications"], "cpuSeconds": null["cpuSeconds"], "peakRSSKiB": null["peakRSSKiB"]},
    "systoled": {"received": systoled_received, "dropped": dropped, **window["systoled"]},
}
if "bleak" in window:
    bleak_received = 0
    if os.path.exists(f"{work}/bleak.log"):
        bleak_received = sum(1 for line in open(f"{work}/bleak.log") if start <= float(line.split()[0]) < end)
    consumers["bleak"] = {"received": bleak_received, **window["bleak"]}
for row in consumers.values():
    row["perSecond"] = row["received"] / seconds
    row["loss"] = max(0.0, 1 - row["received"] / sent) if sent else 0.0
    row["cpuMicrosecondsPerNotification"] = row["cpuSeconds"] / row["received"] * 1e6 if row["received"] else None

# The whole machine's cost of what systoled received: its CPU, the bus's and the simulator's. The last two serve
# every consumer in the window (each signal is routed to null, systoled and bleak), so per notification systoled
# received they count what all of them cost the bus and the simulator, not what systoled alone would.
machine = None
if window.get("shared"):
    processes = {"systoled": consumers["systoled"]["cpuSeconds"],
                 **{name: row["cpuSeconds"] for name, row in window["shared"].items()}}
    per = (lambda cpu: cpu / systoled_received * 1e6 if systoled_received else None)
    machine = {
        "cpuSeconds": sum(processes.values()), "cpuMicrosecondsPerNotification": per(sum(processes.values())),
        "perNotificationOf": "systoled", "sharedBy": list(consumers),
        "processes": {name: {"cpuSeconds": cpu, "cpuMicrosecondsPerNotification": per(cpu)}
                      for name, cpu in processes.items()},
    }
wakeups = load_wakeups(work)

result = {
    "sensors": sensors, "rate": rate, "offeredPerSecond": sensors * rate, "seconds": seconds, "sent": sent,
    "consumers": consumers,
    **({"machine": machine} if machine else {}),
    **({"wakeups": wakeups} if wakeups else {}),
    **({"idle": json.load(open(f"{work}/idle.json"))} if os.path.exists(f"{work}/idle.json") else {}),
    "latencyMilliseconds": {"p50": percentile(0.5), "p99": percentile(0.99),
                            "max": latencies[-1] if latencies else None, "lines": len(latencies)},
}
failures = []
if check:
    if sent == 0:
        failures.append("the simulator sent nothing in the measured window")
    for name, row in consumers.items():
        if row["loss"] > 0.05:
            failures.append(f"{name} received {row['received']} of {sent} notifications")
    if not latencies:
        failures.append("systoled's live log showed no reading in the measured window")
    failures += wakeup_failures(wakeups)
if as_json:
    print(json.dumps(result))
    sys.exit(1 if failures else 0)

print(f"ingest: {sensors} sensors × {rate:g} Hz = {sensors * rate:g} notifications/s offered; "
      f"{seconds:.1f} s measured; {sent} sent in that window")
print(f"{'consumer':<10} {'received':>9} {'loss':>7} {'per s':>8} {'CPU s':>7} {'µs CPU/notif':>13} {'peak RSS MiB':>13}"
      f" {'window RSS':>11} {'private MiB':>12}")
for name, row in consumers.items():
    per = row["cpuMicrosecondsPerNotification"]
    private = row.get("peakPrivateKiB")
    in_window = row.get("windowRSSKiB")
    print(f"{name:<10} {row['received']:>9} {row['loss'] * 100:>6.2f}% {row['perSecond']:>8.0f} "
          f"{row['cpuSeconds']:>7.2f} {per if per is not None else float('nan'):>13.1f} "
          f"{row['peakRSSKiB'] / 1024:>13.1f} {in_window / 1024 if in_window is not None else float('nan'):>11.1f} "
          f"{private / 1024 if private is not None else float('nan'):>12.1f}")
if machine:
    shared_names = [name for name in machine["processes"] if name != "systoled"]
    for name in shared_names + ["machine"]:
        row = machine if name == "machine" else machine["processes"][name]
        per = row["cpuMicrosecondsPerNotification"]
        print(f"{name:<10} {'':>9} {'':>7} {'':>8} {row['cpuSeconds']:>7.2f} "
              f"{per if per is not None else float('nan'):>13.1f}")
    print(f"  {', '.join(shared_names)}, machine (= systoled + {' + '.join(shared_names)}): per notification "
          f"systoled received;\n  the bus and the simulator serve every consumer in this window "
          f"({', '.join(machine['sharedBy'])}), not systoled alone")
if "idle" in result:
    idle = result["idle"]
    print(f"systoled idle (no workout, its sensor out of range, largest 10–20 s after start): RSS {idle['rssKiB'] / 1024:.1f} MiB, "
          f"private {idle['privateKiB'] / 1024:.1f} MiB")
print(f"systoled dropped {dropped} readings before the workout (counted in its log)")
lat = result["latencyMilliseconds"]
print(f"systoled emit → live-log line: p50 {lat['p50']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max'] or float('nan'):.1f} ms "
      f"({lat['lines']} lines)")
s = consumers["systoled"]["cpuMicrosecondsPerNotification"]
n = consumers["null"]["cpuMicrosecondsPerNotification"]
if s and n:
    print(f"systoled / null: {s / n:.2f}× CPU per notification")
if "bleak" in consumers and s and consumers["bleak"]["cpuMicrosecondsPerNotification"]:
    print(f"bleak / systoled: {consumers['bleak']['cpuMicrosecondsPerNotification'] / s:.2f}× CPU per notification")
print_wakeups(wakeups)
for failure in failures:
    print(f"ingest check failed: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
