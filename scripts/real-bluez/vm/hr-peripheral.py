#!/usr/bin/python3
"""hr-peripheral.py ADAPTER_PATH

BlueZ's own example GATT server (bluez-test-scripts: the Heart Rate service 0x180D, 2A37 notified once a second
with flags 0x06 and energy on every 10th, 2A38 "chest", 2A39, and Battery 2A19) registered on one adapter. The
example registers on the first adapter bluetoothd lists, which could be the central's; this pins it to
ADAPTER_PATH. It prints "GATT application registered" once bluetoothd accepted it."""
import importlib.machinery
import importlib.util
import sys

EXAMPLE = "/usr/share/doc/bluez-test-scripts/examples/example-gatt-server"

adapter = sys.argv[1]
sys.stdout.reconfigure(line_buffering=True)
loader = importlib.machinery.SourceFileLoader("example_gatt_server", EXAMPLE)
example = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
loader.exec_module(example)
example.find_adapter = lambda bus: adapter
sys.argv = [EXAMPLE]
example.main()
