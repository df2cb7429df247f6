import Foundation
import WorkoutKit

/// How values that have no column of their own are stored: JSON, with dates as seconds since 1970.
enum Coding {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        // Infinite or NaN statistics must not make a workout unsavable (JSON has no such numbers); new samples
        // are bounded before they reach the store.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return try decoder.decode(type, from: Data(text.utf8))
    }

    /// Beats packed 11 bytes each: offset (Float64 bits), RR ticks (UInt16), gap flag, little-endian.
    static func pack(_ beats: [HeartbeatSeriesSample.Beat]) -> Data {
        var data = Data(capacity: beats.count * 11)
        for beat in beats {
            withUnsafeBytes(of: beat.timeSinceStart.bitPattern.littleEndian) { data.append(contentsOf: $0) }
            withUnsafeBytes(of: beat.rrTicks.littleEndian) { data.append(contentsOf: $0) }
            data.append(beat.precededByGap ? 1 : 0)
        }
        return data
    }

    static func unpack(_ data: Data) -> [HeartbeatSeriesSample.Beat] {
        let bytes = [UInt8](data)
        var beats: [HeartbeatSeriesSample.Beat] = []
        beats.reserveCapacity(bytes.count / 11)
        var index = 0
        while index + 11 <= bytes.count {
            var bits: UInt64 = 0
            for shift in 0..<8 { bits |= UInt64(bytes[index + shift]) << (8 * shift) }
            let ticks = UInt16(bytes[index + 8]) | UInt16(bytes[index + 9]) << 8
            beats.append(
                HeartbeatSeriesSample.Beat(
                    timeSinceStart: Double(bitPattern: bits),
                    rrTicks: ticks,
                    precededByGap: bytes[index + 10] != 0
                )
            )
            index += 11
        }
        return beats
    }
}

/// A workout's columns that are only ever read whole.
struct WorkoutBody: Codable {
    var configuration: WorkoutConfiguration
    var events: [WorkoutEvent]
    var activities: [WorkoutActivity]
    var metadata: [String: MetadataValue]
    var statistics: [String: Statistics]
    var devices: [Device]
}
