"""make_fit.py OUT HEART_RATES RR_INTERVALS: writes a FIT activity file for the import benchmark: a file ID, a
record with a heart rate every second, HRV messages of five RR intervals each (about 150 bpm), a session. Written
byte by byte (fit-tool takes minutes for a million records); the import's tests use fit-tool itself."""
import struct
import sys

out, heart_rates, rr_count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
FIT_EPOCH = 631_065_600
start = 1_790_000_000 - FIT_EPOCH
CRC_TABLE = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
             0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]


def crc(data, value=0):
    for byte in data:
        for nibble in (byte & 0xF, byte >> 4):
            value = ((value >> 4) & 0x0FFF) ^ CRC_TABLE[value & 0xF] ^ CRC_TABLE[nibble]
    return value


def definition(local, global_number, fields):
    body = struct.pack("<BBHB", 0, 0, global_number, len(fields))
    return bytes([0x40 | local]) + body + b"".join(bytes(field) for field in fields)


records = bytearray()
records += definition(0, 0, [(0, 1, 0x00), (1, 2, 0x84), (4, 4, 0x86)])  # file ID: type, manufacturer, created
records += bytes([0]) + struct.pack("<BHI", 4, 1, start)
records += definition(1, 20, [(253, 4, 0x86), (3, 1, 0x02)])  # record: timestamp, heart rate
for second in range(heart_rates):
    records += bytes([1]) + struct.pack("<IB", start + second, 120 + second % 40)
records += definition(2, 78, [(0, 10, 0x84)])  # hrv: five times, 1/1000 s
for first in range(0, rr_count, 5):
    times = [400 + (first + i) % 7 for i in range(5)]
    times = [t if first + i < rr_count else 0xFFFF for i, t in enumerate(times)]
    records += bytes([2]) + struct.pack("<5H", *times)
duration = max(heart_rates, 1)
records += definition(3, 18, [(253, 4, 0x86), (2, 4, 0x86), (7, 4, 0x86), (5, 1, 0x00)])  # session
records += bytes([3]) + struct.pack("<IIIB", start + duration, start, duration * 1000, 1)
header = struct.pack("<BBHI4s", 12, 0x20, 2184, len(records), b".FIT")
whole = header + bytes(records)
with open(out, "wb") as f:
    f.write(whole + struct.pack("<H", crc(whole)))
