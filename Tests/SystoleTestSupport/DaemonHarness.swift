import ControlAPI
import DBus
import Foundation
import Glibc
import HeartRateProfile
import Synchronization

/// The real processes of an end-to-end test, in a folder of its own: a private bus, `systole-sim` playing bluetoothd
/// on it (what it sent in an emit log), `systoled` with a configuration file, and `systole` run against them. Every
/// end-to-end suite starts one with ``start(_:)`` (or ``withDaemon(_:_:)``) and adds what only it needs in an
/// extension of its own.
public final class DaemonHarness: @unchecked Sendable {
    /// How the harness is set up.
    public struct Options: Sendable {
        /// The simulator's arguments besides `--bus`, `--emit-log` and `--scenario`.
        public var simulator: [String] = ["--rate", "4"]
        /// A scenario file's JSON for the simulator (`--scenario`), if any.
        public var scenario: String?
        /// systoled's configuration file (`systoled.toml`, readable by its owner only, as systoled wants a file
        /// holding a token); `$PORT` in it is ``DaemonHarness/port``.
        public var configuration = ""
        /// systoled's arguments besides the bus, the configuration, the store and the live log.
        public var daemonArguments: [String] = []
        /// Added to the private bus's configuration.
        public var busConfiguration = ""
        /// The bus takes the policies of the machine's system bus before ``busConfiguration`` (see
        /// ``PrivateBus/startLikeSystemBus(extraConfiguration:)``).
        public var busLikeSystemBus = false
        /// Whether systoled starts with the harness (otherwise ``startDaemon()`` starts it).
        public var startsDaemon = true
        /// Names the folder, to tell the suites' folders apart.
        public var name = "systoled-e2e"
        /// Given systoled's folder before systoled first starts (to put a store there, say).
        public var prepare: (@Sendable (URL) async throws -> Void)?
        /// The folder the harness's own folder goes in (a suite running several daemons keeps them together).
        public var parent = FileManager.default.temporaryDirectory

        public init() {}
    }

    public let folder: URL
    public let bus: PrivateBus
    public let simulator: SimulatorProcess
    /// Where the simulator logs each notification it sends (a JSON line each).
    public let emitLog: String
    /// systoled's own folder (store, live log, configuration).
    public let daemonFolder: URL
    /// A TCP port free when the harness started, for the configuration's `$PORT`.
    public let port: Int
    private var running: DaemonProcess?
    private let client = Mutex<DBusConnection?>(nil)
    private let daemonArguments: [String]

    /// systoled, once started.
    public var daemon: DaemonProcess {
        guard let running else { preconditionFailure("systoled was not started: call startDaemon()") }
        return running
    }

    /// Starts the bus, the simulator and (unless told otherwise) systoled.
    public static func start(_ options: Options = Options()) async throws -> DaemonHarness {
        let folder = options.parent.appendingPathComponent("\(options.name)-\(UUID())")
        let daemonFolder = folder.appendingPathComponent("daemon")
        try FileManager.default.createDirectory(at: daemonFolder, withIntermediateDirectories: true)
        let port = freeTCPPort()
        try writeConfiguration(options.configuration, port: port, into: daemonFolder)
        try await options.prepare?(daemonFolder)
        let emitLog = folder.appendingPathComponent("emitted.jsonl").path
        var simulatorArguments = options.simulator + ["--emit-log", emitLog]
        if let scenario = options.scenario {
            let path = folder.appendingPathComponent("scenario.json").path
            try scenario.write(toFile: path, atomically: true, encoding: .utf8)
            simulatorArguments += ["--scenario", path]
        }
        let bus =
            options.busLikeSystemBus
            ? try await PrivateBus.startLikeSystemBus(extraConfiguration: options.busConfiguration)
            : try await PrivateBus.start(extraConfiguration: options.busConfiguration)
        let simulator: SimulatorProcess
        do {
            simulator = try await SimulatorProcess.start(bus: bus, simulatorArguments)
        } catch {
            bus.stop()
            throw error
        }
        let harness = DaemonHarness(
            folder: folder,
            daemonFolder: daemonFolder,
            port: port,
            bus: bus,
            simulator: simulator,
            emitLog: emitLog,
            daemonArguments: options.daemonArguments
        )
        if options.startsDaemon {
            do {
                try await harness.startDaemon()
            } catch {
                harness.stop()
                throw error
            }
        }
        return harness
    }

    private init(
        folder: URL,
        daemonFolder: URL,
        port: Int,
        bus: PrivateBus,
        simulator: SimulatorProcess,
        emitLog: String,
        daemonArguments: [String]
    ) {
        self.folder = folder
        self.daemonFolder = daemonFolder
        self.port = port
        self.bus = bus
        self.simulator = simulator
        self.emitLog = emitLog
        self.daemonArguments = daemonArguments
    }

    /// Starts systoled (again, on the same store and live log, after it stopped), with `configuration` written
    /// first when given.
    public func startDaemon(configuration: String? = nil) async throws {
        if let configuration { try writeConfiguration(configuration, port: port, into: daemonFolder) }
        running = try await DaemonProcess.start(bus: bus, folder: daemonFolder, daemonArguments)
    }

    /// A client connection to the harness's bus, made on first use and closed by ``stop()``.
    public func connection() async throws -> DBusConnection {
        if let connection = client.withLock({ $0 }) { return connection }
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let kept = client.withLock { kept in
            if let kept { return kept }
            kept = connection
            return connection
        }
        if kept !== connection { connection.close() }
        return kept
    }

    /// Calls a method of systoled's control API; the error it answered with, or nil when it succeeded.
    public func call(
        _ method: String,
        _ arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async -> DBusError? {
        do {
            _ = try await connection().call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: method,
                arguments: arguments,
                timeout: timeout
            )
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            return DBusError(.failed, "\(error)")
        }
    }

    /// Runs `systole` against this daemon.
    public func systole(_ arguments: [String]) async throws -> CommandRunner.Result {
        try await CommandRunner.run("systole", arguments + ["--bus", bus.address])
    }

    /// Runs `systole` against this daemon.
    public func systole(_ arguments: String...) async throws -> CommandRunner.Result {
        try await systole(arguments)
    }

    /// Why `systole --json` gave nothing to read.
    public struct CommandFailed: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// `systole … --json`, parsed; throws when the command failed or printed no JSON object.
    public func json(_ arguments: String...) async throws -> [String: Any] {
        let result = try await systole(arguments + ["--json"])
        guard result.status == 0 else {
            throw CommandFailed(description: "systole \(arguments) exited \(result.status): \(result.standardError)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        else {
            throw CommandFailed(description: "systole \(arguments) printed no JSON object: \(result.standardOutput)")
        }
        return object
    }

    /// `systole sensors --json`: one object per sensor.
    public func sensors() async throws -> [[String: Any]] {
        let result = try await systole("sensors", "--json")
        return (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]]) ?? []
    }

    /// The notifications the simulator sent, as logged: when (`unix`), by which sensor, the payload decoded (nil
    /// for a malformed one), and the whole line.
    public func emitted() throws -> [EmittedNotification] {
        try wholeLines(of: emitLog).compactMap { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let time = object["unix"] as? Double
            else { return nil }
            let payload = (object["payload"] as? String).flatMap { try? Hex.decode($0) }
            return EmittedNotification(
                time: time,
                sensor: object["sensor"] as? String ?? "",
                measurement: payload.flatMap { try? HeartRateMeasurement(decoding: $0) },
                object: object
            )
        }
    }

    /// The live log's lines.
    public func liveLog() -> [String] {
        ((try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? "").split(separator: "\n").map(
            String.init
        )
    }

    /// Stops every process and removes the folder.
    public func stop() {
        client.withLock { $0 }?.close()
        running?.stopNow()
        simulator.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// One notification `systole-sim` logged sending.
public struct EmittedNotification: @unchecked Sendable {
    /// When it was sent, in seconds since 1970.
    public var time: Double
    /// The sending sensor's address.
    public var sensor: String
    /// The payload decoded; nil when it was malformed on purpose.
    public var measurement: HeartRateMeasurement?
    /// The whole logged line.
    public var object: [String: Any]
}

/// Writes systoled.toml into `folder`, `$PORT` replaced, readable by its owner only.
private func writeConfiguration(_ text: String, port: Int, into folder: URL) throws {
    let path = folder.appendingPathComponent("systoled.toml").path
    try text.replacingOccurrences(of: "$PORT", with: "\(port)").write(toFile: path, atomically: true, encoding: .utf8)
    chmod(path, 0o600)
}

/// Runs `body` with a fresh harness and always tears it down.
public func withDaemon(
    _ options: DaemonHarness.Options = DaemonHarness.Options(),
    _ body: (DaemonHarness) async throws -> Void
) async throws {
    let harness = try await DaemonHarness.start(options)
    defer { harness.stop() }
    try await body(harness)
}
