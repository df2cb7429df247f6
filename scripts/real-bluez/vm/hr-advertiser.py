#!/usr/bin/python3
"""hr-advertiser.py ADAPTER_PATH

Advertises on ADAPTER_PATH as a heart-rate strap does: connectable, general discoverable (AD flags 0x06), the
Heart Rate service UUID 0x180D and the name "BZ-HRM". Prints "advertising" once bluetoothd took both
advertisements, then runs until killed.

Two advertisements of one second each: the kernel rotates them, switching advertising off and on every second.
btvirt (BlueZ 5.66) sends an advertising report only when advertising or scanning is switched on, never
periodically, so without the rotation a central that starts scanning later would never see us."""
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

adapter = sys.argv[1]
sys.stdout.reconfigure(line_buffering=True)


class Advertisement(dbus.service.Object):
    """An org.bluez.LEAdvertisement1 object; bluetoothd reads its properties with GetAll."""

    def __init__(self, bus, path):
        super().__init__(bus, path)
        self.properties = {
            "Type": "peripheral",
            "ServiceUUIDs": dbus.Array(["180D"], "s"),
            "LocalName": "BZ-HRM",
            "Discoverable": dbus.Boolean(True),
            "Duration": dbus.UInt16(1),
        }

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties

    @dbus.service.method("org.bluez.LEAdvertisement1")
    def Release(self):
        print("released")


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
properties = dbus.Interface(bus.get_object("org.bluez", adapter), "org.freedesktop.DBus.Properties")
properties.Set("org.bluez.Adapter1", "Powered", dbus.Boolean(True))
properties.Set("org.bluez.Adapter1", "DiscoverableTimeout", dbus.UInt32(0))
properties.Set("org.bluez.Adapter1", "Discoverable", dbus.Boolean(True))
manager = dbus.Interface(bus.get_object("org.bluez", adapter), "org.bluez.LEAdvertisingManager1")
loop = GLib.MainLoop()
advertisements = [Advertisement(bus, f"/systole/advertisement{i}") for i in range(2)]


def register(remaining):
    # Asynchronous on purpose: bluetoothd calls GetAll on the object before it answers.
    if not remaining:
        print("advertising")
        return
    manager.RegisterAdvertisement(
        remaining[0]._object_path, {},
        reply_handler=lambda: register(remaining[1:]),
        error_handler=lambda error: (print("failed to register the advertisement:", error), loop.quit()))


register(advertisements)
loop.run()
sys.exit(1)
