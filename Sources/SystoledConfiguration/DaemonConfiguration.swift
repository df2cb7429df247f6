import BlueZ
import DBus
import Foundation
import Glibc
import HeartRateSensors
import MQTTBridge
import Recording
import Replication
import SafeText
import WorkoutAnalysis
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

        /// The sensor a `HeartRateSensor` looks for.
        package var target: SensorTarget {
            switch self {
            case .any: .anyHeartRateSensor
            case .address(let address): .address(address)
            }
        }
    }

    /// How much the outputs show: see ``Recording/Privacy``.
    public typealias Privacy = Recording.Privacy

    /// How the live log's lines are written: see ``Recording/LiveLogFormat``.
    public typealias LiveLogFormat = Recording.LiveLogFormat

    public var bus: DBusBus = .system
    /// `hciN`; nil: every powered adapter.
    public var adapter: String?
    public var storePath: String
    /// When the store's commits reach the disk (`[store] sync`).
    public var storeSync = StoreSync.second
    public var sensors: [Sensor] = [.any]
    /// Notifications a second each sensor may send on average (twice as many may come at once); the surplus is
    /// dropped and counted. Sensors notify about once a second; benchmarks that flood on purpose raise it.
    public var notificationLimit: Double = RadioLimits().notificationsPerSecond
    public var sampleTypes: Set<SampleType> = [
        .heartRate, .heartbeatSeries, .activeEnergyBurned, .dietaryWater, .electrocardiogram, .acceleration,
    ]
    public var liveLogPath: String
    public var liveLogFormat: LiveLogFormat = .text
    /// The live log is rotated when it would grow past this many bytes.
    public var liveLogMaximumSize = 10 * 1024 * 1024
    /// Rotated files kept (`live.log.1` … `live.log.N`).
    public var liveLogKeep = 3
    public var privacy: Privacy = .full
    /// The web server (`[http]`); nil: off, nothing listens.
    public var http: HTTP?
    /// The MQTT publisher (`[mqtt]`); nil: off.
    public var mqtt: MQTTSettings?
    /// Replication to PostgreSQL (`[replication]`); nil: off.
    public var replication: ReplicationSettings?
    /// Who works out, for zones, training load and the energy estimate (`[profile]`).
    public var profile = AthleteProfile()
    /// Who wears which sensor (`[athletes]`).
    public var athletes = Athletes()
    /// How notifications travel (`[bluetooth]`).
    public var bluetooth = Bluetooth()
    /// What Polar H10s stream beside the heart rate during a workout (`[ecg]`).
    public var ecg = ECG()

    /// The default configuration file.
    public static let defaultPath = "/etc/systole/systoled.toml"
    /// The largest configuration file read (a real one is a few hundred bytes).
    public static let maximumFileSize = 64 * 1024
    /// The longest path accepted for the store and the live log (Linux's PATH_MAX).
    public static let maximumPathLength = 4096

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
        var status = stat()
        if stat(path, &status) == 0 {
            if status.st_mode & S_IFMT == S_IFDIR {
                throw Error(file: path, line: 0, reason: "is a folder, not a file; name the file, like \(defaultPath)")
            }
            if status.st_mode & S_IFMT == S_IFREG, status.st_size > maximumFileSize {
                throw Error(
                    file: path,
                    line: 0,
                    reason: "is \(status.st_size) bytes; a configuration is at most \(maximumFileSize) bytes"
                )
            }
        }
        // Read through a handle, so a device such as /dev/null (no configuration) reads as empty; at most one
        // byte more than the limit, so a device that never ends cannot fill memory.
        guard let handle = FileHandle(forReadingAtPath: path),
            let data = try? handle.read(upToCount: maximumFileSize + 1) ?? Data()
        else {
            if optional, !FileManager.default.fileExists(atPath: path) { return configuration }
            throw Error(
                file: path,
                line: 0,
                reason: FileManager.default.fileExists(atPath: path)
                    ? "cannot be read (check its permissions)"
                    : "does not exist; create it (see systemd/systoled.toml.example) or leave out --config"
            )
        }
        guard data.count <= maximumFileSize else {
            throw Error(
                file: path,
                line: 0,
                reason: "is longer than \(maximumFileSize) bytes, the most a configuration may be"
            )
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Error(file: path, line: 0, reason: "is not UTF-8 text")
        }
        try configuration.apply(text, file: path)
        // The token lets whoever has it see heart rate, the passwords let them publish as systoled or read every
        // athlete's workouts: a file every local user can read would give them away.
        let secret =
            configuration.http?.token != nil
            ? "the [http] token"
            : configuration.mqtt?.password != nil
                ? "the [mqtt] password"
                : configuration.replication?.password != nil ? "the [replication] password" : nil
        if let secret, status.st_mode & S_IFMT == S_IFREG, status.st_mode & S_IROTH != 0 {
            throw Error(
                file: path,
                line: 0,
                reason: "holds \(secret) and every local user can read it; make it readable by root and "
                    + "group systole only: chmod 640 \(path) && chgrp systole \(path)"
            )
        }
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
        if let problem = Self.storeProblem(entries) {
            throw Error(file: file, line: problem.line, reason: problem.reason)
        }
        if let problem = httpProblem {
            let line = entries.last { $0.table == "http" }?.line ?? 0
            throw Error(file: file, line: line, reason: problem)
        }
        if let problem = replicationProblem {
            let line = entries.last { $0.table == "replication" }?.line ?? 0
            throw Error(file: file, line: line, reason: problem)
        }
        if let problem = mqttProblem {
            let line = entries.last { $0.table == "mqtt" }?.line ?? 0
            throw Error(file: file, line: line, reason: problem)
        }
        if let problem = profile.problem {
            let line = entries.last { $0.table == "profile" }?.line ?? 0
            throw Error(file: file, line: line, reason: "[profile]: \(problem)")
        }
    }

    struct Reason: Swift.Error {
        var text: String
        init(_ text: String) { self.text = text }
    }

    static let topLevelKeys = ["bus", "adapter", "store", "sensors", "sample_types", "notification_limit", "privacy"]
    static let liveLogKeys = ["path", "format", "max_size", "keep", "privacy"]

    private mutating func apply(_ entry: TOML.Entry) throws(Reason) {
        switch (entry.table, entry.key) {
        case ("", "bus"):
            bus = try Self.bus(try string(entry))
        case ("", "adapter"):
            adapter = try Self.adapter(try string(entry))
        case ("", "store"):
            storePath = try path(entry)
        case ("", "sensors"):
            sensors = try Self.sensors(try strings(entry))
            guard !sensors.isEmpty else {
                throw Reason("sensors is empty: list addresses, or \"any\" for the first heart-rate sensor seen")
            }
        case ("", "notification_limit"):
            let limit = try integer(entry)
            guard (1...10_000).contains(limit) else {
                throw Reason("notification_limit is notifications a second per sensor, from 1 to 10000")
            }
            notificationLimit = Double(limit)
        case ("", "sample_types"):
            var types: Set<SampleType> = []
            for text in try strings(entry) {
                guard let type = SampleType(identifier: text) else {
                    throw Reason(
                        "unknown sample type \(text.quotedExcerpt()); known: heartRate, heartbeatSeries, activeEnergyBurned, dietaryWater, electrocardiogram, acceleration"
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
                throw Reason("live_log.format must be \"text\" or \"json\", not \(text.quotedExcerpt())")
            }
            liveLogFormat = format
        case ("live_log", "max_size"):
            let size = try integer(entry)
            guard (4096...(1 << 30)).contains(size) else {
                throw Reason("live_log.max_size is in bytes and must be from 4096 to 1073741824 (1 GiB)")
            }
            liveLogMaximumSize = size
        case ("live_log", "keep"):
            let keep = try integer(entry)
            guard (0...100).contains(keep) else { throw Reason("live_log.keep must be between 0 and 100") }
            liveLogKeep = keep
        case ("live_log", "privacy"), ("", "privacy"):
            let text = try string(entry)
            guard let privacy = Privacy(rawValue: text) else {
                throw Reason("privacy must be \"full\" or \"duration-only\", not \(text.quotedExcerpt())")
            }
            self.privacy = privacy
        case ("http", _):
            try applyHTTP(entry)
        case ("mqtt", _):
            try applyMQTT(entry)
        case ("replication", _):
            try applyReplication(entry)
        case ("profile", _):
            try applyProfile(entry)
        case ("athletes", _):
            try applyAthlete(entry)
        case ("bluetooth", _):
            try applyBluetooth(entry)
        case ("ecg", _):
            try applyECG(entry)
        case ("store", _):
            try applyStore(entry)
        case ("", let key):
            throw Reason(
                "unknown setting '\(key)'; known: \(Self.topLevelKeys.joined(separator: ", ")) and the [store], "
                    + "[live_log], [profile], [athletes], [bluetooth], [ecg], [http], [mqtt] and [replication] tables"
            )
        case ("live_log", let key):
            throw Reason("unknown setting '\(key)' in [live_log]; known: \(Self.liveLogKeys.joined(separator: ", "))")
        case (let table, _):
            throw Reason(
                "unknown table [\(table)]; the tables are [store], [live_log], [profile], [athletes], [bluetooth], "
                    + "[ecg], [http], [mqtt] and [replication]"
            )
        }
    }

    /// Parses a bus: `system`, `session` or a D-Bus address libdbus can parse, with a transport it can connect to.
    static func bus(_ text: String) throws(Reason) -> DBusBus {
        guard ["system", "session"].contains(text) || text.contains(":") else {
            throw Reason(
                "bus must be \"system\", \"session\" or a D-Bus address like "
                    + "\"unix:path=/run/dbus/system_bus_socket\", not \(text.quotedExcerpt())"
            )
        }
        do {
            return try DBusBus.parse(text)
        } catch {
            throw Reason("bus: \(error.message)")
        }
    }

    /// Checks a path for the store or the live log: absolute and no longer than ``maximumPathLength``.
    static func path(_ text: String, _ name: String) throws(Reason) -> String {
        guard text.hasPrefix("/") else { throw Reason("\(name) must be an absolute path, not \(text.quotedExcerpt())") }
        guard text.utf8.count <= maximumPathLength, !text.utf8.contains(0) else {
            throw Reason("\(name) is longer than \(maximumPathLength) bytes, the longest path Linux opens")
        }
        return text
    }

    /// Checks an adapter name (`hci0`).
    static func adapter(_ text: String) throws(Reason) -> String {
        guard text.hasPrefix("hci"), text.utf8.count <= 8, let number = Int(text.dropFirst(3)), number >= 0 else {
            throw Reason("adapter must be a name like \"hci0\" (see 'bluetoothctl list'), not \(text.quotedExcerpt())")
        }
        return text
    }

    /// The most sensors one systoled keeps connected (one adapter manages far fewer connections).
    public static let maximumSensors = 256

    /// Parses the sensor list: each entry `any` or an address, no address twice, at most ``maximumSensors``.
    static func sensors(_ texts: [String]) throws(Reason) -> [Sensor] {
        guard texts.count <= maximumSensors else {
            throw Reason("sensors lists \(texts.count) entries; at most \(maximumSensors) are kept connected")
        }
        let sensors = try texts.map { text throws(Reason) in try sensor(text) }
        var seen: Set<String> = []
        for case .address(let address) in sensors where !seen.insert(address.description).inserted {
            throw Reason("\(address) is listed twice in sensors; list each sensor once")
        }
        return sensors
    }

    /// Parses a sensor: `any` or a Bluetooth address.
    static func sensor(_ text: String) throws(Reason) -> Sensor {
        if text == "any" { return .any }
        do {
            return .address(try BluetoothAddress(text))
        } catch {
            throw Reason(
                "\(text.quotedExcerpt()) is not a sensor: use an address like \"A0:9E:1A:12:34:56\" (see 'systole scan') or \"any\""
            )
        }
    }

    func string(_ entry: TOML.Entry) throws(Reason) -> String {
        guard case .string(let text) = entry.value else {
            throw Reason("\(entry.key) must be a string in quotes, not \(entry.value.kind)")
        }
        return text
    }

    func path(_ entry: TOML.Entry) throws(Reason) -> String {
        try Self.path(try string(entry), entry.key)
    }

    func integer(_ entry: TOML.Entry) throws(Reason) -> Int {
        guard case .integer(let value) = entry.value else {
            throw Reason("\(entry.key) must be a whole number, not \(entry.value.kind)")
        }
        return value
    }

    func number(_ entry: TOML.Entry) throws(Reason) -> Double {
        switch entry.value {
        case .integer(let value): return Double(value)
        case .float(let value) where value.isFinite: return value
        default: throw Reason("\(entry.key) must be a number, not \(entry.value.kind)")
        }
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
