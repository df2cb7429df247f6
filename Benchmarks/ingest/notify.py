"""The measured window of `Benchmarks/ingest.sh --notify`: after WARMUP seconds, reads the CPU time of each side's
consumer (systoled or bleak), dbus-daemon and simulator from /proc, follows each consumer's log (noting when each
line becomes readable), and after SECONDS reads the CPU time again. Then it stops the simulators (SIGSTOP), lets the
consumers take what is still on its way, and counts every notification each simulator sent over the whole run (its
emit log records only what reached a subscribed client) against the lines its consumer wrote: the loss, exact,
with no window edges to blur it. Per side: CPU µs per notification received in the window of each process, the
loss, and for systoled the emit → line latency; and the goals. Prints a table, or one JSON object.

usage: notify.py WORK WARMUP SECONDS SENSORS RATE JSON(0|1) CHECK(0|1) SIDE...
"""
import bisect
import json
import os
import signal
import sys
import time
from datetime import datetime

work, warmup, seconds, sensors, rate, as_json, check = sys.argv[1:8]
sides = sys.argv[8:]
warmup, seconds = float(warmup), float(seconds)
ticks = os.sysconf("SC_CLK_TCK")
roles = {"consumer": "pid", "dbus-daemon": "bus.pid", "simulator": "sim.pid"}


def cpu(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def pid(side, role):
    with open(f"{work}/{side}/{roles[role]}") as file:
        return int(file.read())


def line_time(token):
    """A log line's receive time: systoled writes ISO 8601, the bleak client Unix seconds."""
    if token.endswith("Z"):
        return datetime.fromisoformat(token.replace("Z", "+00:00")).timestamp()
    return float(token)


time.sleep(warmup)
logs = {side: open(f"{work}/{side}/live.log") for side in sides}
for log in logs.values():
    log.seek(0, 2)
pending = {side: "" for side in sides}
arrivals = {side: [] for side in sides}
start = time.time()
cpu_start = {side: {role: cpu(pid(side, role)) for role in roles} for side in sides}
end = start + seconds
while time.time() < end:
    idle = True
    for side, log in logs.items():
        chunk = log.read()
        if not chunk:
            continue
        idle = False
        now = time.time()
        pending[side] += chunk
        *lines, pending[side] = pending[side].split("\n")
        arrivals[side] += [(now, line) for line in lines if " bpm=" in line]
    if idle:
        time.sleep(0.001)
stop = time.time()
cpu_end = {side: {role: cpu(pid(side, role)) for role in roles} for side in sides}


def emitted(side):
    """Per sensor, the emit times of what the simulator sent (sorted), how many fell in the window, and how many in
    all (read while the simulator is stopped, so no line is half written)."""
    by_sensor, in_window, total = {}, 0, 0
    with open(f"{work}/{side}/emit.jsonl") as log:
        for line in log:
            entry = json.loads(line)
            by_sensor.setdefault(entry["sensor"], []).append(entry["unix"])
            total += 1
            if start <= entry["unix"] < stop:
                in_window += 1
    return by_sensor, in_window, total


# Stopped, and always resumed: a simulator left stopped ignores the SIGTERM of the script's cleanup, which would
# then wait for it forever.
simulators = [pid(side, "simulator") for side in sides]
emits, totals = {}, {}
try:
    for simulator in simulators:
        os.kill(simulator, signal.SIGSTOP)
    time.sleep(2)
    for side in sides:
        emits[side] = emitted(side)
        with open(f"{work}/{side}/live.log") as log:
            received_total = sum(1 for line in log if " bpm=" in line)
        totals[side] = (emits[side][2], received_total)
finally:
    for simulator in simulators:
        try:
            os.kill(simulator, signal.SIGCONT)
        except ProcessLookupError:
            pass


def percentile(values, fraction):
    values = sorted(values)
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else None


result = {"sensors": int(sensors), "rate": float(rate), "seconds": round(stop - start, 3), "sides": {}}
for side in sides:
    sent_by_sensor, sent, _ = emits[side]
    received = 0
    latencies = []
    for readable, line in arrivals[side]:
        parts = line.split(" ")
        received_at = line_time(parts[0])
        if not start <= received_at < stop:
            continue
        received += 1
        times = sent_by_sensor.get(parts[1], [])
        # The notification a line stands for: its sensor's latest emit before the line's receive time (a bus tick
        # is far shorter than the 1/R s between a sensor's notifications).
        index = bisect.bisect_right(times, received_at + 0.002) - 1
        if index >= 0:
            latencies.append((readable - times[index]) * 1000)
    used = {role: cpu_end[side][role] - cpu_start[side][role] for role in roles}
    per = {role: round(value / received * 1e6, 1) if received else None for role, value in used.items()}
    sent_total, received_total = totals[side]
    result["sides"][side] = {
        "sent": sent, "received": received, "sentTotal": sent_total, "receivedTotal": received_total,
        # Negative when the consumer logged more than was sent (a duplicate): shown as it is, never hidden.
        "lost": sent_total - received_total,
        "loss": round(max(0.0, 1 - received_total / sent_total), 5) if sent_total else 1.0,
        "sentPerSecond": round(sent / (stop - start), 1), "receivedPerSecond": round(received / (stop - start), 1),
        "cpuSeconds": {role: round(value, 3) for role, value in used.items()},
        "usPerNotification": per,
        "consumerAndBusUs": round(per["consumer"] + per["dbus-daemon"], 1) if received else None,
        "latencyMs": {"p50": round(percentile(latencies, 0.5), 1), "p99": round(percentile(latencies, 0.99), 1)}
        if latencies and side != "bleak" else None,
    }

s = result["sides"]


def ratio(over, under, key):
    """over's figure / under's, or None when either side is missing or received nothing."""
    a = s.get(over, {}).get(key) if key == "consumerAndBusUs" else s.get(over, {}).get("usPerNotification", {}).get(key)
    b = s.get(under, {}).get(key) if key == "consumerAndBusUs" else s.get(under, {}).get("usPerNotification", {}).get(key)
    return round(a / b, 2) if a and b else None


goals = {
    "systoledAndBusSignalOverAcquire": ratio("signal", "acquire", "consumerAndBusUs"),
    "bleakOverAcquireSystoled": ratio("bleak", "acquire", "consumer"),
    "bleakOverSignalSystoled": ratio("bleak", "signal", "consumer"),
}
result["goals"] = {key: value for key, value in goals.items() if value is not None}
goals = result["goals"]

if as_json == "1":
    print(json.dumps(result))
else:
    print(f"notify: {sensors} sensors at {rate} Hz on each side, {result['seconds']:.0f} s measured (CPU and latency "
          f"in the window; sent, received and lost over the whole run)")
    print(f"  {'side':8} {'sent':>7} {'received':>9} {'lost':>6}   µs per notification: "
          f"{'consumer':>8} {'dbus-daemon':>11} {'both':>6} {'simulator':>9}   latency p50/p99")
    for side, r in s.items():
        per = r["usPerNotification"]
        latency = f"{r['latencyMs']['p50']} / {r['latencyMs']['p99']} ms" if r["latencyMs"] else "-"
        shown = {key: "-" if value is None else value for key, value in per.items()}
        both = "-" if r["consumerAndBusUs"] is None else r["consumerAndBusUs"]
        print(f"  {side:8} {r['sentTotal']:7} {r['receivedTotal']:9} {r['lost']:6}   {'':21}"
              f"{shown['consumer']:>8} {shown['dbus-daemon']:>11} {both:>6} {shown['simulator']:>9}   {latency}")
    if "systoledAndBusSignalOverAcquire" in goals:
        print(f"  systoled + dbus-daemon, signal / acquire: {goals['systoledAndBusSignalOverAcquire']} (goal ≥ 3)")
    if "bleakOverAcquireSystoled" in goals:
        print(f"  bleak / systoled on acquire: {goals['bleakOverAcquireSystoled']} (goal ≥ 5)")
    if "bleakOverSignalSystoled" in goals:
        print(f"  bleak / systoled on signal: {goals['bleakOverSignalSystoled']}")
if check == "1" and any(r["received"] == 0 or r["loss"] > 0.05 or r["lost"] < 0 for r in s.values()):
    print("ingest --notify: a side received nothing, lost more than 5 %, or logged more than was sent", file=sys.stderr)
    sys.exit(1)
