"""check_csv.py FILE: reads a CSV file with Python's csv module (RFC 4180's dialect, "excel", strict: a stray
quote is an error), writes the rows back with the same dialect and says whether that gives the file's bytes again
(so every row ends in CRLF and exactly the fields that need quotes have them), and prints one JSON object: the
header, the rows as lists of strings, each row's time as seconds since the epoch, and the comparison."""
import csv, io, json, sys
from datetime import datetime

with open(sys.argv[1], "rb") as f:
    raw = f.read()
text = raw.decode("utf-8")  # strict: fails on bytes that are not UTF-8
rows = list(csv.reader(io.StringIO(text, newline=""), dialect="excel", strict=True))
again = io.StringIO(newline="")
csv.writer(again, dialect="excel").writerows(rows)


def seconds(value):
    assert value.endswith("Z"), value
    return datetime.fromisoformat(value[:-1] + "+00:00").timestamp()


print(json.dumps({
    "header": rows[0],
    "rows": rows[1:],
    "times": [seconds(row[0]) for row in rows[1:]],
    "rewritten_equal": again.getvalue() == text,
    "widths": sorted({len(row) for row in rows}),
}))
