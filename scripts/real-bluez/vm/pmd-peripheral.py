#!/usr/bin/python3
"""pmd-peripheral.py ADAPTER_PATH FRAMES_LOG

Polar's Measurement Data service (PMD) as a Polar H10 offers it, registered as a GATT application on ADAPTER_PATH
beside BlueZ's example Heart Rate peripheral: the control point (read: the features, ECG only; write: commands,
answered by indication) and the data characteristic (notify: ECG frames of 73 samples, 3 bytes each, every
73/130 s once ECG is started, stamped with the nanoseconds since 2000-01-01 of their last sample). Every frame's
values go to FRAMES_LOG, a line each, for the host to hold against what systoled stored. Prints "PMD application
registered" once bluetoothd took it."""
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

adapter, frames_log = sys.argv[1], open(sys.argv[2], "a", buffering=1)
sys.stdout.reconfigure(line_buffering=True)
SERVICE = "fb005c80-02e7-f387-1cad-8acd2d8df0c8"
CONTROL_POINT = "fb005c81-02e7-f387-1cad-8acd2d8df0c8"
DATA = "fb005c82-02e7-f387-1cad-8acd2d8df0c8"
GATT_SERVICE, GATT_CHARACTERISTIC = "org.bluez.GattService1", "org.bluez.GattCharacteristic1"
PROPERTIES = "org.freedesktop.DBus.Properties"
RATE, PER_FRAME = 130, 73


class Characteristic(dbus.service.Object):
    def __init__(self, bus, path, uuid, flags, service):
        super().__init__(bus, path)
        self.path, self.uuid, self.flags, self.service = path, uuid, flags, service
        self.notifying = False
        self.on_write = None

    def properties(self):
        return {GATT_CHARACTERISTIC: {"Service": dbus.ObjectPath(self.service), "UUID": self.uuid,
                                      "Flags": dbus.Array(self.flags, "s")}}

    def send(self, value):
        if self.notifying:
            self.PropertiesChanged(GATT_CHARACTERISTIC, {"Value": dbus.Array(value, "y")}, [])

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[GATT_CHARACTERISTIC]

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        # The features: ECG (measurement type 0) only.
        return dbus.Array([0x0F, 0x01, 0x00], "y")

    @dbus.service.method(GATT_CHARACTERISTIC, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if self.on_write:
            GLib.idle_add(self.on_write, [int(b) for b in value])

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StartNotify(self):
        self.notifying = True

    @dbus.service.method(GATT_CHARACTERISTIC)
    def StopNotify(self):
        self.notifying = False


class Service(dbus.service.Object):
    def __init__(self, bus, path):
        super().__init__(bus, path)
        self.path = path
        self.control_point = Characteristic(bus, path + "/char0", CONTROL_POINT, ["read", "write", "indicate"], path)
        self.data = Characteristic(bus, path + "/char1", DATA, ["notify"], path)
        self.control_point.on_write = self.command
        self.timer = None
        self.sample = 0

    def properties(self):
        return {GATT_SERVICE: {"UUID": SERVICE, "Primary": dbus.Boolean(True)}}

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.properties()[GATT_SERVICE]

    def command(self, value):
        opcode, kind = value[0], value[1] if len(value) > 1 else 0
        if kind != 0:
            self.control_point.send([0xF0, opcode, kind, 0x03])  # not supported: ECG only
        elif opcode == 0x01:  # settings: 130 Hz, 14 bits
            self.control_point.send([0xF0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x82, 0x00, 0x01, 0x01, 0x0E, 0x00])
        elif opcode == 0x02:
            if self.timer is not None:
                self.control_point.send([0xF0, 0x02, 0x00, 0x06])  # already in state
                return False
            self.control_point.send([0xF0, 0x02, 0x00, 0x00, 0x00])
            self.started = time.time()
            self.sent = 0
            self.timer = GLib.timeout_add(50, self.frames)
        elif opcode == 0x03:
            if self.timer is not None:
                GLib.source_remove(self.timer)
                self.timer = None
            self.control_point.send([0xF0, 0x03, 0x00, 0x00, 0x00])
            print("ECG stopped by the central")
        else:
            self.control_point.send([0xF0, opcode, kind, 0x01])  # invalid opcode
        return False

    def frames(self):
        # Every frame whose last sample is due by now.
        while self.started + (self.sent + PER_FRAME) / RATE <= time.time():
            values = []
            for _ in range(PER_FRAME):
                beat = self.sample % 100
                values.append(1200 if beat == 0 else -300 if beat == 1 else (self.sample * 37) % 61 - 30)
                self.sample += 1
            last = self.started + (self.sent + PER_FRAME - 1) / RATE
            stamp = int((last - 946684800) * 1e9)
            frame = [0x00] + list(stamp.to_bytes(8, "little")) + [0x00]
            for v in values:
                frame += list((v & 0xFFFFFF).to_bytes(3, "little"))
            if self.data.notifying:
                self.data.send(frame)
                frames_log.write(" ".join(map(str, values)) + "\n")
            self.sent += PER_FRAME
        return True


class Application(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, "/systole/pmd")
        self.service = Service(bus, "/systole/pmd/service0")

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {dbus.ObjectPath(self.service.path): self.service.properties()}
        for c in (self.service.control_point, self.service.data):
            objects[dbus.ObjectPath(c.path)] = c.properties()
        return objects


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
application = Application(bus)
manager = dbus.Interface(bus.get_object("org.bluez", adapter), "org.bluez.GattManager1")
loop = GLib.MainLoop()
manager.RegisterApplication(
    "/systole/pmd", {},
    reply_handler=lambda: print("PMD application registered"),
    error_handler=lambda error: (print("failed to register the PMD application:", error), loop.quit()))
loop.run()
sys.exit(1)
