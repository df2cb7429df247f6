"""Writes FIT activity files with fit-tool (PyPI, an encoder independent of systole's), for the import tests.

usage: write_fit.py SPEC.json   (writes each activity's "path")

SPEC: {"activities": [{"path", "start" (Unix s), "sport", "subSport", "manufacturer", "product", "serial",
       "productName", "calories", "records": [[unix s, bpm], ...], "rr": [s, ...], "pauses": [[from, to], ...],
       "laps": [[from, to], ...], "end" (Unix s)}]}
"""
import json
import sys

from fit_tool.fit_file_builder import FitFileBuilder
from fit_tool.profile.messages.activity_message import ActivityMessage
from fit_tool.profile.messages.device_info_message import DeviceInfoMessage
from fit_tool.profile.messages.event_message import EventMessage
from fit_tool.profile.messages.file_id_message import FileIdMessage
from fit_tool.profile.messages.hrv_message import HrvMessage
from fit_tool.profile.messages.lap_message import LapMessage
from fit_tool.profile.messages.record_message import RecordMessage
from fit_tool.profile.messages.session_message import SessionMessage
from fit_tool.profile.profile_type import Event, EventType, FileType, Sport, SubSport


def ms(seconds):
    return round(seconds * 1000)


def timer(builder, when, kind):
    event = EventMessage()
    event.event = Event.TIMER
    event.event_type = kind
    event.timestamp = ms(when)
    builder.add(event)


def write(activity):
    builder = FitFileBuilder(auto_define=True, min_string_size=50)
    file_id = FileIdMessage()
    file_id.type = FileType.ACTIVITY
    file_id.manufacturer = activity.get("manufacturer", 1)
    file_id.product = activity.get("product", 1)
    file_id.serial_number = activity.get("serial", 3_900_000_001)
    file_id.time_created = ms(activity["start"])
    builder.add(file_id)
    if "productName" in activity:
        info = DeviceInfoMessage()
        info.timestamp = ms(activity["start"])
        info.device_index = 0
        info.manufacturer = activity.get("manufacturer", 1)
        info.product_name = activity["productName"]
        builder.add(info)
    timer(builder, activity["start"], EventType.START)
    # Records and the timer's stops and starts in time order, as a device writes them.
    pauses = activity.get("pauses", [])
    timeline = [(when, 1, bpm) for when, bpm in activity.get("records", [])]
    timeline += [(paused, 0, EventType.STOP_ALL) for paused, _ in pauses]
    timeline += [(resumed, 0, EventType.START) for _, resumed in pauses]
    for when, is_record, value in sorted(timeline, key=lambda item: (item[0], item[1])):
        if is_record:
            record = RecordMessage()
            record.timestamp = ms(when)
            record.heart_rate = value
            builder.add(record)
        else:
            timer(builder, when, value)
    rr = activity.get("rr", [])
    for index in range(0, len(rr), 5):
        hrv = HrvMessage()
        hrv.time = rr[index:index + 5]
        builder.add(hrv)
    end = activity["end"]
    for start, stop in activity.get("laps", []):
        lap = LapMessage()
        lap.start_time = ms(start)
        lap.total_elapsed_time = stop - start
        lap.timestamp = ms(stop)
        builder.add(lap)
    timer(builder, end, EventType.STOP_ALL)
    session = SessionMessage()
    session.start_time = ms(activity["start"])
    session.timestamp = ms(end)
    session.total_elapsed_time = end - activity["start"]
    session.total_timer_time = end - activity["start"] - sum(b - a for a, b in pauses)
    session.sport = Sport(activity.get("sport", 1))
    session.sub_sport = SubSport(activity.get("subSport", 0))
    if "calories" in activity:
        session.total_calories = activity["calories"]
    builder.add(session)
    summary = ActivityMessage()
    summary.timestamp = ms(end)
    summary.num_sessions = 1
    summary.total_timer_time = session.total_timer_time
    builder.add(summary)
    builder.build().to_file(activity["path"])


for item in json.load(open(sys.argv[1]))["activities"]:
    write(item)
