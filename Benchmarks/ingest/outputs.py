"""The measured window of `Benchmarks/ingest.sh --outputs`: the clients of the outputs daemon (a live page's event
stream, a /metrics scrape at once and every 15 s (the interval of Prometheus's own example configuration), an MQTT subscriber on every topic) run from the start; after WARMUP seconds the
CPU time of both daemons is read from /proc and their live logs are followed, and after SECONDS again. Prints a
table (or JSON): each daemon's readings, CPU seconds and µs per reading, and the ratio outputs/plain.

usage: outputs.py WORK WARMUP SECONDS PLAIN_PID OUTPUTS_PID HTTP_PORT TOKEN MQTT_PORT SENSORS RATE JSON(0|1) CHECK(0|1)
"""
import http.client
import json
import os
import sys
import threading
import time
import urllib.request

import paho.mqtt.client as mqtt

(work, warmup, seconds, plain_pid, outputs_pid, http_port, token, mqtt_port, sensors, rate, as_json,
 check) = sys.argv[1:13]
warmup, seconds = float(warmup), float(seconds)
pids = {"plain": int(plain_pid), "outputs": int(outputs_pid)}
ticks = os.sysconf("SC_CLK_TCK")
counts = {"events": 0, "scrapes": 0, "mqtt": 0}
stop = threading.Event()


def cpu(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks


def events():
    connection = http.client.HTTPConnection("127.0.0.1", int(http_port), timeout=30)
    connection.request("GET", "/api/events", headers={"Authorization": "Bearer " + token})
    response = connection.getresponse()
    while not stop.is_set():
        line = response.fp.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            json.loads(line[6:])
            counts["events"] += 1


def scrapes():
    while True:
        request = urllib.request.Request(f"http://127.0.0.1:{http_port}/metrics",
                                         headers={"Authorization": "Bearer " + token})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
        counts["scrapes"] += 1
        if stop.wait(15):
            return


def on_message(client, userdata, message):
    counts["mqtt"] += 1


subscriber = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-watch")
subscriber.on_connect = lambda client, userdata, flags, reason, properties: client.subscribe("#")
subscriber.on_message = on_message
subscriber.connect("127.0.0.1", int(mqtt_port))
subscriber.loop_start()
for target in (events, scrapes):
    threading.Thread(target=target, daemon=True).start()

time.sleep(warmup)
logs = {name: open(f"{work}/{name}/live.log") for name in pids}
for log in logs.values():
    log.seek(0, 2)
start_cpu = {name: cpu(pid) for name, pid in pids.items()}
start_counts = dict(counts)
time.sleep(seconds)
end_cpu = {name: cpu(pid) for name, pid in pids.items()}
readings = {name: log.read().count(" bpm=") for name, log in logs.items()}
window_counts = {key: counts[key] - start_counts[key] for key in counts}
stop.set()
subscriber.loop_stop()

result = {"sensors": int(sensors), "rate": float(rate), "seconds": seconds, "clients": window_counts, "daemons": {}}
for name in pids:
    used = end_cpu[name] - start_cpu[name]
    result["daemons"][name] = {
        "readings": readings[name], "cpuSeconds": round(used, 3),
        "usPerReading": round(used / readings[name] * 1e6, 1) if readings[name] else None,
    }
plain, outputs = result["daemons"]["plain"]["usPerReading"], result["daemons"]["outputs"]["usPerReading"]
result["ratio"] = round(outputs / plain, 3) if plain and outputs else None
if as_json == "1":
    print(json.dumps(result))
else:
    print(f"outputs: {sensors} sensors at {rate} Hz, {seconds:.0f} s measured; clients in the window: "
          f"{window_counts['events']} events, {window_counts['scrapes']} scrapes, {window_counts['mqtt']} MQTT messages")
    for name, daemon in result["daemons"].items():
        print(f"  systoled {name:8} {daemon['readings']:8} readings  {daemon['cpuSeconds']:7.3f} s CPU  "
              f"{daemon['usPerReading']} µs/reading")
    print(f"  outputs / plain: {result['ratio']} (goal ≤ 1.10)")
# The check (the smoke run's) asks each client for something over the whole run: a scrape every 15 s may fall
# outside a short window.
if check == "1" and (not readings["plain"] or not readings["outputs"] or not all(counts.values())):
    print("ingest --outputs: a daemon logged no reading or a client received nothing", file=sys.stderr)
    sys.exit(1)
