import Foundation
import HeartRateProfile

/// The notifications the simulator sent, one JSON object per line:
/// `{"time":"2026-11-22T10:00:00.123456Z","unix":1795341600.123456,"sensor":"A0:9E:1A:…","payload":"16…"}`
/// plus `"malformed":true` for a deliberately malformed one and `"pmd":true` for a PMD data frame (ECG or
/// accelerometer). Tests and benchmarks compare it with what a client
/// received.
final class EmitLog: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw Scenario.Invalid(description: "cannot create the emit log \(path)")
        }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    func record(_ entry: EmittedNotification) {
        var line =
            "{\"time\":\"\(Self.iso(entry.date))\",\"unix\":\(String(format: "%.6f", entry.date.timeIntervalSince1970))"
        line += ",\"sensor\":\"\(entry.sensor)\",\"payload\":\"\(entry.payloadHex)\""
        if entry.malformed { line += ",\"malformed\":true" }
        if entry.characteristic == .pmdData { line += ",\"pmd\":true" }
        line += "}\n"
        lock.withLock { handle.write(Data(line.utf8)) }
    }

    static func iso(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var whole = time_t(seconds.rounded(.down))
        let micros = Int(((seconds - Double(whole)) * 1_000_000).rounded(.down))
        var parts = tm()
        gmtime_r(&whole, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
            parts.tm_year + 1900,
            parts.tm_mon + 1,
            parts.tm_mday,
            parts.tm_hour,
            parts.tm_min,
            parts.tm_sec,
            micros
        )
    }

    deinit { try? handle.close() }
}

/// One notification the simulator put on the bus.
public struct EmittedNotification: Sendable, Hashable {
    public var date: Date
    /// The sensor's address, `A0:9E:1A:…`.
    public var sensor: String
    public var payload: [UInt8]
    public var malformed: Bool
    /// The sensor's place in the scenario (its sensors in order, `count` expanded), which tells apart devices that
    /// claim one address.
    public var sensorIndex = 0
    /// Which characteristic notified: Heart Rate Measurement, or PMD data (an ECG or accelerometer frame).
    public var characteristic: Kind = .heartRateMeasurement

    public enum Kind: Sendable, Hashable {
        case heartRateMeasurement
        case pmdData
    }

    public var payloadHex: String { Hex.encode(payload).lowercased() }
}
