import DBus
import Foundation
import SystoleTestSupport
import Testing

@testable import BlueZSimulator

/// The simulator as a raw D-Bus client sees it: paths, property types, errors and sessions as BlueZ documents.
@Suite struct SimulatorBusTests {
    struct Fixture {
        let bus: PrivateBus
        let simulator: BlueZSimulator
        let client: DBusConnection

        func call(
            _ path: String,
            _ interface: String,
            _ method: String,
            _ arguments: [DBusValue] = []
        ) async throws
            -> [DBusValue]
        {
            try await client.call(
                destination: "org.bluez",
                path: path,
                interface: interface,
                method: method,
                arguments: arguments
            )
        }

        /// Connect() returns with the link up; ServicesResolved follows, and the GATT objects just after it.
        func waitForServices(_ path: String) async throws {
            try await waitUntil("the services of \(path) resolved") {
                let objects = try await objects()
                let hasCharacteristics = objects.contains {
                    $0.key.hasPrefix(path + "/") && $0.value["org.bluez.GattCharacteristic1"] != nil
                }
                return objects[path]?["org.bluez.Device1"]?["ServicesResolved"] == .boolean(true) && hasCharacteristics
            }
        }

        /// Discovers sensor 0 and connects it; returns its path (Connect() returned: the link is up).
        func discoverAndConnect() async throws -> String {
            _ = try await call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            let path = await devicePath()
            try await waitForDevice(path)
            _ = try await call(path, "org.bluez.Device1", "Connect")
            return path
        }

        /// The path of simulated sensor `index` on hci0.
        func devicePath(_ index: Int = 0) async -> String {
            "/org/bluez/hci0/dev_" + (await simulator.sensorAddresses[index]).replacingOccurrences(of: ":", with: "_")
        }

        /// The `PropertiesChanged` signals bluetoothd sends for the object at `path`.
        func propertyChanges(of path: String) async throws -> SignalStream {
            try await client.signals(
                matching: DBusMatchRule(
                    sender: "org.bluez",
                    path: path,
                    interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged"
                )
            )
        }

        /// Calls `org.bluez.AgentManager1.<method>` on `/org/bluez`.
        func agentManager(_ method: String, _ arguments: [DBusValue]) async throws -> [DBusValue] {
            try await call("/org/bluez", "org.bluez.AgentManager1", method, arguments)
        }

        /// Waits until discovery has made the device at `path` (it appears a moment after StartDiscovery).
        func waitForDevice(_ path: String) async throws {
            try await waitUntil("discovery finding \(path)") { try await objects()[path]?["org.bluez.Device1"] != nil }
        }

        func objects() async throws -> [String: [String: [String: DBusValue]]] {
            let reply = try await call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
            var result: [String: [String: [String: DBusValue]]] = [:]
            for entry in reply.first?.dictionaryEntries ?? [] {
                var interfaces: [String: [String: DBusValue]] = [:]
                for interface in entry.value.dictionaryEntries ?? [] {
                    interfaces[interface.key.string!] = interface.value.propertyMap
                }
                result[entry.key.string!] = interfaces
            }
            return result
        }
    }

    func withFixture(
        _ scenario: Scenario = Scenario(),
        emitLog: String? = nil,
        _ body: (Fixture) async throws -> Void
    )
        async throws
    {
        let bus = try await PrivateBus.start()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        // Started last, so the scenario's clock starts as close as possible to the test's first call.
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), emitLogPath: emitLog)
        try await simulator.start()
        defer {
            client.close()
            bus.stop()
        }
        try await body(Fixture(bus: bus, simulator: simulator, client: client))
        await simulator.stop()
    }

    func bluezError(_ body: () async throws -> Void) async -> DBusError? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            return nil
        }
    }

    @Test func theObjectTreeHasBlueZsPathsAndTypes() async throws {
        try await withFixture { f in
            var objects = try await f.objects()
            // As bluetoothd 5.66 lists them (scripts/real-bluez/bluez-trace.py compares the two).
            #expect(
                Set(try #require(objects["/org/bluez"]).keys)
                    == [
                        "org.freedesktop.DBus.Introspectable", "org.bluez.AgentManager1", "org.bluez.ProfileManager1",
                        "org.bluez.HealthManager1",
                    ]
            )
            let adapter = try #require(objects["/org/bluez/hci0"])
            #expect(adapter["org.bluez.GattManager1"] != nil)
            #expect(adapter["org.bluez.LEAdvertisingManager1"]?["SupportedInstances"]?.type == .byte)
            #expect(
                adapter["org.bluez.AdvertisementMonitorManager1"]?["SupportedMonitorTypes"] == .strings(["or_patterns"])
            )
            #expect(adapter["org.bluez.Adapter1"]?["Powered"] == .boolean(true))
            #expect(adapter["org.bluez.Adapter1"]?["Address"]?.type == .string)

            _ = try await f.call(
                "/org/bluez/hci0",
                "org.bluez.Adapter1",
                "SetDiscoveryFilter",
                [.propertyMap(["UUIDs": .strings(["180d"]), "Transport": .string("le")])]
            )
            _ = try await f.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            let path = await f.devicePath()
            objects = try await f.objects()
            let device = try #require(objects[path]?["org.bluez.Device1"])
            #expect(device["RSSI"]?.type == .int16)
            #expect(device["ManufacturerData"]?.type == .array(.dictEntry(key: .uint16, value: .variant)))
            #expect(device["Adapter"] == .objectPath("/org/bluez/hci0"))
            #expect(device["UUIDs"] == .strings(["0000180d-0000-1000-8000-00805f9b34fb"]))

            try await f.waitForDevice(path)
            _ = try await f.call(path, "org.bluez.Device1", "Connect")
            try await f.waitForServices(path)
            objects = try await f.objects()
            let characteristics = objects.filter { $0.value["org.bluez.GattCharacteristic1"] != nil }
            // Service Changed, the manufacturer name, 0x2A37–0x2A39 and the battery level; GAP stays in bluetoothd.
            #expect(
                Set(
                    characteristics.values.compactMap {
                        $0["org.bluez.GattCharacteristic1"]?["UUID"]?.string?.prefix(8)
                    }
                )
                    == ["00002a05", "00002a29", "00002a37", "00002a38", "00002a39", "00002a19"]
            )
            for (charPath, interfaces) in characteristics {
                #expect(
                    charPath.range(
                        of: #"^/org/bluez/hci0/dev_[0-9A-F_]{17}/service[0-9a-f]{4}/char[0-9a-f]{4}$"#,
                        options: .regularExpression
                    ) != nil
                )
                let properties = try #require(interfaces["org.bluez.GattCharacteristic1"])
                #expect(properties["Value"]?.type == .array(.byte))
                #expect(properties["Service"]?.type == .objectPath)
            }
            #expect(objects[path]?["org.bluez.Device1"]?["ServicesResolved"] == .boolean(true))
        }
    }

    @Test func invalidCallsGetBlueZErrors() async throws {
        try await withFixture { f in
            let transport = await bluezError {
                _ = try await f.call(
                    "/org/bluez/hci0",
                    "org.bluez.Adapter1",
                    "SetDiscoveryFilter",
                    [.propertyMap(["Transport": .string("usb")])]
                )
            }
            #expect(transport?.name == "org.bluez.Error.InvalidArguments")
            let remove = await bluezError {
                _ = try await f.call(
                    "/org/bluez/hci0",
                    "org.bluez.Adapter1",
                    "RemoveDevice",
                    [.objectPath("/org/bluez/hci0/dev_00_00_00_00_00_00")]
                )
            }
            #expect(remove?.name == "org.bluez.Error.DoesNotExist")
            let capability = await bluezError {
                _ = try await f.agentManager("RegisterAgent", [.objectPath("/a"), .string("Telepathy")])
            }
            #expect(capability?.name == "org.bluez.Error.InvalidArguments")
            _ = try await f.agentManager("RegisterAgent", [.objectPath("/a"), .string("NoInputNoOutput")])
            let twice = await bluezError {
                _ = try await f.agentManager("RegisterAgent", [.objectPath("/a"), .string("NoInputNoOutput")])
            }
            #expect(twice?.name == "org.bluez.Error.AlreadyExists")
            let notMine = await bluezError {
                _ = try await f.agentManager("RequestDefaultAgent", [.objectPath("/b")])
            }
            #expect(notMine?.name == "org.bluez.Error.DoesNotExist")
        }
    }

    @Test func notifySessionsBelongToClientsAndEndWhenTheyLeave() async throws {
        var scenario = Scenario()
        scenario.sensors[0].rate = 20
        try await withFixture(scenario) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            let measurement = path + "/service000a/char000b"
            let other = try await DBusConnection.connect(to: .address(f.bus.address))
            _ = try await other.call(
                destination: "org.bluez",
                path: measurement,
                interface: "org.bluez.GattCharacteristic1",
                method: "StartNotify"
            )
            // A second StartNotify from the same client succeeds, as bluetoothd's does.
            _ = try await other.call(
                destination: "org.bluez",
                path: measurement,
                interface: "org.bluez.GattCharacteristic1",
                method: "StartNotify"
            )
            let stopNone = await bluezError {
                _ = try await f.call(measurement, "org.bluez.GattCharacteristic1", "StopNotify")
            }
            #expect(stopNone?.name == "org.bluez.Error.Failed")
            let notifying = try await f.call(
                measurement,
                "org.freedesktop.DBus.Properties",
                "Get",
                [.string("org.bluez.GattCharacteristic1"), .string("Notifying")]
            )
            #expect(notifying == [.variant(.boolean(true))])
            other.close()
            let ended = try await eventually {
                let notifying = try await f.call(
                    measurement,
                    "org.freedesktop.DBus.Properties",
                    "Get",
                    [.string("org.bluez.GattCharacteristic1"), .string("Notifying")]
                )
                return notifying == [.variant(.boolean(false))]
            }
            #expect(ended, "a client leaving the bus ends its notify session")
        }
    }

    /// bluetoothd answers a StopNotify sent just before its client left (systoled stopping) with success: it takes
    /// the bus in order. The simulator may see the departure first; it must answer the same, and still refuse a
    /// client that never had a session.
    @Test func stopNotifyFromAClientThatHasJustLeftSucceedsAsWithBluetoothd() async throws {
        try await withFixture(Scenario()) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            let measurement = path + "/service000a/char000b"
            let other = try await DBusConnection.connect(to: .address(f.bus.address))
            _ = try await other.call(
                destination: "org.bluez",
                path: measurement,
                interface: "org.bluez.GattCharacteristic1",
                method: "StartNotify"
            )
            // The order the race produces, made certain: the departure handled, then the call.
            await f.simulator.clientLeft(other.uniqueName)
            try await f.simulator.stopNotify(path, .measurement, client: other.uniqueName)
            other.close()
            await f.simulator.clientLeft(":1.9999")
            let never = await bluezError {
                try await f.simulator.stopNotify(path, .measurement, client: ":1.9999")
            }
            #expect(never?.name == "org.bluez.Error.Failed")
        }
    }

    @Test func theEmitLogHasOneJSONLinePerNotification() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("emit-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        var scenario = Scenario()
        scenario.sensors[0].rate = 20
        try await withFixture(scenario, emitLog: log) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            _ = try await f.call(path + "/service000a/char000b", "org.bluez.GattCharacteristic1", "StartNotify")
            try await waitUntil("five notifications in the emit log") {
                let written = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                return written.split(separator: "\n").count >= 5
            }
        }
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 5)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect((object?["time"] as? String)?.hasSuffix("Z") == true)
            #expect(object?["unix"] is Double)
            #expect((object?["sensor"] as? String)?.count == 17)
            #expect((object?["payload"] as? String)?.isEmpty == false)
        }
    }

    @Test func scenarioFaultsPlayOnTheirOwnClock() async throws {
        var scenario = Scenario()
        scenario.connectTimeout = 0.2
        // Out of range from 20 s to 35 s, bluetoothd restarting at 38 s: times far enough apart that each step of the
        // test, however slow a busy machine makes it, falls where it means to. Changes are awaited as signals, which
        // queue, so none is missed.
        scenario.sensors[0].faults = [Scenario.FaultSpec(.disconnect, at: 20, for: 15)]
        scenario.restarts = [Scenario.Window(at: 38, for: 0.3)]
        let fixture = self
        let played = scenario
        try await withTimeout(.seconds(120), "the scenario's faults") {
            try await fixture.withFixture(played) { f in
                let owners = try await f.client.signals(
                    matching: DBusMatchRule(
                        sender: "org.freedesktop.DBus",
                        interface: "org.freedesktop.DBus",
                        member: "NameOwnerChanged",
                        arg0: "org.bluez"
                    )
                )
                let firstOwner = try #require(try await f.client.nameOwner(of: "org.bluez"))
                let path = await f.devicePath()
                let changes = try await f.propertyChanges(of: path)
                var connectedValues = changes.compactMap { $0.arguments[1].propertyMap?["Connected"] }
                    .makeAsyncIterator()
                _ = try await f.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
                try await f.waitForDevice(path)
                _ = try await f.call(path, "org.bluez.Device1", "Connect")
                #expect(try await connectedValues.next() == .boolean(true))
                try #require(await f.simulator.elapsed < .seconds(20), "connected before the window opened")
                // Out of range from 20 s to 35 s: the link drops and Connect() fails the way bluetoothd's does.
                #expect(try await connectedValues.next() == .boolean(false))
                #expect(await f.simulator.elapsed >= .seconds(20), "not before its time")
                let failed = await bluezError { _ = try await f.call(path, "org.bluez.Device1", "Connect") }
                try #require(await f.simulator.elapsed < .seconds(35), "the window was still open")
                #expect(failed?.name == "org.bluez.Error.Failed")
                #expect(failed?.message == "le-connection-abort-by-local")
                // bluetoothd restarts at 38 s: the name goes and comes back with a new owner.
                var iterator = owners.makeAsyncIterator()
                let gone = try #require(try await iterator.next())
                #expect(await f.simulator.elapsed >= .seconds(38), "not before its time")
                #expect(gone.arguments[1].string == firstOwner && gone.arguments[2].string == "")
                let back = try #require(try await iterator.next())
                #expect(back.arguments[1].string == "" && back.arguments[2].string?.isEmpty == false)
                #expect(back.arguments[2].string != firstOwner)
            }
        }
    }

    /// Records, from `signals`, what a connect of the device at `path` announces, up to Battery1 (its last step).
    func connectTrace(
        _ iterator: inout SignalStream.AsyncIterator,
        _ path: String
    )
        async throws -> [String]
    {
        var trace: [String] = []
        while trace.last != "battery" {
            let signal = try #require(try await iterator.next())
            switch signal.member {
            case "InterfacesAdded":
                let names = signal.arguments[1].dictionaryEntries?.compactMap(\.key.string) ?? []
                if names.contains("org.bluez.GattService1") { trace.append("service") }
                if names.contains("org.bluez.Battery1") { trace.append("battery") }
            case "PropertiesChanged" where signal.path == path:
                let changed = signal.arguments[1].propertyMap ?? [:]
                if changed["Connected"] == .boolean(true) { trace.append("connected") }
                if changed["ServicesResolved"] == .boolean(true) {
                    #expect(changed["UUIDs"] != nil, "UUIDs come with ServicesResolved")
                    trace.append("resolved")
                }
            default: break
            }
        }
        return trace
    }

    /// bluetoothd 5.66 has also been seen announcing the objects first, and leaving out `Connected: true`.
    @Test func theOtherOrdersBluetoothdUsesCanBePlayed() async throws {
        var scenario = Scenario()
        scenario.gattObjectsBeforeResolved = true
        scenario.quietConnected = true
        try await withFixture(scenario) { f in
            let signals = try await f.client.signals(matching: DBusMatchRule(sender: "org.bluez"))
            var iterator = signals.makeAsyncIterator()
            let path = try await f.discoverAndConnect()
            #expect(
                try await connectTrace(&iterator, path) == [
                    "service", "service", "service", "service", "resolved", "battery",
                ]
            )
            #expect(try await f.objects()[path]?["org.bluez.Device1"]?["Connected"] == .boolean(true))
        }
    }

    /// The example peripheral advertises "BZ-HRM" and its GAP name is "BlueZ 5.66": bluetoothd shows the
    /// advertised name until it resolves services, then the GAP name, in the ServicesResolved signal; an alias the
    /// user set stays; a restarted bluetoothd knows only the advertised name again.
    @Test func theGapNameReplacesTheAdvertisedNameWhenServicesResolve() async throws {
        var scenario = Scenario()
        scenario.sensors = [Scenario.SensorSpec()]
        scenario.sensors[0].name = "BZ-HRM"
        scenario.sensors[0].gapName = "BlueZ 5.66"
        scenario.sensors[0].paired = true
        try await withFixture(scenario) { f in
            let path = await f.devicePath()
            let changes = try await f.propertyChanges(of: path)
            var resolvedSignals = changes.compactMap { signal -> [String: DBusValue]? in
                let changed = signal.arguments[1].propertyMap ?? [:]
                return changed["ServicesResolved"] == .boolean(true) ? changed : nil
            }.makeAsyncIterator()
            func name() async throws -> (DBusValue?, DBusValue?) {
                let device = try await f.objects()[path]?["org.bluez.Device1"]
                return (device?["Name"], device?["Alias"])
            }
            #expect(try await name() == (.string("BZ-HRM"), .string("BZ-HRM")))
            _ = try await f.call(path, "org.bluez.Device1", "Connect")
            let resolved = try #require(try await resolvedSignals.next())
            #expect(resolved["Name"] == .string("BlueZ 5.66") && resolved["Alias"] == .string("BlueZ 5.66"))
            #expect(try await name() == (.string("BlueZ 5.66"), .string("BlueZ 5.66")))

            try await f.simulator.restartBluetoothd(downtime: .milliseconds(100))
            try await waitUntil("the device back after the restart") { try await f.objects()[path] != nil }
            #expect(try await name() == (.string("BZ-HRM"), .string("BZ-HRM")))
            _ = try await f.call(
                path,
                "org.freedesktop.DBus.Properties",
                "Set",
                [.string("org.bluez.Device1"), .string("Alias"), .variant(.string("My strap"))]
            )
            // The restarted bluetoothd may already be connecting it (the device is paired): connect if not.
            _ = try? await f.call(path, "org.bluez.Device1", "Connect")
            try await f.waitForServices(path)
            #expect(try await name() == (.string("BlueZ 5.66"), .string("My strap")))
        }
    }

    /// What the trace of bluetoothd 5.66 showed, pinned (docs/simulator.md, "Checked against bluetoothd").
    @Test func connectAndDisconnectFollowTheOrderBluetoothdUses() async throws {
        try await withFixture { f in
            let signals = try await f.client.signals(matching: DBusMatchRule(sender: "org.bluez"))
            var iterator = signals.makeAsyncIterator()
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            // The GATT objects of a new database come just after ServicesResolved, Battery1 last.
            #expect(
                try await connectTrace(&iterator, path) == [
                    "connected", "resolved", "service", "service", "service", "service", "battery",
                ]
            )

            let measurement = path + "/service000a/char000b"
            let read = await bluezError {
                _ = try await f.call(measurement, "org.bluez.GattCharacteristic1", "ReadValue", [.propertyMap([:])])
            }
            #expect(read == DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported"))
            _ = try await f.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")

            // A link loss: one signal with both false; GATT objects and the session stay.
            await f.simulator.takeOutOfRange(sensor: 0, for: .seconds(1))
            var lost: [String: DBusValue] = [:]
            var batteryRemoved = false
            while lost.isEmpty {
                let signal = try #require(try await iterator.next())
                if signal.member == "InterfacesRemoved", signal.arguments[1].strings == ["org.bluez.Battery1"] {
                    batteryRemoved = true
                }
                if signal.member == "PropertiesChanged", signal.path == path {
                    lost = signal.arguments[1].propertyMap ?? [:]
                }
            }
            #expect(batteryRemoved)
            #expect(lost == ["ServicesResolved": .boolean(false), "Connected": .boolean(false)])
            let again = await bluezError {
                _ = try await f.call(measurement, "org.bluez.GattCharacteristic1", "StartNotify")
            }
            #expect(again == DBusError(name: "org.bluez.Error.InProgress", message: "In Progress"))
            let offline = await bluezError {
                _ = try await f.call(
                    path + "/service000a/char000e",
                    "org.bluez.GattCharacteristic1",
                    "ReadValue",
                    [.propertyMap([:])]
                )
            }
            #expect(offline == DBusError(name: "org.bluez.Error.Failed", message: "Not connected"))
        }
    }

    @Test func aRestartedBluetoothdPowersItsAdaptersUpAfterTakingTheName() async throws {
        try await withFixture { f in
            let changes = try await f.propertyChanges(of: "/org/bluez/hci0")
            try await f.simulator.restartBluetoothd(downtime: .milliseconds(100), crash: true)
            var iterator = changes.makeAsyncIterator()
            let up = try #require(try await iterator.next())
            #expect(up.arguments[1].propertyMap == ["Powered": .boolean(true), "PowerState": .string("on")])
        }
    }

    /// bluetoothd 5.66 stopped by SIGTERM (as `systemctl restart bluetooth` does), in the order the VM showed.
    @Test func aStoppedBluetoothdTakesEverythingDownInOrderAndReleasesItsAgent() async throws {
        var scenario = Scenario()
        scenario.sensors[0].paired = true
        try await withFixture(scenario) { f in
            let released = Recorded()
            let agent = DBusObject(path: "/test/agent")
            agent.addInterface(
                DBusInterface(
                    "org.bluez.Agent1",
                    methods: [
                        DBusMethod("Release") { _ throws(DBusError) in
                            await released.append("agent released")
                            return []
                        }
                    ]
                )
            )
            f.client.export(agent)
            _ = try await f.agentManager("RegisterAgent", [.objectPath("/test/agent"), .string("NoInputNoOutput")])
            let path = await f.devicePath()
            _ = try await f.call(path, "org.bluez.Device1", "Connect")
            try await f.waitForServices(path)
            let signals = try await f.client.signals(matching: DBusMatchRule(sender: "org.bluez"))
            var iterator = signals.makeAsyncIterator()
            try await f.simulator.restartBluetoothd(downtime: .milliseconds(100))
            var trace: [String] = []
            while !trace.contains("adapter removed") {
                let signal = try #require(try await iterator.next())
                let changed = signal.arguments.count > 1 ? signal.arguments[1].propertyMap ?? [:] : [:]
                let object = signal.arguments.first?.string
                let removed = signal.member == "InterfacesRemoved" ? signal.arguments[1].strings ?? [] : []
                if removed == ["org.bluez.Battery1"] {
                    trace.append("battery removed")
                } else if signal.path == "/org/bluez/hci0", let state = changed["PowerState"]?.string {
                    trace.append("adapter \(state)")
                } else if signal.path == path, changed["Connected"] == .boolean(false) {
                    #expect(changed["ServicesResolved"] == .boolean(false))
                    trace.append("link down")
                } else if object == "/org/bluez", !removed.isEmpty {
                    trace.append("root removed")
                } else if object == path, removed.contains("org.bluez.Device1") {
                    trace.append("device removed")
                } else if object == "/org/bluez/hci0", removed.contains("org.bluez.Adapter1") {
                    trace.append("adapter removed")
                }
            }
            #expect(
                trace == [
                    "battery removed", "adapter on-disabling", "link down", "adapter off", "root removed",
                    "device removed", "adapter removed",
                ]
            )
            #expect(await released.items == ["agent released"])
        }
    }

    @Test func discoveryAnnouncesRSSIEverySecondEvenWhenUnchanged() async throws {
        try await withFixture { f in
            let path = await f.devicePath()
            let changes = try await f.client.signals(
                matching: DBusMatchRule(sender: "org.bluez", path: path, member: "PropertiesChanged")
            )
            _ = try await f.call("/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
            var iterator = changes.makeAsyncIterator()
            let start = ContinuousClock.now
            for _ in 0..<2 {
                let signal = try #require(try await iterator.next())
                #expect(signal.arguments[1].propertyMap?["RSSI"]?.type == .int16)
            }
            // Two announcements after the device appeared take about two seconds, not less than one.
            #expect(ContinuousClock.now - start > .milliseconds(900))
        }
    }
}

/// What a test object was told, in order.
actor Recorded {
    private(set) var items: [String] = []
    func append(_ item: String) { items.append(item) }
}
