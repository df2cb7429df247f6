"""check_rr.py FILE: reads an RR interval file two ways and prints one JSON object: "runs", the integers of each
block of lines between empty lines (systole's documented gap), and "loadtxt", what a generic one-column reader
(numpy.loadtxt, which skips empty lines) makes of the file, to show every line is a number it reads."""
import json, sys

import numpy

with open(sys.argv[1], "rb") as f:
    text = f.read().decode("ascii")
assert "\r" not in text, "LF line ends"
runs, run = [], []
assert text == "" or text.endswith("\n"), "a line end after the last interval"
for line in text[:-1].split("\n") if text else []:
    if line == "":
        runs.append(run)
        run = []
    else:
        assert line.isdigit(), repr(line)
        run.append(int(line))
if run:
    runs.append(run)
loaded = numpy.loadtxt(sys.argv[1], ndmin=1) if text else numpy.array([])
print(json.dumps({"runs": runs, "loadtxt": [float(x) for x in loaded], "ends_with_newline": text.endswith("\n")}))
