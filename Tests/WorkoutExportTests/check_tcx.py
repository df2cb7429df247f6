"""check_tcx.py SCHEMA FILE...: validates each TCX file against Garmin's TrainingCenterDatabase v2 schema with
xmlschema, reads it back with Python's ElementTree, and prints one JSON list (one object per file): the schema's
errors and what the file says (sport, id, and per lap its values, tracks of (time, heart rate) and notes), so the
Swift test can compare them with what it encoded."""
import json, sys
import xml.etree.ElementTree as ET
from datetime import datetime

import xmlschema

NS = {"t": "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2"}
schema = xmlschema.XMLSchema(sys.argv[1])


def seconds(text):
    """An xsd:dateTime as seconds since the Unix epoch; fails unless it is UTC with a Z."""
    assert text.endswith("Z"), text
    return datetime.fromisoformat(text[:-1] + "+00:00").timestamp()


def value(element, path):
    found = element.find(path, NS)
    return None if found is None else found.text


def heart_rate(element, path):
    found = element.find(path + "/t:Value", NS)
    return None if found is None else int(found.text)


out = []
for path in sys.argv[2:]:
    with open(path, "rb") as f:
        raw = f.read()
    result = {"errors": [str(e) for e in schema.iter_errors(path)]}
    root = ET.fromstring(raw)
    activities = root.findall("t:Activities/t:Activity", NS)
    result["activities"] = len(activities)
    activity = activities[0]
    result["sport"] = activity.get("Sport")
    result["id"] = seconds(value(activity, "t:Id"))
    result["notes"] = value(activity, "t:Notes")
    laps = []
    for lap in activity.findall("t:Lap", NS):
        calories = value(lap, "t:Calories")
        laps.append({
            "start": seconds(lap.get("StartTime")),
            "total_time": float(value(lap, "t:TotalTimeSeconds")),
            "distance": float(value(lap, "t:DistanceMeters")),
            "calories": None if calories is None else int(calories),
            "average": heart_rate(lap, "t:AverageHeartRateBpm"),
            "maximum": heart_rate(lap, "t:MaximumHeartRateBpm"),
            "intensity": value(lap, "t:Intensity"),
            "trigger": value(lap, "t:TriggerMethod"),
            "tracks": [
                [[seconds(value(point, "t:Time")), heart_rate(point, "t:HeartRateBpm")]
                 for point in track.findall("t:Trackpoint", NS)]
                for track in lap.findall("t:Track", NS)
            ],
            "notes": value(lap, "t:Notes"),
        })
    result["laps"] = laps
    out.append(result)
print(json.dumps(out))
