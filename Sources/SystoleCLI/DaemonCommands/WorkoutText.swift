import ControlAPI
import DBus
import Foundation

/// How workouts read in the terminal.
enum WorkoutText {
    /// A value the daemon sent, rounded to a whole number, or `?` when it is not a number a whole number can
    /// hold (the CLI shows what it reads and never traps on it).
    static func whole(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "?" }
        return String(Int(value.rounded()))
    }

    /// `running · 00:23:10 · avg 142 bpm · max 171 bpm · 350 kJ · 500 mL water · 3FF98E27`, after the athlete's
    /// name when the workout has one (`Ana · running · …`).
    static func summary(_ workout: [String: DBusValue]) -> String {
        var parts: [String] = []
        if let athlete = workout["athlete"]?.string { parts.append(printable(athlete)) }
        parts.append(workout["activity"]?.string ?? "workout")
        parts.append(formatElapsed(workout["duration"]?.number ?? workout["elapsed"]?.number ?? 0))
        let statistics = workout["statistics"]?.map ?? [:]
        let heartRate = statistics["heartRate"]?.map ?? workout["heartRate"]?.map ?? [:]
        if let average = heartRate["average"]?.number { parts.append("avg \(whole(average)) bpm") }
        if let maximum = heartRate["maximum"]?.number { parts.append("max \(whole(maximum)) bpm") }
        if let energy = statistics["activeEnergyBurned"]?.map["sum"]?.number {
            parts.append("\(whole(energy)) kJ")
        }
        if let water = statistics["dietaryWater"]?.map["sum"]?.number {
            parts.append("\(whole(water)) mL water")
        }
        if let id = workout["id"]?.string { parts.append(String(id.prefix(8))) }
        return parts.joined(separator: " · ")
    }

    /// Text from elsewhere as the terminal may show it: control characters (escape sequences among them) become
    /// `?`, and at most 64 characters are kept.
    static func printable(_ text: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map {
                    $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? "?" : $0
                }
            )
        )
        return cleaned.count > 64 ? String(cleaned.prefix(63)) + "…" : cleaned
    }

    static func date(_ value: DBusValue?) -> String {
        guard let seconds = value?.number else { return "?" }
        return Date(timeIntervalSince1970: seconds).formatted(date: .abbreviated, time: .shortened)
    }

    /// A bar chart of heart rate per minute, one row per minute: `  12 ████████████▌ 142`. Minutes without
    /// heart rate show no bar (never a made-up value).
    static func chart(_ perMinute: [Double], width: Int = 50) -> [String] {
        // Values a chart can place: finite, and far from the ends of Double's range, whose differences would not be.
        let values = perMinute.filter { $0.isFinite && abs($0) < 1e15 }
        guard let low = values.min(), let high = values.max() else { return ["(no heart rate recorded)"] }
        // The axis starts a little below the lowest minute, so differences show.
        let floor = max(0, (low - 10).rounded(.down))
        let span = max(1, high - floor)
        let blocks = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return perMinute.enumerated().map { minute, value in
            let label = String(format: "%4d ", minute + 1)
            let fraction = (value - floor) / span
            guard value.isFinite, abs(value) < 1e15, fraction.isFinite, fraction >= 0, fraction <= 1 else {
                return label + "·"
            }
            let eighths = Int((fraction * Double(width * 8)).rounded())
            let bar = String(repeating: "█", count: eighths / 8) + blocks[eighths % 8]
            return label + bar + " \(whole(value))"
        }
    }

    /// A number with at most one decimal: `72`, `72.5`, or `?`.
    static func decimal(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "?" }
        return value.formatted(.number.precision(.fractionLength(0...1)).grouping(.never))
    }
}
