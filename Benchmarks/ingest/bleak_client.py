"""What a Linux user would write instead of systoled: a bleak client that subscribes to the Heart Rate
Measurement (0x2A37) of every sensor given, decodes each notification and appends a line to a log.

usage: python bleak_client.py LOG ADDRESS...
It connects through bluetoothd on the system bus (point DBUS_SYSTEM_BUS_ADDRESS at a private bus to use
systole-sim), prints "subscribed N" once every sensor notifies, and runs until SIGTERM or SIGINT; then it prints
one JSON line: {"notifications": n, "decodeErrors": e}.
"""
import asyncio
import json
import signal
import sys
import time

from bleak import BleakClient, BleakScanner

MEASUREMENT = "00002a37-0000-1000-8000-00805f9b34fb"


def decode(data: bytes):
    """0x2A37: flags, heart rate (8 or 16 bit), energy expended (16 bit, if flagged), RR intervals (1/1024 s)."""
    flags = data[0]
    offset = 1
    if flags & 0x01:
        bpm = int.from_bytes(data[offset:offset + 2], "little")
        offset += 2
    else:
        bpm = data[offset]
        offset += 1
    energy = None
    if flags & 0x08:
        energy = int.from_bytes(data[offset:offset + 2], "little")
        offset += 2
    rr = []
    if flags & 0x10:
        while offset + 2 <= len(data):
            rr.append(int.from_bytes(data[offset:offset + 2], "little") * 1000 / 1024)
            offset += 2
    if offset > len(data):
        raise ValueError("truncated")
    return bpm, energy, rr


async def main(log_path, addresses):
    counts = {"notifications": 0, "decodeErrors": 0}
    log = open(log_path, "a", buffering=1)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)

    def handler(address):
        def on_notification(_, data: bytearray):
            try:
                bpm, energy, rr = decode(bytes(data))
            except (ValueError, IndexError):
                counts["decodeErrors"] += 1
                return
            counts["notifications"] += 1
            parts = [f"{time.time():.6f}", address, f"bpm={bpm}"]
            if energy is not None:
                parts.append(f"energy={energy}")
            if rr:
                parts.append("rr=" + ",".join(f"{x:.0f}" for x in rr))
            log.write(" ".join(parts) + "\n")
        return on_notification

    # One scan finds them all (bluetoothd runs one discovery session per client), then connect a few at a time.
    found = {}
    wanted = {a.upper() for a in addresses}
    all_found = asyncio.Event()

    def seen(device, _):
        if device.address.upper() in wanted:
            found[device.address.upper()] = device
            if len(found) == len(wanted):
                all_found.set()

    async with BleakScanner(detection_callback=seen, service_uuids=["0000180d-0000-1000-8000-00805f9b34fb"]):
        await asyncio.wait_for(all_found.wait(), timeout=60)

    async def subscribe(address):
        client = BleakClient(found[address.upper()], timeout=30)
        await client.connect()
        await client.start_notify(MEASUREMENT, handler(address))
        return client

    clients = []
    for start in range(0, len(addresses), 10):
        clients += await asyncio.gather(*(subscribe(a) for a in addresses[start:start + 10]))
    print(f"subscribed {len(clients)}", flush=True)
    await stop.wait()
    print(json.dumps(counts), flush=True)
    log.close()
    # Leave without disconnecting: the bus connection closing ends the notify sessions, as for any client.


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
