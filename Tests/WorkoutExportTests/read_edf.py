"""Reads an EDF+ file with two independent readers, pyedflib (EDFlib) and MNE, and prints what each found as JSON,
for a systole test to hold against what it wrote. Any warning from either is an error.

usage: read_edf.py FILE.edf [--no-mne]
OUTPUT: {"pyedflib": {...}, "mne": {...} or null}
"""

import json
import sys
import warnings

warnings.simplefilter("error")

import pyedflib  # noqa: E402

path = sys.argv[1]
result = {}
with pyedflib.EdfReader(path) as reader:
    onsets, durations, texts = reader.readAnnotations()
    start = reader.getStartdatetime()
    result["pyedflib"] = {
        "fileType": reader.filetype,
        "labels": reader.getSignalLabels(),
        "units": [reader.getPhysicalDimension(i) for i in range(reader.signals_in_file)],
        "rates": [float(reader.getSampleFrequency(i)) for i in range(reader.signals_in_file)],
        "physical": [float(v) for v in reader.readSignal(0)],
        "signals": [[float(v) for v in reader.readSignal(i)] for i in range(reader.signals_in_file)],
        "digital": [int(v) for v in reader.readSignal(0, digital=True)],
        "annotations": [[float(o), str(t)] for o, t in zip(onsets, texts)],
        "patientName": reader.getPatientName(),
        "equipment": reader.getEquipment(),
        "start": start.isoformat(),
        "records": reader.datarecords_in_file,
        "recordDuration": reader.datarecord_duration,
    }
if "--no-mne" in sys.argv:
    result["mne"] = None
else:
    import mne  # noqa: E402

    mne.set_log_level("ERROR")
    raw = mne.io.read_raw_edf(path, preload=True)
    data = raw.get_data(picks=[0], units="uV")[0]
    result["mne"] = {
        "channels": raw.ch_names,
        "rate": float(raw.info["sfreq"]),
        "microvolts": [float(v) for v in data],
        "units": [str(ch["unit"]) for ch in raw.info["chs"]],
        "annotations": [[float(a["onset"]), str(a["description"])] for a in raw.annotations],
    }
json.dump(result, sys.stdout)
