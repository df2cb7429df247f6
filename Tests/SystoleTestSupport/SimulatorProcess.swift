import DBus
import Foundation

/// A running `systole-sim` process on a private bus, with its sensors' addresses.
public final class SimulatorProcess: @unchecked Sendable {
    public let process: ChildProcess
    public let addresses: [String]

    /// Starts it on a thread of its own (see `offThePool`): waiting for its "ready" line blocks.
    public static func start(bus: PrivateBus, _ arguments: [String]) async throws -> SimulatorProcess {
        try await offThePool { try SimulatorProcess(bus: bus, arguments) }
    }

    private init(bus: PrivateBus, _ arguments: [String]) throws {
        process = ChildProcess()
        process.executableURL = CommandRunner.productsDirectory.appendingPathComponent("systole-sim")
        process.arguments = ["--bus", bus.address] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var lines: [String] = []
        var buffer = Data()
        // "ready …" then one "sensor N ADDRESS" line per sensor.
        while lines.first?.hasPrefix("ready") != true || lines.count < 2 {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            buffer.append(chunk)
            lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        addresses = lines.filter { $0.hasPrefix("sensor ") }.map { String($0.split(separator: " ")[2]) }
    }

    /// Plays `fault` (a scenario's JSON fault object, its `at` counted from now) on the simulated sensor with
    /// `address`, through the simulator's test interface: a test starts a fault once what it checks is in place.
    public func play(_ fault: String, sensor address: String, bus: PrivateBus) async throws {
        try await callTestInterface("PlayFault", [.string(address), .string(fault)], bus: bus)
    }

    /// Restarts the simulated bluetoothd now, away for `downtime`.
    public func restartBluetoothd(downtime: Duration, bus: PrivateBus) async throws {
        let seconds = Double(downtime.components.seconds) + Double(downtime.components.attoseconds) / 1e18
        try await callTestInterface("RestartBluetoothd", [.double(seconds)], bus: bus)
    }

    private func callTestInterface(_ method: String, _ arguments: [DBusValue], bus: PrivateBus) async throws {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        defer { connection.close() }
        _ = try await connection.call(
            destination: "org.systole.Simulator",
            path: "/org/systole/Simulator",
            interface: "org.systole.Simulator1",
            method: method,
            arguments: arguments,
            timeout: generousDeadline
        )
    }

    /// Sends SIGTERM without waiting for the exit, so it never blocks.
    public func stop() {
        process.terminate()
    }
}
