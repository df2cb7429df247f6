import ArgumentParser
import Foundation

/// systoled's flags; each overrides the configuration file.
public struct DaemonOptions: ParsableArguments {
    @Option(help: "The configuration file (default: \(DaemonConfiguration.defaultPath), used if present).")
    public var config: String?

    @Option(help: "The bus for the control API and bluetoothd: system, session, or an address (unix:path=…).")
    public var bus: String?

    @Option(help: "The SQLite store (default: $STATE_DIRECTORY/health.sqlite, else /var/lib/systole/health.sqlite).")
    public var store: String?

    @Option(
        name: .customLong("live-log"),
        help: "The live bpm log (default: $LOGS_DIRECTORY/live.log, else /var/log/systole/live.log)."
    )
    public var liveLog: String?

    @Option(help: "The Bluetooth adapter, like hci0 (default: every powered adapter).")
    public var adapter: String?

    @Option(name: .customLong("sensor"), help: "A sensor to keep connected: an address, or 'any' (repeatable).")
    public var sensors: [String] = []

    public init() {}

    /// The configuration these options select: the file (if any), then the flags over it.
    public func configuration(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(DaemonConfiguration.Error) -> DaemonConfiguration {
        var configuration = try DaemonConfiguration.load(
            path: config ?? DaemonConfiguration.defaultPath,
            optional: config == nil,
            environment: environment
        )
        func flag<T>(
            _ name: String,
            _ body: () throws(DaemonConfiguration.Reason) -> T
        ) throws(DaemonConfiguration.Error)
            -> T
        {
            do {
                return try body()
            } catch {
                throw DaemonConfiguration.Error(file: "--\(name)", line: 0, reason: error.text)
            }
        }
        if let bus {
            configuration.bus = try flag("bus") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.bus(bus)
            }
        }
        if let store {
            configuration.storePath = try flag("store") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.path(store, "store")
            }
        }
        if let liveLog {
            configuration.liveLogPath = try flag("live-log") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.path(liveLog, "live-log")
            }
        }
        if let adapter {
            configuration.adapter = try flag("adapter") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.adapter(adapter)
            }
        }
        if !sensors.isEmpty {
            configuration.sensors = try flag("sensor") { () throws(DaemonConfiguration.Reason) in
                try DaemonConfiguration.sensors(sensors)
            }
        }
        return configuration
    }
}
