import BlueZ
import ControlAPI
import Foundation
import Glibc
import HeartRateProfile
import HeartRateSensors
import WorkoutKit

/// How a live-log line is written.
package enum LiveLogLine {
    /// `2026-11-22T07:45:12.345Z A0:9E:1A:12:34:56 bpm=142 contact=yes rr=412,398 energy=123kJ athlete=Ana
    /// state=running elapsed=00:23:10`. In duration-only mode, or without a heart rate, the metrics are left out
    /// (never 0 bpm). An athlete's name with a space is quoted (`athlete="Ana Lima"`); names hold no quotes.
    package static func text(
        date: Date,
        reading: HeartRateReading?,
        athlete: String? = nil,
        snapshot: WorkoutSnapshot,
        privacy: Privacy
    ) -> String {
        // Byte by byte into one buffer: with many sensors this runs hundreds of times a second, and interpolated
        // parts and `joined` allocate for every field.
        var line = LineText()
        line.timestamp(date)
        if privacy == .full, let reading {
            let m = reading.measurement
            line.append(" ")
            line.append(reading.sensor.description)
            if let bpm = m.usableHeartRate.map(Int.init) {
                line.append(" bpm=")
                line.decimal(bpm)
            }
            if let contact = contact(m.sensorContact) { line.append(contact ? " contact=yes" : " contact=no") }
            for (index, interval) in m.rrIntervals.enumerated() {
                line.append(index == 0 ? " rr=" : ",")
                line.decimal(Int(interval.milliseconds.rounded()))
            }
            if let energy = m.energyExpended {
                line.append(" energy=")
                line.decimal(Int(energy))
                line.append("kJ")
            }
        }
        if let athlete {
            let quoted = athlete.contains(" ")
            line.append(quoted ? " athlete=\"" : " athlete=")
            line.append(athlete)
            if quoted { line.append("\"") }
        }
        line.append(" state=")
        line.append(snapshot.stateName)
        if snapshot.workoutID != nil {
            line.append(" elapsed=")
            line.append(formatElapsed(snapshot.elapsed))
        }
        return line.string
    }

    /// The same as one JSON object: `time`, `state`, `elapsed` (seconds, with a workout), and in full mode
    /// `sensor`, `bpm` (absent without a heart rate), `contact` (true/false/null), `rr` (ms), `energy` (kJ or null);
    /// `athlete` when the sensor's athlete is named.
    package static func json(
        date: Date,
        reading: HeartRateReading?,
        athlete: String? = nil,
        snapshot: WorkoutSnapshot,
        privacy: Privacy
    ) -> String {
        var object: [String: Any] = ["time": timestamp(date), "state": snapshot.stateName]
        if let athlete { object["athlete"] = athlete }
        if snapshot.workoutID != nil { object["elapsed"] = (snapshot.elapsed * 1000).rounded() / 1000 }
        if privacy == .full, let reading {
            let m = reading.measurement
            object["sensor"] = reading.sensor.description
            if let bpm = m.usableHeartRate.map(Int.init) { object["bpm"] = bpm }
            object["contact"] = contact(m.sensorContact) ?? NSNull()
            object["rr"] = m.rrIntervals.map { ($0.milliseconds * 1000).rounded() / 1000 }
            object["energy"] = m.energyExpended.map { Int($0) } ?? NSNull()
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    package static func contact(_ contact: SensorContact) -> Bool? {
        switch contact {
        case .detected: true
        case .notDetected: false
        case .notSupported: nil
        }
    }

    /// `2026-11-22T07:45:12.345Z`: ISO 8601 in UTC to the (nearest) millisecond. Written by hand: a format style
    /// per line was a tenth of the live log's cost with a hundred sensors.
    package static func timestamp(_ date: Date) -> String {
        var line = LineText()
        line.timestamp(date)
        return line.string
    }

}

extension Int64 {
    /// Division rounding toward minus infinity (times before 1970 stay in their own second).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}

/// A line of text as UTF-8 bytes, with the few formatters the live log needs.
private struct LineText {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(112) }

    var string: String { String(decoding: bytes, as: UTF8.self) }

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// `value` in decimal, zero-padded to at least `digits` digits.
    mutating func decimal(_ value: Int, digits: Int = 1) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        while bytes.count - start < digits { bytes.append(UInt8(ascii: "0")) }
        bytes[start...].reverse()
    }

    /// `2026-11-22T07:45:12.345Z`: ISO 8601 in UTC to the (nearest) millisecond.
    mutating func timestamp(_ date: Date) {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var seconds = time_t(milliseconds.floorDivided(by: 1000))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        decimal(Int(parts.tm_year) + 1900, digits: 4)
        append("-")
        decimal(Int(parts.tm_mon) + 1, digits: 2)
        append("-")
        decimal(Int(parts.tm_mday), digits: 2)
        append("T")
        decimal(Int(parts.tm_hour), digits: 2)
        append(":")
        decimal(Int(parts.tm_min), digits: 2)
        append(":")
        decimal(Int(parts.tm_sec), digits: 2)
        append(".")
        decimal(Int(milliseconds - Int64(seconds) * 1000), digits: 3)
        append("Z")
    }
}
