import Foundation
import HeartRateSensors
import PolarMeasurementData

/// The JSON form of a PMD frame for `monitor --ecg` / `--acc`, one line each (keys sorted): `type` (`ecg` or
/// `acc`), `sensor`, `time` (the first sample, ISO-8601 UTC with milliseconds), `rate` (samples a second, measured
/// from the sensor's timestamps), `sensorTimestamp` (the frame's own: ns since 2000-01-01 on the sensor's clock, of
/// its last sample), `segment` (`start`, `gap`, `clock-back`, `clock-forward`, or null when the frame continues the
/// previous one), and `microvolts` (ECG) or `milliG` (acc: `[x, y, z]` per sample).
struct PMDFrameJSON: Encodable {
    var reading: PMDReading

    enum CodingKeys: String, CodingKey {
        case type, sensor, time, rate, sensorTimestamp, segment, microvolts, milliG
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reading.sensor.description, forKey: .sensor)
        try container.encode(MeasurementJSON.timestamp(reading.firstSampleDate), forKey: .time)
        try container.encode((reading.rate * 1000).rounded() / 1000, forKey: .rate)
        try container.encode(reading.sensorTimestamp, forKey: .sensorTimestamp)
        try container.encode(Self.segment(reading.segmentBreak), forKey: .segment)
        switch reading.samples {
        case .ecg(let values):
            try container.encode("ecg", forKey: .type)
            try container.encode(values, forKey: .microvolts)
        case .acceleration(let values):
            try container.encode("acc", forKey: .type)
            try container.encode(values.map { [$0.x, $0.y, $0.z] }, forKey: .milliG)
        }
    }

    static func segment(_ segmentBreak: PMDTimeline.Break?) -> String? {
        switch segmentBreak {
        case nil: nil
        case .start: "start"
        case .gap: "gap"
        case .clockBack: "clock-back"
        case .clockForward: "clock-forward"
        }
    }

    func encodedLine() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Numbers and strings only: encoding cannot fail.
        let data = try! encoder.encode(self)
        return String(decoding: data, as: UTF8.self)
    }
}
