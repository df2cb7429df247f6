"""The figures of Benchmarks/ecg.sh from what its run left in WORK (the simulator's emit log, the client's log, the
store), for the window START..END.

usage: ecg_report.py WORK START END START_TICKS END_TICKS TICKS_PER_SECOND SIZE_BEFORE SIZE_AFTER STRAPS PAGES
"""
import json
import sqlite3
import sys

work, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
cpu = (float(sys.argv[5]) - float(sys.argv[4])) / float(sys.argv[6])
size_before, size_after, straps = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
pages = int(sys.argv[10])
seconds = end - start


def microvolts(payload):
    data = bytes.fromhex(payload)
    values = []
    for i in range(10, len(data) - 2, 3):
        v = data[i] | data[i + 1] << 8 | data[i + 2] << 16
        values.append(v - (1 << 24) if v >= 1 << 23 else v)
    return values


emitted = {}
samples = 0
for line in open(f"{work}/emit.jsonl"):
    entry = json.loads(line)
    if not entry.get("pmd") or not entry["payload"].startswith("00"):
        continue
    values = microvolts(entry["payload"])
    if start <= entry["unix"] <= end:
        samples += len(values)
    emitted[(entry["sensor"], tuple(values[:8]))] = entry["unix"]

from_emit, from_first = [], []
for line in open(f"{work}/received.jsonl"):
    piece = json.loads(line)
    if not start <= piece["received"] <= end:
        continue
    sent = emitted.get((piece["sensor"], tuple(piece["uv"])))
    if sent is not None:
        from_emit.append((piece["received"] - sent) * 1000)
    from_first.append((piece["received"] - piece["start"]) * 1000)

store = sqlite3.connect(f"{work}/health.sqlite")
rows, packed, values = store.execute(
    "SELECT count(*), sum(length(channels)), sum(count) FROM waveform WHERE kind = 'electrocardiogram'").fetchone()
strap_hours = straps * seconds / 3600


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


print(f"window {seconds:.1f} s, {straps} straps, {samples} ECG samples emitted ({samples / seconds / straps:.1f} a second a strap)")
print(f"systoled CPU: {cpu:.2f} s, {cpu / seconds * 100:.1f} % of a core, {cpu / samples * 1e6:.2f} us per ECG sample")
print(f"store growth in the window: {(size_after - size_before) / 1e6:.3f} MB, {(size_after - size_before) / strap_hours / 1e6:.3f} MB per strap-hour")
hours = values / 130 / 3600
print(f"ECG in the store: {pages} bytes of pages for {values} values: {pages / hours / 1e6:.3f} MB per strap-hour")
print(f"ECG rows: {rows}, {values} values, {packed} packed bytes ({packed / values:.3f} B a value; "
      f"{packed / values * 130 * 3600 / 1e6:.3f} MB per strap-hour of values alone)")
print(f"live ECG, emit -> page: {len(from_emit)} pieces, p50 {percentile(from_emit, 0.5):.1f} ms, "
      f"p99 {percentile(from_emit, 0.99):.1f} ms, max {max(from_emit, default=float('nan')):.1f} ms")
print(f"live ECG, first sample -> page: p50 {percentile(from_first, 0.5):.1f} ms, "
      f"p99 {percentile(from_first, 0.99):.1f} ms, max {max(from_first, default=float('nan')):.1f} ms")
