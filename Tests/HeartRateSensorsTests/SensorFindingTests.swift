import BlueZ
import BlueZSimulator
import HeartRateSensors
import SystoleTestSupport
import Testing

/// How "any" and an address find their sensor: on every powered adapter, with or without an RSSI.
@Suite struct SensorFindingTests {
    /// Two adapters, the strap in range of the second only: "any" with no adapter configured searches both and
    /// connects through the one that sees it, and says so.
    @Test func anySearchesEveryPoweredAdapterAndSaysWhichItUses() async throws {
        var twoAdapters = scenario(.polarH10, rate: 4)
        twoAdapters.adapters = [Scenario.AdapterSpec(seesSensors: false), Scenario.AdapterSpec()]
        try await withSimulator(twoAdapters) { bt in
            // The search alone: with the auto-connect profile, bluetoothd (here the simulator, 150 ms after the
            // registration) may connect the strap before a slow search finds it, and the sensor then never connects
            // it itself (seen once with the suite's tests beside it).
            var options = fastOptions()
            options.registersAutoConnectProfile = false
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 3 }
            #expect(events.readings.count >= 3, "\(events.states)")
            let address = try #require(sensor.address)
            #expect(events.states.contains(.searching(adapters: ["hci0", "hci1"])), "\(events.states)")
            #expect(events.states.contains(.connecting(address, adapter: "hci1")), "\(events.states)")
            #expect(!events.states.contains(.connecting(address, adapter: "hci0")), "\(events.states)")
            // Found at the first attempt (the test's end cancels the sensor, which then reports a disconnect).
            let beforeStreaming = events.states.prefix { $0 != .streaming }
            #expect(
                beforeStreaming.allSatisfy { if case .disconnected = $0 { false } else { true } },
                "\(events.states)"
            )
        }
    }

    /// A controller that reports no RSSI (the kernel's btvirt, and some dongles): bluetoothd knows the strap and
    /// lists its Heart Rate service, without an RSSI. "any" takes it; it used to search for ever.
    @Test func anyTakesAHeartRateSensorBluetoothdKnowsWithoutAnRSSI() async throws {
        var noRSSI = scenario(.polarH10, rate: 4)
        noRSSI.adapters = [Scenario.AdapterSpec(reportsRSSI: false)]
        try await withSimulator(noRSSI) { bt in
            var options = fastOptions()
            options.discoveryTimeout = .seconds(20)
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { $0.readings.count >= 3 }
            #expect(events.readings.count >= 3, "\(events.states)")
            // Found at the first attempt (the test's end cancels the sensor, which then reports a disconnect).
            let beforeStreaming = events.states.prefix { $0 != .streaming }
            #expect(
                beforeStreaming.allSatisfy { if case .disconnected = $0 { false } else { true } },
                "\(events.states)"
            )
            let device = try #require(bt.client.devices.first { $0.address == sensor.address })
            #expect(device.rssi == nil)
        }
    }

    /// With `adapter` set, the others are left alone even when only they see the strap.
    @Test func aConfiguredAdapterIsTheOnlyOneSearched() async throws {
        var twoAdapters = scenario(.polarH10, rate: 4)
        twoAdapters.adapters = [Scenario.AdapterSpec(seesSensors: false), Scenario.AdapterSpec()]
        try await withSimulator(twoAdapters) { bt in
            var options = fastOptions()
            options.adapter = "hci0"
            options.discoveryTimeout = .milliseconds(500)
            let sensor = HeartRateSensor(
                client: bt.client,
                target: .anyHeartRateSensor,
                options: options,
                delegate: HeartRateSensorEventStream()
            )
            let events = await collect(sensor) { events in
                events.states.contains { if case .disconnected = $0 { true } else { false } }
            }
            #expect(events.states.first == .searching(adapters: ["hci0"]), "\(events.states)")
            let reason = events.states.compactMap { if case .disconnected(let r) = $0 { r } else { nil } }.first
            #expect(reason?.contains("within 0.5 seconds on hci0") == true, "\(reason ?? "")")
            #expect(events.readings.isEmpty)
        }
    }
}
