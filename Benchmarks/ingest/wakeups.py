"""How often a process wakes up: its voluntary context switches, summed over all its threads, over a window.

usage: wakeups.py PID SETTLE SECONDS [LIVE_LOG]
Waits SETTLE seconds, then samples /proc/PID/task/*/status every half second for SECONDS and prints one JSON object:
wakeups (the sum), seconds, perSecond, the threads seen, born and exited in the window, the wakeups by thread name
(comm), and with LIVE_LOG the readings systoled wrote to that live log in the window (to show it was streaming).

A voluntary context switch is a thread giving up the CPU to wait (a poll, a futex, a sleep); each is then ended by
a wakeup. Involuntary switches (preemption) are not wakeups and are left out. The kernel keeps the count per
thread, and /proc/PID/status shows the main thread's alone; the process total that getrusage would give (the live
threads plus the ones that exited) cannot be read from outside. So the counts are read per thread and the deltas
summed:
  counted:     every switch of a thread that lives through the window; a thread born in the window from 0 (all its
               switches are in the window); a thread that exits in the window up to its last sample.
  not counted: a thread's switches between its last sample and its exit (at most half a second of them), and a
               thread that is born and exits between two samples (Swift's pool retires idle threads after seconds,
               not milliseconds, so such a thread would have done almost nothing).
A thread id the kernel reuses in the window shows a count lower than its last: it is taken as a new thread.
Thread names are the kernel's 15 characters: libdispatch names Swift's pool threads by the end of their queue's name
("-qos.overcommit" is com.apple.root.default-qos.overcommit).
"""
import json
import os
import sys
import time

pid, settle, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
live_log = sys.argv[4] if len(sys.argv) > 4 else None
INTERVAL = 0.5


def threads():
    """{tid: (name, voluntary switches)} for the threads alive now; a thread exiting while read is skipped."""
    result = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as status:
                name, switches = "", None
                for line in status:
                    if line.startswith("Name:"):
                        name = line.split(None, 1)[1].strip() if len(line.split()) > 1 else ""
                    elif line.startswith("voluntary_ctxt_switches:"):
                        switches = int(line.split()[1])
            if switches is not None:
                result[int(tid)] = (name, switches)
        except (FileNotFoundError, ProcessLookupError):
            pass
    return result


def readings_in(path, offset):
    """The live-log lines after offset that are readings (their second field is a sensor address)."""
    if not path or not os.path.exists(path):
        return 0
    with open(path) as log:
        log.seek(offset)
        return sum(1 for line in log if len(line.split()) > 2 and line.split()[1].count(":") == 5)


time.sleep(settle)
log_offset = os.path.getsize(live_log) if live_log and os.path.exists(live_log) else 0
last = threads()
baseline = set(last)
start = time.monotonic()
wakeups, born, exited, by_name = 0, set(), set(), {}
next_sample = start + INTERVAL
while True:
    time.sleep(max(0.0, next_sample - time.monotonic()))
    now = threads()
    for tid, (name, switches) in now.items():
        previous = last.get(tid)
        if previous is None or switches < previous[1]:
            delta = switches
            if tid not in baseline:
                born.add(tid)
        else:
            delta = switches - previous[1]
        wakeups += delta
        by_name[name] = by_name.get(name, 0) + delta
    exited |= set(last) - set(now)
    last = now
    if time.monotonic() - start >= seconds:
        break
    next_sample += INTERVAL
elapsed = time.monotonic() - start
result = {"wakeups": wakeups, "seconds": elapsed, "settleSeconds": settle, "perSecond": wakeups / elapsed,
          "threads": len(baseline | born), "threadsBorn": len(born), "threadsExited": len(exited),
          "byThread": dict(sorted(by_name.items(), key=lambda item: -item[1]))}
if live_log:
    result["readings"] = readings_in(live_log, log_offset)
print(json.dumps(result))
