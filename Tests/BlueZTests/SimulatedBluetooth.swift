import BlueZ
import BlueZSimulator
import DBus
import Foundation
import SystoleTestSupport
import Testing

/// A private bus with `systole-sim`'s library playing bluetoothd, and a client connected to it.
struct SimulatedBluetooth {
    let bus: PrivateBus
    let simulator: BlueZSimulator
    let connection: DBusConnection
    let client: BlueZClient

    static func start(_ scenario: Scenario) async throws -> SimulatedBluetooth {
        let bus = try await PrivateBus.start()
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), recordEmissions: true)
        try await simulator.start()
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await BlueZClient.connect(connection)
        return SimulatedBluetooth(bus: bus, simulator: simulator, connection: connection, client: client)
    }

    func stop() async {
        client.close()
        connection.close()
        await simulator.stop()
        bus.stop()
    }

    /// Discovers until bluetoothd knows a device, stops discovery, and returns the first device.
    func discoverFirstDevice(on adapter: Adapter) async throws -> BluetoothDevice {
        try await adapter.startDiscovery()
        _ = await eventually { !adapter.devices.isEmpty }
        let device = try #require(adapter.devices.first)
        try await adapter.stopDiscovery()
        return device
    }

    /// Connects and waits for services (Connect() returns before bluetoothd resolves them).
    func connect(_ device: BluetoothDevice) async throws {
        try await device.connect()
        // The GATT objects of a new database follow ServicesResolved, as with bluetoothd 5.66, one object at a
        // time: wait for the last characteristic (battery level), not the first.
        #expect(
            await eventually {
                device.servicesResolved && device.characteristic(.heartRateMeasurement, in: .heartRateService) != nil
                    && device.characteristic(.bodySensorLocation, in: .heartRateService) != nil
                    && device.characteristic(.batteryLevel, in: .batteryService) != nil
            }
        )
    }

    /// Discovers the first device, connects it, and returns it with its Heart Rate Measurement characteristic.
    func connectedMeasurement() async throws -> (BluetoothDevice, GattCharacteristic) {
        let adapter = try client.adapter(named: nil)
        let device = try await discoverFirstDevice(on: adapter)
        try await connect(device)
        return (device, try #require(device.characteristic(.heartRateMeasurement, in: .heartRateService)))
    }

    /// The first device bluetoothd knows for simulated sensor `index`, found by address.
    func device(_ index: Int) async throws -> BluetoothDevice? {
        let address = try BluetoothAddress(await simulator.sensorAddresses[index])
        return client.devices.first { $0.address == address }
    }
}

func withSimulator(_ scenario: Scenario, _ body: (SimulatedBluetooth) async throws -> Void) async throws {
    let fixture = try await SimulatedBluetooth.start(scenario)
    do {
        try await body(fixture)
    } catch {
        await fixture.stop()
        throw error
    }
    await fixture.stop()
}

/// A scenario of `count` sensors of one model at `rate` Hz.
func scenario(
    _ model: SensorModel = .polarH10,
    count: Int = 1,
    rate: Double? = nil,
    faults: [Scenario.FaultSpec] = [],
    configure: (inout Scenario.SensorSpec) -> Void = { _ in }
) -> Scenario {
    var scenario = Scenario()
    var spec = Scenario.SensorSpec(model: model, count: count)
    spec.rate = rate
    spec.faults = faults
    configure(&spec)
    scenario.sensors = [spec]
    return scenario
}

/// Runs a sensor and gathers its events until `stop` says enough (or the timeout passes, which only a real failure
/// reaches), then stops the sensor and gathers what it still reported, so counters and events agree.
func collect(
    _ sensor: HeartRateSensor,
    timeout: Duration = .seconds(60),
    until stop: @escaping @Sendable ([HeartRateSensorEvent]) async -> Bool
) async -> [HeartRateSensorEvent] {
    let runner = Task { await sensor.run() }
    let timer = Task {
        try? await Task.sleep(for: timeout)
        runner.cancel()
    }
    var events: [HeartRateSensorEvent] = []
    var stopped = false
    guard let stream = sensor.delegate as? HeartRateSensorEventStream else {
        Issue.record("collect(_:) reads a sensor made with a HeartRateSensorEventStream as its delegate")
        return []
    }
    for await event in stream.events {
        events.append(event)
        if !stopped, await stop(events) {
            stopped = true
            runner.cancel()
        }
    }
    timer.cancel()
    return events
}

extension [HeartRateSensorEvent] {
    var readings: [HeartRateReading] {
        compactMap { if case .reading(let reading) = $0 { reading } else { nil } }
    }
    var states: [SensorConnectionState] {
        compactMap { if case .state(let state) = $0 { state } else { nil } }
    }
    func count(of state: SensorConnectionState) -> Int { states.filter { $0 == state }.count }

    /// How many connections reached streaming. A sensor that was stale and speaks again is also reported
    /// `.streaming` (it is not a new connection), which a loaded test machine can cause at any time.
    var streamingConnections: Int {
        zip([nil] + states, states).filter { previous, state in state == .streaming && previous != .stale }.count
    }

    /// The events after the sensor was first reported stale (none when it never was).
    var afterFirstStale: [HeartRateSensorEvent] {
        guard let stale = firstIndex(where: { if case .state(.stale) = $0 { true } else { false } }) else { return [] }
        return Array(self[(stale + 1)...])
    }

    /// The events after the last connection started resolving services.
    var sinceLastConnection: [HeartRateSensorEvent] {
        guard let start = lastIndex(where: { if case .state(.resolvingServices) = $0 { true } else { false } })
        else { return [] }
        return Array(self[(start + 1)...])
    }
}

/// Options that reconnect fast, so tests of reconnection do not wait long.
func fastOptions() -> HeartRateSensor.Options {
    var options = HeartRateSensor.Options()
    options.initialReconnectDelay = .milliseconds(200)
    options.maximumReconnectDelay = .seconds(1)
    options.discoveryTimeout = .seconds(3)
    return options
}
