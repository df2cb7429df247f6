"""The phases of `Benchmarks/ingest.sh --replication` (see Benchmarks/ingest/replication.sh): the backlog while
PostgreSQL is away, the catch-up once it starts (samples sent over the seconds until the replicated daemon says it
is caught up), then the measured window: both daemons' CPU seconds (from /proc) per reading they logged, the ratio
replicated/plain, and the lag of the rows committed in the window (their insert in PostgreSQL after their commit in
SQLite). Prints a table, or JSON.

usage: replication.py WORK BIN BACKLOG SECONDS PG_PORT SENSORS RATE JSON(0|1) CHECK(0|1)
"""
import json
import os
import subprocess
import sys
import time

work, binary, backlog, seconds, port, sensors, rate, as_json, check = sys.argv[1:10]
backlog, seconds = float(backlog), float(seconds)
pids = {name: int(open(f"{work}/{name}/pid").read()) for name in ("plain", "replicated")}
bus = open(f"{work}/replicated/bus.address").read()
ticks = os.sysconf("SC_CLK_TCK")
database = f"postgresql://systole:bench-replica@127.0.0.1:{port}/systole"


def cpu(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def threads(pid):
    """CPU seconds per thread name (pool threads summed)."""
    used = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                text = stat.read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        used[name] = used.get(name, 0) + (int(fields[11]) + int(fields[12])) / ticks
    return used


def replication():
    out = subprocess.run([f"{binary}/systole", "status", "--json", "--bus", bus], capture_output=True, text=True)
    return json.loads(out.stdout).get("replication", {}) if out.returncode == 0 else {}


def sql(query):
    return subprocess.run(["psql", database, "-XAtc", query], capture_output=True, text=True, check=True).stdout.strip()


time.sleep(backlog)
sent_before = replication().get("sentSamples", 0)
subprocess.run(["bash", "-c", "start_postgres"], check=True)
started, started_wall = time.monotonic(), time.time()
caught_up = None
while time.monotonic() - started < 600:
    if replication().get("caughtUp"):
        caught_up = time.monotonic()
        break
    time.sleep(0.1)
sent = replication().get("sentSamples", 0) - sent_before
drain = (caught_up or time.monotonic()) - started
# The throughput of the catch-up, from PostgreSQL's side: the backlog's rows over the time between the first of them
# arriving and the last (the wait for the retry and the connection left out).
backlog_rows, span = sql(
    "SELECT count(*), extract(epoch FROM max(replicated_at) - min(replicated_at)) FROM systole_quantity "
    f"WHERE committed_at < to_timestamp({started_wall})"
).split("|")
backlog_rows, span = int(backlog_rows or 0), float(span or 0)
throughput = backlog_rows / span if span > 0 else None

time.sleep(3)
logs = {name: open(f"{work}/{name}/live.log") for name in pids}
for log in logs.values():
    log.seek(0, 2)
window_start = time.time()
start_cpu = {name: cpu(pid) for name, pid in pids.items()}
start_threads = {name: threads(pid) for name, pid in pids.items()}
perf = None
if os.environ.get("PERF_OUT"):
    perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "2999", "-g", "-p", str(pids["replicated"]),
                             "-o", os.environ["PERF_OUT"]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(seconds)
if perf:
    perf.send_signal(2)
    perf.wait()
end_cpu = {name: cpu(pid) for name, pid in pids.items()}
end_threads = {name: threads(pid) for name, pid in pids.items()}
window_end = time.time()
readings = {name: log.read().count(" bpm=") for name, log in logs.items()}
# The rows committed in the window have arrived a moment later.
time.sleep(3)
lag = sql(
    "SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY d), percentile_cont(0.99) WITHIN GROUP (ORDER BY d), "
    "max(d) FROM (SELECT extract(epoch FROM replicated_at - committed_at) * 1000 AS d FROM systole_quantity "
    f"WHERE committed_at >= to_timestamp({window_start}) AND committed_at < to_timestamp({window_end})) AS l"
).split("|")
rows = int(lag[0]) if lag and lag[0] else 0

result = {
    "sensors": int(sensors), "rate": float(rate), "seconds": seconds,
    "catchUp": {"backlogSeconds": backlog, "samplesSent": sent, "secondsToCaughtUp": round(drain, 2),
                "backlogQuantityRows": backlog_rows, "arrivalSeconds": round(span, 3),
                "quantitySamplesPerSecond": round(throughput) if throughput else None},
    "lagMs": {"rows": rows, "p50": round(float(lag[1]), 1) if rows else None,
              "p99": round(float(lag[2]), 1) if rows else None, "max": round(float(lag[3]), 1) if rows else None},
    "daemons": {},
}
for name in pids:
    used = end_cpu[name] - start_cpu[name]
    result["daemons"][name] = {
        "readings": readings[name], "cpuSeconds": round(used, 3),
        "usPerReading": round(used / readings[name] * 1e6, 1) if readings[name] else None,
        "threads": {thread: round(end_threads[name][thread] - start_threads[name].get(thread, 0), 3)
                    for thread in end_threads[name]
                    if end_threads[name][thread] - start_threads[name].get(thread, 0) > 0},
    }
plain, replicated = (result["daemons"][n]["usPerReading"] for n in ("plain", "replicated"))
result["ratio"] = round(replicated / plain, 3) if plain and replicated else None
if as_json == "1":
    print(json.dumps(result))
else:
    c, l = result["catchUp"], result["lagMs"]
    print(f"replication: {sensors} sensors at {rate} Hz")
    print(f"  catch-up after {backlog:.0f} s without PostgreSQL: {c['samplesSent']} samples (with the beats' "
          f"series), caught up {c['secondsToCaughtUp']} s after it started (retry wait included); its "
          f"{c['backlogQuantityRows']} quantity samples arrived within {c['arrivalSeconds']} s: "
          f"{c['quantitySamplesPerSecond']} samples/s")
    print(f"  lag from the SQLite commit to PostgreSQL, {l['rows']} rows of the {seconds:.0f} s window: "
          f"p50 {l['p50']} ms, p99 {l['p99']} ms, max {l['max']} ms")
    for name, daemon in result["daemons"].items():
        print(f"  systoled {name:10} {daemon['readings']:8} readings  {daemon['cpuSeconds']:7.3f} s CPU  "
              f"{daemon['usPerReading']} µs/reading")
        print("      by thread: " + ", ".join(f"{t} {v:.2f} s" for t, v in sorted(daemon["threads"].items())))
    print(f"  replicated / plain: {result['ratio']} (goal ≤ 1.15)")
if check == "1" and (not readings["plain"] or not readings["replicated"] or not rows or caught_up is None):
    print("ingest --replication: a daemon logged no reading, or nothing arrived in PostgreSQL", file=sys.stderr)
    sys.exit(1)
