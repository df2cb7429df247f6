import BlueZ
import BlueZSimulator
import DBus
import HeartRateProfile
import Synchronization
import SystoleTestSupport
import Testing

/// The object cache, typed views and error mapping, against the simulator on a private bus.
@Suite struct BlueZClientTests {
    @Test func discoveryWithTheHeartRateFilterFindsSensorsWithTheirProperties() async throws {
        try await withSimulator(scenario(.polarH10, count: 2)) { bt in
            let adapter = try bt.client.adapter(named: nil)
            #expect(adapter.name == "hci0")
            #expect(adapter.isPowered)
            #expect(adapter.devices.isEmpty)
            try await adapter.setDiscoveryFilter(uuids: [.heartRateService])
            try await adapter.startDiscovery()
            #expect(await eventually { adapter.devices.count == 2 && adapter.isDiscovering })
            let addresses = await bt.simulator.sensorAddresses
            for device in adapter.devices {
                #expect(addresses.contains(device.address?.description ?? ""))
                #expect(device.name?.hasPrefix("Polar H10 ") == true)
                #expect(device.alias == device.name)
                #expect(device.manufacturerName == "Polar Electro OY")
                #expect(device.manufacturerData.keys.contains(0x006B))
                #expect(device.rssi.map { (-100)...(-30) ~= $0 } == true)
                #expect(device.isHeartRateSensor)
                #expect(!device.isConnected && !device.isPaired && !device.servicesResolved)
                #expect(device.adapterPath == adapter.path)
            }
            try await adapter.stopDiscovery()
            // BlueZ drops RSSI when discovery stops: a stale RSSI would look like a live signal.
            #expect(await eventually { !adapter.isDiscovering && adapter.devices.allSatisfy { $0.rssi == nil } })
        }
    }

    @Test func aFilterForAnotherServiceFindsNoHeartRateSensor() async throws {
        var strapAndKeyboard = scenario(.garminHRM)
        strapAndKeyboard.sensors.append(Scenario.SensorSpec(model: .keyboard))
        try await withSimulator(strapAndKeyboard) { bt in
            let adapter = try bt.client.adapter(named: nil)
            try await adapter.setDiscoveryFilter(uuids: [BluetoothUUID(0x1812)])
            try await adapter.startDiscovery()
            // bluetoothd reports what it hears in the order it hears it, the strap before the keyboard: once the
            // keyboard is there, a strap the filter let through would be too.
            #expect(await eventually { !adapter.devices.isEmpty })
            #expect(adapter.devices.map(\.isHeartRateSensor) == [false])
        }
    }

    @Test func discoveryErrorsKeepBlueZNamesAndMessages() async throws {
        try await withSimulator(scenario()) { bt in
            let adapter = try bt.client.adapter(named: nil)
            try await adapter.startDiscovery()
            let twice = await #expect(throws: BlueZError.self) { try await adapter.startDiscovery() }
            #expect(twice?.kind == .inProgress)
            #expect(twice?.message == "Operation already in progress")
            try await adapter.stopDiscovery()
            let stopped = await #expect(throws: BlueZError.self) { try await adapter.stopDiscovery() }
            #expect(stopped?.kind == .failed)
            #expect(stopped?.message == "No discovery started")

            try await adapter.setPowered(false)
            #expect(await eventually { !adapter.isPowered })
            let off = await #expect(throws: BlueZError.self) { try await adapter.startDiscovery() }
            #expect(off?.kind == .notReady)
            let nonePowered = #expect(throws: BlueZError.self) { try bt.client.adapter(named: nil) }
            #expect(nonePowered?.kind == .notReady)
            #expect(nonePowered?.message.contains("bluetoothctl power on") == true)
        }
    }

    @Test func adapterSelectionPrefersTheFirstPoweredAndNamesMissingOnes() async throws {
        var twoAdapters = scenario()
        twoAdapters.adapters = [Scenario.AdapterSpec(powered: false), Scenario.AdapterSpec(powered: true)]
        try await withSimulator(twoAdapters) { bt in
            #expect(bt.client.adapters.map(\.name) == ["hci0", "hci1"])
            let first = try bt.client.adapter(named: nil)
            #expect(first.name == "hci1")
            let off = #expect(throws: BlueZError.self) { try bt.client.adapter(named: "hci0") }
            #expect(off?.kind == .notReady)
            #expect(off?.message == "adapter hci0 is off: turn it on with 'bluetoothctl power on'")
            let named = try bt.client.adapter(named: "hci1")
            #expect(named.name == "hci1")
            let missing = #expect(throws: BlueZError.self) { try bt.client.adapter(named: "hci7") }
            #expect(missing?.kind == .doesNotExist)
            #expect(missing?.message == "no adapter named hci7 (found: hci0, hci1)")
        }
    }

    @Test func withoutBluetoothdTheClientSaysSoAndFillsWhenItStarts() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        defer { connection.close() }
        let client = try await BlueZClient.connect(connection)
        defer { client.close() }
        #expect(!client.isServiceRunning)
        let error = #expect(throws: BlueZError.self) { try client.adapter(named: nil) }
        #expect(error?.kind == .serviceUnknown)
        #expect(error?.message.contains("bluetoothd is not running") == true)

        let simulator = try BlueZSimulator(scenario: scenario(), bus: .address(bus.address))
        try await simulator.start()
        #expect(await eventually { client.isServiceRunning && client.adapters.count == 1 })
        await simulator.stop()
        #expect(await eventually { !client.isServiceRunning && client.adapters.isEmpty })
    }

    @Test func theCacheIsRebuiltWhenBluetoothdRestarts() async throws {
        try await withSimulator(scenario(count: 1) { $0.paired = true }) { bt in
            let events = bt.client.events()
            let device = try #require(try await bt.device(0))
            #expect(device.isPaired)
            try await bt.connect(device)
            #expect(device.isConnected)

            try await bt.simulator.restartBluetoothd(downtime: .milliseconds(200))
            var sawStop = false
            var sawStart = false
            for await event in events {
                if case .serviceStopped = event { sawStop = true }
                if case .serviceStarted = event {
                    sawStart = true
                    break
                }
            }
            #expect(sawStop && sawStart)
            // A paired device comes back from storage, disconnected, with no GATT objects.
            let again = try #require(try await bt.device(0))
            #expect(again.isPaired && !again.isConnected)
            #expect(again.characteristic(.heartRateMeasurement, in: .heartRateService) == nil)
        }
    }

    @Test func gattReadsWritesAndTheirErrors() async throws {
        try await withSimulator(scenario(.wahooTICKR)) { bt in
            let adapter = try bt.client.adapter(named: nil)
            let device = try await bt.discoverFirstDevice(on: adapter)
            try await bt.connect(device)
            let location = try #require(device.characteristic(.bodySensorLocation, in: .heartRateService))
            #expect(try await location.readValue() == [1])
            #expect(location.flags == ["read"])
            let battery = try #require(device.characteristic(.batteryLevel, in: .batteryService))
            #expect(try BatteryLevel(decoding: try await battery.readValue()).percent >= 60)

            let controlPoint = try #require(device.characteristic(.heartRateControlPoint, in: .heartRateService))
            try await controlPoint.writeValue([0x01])
            let unknownOpcode = await #expect(throws: BlueZError.self) { try await controlPoint.writeValue([0x02]) }
            #expect(unknownOpcode?.kind == .failed)
            #expect(unknownOpcode?.attErrorCode == HeartRateControlPoint.valueNotSupportedATTError)

            let notNotifiable = await #expect(throws: BlueZError.self) {
                _ = try await location.notifications { _ in }
            }
            #expect(notNotifiable?.kind == .notSupported)
            // As bluetoothd does: connecting a connected device succeeds.
            try await device.connect()

            try await device.disconnect()
            #expect(await eventually { !device.isConnected && !device.servicesResolved })
            // bluetoothd keeps the GATT objects of a disconnected device; using them fails.
            #expect(device.characteristic(.heartRateMeasurement, in: .heartRateService) != nil)
            let offline = await #expect(throws: BlueZError.self) { _ = try await location.readValue() }
            #expect(offline?.kind == .failed)
            #expect(offline?.message == "Not connected")
            let notConnected = await #expect(throws: BlueZError.self) { try await device.disconnect() }
            #expect(notConnected?.kind == .notConnected)
        }
    }

    @Test func aNotifySessionDeliversEveryValueToItsHandlerAndEndsWithTheLink() async throws {
        try await withSimulator(scenario(.polarH10, rate: 20)) { bt in
            let (device, measurement) = try await bt.connectedMeasurement()
            let received = Mutex<[[UInt8]]>([])
            let session = try await measurement.notifications { notification in
                received.withLock { $0.append(notification.value) }
            }
            #expect(await eventually { measurement.isNotifying })
            #expect(await eventually { received.withLock { $0.count } >= 10 })
            try await device.disconnect()
            do {
                try await session.ended()
                Issue.record("the session should end with an error when the link drops")
            } catch let error as BlueZError {
                #expect(error.kind == .notConnected)
            }
            let values = received.withLock { $0 }
            let sent = await bt.simulator.emittedNotifications().map(\.payload)
            #expect(values.count >= 10)
            #expect(Array(sent.prefix(values.count)) == values)
        }
    }

    @Test func eventFiltersLeaveNotificationsOutAndLateStreamsStillGetTheirPath() async throws {
        try await withSimulator(scenario(.polarH10, rate: 20)) { bt in
            let adapter = try bt.client.adapter(named: nil)
            let device = try await bt.discoverFirstDevice(on: adapter)
            try await bt.connect(device)
            let quiet = bt.client.events(under: device.path) { !$0.isCharacteristicValue }
            let measurement = try #require(device.characteristic(.heartRateMeasurement, in: .heartRateService))
            let (values, arrived) = AsyncStream<GattNotification>.makeStream()
            let session = try await measurement.notifications { arrived.yield($0) }
            var notifications = values.makeAsyncIterator()
            for _ in 0..<5 { _ = await notifications.next() }
            // The client has dispatched this path at the connect: a stream opened now must still get its events, and
            // the session's values go to the session alone (read on the bus's fast path).
            let late = bt.client.events(under: device.path)
            for _ in 0..<5 { _ = await notifications.next() }
            try await device.disconnect()
            var lateValues = 0
            var lateSawDisconnect = false
            for await event in late {
                if event.isCharacteristicValue { lateValues += 1 }
                if case .propertiesChanged(let change) = event, change.changed["Connected"]?.bool == false {
                    lateSawDisconnect = true
                    break
                }
            }
            #expect(lateSawDisconnect)
            #expect(lateValues == 0)
            var sawDisconnect = false
            for await event in quiet {
                #expect(!event.isCharacteristicValue)
                if case .propertiesChanged(let change) = event, change.changed["Connected"]?.bool == false {
                    sawDisconnect = true
                    break
                }
            }
            #expect(sawDisconnect)
            await #expect(throws: BlueZError.self) { try await session.ended() }
        }
    }
}

@Suite struct BlueZErrorTests {
    @Test func namesMapToKindsAndUnknownNamesAreKept() {
        #expect(
            BlueZError(DBusError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")).kind == .notReady
        )
        #expect(BlueZError(DBusError(.serviceUnknown, "x")).kind == .serviceUnknown)
        #expect(BlueZError(DBusError(.noReply, "x")).kind == .timeout)
        #expect(BlueZError(DBusError(.timeout, "x")).kind == .timeout)
        #expect(BlueZError(DBusError(.unknownMethod, "x")).kind == .unknownObject)
        let future = BlueZError(DBusError(name: "org.bluez.Error.SomethingNew", message: "m"))
        #expect(future.kind.rawValue == "org.bluez.Error.SomethingNew")
        #expect(future.description == "SomethingNew: m")
    }

    @Test func attErrorsAreReadFromFailedMessages() {
        #expect(BlueZError(.failed, "Operation failed with ATT error: 0x80").attErrorCode == 0x80)
        #expect(BlueZError(.failed, "Operation failed with ATT error: 0x0e (Unlikely Error)").attErrorCode == 0x0E)
        #expect(BlueZError(.failed, "Not connected").attErrorCode == nil)
    }
}

/// Pairing and auto-connection through the objects systole exports to bluetoothd.
@Suite struct BlueZRegistrationTests {
    @Test func aRegisteredGattProfileMakesBluetoothdReconnectTheSensorByItself() async throws {
        try await withSimulator(scenario(.polarH10)) { bt in
            let adapter = try bt.client.adapter(named: nil)
            let device = try await bt.discoverFirstDevice(on: adapter)
            try await bt.connect(device)
            let application = GattProfileApplication()
            try await application.register(on: adapter)
            // The link drops; nobody calls Connect() again, yet the device is back when the sensor is.
            await bt.simulator.takeOutOfRange(sensor: 0, for: .seconds(1))
            #expect(await eventually { !device.isConnected })
            #expect(await eventually { device.isConnected && device.servicesResolved })
            await application.unregister(from: adapter)
        }
    }
}
