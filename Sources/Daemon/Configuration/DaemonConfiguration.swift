import BlueZ
import DBus
import Foundation
import WorkoutKit

/// What systoled runs with: read from a TOML file (default `/etc/systole/systoled.toml`), then overridden by
/// flags. Every key and value is checked when the daemon starts; a mistake names the file, line and reason.
public struct DaemonConfiguration: Sendable, Equatable {
    /// Which sensor to keep connected.
    public enum Sensor: Sendable, Equatable, CustomStringConvertible {
        /// The first heart-rate sensor seen.
        case any
        case address(BluetoothAddress)

        public var description: String {
            switch self {
            case .any: "any"
            case .address(let address): address.description
            }
        }
    }

    /// How much the live log shows.
    public enum Privacy: String, Sendable, Equatable {
        /// Every metric.
        case full
        /// Only the workout's duration.
        case durationOnly = "duration-only"
    }

    public enum LiveLogFormat: String, Sendable, Equatable {
        case text
        case json
    }

    public var bus: DBusBus = .system
    /// `hciN`; nil: the first powered adapter.
    public var adapter: String?
    public var storePath: String
    public var sensors: [Sensor] = [.any]
    public var sampleTypes: Set<SampleType> = [.heartRate, .heartbeatSeries, .activeEnergyBurned, .dietaryWater]
    public var liveLogPath: String
    public var liveLogFormat: LiveLogFormat = .text
    /// The live log is rotated when it would grow past this many bytes.
    public var liveLogMaximumSize = 10 * 1024 * 1024
    /// Rotated files kept (`live.log.1` … `live.log.N`).
    public var liveLogKeep = 3
    public var privacy: Privacy = .full

    /// The default configuration file.
    public static let defaultPath = "/etc/systole/systoled.toml"

    /// Defaults, with the store and live log under the directories systemd gives the service
    /// (`$STATE_DIRECTORY`, `$LOGS_DIRECTORY`), else under /var/lib/systole and /var/log/systole.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        func first(_ list: String?) -> String? { list?.split(separator: ":").first.map(String.init) }
        storePath = (first(environment["STATE_DIRECTORY"]) ?? "/var/lib/systole") + "/health.sqlite"
        liveLogPath = (first(environment["LOGS_DIRECTORY"]) ?? "/var/log/systole") + "/live.log"
    }

    /// A mistake in the configuration, naming where it is.
    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        public var file: String
        /// 0 when the problem is not on one line (the file cannot be read).
        public var line: Int
        public var reason: String

        public var description: String {
            line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)"
        }
    }

    /// The defaults overridden by the file at `path`. A missing file is an error unless `optional`.
    public static func load(
        path: String,
        optional: Bool = false,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(Error) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(environment: environment)
        // Read through a handle, so a device such as /dev/null (no configuration) reads as empty.
        guard let handle = FileHandle(forReadingAtPath: path), let data = try? handle.readToEnd() ?? Data() else {
            if optional, !FileManager.default.fileExists(atPath: path) { return configuration }
            throw Error(
                file: path,
                line: 0,
                reason: FileManager.default.fileExists(atPath: path)
                    ? "cannot be read (check its permissions)"
                    : "does not exist; create it (see systemd/systoled.toml.example) or leave out --config"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Error(file: path, line: 0, reason: "is not UTF-8 text")
        }
        try configuration.apply(text, file: path)
        return configuration
    }

    /// Applies the settings in `text` (the contents of `file`).
    public mutating func apply(_ text: String, file: String) throws(Error) {
        let entries: [TOML.Entry]
        do {
            entries = try TOML.parse(text)
        } catch {
            throw Error(file: file, line: error.line, reason: error.reason)
        }
        for entry in entries {
            do {
                try apply(entry)
            } catch let reason {
                throw Error(file: file, line: entry.line, reason: reason.text)
            }
        }
    }

    struct Reason: Swift.Error {
        var text: String
        init(_ text: String) { self.text = text }
    }

    static let topLevelKeys = ["bus", "adapter", "store", "sensors", "sample_types"]
    static let liveLogKeys = ["path", "format", "max_size", "keep", "privacy"]

    private mutating func apply(_ entry: TOML.Entry) throws(Reason) {
        switch (entry.table, entry.key) {
        case ("", "bus"):
            let text = try string(entry)
            guard ["system", "session"].contains(text) || text.contains(":") else {
                throw Reason(
                    "bus must be \"system\", \"session\" or a D-Bus address like \"unix:path=/run/dbus/system_bus_socket\", not \"\(text)\""
                )
            }
            bus = DBusBus(text)
        case ("", "adapter"):
            adapter = try Self.adapter(try string(entry))
        case ("", "store"):
            storePath = try path(entry)
        case ("", "sensors"):
            sensors = try strings(entry).map { text throws(Reason) in try Self.sensor(text) }
            guard !sensors.isEmpty else {
                throw Reason("sensors is empty: list addresses, or \"any\" for the first heart-rate sensor seen")
            }
        case ("", "sample_types"):
            var types: Set<SampleType> = []
            for text in try strings(entry) {
                guard let type = SampleType(identifier: text) else {
                    throw Reason(
                        "unknown sample type \"\(text)\"; known: heartRate, heartbeatSeries, activeEnergyBurned, dietaryWater"
                    )
                }
                types.insert(type)
            }
            sampleTypes = types
        case ("live_log", "path"):
            liveLogPath = try path(entry)
        case ("live_log", "format"):
            let text = try string(entry)
            guard let format = LiveLogFormat(rawValue: text) else {
                throw Reason("live_log.format must be \"text\" or \"json\", not \"\(text)\"")
            }
            liveLogFormat = format
        case ("live_log", "max_size"):
            let size = try integer(entry)
            guard size >= 4096 else { throw Reason("live_log.max_size is in bytes and must be at least 4096") }
            liveLogMaximumSize = size
        case ("live_log", "keep"):
            let keep = try integer(entry)
            guard (0...100).contains(keep) else { throw Reason("live_log.keep must be between 0 and 100") }
            liveLogKeep = keep
        case ("live_log", "privacy"):
            let text = try string(entry)
            guard let privacy = Privacy(rawValue: text) else {
                throw Reason("live_log.privacy must be \"full\" or \"duration-only\", not \"\(text)\"")
            }
            self.privacy = privacy
        case ("", let key):
            throw Reason(
                "unknown setting '\(key)'; known: \(Self.topLevelKeys.joined(separator: ", ")) and the [live_log] table"
            )
        case ("live_log", let key):
            throw Reason("unknown setting '\(key)' in [live_log]; known: \(Self.liveLogKeys.joined(separator: ", "))")
        case (let table, _):
            throw Reason("unknown table [\(table)]; the only table is [live_log]")
        }
    }

    /// Checks an adapter name (`hci0`).
    static func adapter(_ text: String) throws(Reason) -> String {
        guard text.hasPrefix("hci"), let number = Int(text.dropFirst(3)), number >= 0 else {
            throw Reason("adapter must be a name like \"hci0\" (see 'bluetoothctl list'), not \"\(text)\"")
        }
        return text
    }

    /// Parses a sensor: `any` or a Bluetooth address.
    static func sensor(_ text: String) throws(Reason) -> Sensor {
        if text == "any" { return .any }
        do {
            return .address(try BluetoothAddress(text))
        } catch {
            throw Reason(
                "\"\(text)\" is not a sensor: use an address like \"A0:9E:1A:12:34:56\" (see 'systole scan') or \"any\""
            )
        }
    }

    private func string(_ entry: TOML.Entry) throws(Reason) -> String {
        guard case .string(let text) = entry.value else {
            throw Reason("\(entry.key) must be a string in quotes, not \(entry.value.kind)")
        }
        return text
    }

    private func path(_ entry: TOML.Entry) throws(Reason) -> String {
        let text = try string(entry)
        guard text.hasPrefix("/") else { throw Reason("\(entry.key) must be an absolute path, not \"\(text)\"") }
        return text
    }

    private func integer(_ entry: TOML.Entry) throws(Reason) -> Int {
        guard case .integer(let value) = entry.value else {
            throw Reason("\(entry.key) must be a whole number, not \(entry.value.kind)")
        }
        return value
    }

    private func strings(_ entry: TOML.Entry) throws(Reason) -> [String] {
        guard case .array(let values) = entry.value else {
            throw Reason("\(entry.key) must be an array of strings, e.g. [\"any\"]")
        }
        return try values.map { value throws(Reason) in
            guard case .string(let text) = value else {
                throw Reason("\(entry.key) must hold strings in quotes, not \(value.kind)")
            }
            return text
        }
    }
}
