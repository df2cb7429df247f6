import Foundation
import HeartRateProfile

/// The JSON form of a decoded measurement, shared by `decode --json` and `monitor --json`.
///
/// Keys (written sorted, so output is stable): `heartRate`, `format`, `sensorContact`, `energyExpended` (kJ or null),
/// `energySaturated`, `rrIntervals` (raw 1/1024 s ticks), `rrIntervalsMs`, `truncated`; `monitor` adds `time`
/// (ISO-8601 UTC with milliseconds) and `sensor` (its address).
struct MeasurementJSON: Encodable {
    var measurement: HeartRateMeasurement
    var time: String?
    var sensor: String?

    init(_ measurement: HeartRateMeasurement, time: String? = nil, sensor: String? = nil) {
        self.measurement = measurement
        self.time = time
        self.sensor = sensor
    }

    enum CodingKeys: String, CodingKey {
        case heartRate, format, sensorContact, energyExpended, energySaturated, rrIntervals, rrIntervalsMs
        case truncated, time, sensor
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(measurement.heartRate, forKey: .heartRate)
        try container.encode(measurement.format.rawValue, forKey: .format)
        try container.encode(measurement.sensorContact.rawValue, forKey: .sensorContact)
        // Explicit null rather than a missing key: the field is always present in the schema.
        try container.encode(measurement.energyExpended, forKey: .energyExpended)
        try container.encode(measurement.isEnergyExpendedSaturated, forKey: .energySaturated)
        try container.encode(measurement.rrIntervals.map(\.ticks), forKey: .rrIntervals)
        try container.encode(measurement.rrIntervals.map(\.milliseconds), forKey: .rrIntervalsMs)
        try container.encode(measurement.isTruncated, forKey: .truncated)
        try container.encodeIfPresent(time, forKey: .time)
        try container.encodeIfPresent(sensor, forKey: .sensor)
    }

    /// One line of JSON.
    func encodedLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain numbers, strings and booleans cannot fail.
        let data = try! encoder.encode(self)
        return String(decoding: data, as: UTF8.self)
    }
}

extension MeasurementJSON {
    /// `2026-11-22T10:00:00.123Z`: ISO-8601 in UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        var formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        formatter.timeZone = .gmt
        return date.formatted(formatter)
    }
}
