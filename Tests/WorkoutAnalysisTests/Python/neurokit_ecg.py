"""ECGs from NeuroKit2's ecg_simulate and the R-peaks its ecg_peaks finds in them, for a systole test to compare
with its own detector.

usage: neurokit_ecg.py INPUT.json   (prints JSON on standard output)

INPUT: {"rate": Hz, "cases": [{"seed": n, "duration": s, "heartRate": bpm, "noise": mV}, ...]}
  Each case is ecg_simulate(duration, sampling_rate=rate, noise, heart_rate, random_state=seed) (the default
  ECGSYN model), in mV, rounded to whole µV as a Polar H10 sends it; NeuroKit's peaks are those of
  ecg_peaks(ecg_clean(signal)) on the rounded signal, its default method ("neurokit").

OUTPUT: {"cases": [{"microvolts": [...], "peaks": [sample indices]}]}
"""

import json
import sys
import warnings

import numpy as np

import neurokit2 as nk

warnings.simplefilter("ignore")

request = json.load(open(sys.argv[1]))
rate = request["rate"]
cases = []
for case in request["cases"]:
    ecg = nk.ecg_simulate(
        duration=case["duration"],
        sampling_rate=rate,
        noise=case["noise"],
        heart_rate=case["heartRate"],
        random_state=case["seed"],
    )
    microvolts = np.rint(ecg * 1000)
    cleaned = nk.ecg_clean(microvolts, sampling_rate=rate)
    _, info = nk.ecg_peaks(cleaned, sampling_rate=rate)
    cases.append(
        {"microvolts": [int(v) for v in microvolts], "peaks": [int(p) for p in info["ECG_R_Peaks"]]}
    )
json.dump({"cases": cases}, sys.stdout)
