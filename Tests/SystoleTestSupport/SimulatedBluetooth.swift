import BlueZ
import BlueZSimulator
import DBus
import Foundation
import HeartRateProfile

/// A private bus with `systole-sim`'s library playing bluetoothd, and a client connected to it.
public struct SimulatedBluetooth: Sendable {
    public let bus: PrivateBus
    public let simulator: BlueZSimulator
    public let connection: DBusConnection
    public let client: BlueZClient

    public static func start(_ scenario: Scenario) async throws -> SimulatedBluetooth {
        let bus = try await PrivateBus.start()
        let simulator = try BlueZSimulator(scenario: scenario, bus: .address(bus.address), recordEmissions: true)
        try await simulator.start()
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await BlueZClient.connect(connection)
        return SimulatedBluetooth(bus: bus, simulator: simulator, connection: connection, client: client)
    }

    public func stop() async {
        client.close()
        connection.close()
        await simulator.stop()
        bus.stop()
    }

    /// Discovers until bluetoothd knows a device, stops discovery, and returns the first device.
    public func discoverFirstDevice(on adapter: Adapter) async throws -> BluetoothDevice {
        try await adapter.startDiscovery()
        try await waitUntil("bluetoothd knowing a device") { !adapter.devices.isEmpty }
        guard let device = adapter.devices.first else { throw TimedOut(description: "the device vanished") }
        try await adapter.stopDiscovery()
        return device
    }

    /// Connects and waits for services (Connect() returns before bluetoothd resolves them).
    public func connect(_ device: BluetoothDevice) async throws {
        try await device.connect()
        // The GATT objects of a new database follow ServicesResolved, as with bluetoothd 5.66, one object at a
        // time: wait for the last characteristic (battery level), not the first.
        try await waitUntil("the services resolving, with their characteristics") {
            device.servicesResolved && device.characteristic(.heartRateMeasurement, in: .heartRateService) != nil
                && device.characteristic(.bodySensorLocation, in: .heartRateService) != nil
                && device.characteristic(.batteryLevel, in: .batteryService) != nil
        }
    }

    /// Discovers the first device, connects it, and returns it with its Heart Rate Measurement characteristic.
    public func connectedMeasurement() async throws -> (BluetoothDevice, GattCharacteristic) {
        let adapter = try client.adapter(named: nil)
        let device = try await discoverFirstDevice(on: adapter)
        try await connect(device)
        guard let measurement = device.characteristic(.heartRateMeasurement, in: .heartRateService) else {
            throw TimedOut(description: "the device has no Heart Rate Measurement characteristic")
        }
        return (device, measurement)
    }

    /// The first device bluetoothd knows for simulated sensor `index`, found by address.
    public func device(_ index: Int) async throws -> BluetoothDevice? {
        let address = try BluetoothAddress(await simulator.sensorAddresses[index])
        return client.devices.first { $0.address == address }
    }
}

public func withSimulator(_ scenario: Scenario, _ body: (SimulatedBluetooth) async throws -> Void) async throws {
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
public func scenario(
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

extension Scenario {
    /// Earbuds that need pairing, played as the real-stack VM plays them (a second adapter of the same bluetoothd),
    /// and a keyboard.
    public static func earbudsAndKeyboard() -> Scenario {
        var scenario = Scenario()
        scenario.adapters = [.init(), .init()]
        scenario.mirrorPairing = true
        var earbuds = Scenario.SensorSpec(model: .powerbeatsPro2)
        earbuds.rate = 5
        scenario.sensors = [earbuds, Scenario.SensorSpec(model: .keyboard)]
        return scenario
    }
}
