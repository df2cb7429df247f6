"""NeuroKit2's artifact correction and time-domain HRV of the runs of beats a systole test gives, for the test to
compare with systole's own.

usage: neurokit_hrv.py INPUT.json   (prints JSON on standard output)

INPUT: {"runs": [{"origin": s, "ticks": [RR in 1/1024 s, ...]}, ...], "window": s or absent, "windows": n}
  Each run is corrected on its own by signal_fixpeaks(method="Kubios", iterative=True) on the positions its RR
  intervals add up to (sampling rate 1024). The corrected intervals of all runs then go to hrv_time as RRI and
  RRI_Time (each interval's end in seconds: the run's origin plus its position), so NeuroKit itself leaves out the
  successive differences across a gap (the time between two intervals is not the later interval).
  With "window" (seconds) and "windows" (a count), the same for each window: the intervals whose end is in
  [k * window, (k + 1) * window), the last window also taking what ends later.

OUTPUT: {"runs": [{"peaks": [...], "changes": n, "kinds": {...}, "corrected": n}], "all": HRV,
         "windows": [HRV or null]}
  HRV: {"MeanNN", "SDNN", "RMSSD", "pNN50", "count"} in ms and percent.
  "changes" counts what NeuroKit's correction functions change, pass by pass (a beat moved in two passes twice):
  extra beats deleted, missed beats inserted, misaligned beats moved (not those at positions it skips); "kinds"
  splits it. "corrected" counts the corrected beats: the corrected beats not among the beats given, and the beats
  deleted as extra.
"""

import importlib
import json
import sys
import warnings

import numpy as np

import neurokit2 as nk

warnings.simplefilter("ignore")
fixpeaks = importlib.import_module("neurokit2.signal.signal_fixpeaks")
RATE = 1024

# Count what the correction functions change, by wrapping NeuroKit's own.
changes = {"extra": 0, "missed": 0, "misaligned": 0}
original_extra = fixpeaks._correct_extra
original_missed = fixpeaks._correct_missed
original_misaligned = fixpeaks._correct_misaligned


def counting_extra(extra_idcs, peaks):
    result = original_extra(extra_idcs, peaks)
    changes["extra"] += len(peaks) - len(result)
    return result


def counting_missed(missed_idcs, peaks):
    result = original_missed(missed_idcs, peaks)
    changes["missed"] += len(result) - len(peaks)
    return result


def counting_misaligned(misaligned_idcs, peaks):
    # The positions _correct_misaligned moves: those with two neighbours, past the second beat.
    idcs = np.array(misaligned_idcs)
    changes["misaligned"] += int(np.sum((idcs > 1) & (idcs < len(peaks) - 1)))
    return original_misaligned(misaligned_idcs, peaks)


fixpeaks._correct_extra = counting_extra
fixpeaks._correct_missed = counting_missed
fixpeaks._correct_misaligned = counting_misaligned


def hrv(rri, times):
    if len(rri) < 2:
        return None
    result = nk.hrv_time({"RRI": np.array(rri), "RRI_Time": np.array(times)})
    return {
        "MeanNN": float(result["HRV_MeanNN"].iloc[0]),
        "SDNN": float(result["HRV_SDNN"].iloc[0]),
        "RMSSD": float(result["HRV_RMSSD"].iloc[0]),
        "pNN50": float(result["HRV_pNN50"].iloc[0]),
        "count": len(rri),
    }


def main():
    with open(sys.argv[1]) as file:
        request = json.load(file)
    runs = []
    rri = []
    times = []
    for run in request["runs"]:
        peaks = np.concatenate([[0], np.cumsum(np.array(run["ticks"], dtype=np.int64))])
        for key in changes:
            changes[key] = 0
        info, clean = nk.signal_fixpeaks(peaks, sampling_rate=RATE, iterative=True, method="Kubios")
        clean = np.asarray(clean, dtype=np.int64)
        given = set(peaks.tolist())
        corrected = sum(1 for peak in clean.tolist() if peak not in given) + changes["extra"]
        runs.append(
            {"peaks": clean.tolist(), "changes": sum(changes.values()), "kinds": dict(changes), "corrected": corrected}
        )
        rri.extend((np.diff(clean) / RATE * 1000).tolist())
        times.extend((run["origin"] + clean[1:] / RATE).tolist())
    output = {"runs": runs, "all": hrv(rri, times), "windows": []}
    if "window" in request:
        window, count = request["window"], request["windows"]
        places = [min(count - 1, max(0, int(t // window))) for t in times]
        for k in range(count):
            chosen = [i for i, place in enumerate(places) if place == k]
            output["windows"].append(hrv([rri[i] for i in chosen], [times[i] for i in chosen]))
    json.dump(output, sys.stdout)


main()
