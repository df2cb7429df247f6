"""pmc_reference.py SPEC.json: training load, fitness, fatigue and form per day, computed here from the published
definitions and not from systole's code, for the trends test to compare with.

TRIMP (Banister, 1991): the sum over the workout of minutes x HRr x 0.64 x e^(k x HRr), HRr = (HR - resting) /
(max - resting) within 0..1, k = 1.92 for men; each heart-rate record stands for the time until the next one (the
last until the workout's end). Daily load: the TRIMP of the workouts started that day (UTC). Fitness (CTL) and fatigue
(ATL): exponentially weighted averages with time constants of 42 and 7 days, as GoldenCheetah's Performance Manager
computes them (today = yesterday x e^(-1/T) + load x (1 - e^(-1/T))), from 0 before the first workout's day. Form
(TSB): yesterday's fitness less yesterday's fatigue. Resting heart rate of a day: the lowest mean of a workout's
records over five minutes (the records from one record to five minutes after it, the last at most 5 s before the
five minutes end), the lowest of the day's workouts. Zone minutes: the minutes of records at or above zone 2's lower
bound (60 % of the maximum heart rate), each standing until the next; energy: the files' calories in kJ (x 4.184).

SPEC: {"resting", "max", "activities": [{"start", "end", "calories", "records": [[unix s, bpm], ...]}], "from", "to"} with from
and to as YYYY-MM-DD. Prints a JSON list of {"day", "load", "fitness", "fatigue", "form", "resting", "energy", "zone_minutes"} from `from`
to `to`."""
import json
import math
import sys
from datetime import date, datetime, timedelta, timezone

spec = json.load(open(sys.argv[1]))
resting, maximum, k = spec["resting"], spec["max"], 1.92


def trimp(activity):
    records = activity["records"]
    total = 0.0
    for index, (when, bpm) in enumerate(records):
        until = records[index + 1][0] if index + 1 < len(records) else activity["end"]
        reserve = min(1.0, max(0.0, (bpm - resting) / (maximum - resting)))
        total += (until - when) / 60 * reserve * 0.64 * math.exp(k * reserve)
    return total


def zone_minutes(activity):
    records = activity["records"]
    total = 0.0
    for index, (when, bpm) in enumerate(records):
        until = records[index + 1][0] if index + 1 < len(records) else activity["end"]
        if bpm >= 0.6 * maximum:
            total += (until - when) / 60
    return total


def lowest_five_minutes(records):
    lowest = None
    for index, (start, _) in enumerate(records):
        window = [(when, bpm) for when, bpm in records[index:] if when < start + 300]
        if window[-1][0] + 5 >= start + 300:
            mean = sum(bpm for _, bpm in window) / len(window)
            lowest = mean if lowest is None else min(lowest, mean)
    return lowest


def day_of(seconds):
    return datetime.fromtimestamp(seconds, timezone.utc).date()


loads, resting_by_day, energy, zones = {}, {}, {}, {}
for activity in spec["activities"]:
    day = day_of(activity["start"])
    energy[day] = energy.get(day, 0.0) + activity["calories"] * 4.184
    zones[day] = zones.get(day, 0.0) + zone_minutes(activity)
    loads[day] = loads.get(day, 0.0) + trimp(activity)
    low = lowest_five_minutes(activity["records"])
    if low is not None:
        resting_by_day[day] = min(resting_by_day.get(day, low), low)
first = min(loads) if loads else date.fromisoformat(spec["from"])
start, end = date.fromisoformat(spec["from"]), date.fromisoformat(spec["to"])
fitness = fatigue = 0.0
out = []
day = min(first, start)
while day <= end:
    form = fitness - fatigue
    load = loads.get(day, 0.0)
    fitness = fitness * math.exp(-1 / 42) + load * (1 - math.exp(-1 / 42))
    fatigue = fatigue * math.exp(-1 / 7) + load * (1 - math.exp(-1 / 7))
    if day >= start:
        out.append({"day": day.isoformat(), "load": load, "fitness": fitness, "fatigue": fatigue, "form": form,
                    "resting": resting_by_day.get(day), "energy": energy.get(day, 0.0),
                    "zone_minutes": zones.get(day, 0.0)})
    day += timedelta(days=1)
print(json.dumps(out))
