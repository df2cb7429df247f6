"""Prints the results of Benchmarks/ingest.sh: a table, the ratios, and with JSON=1 one JSON object.

usage: report.py WORK SENSORS RATE JSON(0|1) [CHECK(0|1)]
With CHECK=1 it exits 1 when a consumer lost more than 5 % of the notifications or systoled logged no reading.
"""
import bisect
import datetime
import json
import os
import re
import sys

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

result = {
    "sensors": sensors, "rate": rate, "offeredPerSecond": sensors * rate, "seconds": seconds, "sent": sent,
    "consumers": consumers,
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
for failure in failures:
    print(f"ingest check failed: {failure}", file=sys.stderr)
sys.exit(1 if failures else 0)
