import ControlAPI
import DBus
import Foundation
import SafeText

/// The analysis part of `systole workouts show`: laps, markers, HRV, time in zones as a bar chart, TRIMP and
/// energy (measured or estimated).
enum AnalysisText {
    static func lines(_ workout: [String: DBusValue]) -> [String] {
        var lines: [String] = []
        let laps = (workout["laps"]?.array ?? []).map(\.map)
        if laps.count > 1 {
            lines.append("Laps:")
            for lap in laps {
                var parts = [
                    "  \(WorkoutText.whole(lap["number"]?.number ?? 0))".padding(
                        toLength: 5,
                        withPad: " ",
                        startingAt: 0
                    ),
                    formatElapsed(lap["duration"]?.number ?? 0),
                ]
                if let average = lap["averageHeartRate"]?.number {
                    parts.append("avg \(WorkoutText.whole(average)) bpm")
                }
                if let maximum = lap["maximumHeartRate"]?.number {
                    parts.append("max \(WorkoutText.whole(maximum)) bpm")
                }
                lines.append(parts.joined(separator: "  "))
            }
        }
        let markers = (workout["markers"]?.array ?? []).map(\.map)
        if !markers.isEmpty {
            lines.append("Markers:")
            for marker in markers {
                // The text is the user's own, but shown escaped: it reaches a terminal.
                let text = (marker["text"]?.string ?? "").quotedExcerpt(maximum: 200)
                lines.append("  \(formatElapsed(marker["elapsed"]?.number ?? 0))  \(text)")
            }
        }
        if let hrv = workout["hrv"]?.map, let rmssd = hrv["rmssd"]?.number {
            var parts = [
                "mean NN \(WorkoutText.decimal(hrv["meanNN"]?.number ?? .nan)) ms",
                "SDNN \(WorkoutText.decimal(hrv["sdnn"]?.number ?? .nan)) ms",
                "RMSSD \(WorkoutText.decimal(rmssd)) ms",
                "pNN50 \(WorkoutText.decimal(hrv["pnn50"]?.number ?? .nan)) %",
                "\(WorkoutText.whole(hrv["beats"]?.number ?? 0)) beats",
            ]
            if let corrected = hrv["corrected"]?.number, corrected > 0 {
                parts.append("\(WorkoutText.whole(corrected)) corrected")
            }
            lines.append("HRV: " + parts.joined(separator: ", "))
        }
        lines += ecgLines(workout)
        let zones = (workout["zones"]?.array ?? []).map(\.map)
        let below = workout["secondsBelowZones"]?.number ?? 0
        let total = zones.reduce(below) { $0 + ($1["seconds"]?.number ?? 0) }
        if !zones.isEmpty, total > 0 {
            let basis = workout["zoneBasis"]?.string == "reserve" ? "% of heart-rate reserve" : "% of max heart rate"
            lines.append("Time in zones (\(basis)):")
            var rows = zones.reversed().map { zone -> (String, Double) in
                let lower = WorkoutText.whole(zone["lower"]?.number ?? .nan)
                let upper = zone["upper"]?.number.map { "–\(WorkoutText.whole($0))" } ?? "+"
                return (
                    "Z\(WorkoutText.whole(zone["number"]?.number ?? 0)) \(lower)\(upper)", zone["seconds"]?.number ?? 0
                )
            }
            rows.append(("below", below))
            for (label, seconds) in rows {
                let fraction = seconds / total
                let width = fraction.isFinite ? Int((fraction * 30).rounded()) : 0
                lines.append(
                    "  " + label.padding(toLength: 12, withPad: " ", startingAt: 0)
                        + String(repeating: "█", count: max(0, min(30, width))).padding(
                            toLength: 31,
                            withPad: " ",
                            startingAt: 0
                        ) + "\(formatElapsed(seconds))  \(WorkoutText.whole(fraction * 100)) %"
                )
            }
        }
        if let trimp = workout["trimp"]?.number { lines.append("TRIMP: \(WorkoutText.whole(trimp))") }
        if let energy = workout["energy"]?.map, let kilojoules = energy["kilojoules"]?.number {
            let how = energy["estimated"]?.bool == true ? "estimated from heart rate" : "measured"
            lines.append(
                "Energy: \(WorkoutText.whole(kilojoules)) kJ (\(WorkoutText.whole(kilojoules / 4.184)) kcal, \(how))"
            )
        } else if let reason = workout["energyUnavailable"]?.string {
            lines.append("Energy: none measured (\(reason))")
        }
        return lines
    }
}

extension AnalysisText {
    /// With ECG: its HRV, and how its RR intervals agree with the strap's.
    static func ecgLines(_ workout: [String: DBusValue]) -> [String] {
        var lines: [String] = []
        if let hrv = workout["hrvFromECG"]?.map, let rmssd = hrv["rmssd"]?.number {
            let parts = [
                "mean NN \(WorkoutText.decimal(hrv["meanNN"]?.number ?? .nan)) ms",
                "SDNN \(WorkoutText.decimal(hrv["sdnn"]?.number ?? .nan)) ms",
                "RMSSD \(WorkoutText.decimal(rmssd)) ms",
                "pNN50 \(WorkoutText.decimal(hrv["pnn50"]?.number ?? .nan)) %",
                "\(WorkoutText.whole(hrv["beats"]?.number ?? 0)) beats",
            ]
            lines.append("HRV from the ECG: " + parts.joined(separator: ", "))
        }
        if let agreement = workout["rrAgreement"]?.map, let paired = agreement["pairedBeats"]?.number {
            let share = (agreement["withinTolerance"]?.number ?? 0) * 100
            lines.append(
                "ECG and strap RR: \(WorkoutText.whole(paired)) of \(WorkoutText.whole(agreement["ecgBeats"]?.number ?? 0)) "
                    + "ECG beats paired, \(WorkoutText.decimal(share)) % within one ECG sample "
                    + "(\(WorkoutText.decimal(agreement["tolerance"]?.number ?? .nan)) ms), mean difference "
                    + "\(WorkoutText.decimal(agreement["meanDifference"]?.number ?? .nan)) ms"
            )
        }
        return lines
    }
}
