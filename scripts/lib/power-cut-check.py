"""What scripts/power-cut.sh checks after the cuts: for each, the store's integrity, the workout's recovery, and
the stored readings against the emitted ones. Prints a line per cut and "N cuts, N passed"; exit status 1 when one
failed.

usage: power-cut-check.py OUT CUTS SYNC   (SYNC: second, commit or both)
"""

import csv
import datetime
import json
import os
import sys

TICK = 0.075
# How much older than the cut a lost reading may be: the contract's second and a tick (sync = "second"), or a tick
# and the time the emulated disk may take to sync a commit (sync = "commit").
ALLOWED_LOSS = {"second": 1.0 + TICK, "commit": TICK + 0.25}
# The longest a reading may take from the emit to its stored time (the guest is emulated, on a busy machine), and
# how much earlier it may be stored: the simulator notes the time after sending, and systoled may have dated the
# reading on its arrival before the simulator's thread ran again.
LATENCY = 2.0
EARLY = 0.1


def emitted(path):
    """The heart rates the simulator sent, as (unix time, bpm), in order."""
    readings = []
    with open(path) as lines:
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the last line, cut mid-write
            if entry.get("malformed"):
                continue
            payload = bytes.fromhex(entry["payload"])
            bpm = payload[1] | payload[2] << 8 if payload[0] & 1 else payload[1]
            readings.append((entry["unix"], float(bpm)))
    return readings


def stored(path):
    """The heart rates of the exported workout, as (unix time, bpm), in order."""
    readings = []
    with open(path, newline="") as rows:
        for row in csv.DictReader(rows):
            if not row["bpm"]:
                continue
            at = datetime.datetime.strptime(row["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
            readings.append((at.replace(tzinfo=datetime.timezone.utc).timestamp(), float(row["bpm"])))
    return readings


def check(out, cut, sync):
    """The problems of one cut, and its line. `sync` is the cut's: second or commit."""
    folder = f"{out}/cut-{cut}"
    problems = []
    for name in ("emit.jsonl", "clock", "recording.json", "integrity.txt", "recovered.json", "stored.csv"):
        if not os.path.exists(f"{folder}/{name}"):
            return [f"{name} is missing: the boot after the cut did not get that far"], ""
    integrity = open(f"{folder}/integrity.txt").read().strip()
    if integrity != "ok":
        problems.append(f"integrity_check says {integrity!r}")
    workout = json.load(open(f"{folder}/recording.json")).get("workout", {}).get("id")
    recovered = json.load(open(f"{folder}/recovered.json"))
    if recovered.get("state") != "running" or recovered.get("workout", {}).get("id") != workout:
        problems.append(f"the workout {workout} was not recovered running: {json.dumps(recovered)[:300]}")
    cut_at = float(open(f"{folder}/clock").read().split()[0])
    sent = emitted(f"{folder}/emit.jsonl")
    kept = stored(f"{folder}/stored.csv")
    if len(kept) < 8:
        problems.append(f"only {len(kept)} readings stored, and the live log had shown 8 before the cut")
    beyond = len(kept) - len(sent)
    if beyond > 1:
        problems.append(f"{beyond} stored readings more than were emitted")
    for index, ((sent_at, sent_bpm), (kept_at, kept_bpm)) in enumerate(zip(sent, kept)):
        if sent_bpm != kept_bpm or not -EARLY <= kept_at - sent_at <= LATENCY:
            problems.append(
                f"stored reading {index + 1} ({kept_bpm:g} bpm at {kept_at:.3f}) is not emitted reading {index + 1} "
                f"({sent_bpm:g} bpm at {sent_at:.3f}): a reading was lost or invented before the cut"
            )
            break
    lost = sent[len(kept):]
    oldest = cut_at - lost[0][0] if lost else None
    if oldest is not None and oldest >= ALLOWED_LOSS[sync]:
        problems.append(
            f"{len(lost)} readings lost, the oldest emitted {oldest:.3f} s before the cut; "
            f"sync = \"{sync}\" allows {ALLOWED_LOSS[sync]:.3f} s"
        )
    line = (
        f"cut {cut}: {len(sent)} emitted, {len(kept)} stored, {len(lost)} lost"
        + (f" (the oldest emitted {oldest:.3f} s before the cut)" if lost else "")
        + (" and 1 stored whose emit line the cut took" if beyond == 1 else "")
        + f"; integrity {integrity}; workout recovered; sync = \"{sync}\""
    )
    return problems, line


def main():
    out, cuts, sync = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    passed = 0
    for cut in range(1, cuts + 1):
        # "both": second and commit by turns, second first (as scripts/power-cut.sh records them).
        mode = sync if sync != "both" else ("second" if cut % 2 else "commit")
        problems, line = check(out, cut, mode)
        if problems:
            print(f"power-cut: FAIL cut {cut}: " + "; ".join(problems))
        else:
            passed += 1
            print(f"power-cut: ok   {line}")
    print(f"power-cut: {cuts} cuts, {passed} passed")
    sys.exit(0 if passed == cuts else 1)


main()
