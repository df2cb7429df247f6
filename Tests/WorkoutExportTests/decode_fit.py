"""decode_fit.py FILE: decodes a FIT file with Garmin's own decoder (garmin-fit-sdk, integrity check on) and with
fitdecode, and prints one JSON object: each decoder's errors, heart rates (Garmin's also with their times, in FIT
seconds), RR intervals (hrv, seconds), laps' starts and lengths, events and their times, the session and the athlete
(user_profile's friendly_name), so the Swift test can compare them with what it encoded."""
import json, sys

import fitdecode
from garmin_fit_sdk import Decoder, Stream

path = sys.argv[1]
out = {}

# Each check reads the stream through, so each gets a decoder of its own.
out["garmin_is_fit"] = Decoder(Stream.from_file(path)).is_fit()
out["garmin_integrity"] = Decoder(Stream.from_file(path)).check_integrity()
messages, errors = Decoder(Stream.from_file(path)).read(convert_datetimes_to_dates=False)
out["garmin_errors"] = [str(e) for e in errors]
out["garmin_heart_rates"] = [m.get("heart_rate") for m in messages.get("record_mesgs", [])]
out["garmin_record_times"] = [m.get("timestamp") for m in messages.get("record_mesgs", [])]
out["garmin_lap_times"] = [[m.get("start_time"), m.get("total_elapsed_time")] for m in messages.get("lap_mesgs", [])]
out["garmin_event_times"] = [m.get("timestamp") for m in messages.get("event_mesgs", [])]
out["garmin_hrv"] = [[t for t in m["time"] if t is not None] for m in messages.get("hrv_mesgs", [])]
session = (messages.get("session_mesgs") or [{}])[0]
out["garmin_session"] = {k: session.get(k) for k in
    ["sport", "sub_sport", "total_elapsed_time", "total_timer_time", "avg_heart_rate", "max_heart_rate",
     "total_calories", "num_laps"]}
out["garmin_events"] = [(m.get("event"), m.get("event_type")) for m in messages.get("event_mesgs", [])]
out["garmin_laps"] = len(messages.get("lap_mesgs", []))
out["garmin_battery"] = [m.get("battery_level") for m in messages.get("device_info_mesgs", [])]
out["garmin_manufacturers"] = [m.get("manufacturer") for m in messages.get("device_info_mesgs", [])]
out["garmin_athletes"] = [m.get("friendly_name") for m in messages.get("user_profile_mesgs", [])]

heart_rates, hrv, athletes, fit_errors = [], [], [], []
try:
    with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
        for frame in reader:
            if frame.frame_type == fitdecode.FIT_FRAME_DATA:
                if frame.name == "record":
                    heart_rates.append(frame.get_value("heart_rate"))
                elif frame.name == "user_profile":
                    athletes.append(frame.get_value("friendly_name"))
                elif frame.name == "hrv":
                    times = frame.get_value("time")
                    hrv.append([t for t in (times if isinstance(times, (list, tuple)) else [times]) if t is not None])
except Exception as error:
    fit_errors.append(repr(error))
out["fitdecode_errors"] = fit_errors
out["fitdecode_heart_rates"] = heart_rates
out["fitdecode_hrv"] = hrv
out["fitdecode_athletes"] = athletes
print(json.dumps(out))
