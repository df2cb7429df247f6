import Foundation
import HeartRateProfile

/// The one-line human form of a decoded measurement:
/// `72 bpm · contact detected · RR 332.0 ms, 730.5 ms`.
enum MeasurementText {
    static func line(for measurement: HeartRateMeasurement) -> String {
        var parts: [String] = []
        var rate = "\(measurement.heartRate) bpm"
        if measurement.format == .uint16 { rate += " (uint16)" }
        parts.append(rate)
        parts.append(contact(measurement.sensorContact))
        if let energy = measurement.energyExpended {
            parts.append(
                measurement.isEnergyExpendedSaturated
                    ? "energy \(energy) kJ (saturated: reset through the control point)" : "energy \(energy) kJ"
            )
        }
        if !measurement.rrIntervals.isEmpty {
            let values = measurement.rrIntervals.map { interval in
                let ms = String(format: "%.1f ms", interval.milliseconds)
                return interval.isPhysiologicallyPlausible ? ms : ms + " (implausible)"
            }
            parts.append("RR " + values.joined(separator: ", "))
        }
        if measurement.isTruncated { parts.append("truncated (a field was cut short; complete fields kept)") }
        return parts.joined(separator: " · ")
    }

    static func contact(_ contact: SensorContact) -> String {
        switch contact {
        case .notSupported: "contact not supported"
        case .notDetected: "contact not detected"
        case .detected: "contact detected"
        }
    }
}
