#!/usr/bin/env python3
"""What bluetoothd (or systole-sim playing it) showed on D-Bus, from `dbus-monitor` output, in a form that can be
compared between the two: the interfaces and property types of each kind of object, the order in which a sensor's
device properties change and its GATT objects appear while it connects, the methods called on org.bluez and the
error names replied.

usage: bluez-trace.py summary MONITOR.txt [--central hciN] [--ignore-adapter hciN]
       bluez-trace.py compare REAL.txt SIM.txt [--real-central hci1] [--real-ignore hci0] [--sim-central hci0]

`compare` prints every difference it finds and exits with 1 if there is one.
Only the standard library: it runs on the host and in the VM alike.
"""
import json
import re
import sys

HEADER = re.compile(
    r"^(signal|method call|method return|error) time=\S+ sender=(\S+) -> destination=(\(null destination\)|\S+)"
    r"(?: serial=(\d+))?(?: error_name=(\S+))?(?: reply_serial=(\d+))?"
    r"(?: path=([^;]+); interface=([^;]+); member=(\S+))?"
)
TOKEN = re.compile(r'"[^"\n]*"|[\[\](){}]|[^\s\[\](){}"]+')
# Device properties that show what the peripheral advertises or serves, not how bluetoothd behaves.
PERIPHERAL = {"Appearance", "ManufacturerData", "Modalias", "TxPower", "ServiceData", "Icon", "Class", "Name", "Alias",
              "UUIDs"}
INTEGERS = {"byte": "y", "int16": "n", "uint16": "q", "int32": "i", "uint32": "u", "int64": "x", "uint64": "t"}


class Parser:
    """dbus-monitor prints each argument as `type value`, containers with brackets."""

    def __init__(self, text):
        self.tokens = TOKEN.findall(text)
        self.at = 0

    def next(self):
        token = self.tokens[self.at]
        self.at += 1
        return token

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def values(self):
        result = []
        while self.peek() is not None:
            result.append(self.value())
        return result

    def value(self):
        kind = self.next()
        if kind == "string":
            return "s", self.next().strip('"')
        if kind == "object":
            self.next()  # "path"
            return "o", self.next().strip('"')
        if kind == "signature":
            return "g", self.next().strip('"')
        if kind == "boolean":
            return "b", self.next() == "true"
        if kind in INTEGERS:
            return INTEGERS[kind], int(self.next())
        if kind == "double":
            return "d", float(self.next())
        if kind == "unix":
            self.next()  # "fd"
            return "h", None
        if kind == "variant":
            return "v", self.value()
        if kind == "struct":
            self.next()  # "{"
            items = []
            while self.peek() != "}":
                items.append(self.value())
            self.next()
            return "(" + "".join(t for t, _ in items) + ")", items
        if kind == "dict":
            self.next()  # "entry"
            self.next()  # "("
            key, value = self.value(), self.value()
            self.next()  # ")"
            return "{" + key[0] + value[0] + "}", (key, value)
        if kind == "array":
            if self.peek() == "of":
                self.next()  # "of"
                self.next()  # "bytes"
                if self.peek() == "[":
                    self.next()
                    data = []
                    while self.peek() != "]":
                        data.append(int(self.next(), 16))
                    self.next()
                    return "ay", bytes(data)
                text = self.next().strip('"')
                if self.peek() == "+":  # `"text" + \0`
                    self.next()
                    self.next()
                return "ay", text.encode()
            self.next()  # "["
            items = []
            while self.peek() != "]":
                items.append(self.value())
            self.next()
            element = items[0][0] if items else "?"
            return "a" + element, items
        raise ValueError(f"unknown dbus-monitor type {kind!r}")


def messages(path):
    """Each message: its kind, sender, destination, serial, reply serial, path, interface, member, arguments."""
    result, current, body = [], None, []

    def arguments(text):
        try:
            return Parser(text).values()
        except (ValueError, IndexError):
            return None  # introspection XML and the like: strings over several lines, not needed here

    for line in open(path, encoding="utf-8", errors="replace"):
        match = HEADER.match(line)
        if match:
            if current:
                current["args"] = arguments("".join(body))
                result.append(current)
            kind, sender, destination, serial, error, reply, obj, interface, member = match.groups()
            current = dict(
                kind=kind, sender=sender, destination=destination, serial=serial, error=error,
                reply=reply, path=obj, interface=interface, member=member,
            )
            body = []
        elif current and line.startswith("   "):
            body.append(line)
    if current:
        current["args"] = arguments("".join(body))
        result.append(current)
    return result


def plain(value):
    """A parsed value as plain Python, variants unwrapped."""
    kind, data = value
    if kind == "v":
        return plain(data)
    if kind == "a?":
        return {}  # dbus-monitor prints an empty array without its type: it serves as an empty list or dict
    if kind.startswith("a{"):
        return {plain(k): plain(v) for _, (k, v) in data}
    if kind.startswith("a") and kind != "ay":
        return [plain(item) for item in data]
    if kind.startswith("("):
        return [plain(item) for item in data]
    return data


def types(properties):
    """`a{sv}` → {name: type signature inside the variant}."""
    return {plain(k): v[1][0] for _, (k, v) in properties[1]}


class Trace:
    """The part of a bus's traffic that bluetoothd (or the simulator) took part in, normalised."""

    def __init__(self, path, central, ignore=None):
        self.central = central
        self.ignore = ignore
        all_messages = messages(path)
        # bluetoothd's unique names: whoever emits signals about adapters (a restart gives a new one).
        self.bluez = {
            m["sender"] for m in all_messages
            if m["kind"] == "signal" and (m["path"] or "").startswith("/org/bluez/hci")
        }
        calls = {}
        self.events = []
        for m in all_messages:
            if m["kind"] == "method call" and m["destination"] == "org.bluez":
                if ignore and ignore in (m["path"] or ""):
                    continue
                calls[(m["sender"], m["serial"])] = m
                self.events.append(("call", self.norm(m["path"]), m["interface"], m["member"], m["args"]))
            elif m["kind"] in ("method return", "error") and m["sender"] in self.bluez:
                call = calls.get((m["destination"], m["reply"]))
                if call:
                    self.events.append(("return" if m["kind"] == "method return" else "error", call, m))
            elif m["kind"] == "signal" and m["sender"] in self.bluez:
                if m["args"] is None or ignore and ignore in (m["path"] or "") or any(
                    ignore and a[0] == "o" and ignore in a[1] for a in m["args"]
                ):
                    continue
                self.events.append(("signal", self.norm(m["path"]), m["interface"], m["member"], m["args"]))
            elif m["kind"] == "method call" and m["sender"] in self.bluez and not (m["path"] or "").startswith(
                "/org/bluez/example"
            ):
                # bluetoothd calling out: the agent, a registered GATT profile.
                if m["interface"] in ("org.bluez.Agent1", "org.bluez.GattProfile1", "org.freedesktop.DBus.ObjectManager"):
                    self.events.append(("callback", m["interface"], m["member"]))

    def norm(self, path):
        if path is None:
            return None
        path = path.replace(f"/{self.central}", "/hciC")
        path = re.sub(r"dev_[0-9A-F_]{17}", "dev_X", path)
        path = re.sub(r"service[0-9a-f]{4}", "serviceN", path)
        path = re.sub(r"char[0-9a-f]{4}", "charN", path)
        return re.sub(r"desc[0-9a-f]{4}", "descN", path)

    def kind(self, path):
        """What an object path names: adapter, device, service, characteristic or descriptor."""
        path = self.norm(path)
        for suffix, name in (("descN", "descriptor"), ("charN", "characteristic"), ("serviceN", "service"),
                             ("dev_X", "device"), ("hciC", "adapter")):
            if path.endswith(suffix):
                return name
        return path

    def interfaces(self):
        """{object kind: {interface: {property: type}}}, from GetManagedObjects, InterfacesAdded and changes."""
        shapes = {}

        def add(path, interface, props):
            if self.ignore and self.ignore in path:
                return
            entry = shapes.setdefault(self.kind(path), {}).setdefault(interface, {})
            for name, kind in props.items():
                entry.setdefault(name, set()).add(kind)

        for event in self.events:
            if event[0] == "return" and event[1]["member"] == "GetManagedObjects" and event[2]["args"]:
                for _, (obj, ifaces) in event[2]["args"][0][1]:
                    for _, (iface, props) in ifaces[1]:
                        add(obj[1], iface[1], types(props))
            elif event[0] == "signal" and event[3] == "InterfacesAdded":
                obj, ifaces = event[4]
                for _, (iface, props) in ifaces[1]:
                    add(obj[1], iface[1], types(props))
            elif event[0] == "signal" and event[3] == "PropertiesChanged":
                add(event[1], event[4][0][1], types(event[4][1]))
        return shapes

    def connection(self, skeleton=False):
        """Around the first Connect of a device: its property changes (name=value, sorted within one signal) and
        GATT objects appearing, in order, up to the first Value change of a characteristic. The skeleton leaves
        out what depends on the peripheral (which services, its name) and collapses a burst of GATT objects."""
        steps, started = [], False
        for event in self.events:
            if event[0] == "call" and event[3] == "Connect" and event[1].endswith("dev_X"):
                started = True
                steps.append("Connect()")
            if not started:
                continue
            if event[0] == "signal" and event[3] == "PropertiesChanged":
                changed = plain(event[4][1])
                if event[1].endswith("charN") and "Value" in changed:
                    steps.append("Value notification")
                    break
                if event[1].endswith("dev_X"):
                    for name, value in sorted(changed.items()):
                        if name in ("RSSI", "TxPower", "ManufacturerData") or skeleton and name in PERIPHERAL:
                            continue
                        if isinstance(value, (list, dict)):
                            value = "…"
                        steps.append(f"{name}={value}")
            elif event[0] == "signal" and event[3] == "InterfacesAdded":
                kind = self.kind(event[4][0][1])
                label = f"+{kind}"
                if skeleton:
                    label = "+GATT objects" if kind in ("service", "characteristic", "descriptor") else "+Battery1"
                elif kind in ("service", "characteristic"):
                    uuid = plain(event[4][1]).get(
                        "org.bluez.GattService1" if kind == "service" else "org.bluez.GattCharacteristic1", {}
                    ).get("UUID", "")
                    label += f" {uuid[4:8]}"
                if not steps or steps[-1] != label:
                    steps.append(label)
            elif event[0] in ("return", "error") and event[1]["member"] in ("Connect", "StartNotify", "Pair"):
                steps.append(f"{event[1]['member']} -> {event[2]['error'] or 'ok'}")
        return steps

    def restart(self):
        """The first bluetoothd stop (from its adapter powering down to the adapter's removal), then what the
        client called on the new bluetoothd up to its StartNotify, each call once with its reply."""
        stop, calls, phase = [], [], None
        for event in self.events:
            if event[0] == "signal" and event[3] == "PropertiesChanged" and event[1] == "/org/bluez/hciC":
                state = plain(event[4][1]).get("PowerState")
                if state == "on-disabling" and phase is None:
                    phase = "stop"
                if phase == "stop" and state:
                    stop.append(f"adapter {state}")
                continue
            if phase == "stop":
                if event[0] == "signal" and event[3] == "InterfacesRemoved":
                    path, removed = plain(event[4][0]), plain(event[4][1])
                    kind = self.kind(path)
                    if removed == ["org.bluez.Battery1"]:
                        stop.append("Battery1 removed")
                    elif path == "/org/bluez" and "org.bluez.AgentManager1" in removed:
                        stop.append("/org/bluez removed")
                    elif kind == "device" and "org.bluez.Device1" in removed:
                        stop.append("device removed")
                    elif kind == "adapter" and "org.bluez.Adapter1" in removed:
                        stop.append("adapter removed")
                        phase = "after"
                elif event[0] == "signal" and event[3] == "PropertiesChanged" and event[1].endswith("dev_X"):
                    if plain(event[4][1]).get("Connected") is False:
                        stop.append("link down")
                elif event[0] == "callback" and event[2] == "Release":
                    stop.append(f"{event[1].split('.')[-1]}.Release")
            elif phase == "after" and event[0] in ("return", "error"):
                entry = f"{event[1]['member']} -> {event[2]['error'] or 'ok'}"
                if entry not in calls:
                    calls.append(entry)
                if event[1]["member"] == "StartNotify":
                    break
        return stop, calls

    def methods(self):
        """(interface.member, reply) of every call made on org.bluez, in first-seen order."""
        seen = []
        for event in self.events:
            if event[0] in ("return", "error"):
                entry = (f"{event[1]['interface']}.{event[1]['member']}", event[2]["error"] or "ok")
                if entry not in seen:
                    seen.append(entry)
        return seen


def summary(trace):
    shapes = trace.interfaces()
    return {
        "objects": {
            kind: {iface: {name: sorted(t) for name, t in sorted(props.items())} for iface, props in sorted(ifaces.items())}
            for kind, ifaces in sorted(shapes.items())
        },
        "connection": trace.connection(),
        "methods": [f"{m} -> {r}" for m, r in trace.methods()],
        "callbacks": sorted({f"{e[1]}.{e[2]}" for e in trace.events if e[0] == "callback"}),
    }


def compatible(a, b):
    """Property types agree; an empty array printed by dbus-monitor has no element type."""
    return a == b or (a.startswith("a") and b.startswith("a") and ("a?" in (a, b) or "a{?" in (a[:3], b[:3])))


def canonical(steps):
    """A connect with what bluetoothd 5.66 varies from run to run evened out: a new GATT database is announced
    just before or just after ServicesResolved, `Connected: true` is sometimes not signalled, and Battery1 (with
    its Percentage) appears whenever its read completes."""
    steps = [s for s in steps if s not in ("+Battery1", "Connected=True") and not s.startswith("Percentage=")]
    for i in range(len(steps) - 1):
        if steps[i] == "+GATT objects" and steps[i + 1] == "ServicesResolved=True":
            steps[i], steps[i + 1] = steps[i + 1], steps[i]
    return steps


def compare(real, sim):
    differences = []
    rs, ss = real.interfaces(), sim.interfaces()
    for kind in ("/org/bluez", "adapter", "device", "service", "characteristic", "descriptor"):
        for iface in sorted(set(rs.get(kind, {})) | set(ss.get(kind, {}))):
            rp, sp = rs.get(kind, {}).get(iface), ss.get(kind, {}).get(iface)
            if rp is None or sp is None:
                differences.append(f"{kind} {iface}: only {'in the simulator' if rp is None else 'in bluetoothd'}")
                continue
            for name in sorted(set(rp) | set(sp)):
                if name in PERIPHERAL and iface == "org.bluez.Device1":
                    continue
                if name not in sp:
                    differences.append(f"{kind} {iface}.{name} ({'/'.join(sorted(rp[name]))}): bluetoothd only")
                elif name not in rp:
                    differences.append(f"{kind} {iface}.{name} ({'/'.join(sorted(sp[name]))}): simulator only")
                else:
                    r, s = sorted(rp[name]), sorted(sp[name])
                    if not all(any(compatible(x, y) for y in s) for x in r):
                        differences.append(f"{kind} {iface}.{name}: bluetoothd {r}, simulator {s}")
    rc, sc = real.connection(skeleton=True), sim.connection(skeleton=True)
    if canonical(rc) != canonical(sc):
        differences.append("connecting:\n  bluetoothd: " + " → ".join(rc) + "\n  simulator:  " + " → ".join(sc))
    (r_stop, r_calls), (s_stop, s_calls) = real.restart(), sim.restart()
    if r_stop or s_stop:
        if r_stop != s_stop:
            differences.append(
                "bluetoothd stopping:\n  bluetoothd: " + " → ".join(r_stop) + "\n  simulator:  " + " → ".join(s_stop)
            )
        # What the client does next depends on when its own reconnect timer fires; compare what it called.
        if sorted(r_calls) != sorted(s_calls):
            differences.append(
                "after the restart:\n  bluetoothd: " + " → ".join(r_calls) + "\n  simulator:  " + " → ".join(s_calls)
            )
    rm, sm = dict(real.methods()), dict(sim.methods())
    for method in sorted(set(rm) & set(sm)):
        if rm[method] != sm[method]:
            differences.append(f"{method}: bluetoothd replied {rm[method]}, simulator {sm[method]}")
    return differences


def main(argv):
    if argv[:1] == ["summary"] and len(argv) >= 2:
        extra = dict(zip(argv[2::2], argv[3::2]))
        trace = Trace(argv[1], extra.get("--central", "hci0"), extra.get("--ignore-adapter"))
        print(json.dumps(summary(trace), indent=1, ensure_ascii=False))
        return 0
    if argv[:1] == ["compare"] and len(argv) >= 3:
        extra = dict(zip(argv[3::2], argv[4::2]))
        real = Trace(argv[1], extra.get("--real-central", "hci1"), extra.get("--real-ignore", "hci0"))
        sim = Trace(argv[2], extra.get("--sim-central", "hci0"))
        found = compare(real, sim)
        for line in found:
            print("DIFF " + line)
        print(f"{len(found)} difference(s) between bluetoothd and systole-sim")
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
