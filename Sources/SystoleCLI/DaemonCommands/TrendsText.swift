import DBus
import Foundation

/// A `GetTrends` reply as the terminal, JSON and CSV show it.
struct TrendDays {
    struct Row {
        /// The day, `2026-11-29`.
        var day: String
        var load: Double
        var fitness: Double
        var fatigue: Double
        var form: Double
        var workouts: Int
        /// The day's resting heart rate; NaN for a day without one.
        var restingHeartRate: Double
        /// The day's active energy from workouts, kJ.
        var energy: Double
        /// The day's minutes in zone 2 and above.
        var zoneMinutes: Double

        var csv: String {
            [load, fitness, fatigue, form].map(Self.number).reduce(day) { "\($0),\($1)" }
                + ",\(workouts),\(Self.number(restingHeartRate)),\(Self.number(energy)),\(Self.number(zoneMinutes))"
        }

        /// Two decimals, or empty for a value that is not a number (the CLI never prints what it cannot show).
        static func number(_ value: Double) -> String {
            value.isFinite ? String(format: "%.2f", value) : ""
        }
    }

    var rows: [Row] = []
    /// The day's goals: `energy` (kJ, when set), `zoneMinutes`, `workouts`.
    var goals: [String: DBusValue] = [:]

    init(_ map: [String: DBusValue]) {
        let numbers = { (key: String) in (map[key]?.array ?? []).map { $0.double ?? .nan } }
        let starts = numbers("days")
        let (load, fitness, fatigue, form) = (numbers("load"), numbers("fitness"), numbers("fatigue"), numbers("form"))
        let workouts = (map["workouts"]?.array ?? []).map { Int($0.int64 ?? 0) }
        let resting = numbers("restingHeartRate")
        let (energy, zoneMinutes) = (numbers("energy"), numbers("zoneMinutes"))
        goals = map["goals"]?.map ?? [:]
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        for index in starts.indices
        where [load, fitness, fatigue, form].allSatisfy({ $0.indices.contains(index) }) && starts[index].isFinite {
            // A day's start in systoled's calendar, shown at its noon: the same date wherever the terminal is.
            let noon = Date(timeIntervalSince1970: starts[index] + 12 * 3600)
            rows.append(
                Row(
                    day: formatter.string(from: noon),
                    load: load[index],
                    fitness: fitness[index],
                    fatigue: fatigue[index],
                    form: form[index],
                    workouts: workouts.indices.contains(index) ? workouts[index] : 0,
                    restingHeartRate: resting.indices.contains(index) ? resting[index] : .nan,
                    energy: energy.indices.contains(index) ? energy[index] : .nan,
                    zoneMinutes: zoneMinutes.indices.contains(index) ? zoneMinutes[index] : .nan
                )
            )
        }
    }

    var jsonObject: [[String: Any]] {
        rows.map { row in
            [
                "day": row.day, "load": row.load, "fitness": row.fitness, "fatigue": row.fatigue, "form": row.form,
                "workouts": row.workouts,
                "restingHeartRate": row.restingHeartRate.isFinite ? row.restingHeartRate : NSNull(),
                "energy": row.energy, "zoneMinutes": row.zoneMinutes,
            ]
        }
    }

    /// What form says, in the bands intervals.icu draws: fresh before a race, optimal while building, …
    static func formBand(_ form: Double) -> String {
        switch form {
        case _ where !form.isFinite: "unknown"
        case 25...: "transition: fitness is being lost"
        case 5..<25: "fresh: ready for a race"
        case -10..<5: "grey zone: maintaining"
        case -30 ..< -10: "optimal: building fitness"
        default: "high risk: rest"
        }
    }

    /// A sparkline per measure over the days (at most 60 columns, each the mean of its days), then today's values.
    func chart(width: Int = 60) -> [String] {
        guard let first = rows.first, let last = rows.last else { return ["No days."] }
        // Fitness counts every workout before the range too: all zero means no workout at all up to its end.
        if rows.allSatisfy({ $0.workouts == 0 && $0.fitness == 0 }) {
            return [
                "No workouts up to \(last.day): record one ('systole start') or import your history ('systole import "
                    + "FILE…', FIT or TCX files from Garmin Connect, Polar Flow, Strava)."
            ]
        }
        var lines = [
            "Training load \(first.day) to \(last.day) (\(rows.count) day\(rows.count == 1 ? "" : "s"); "
                + "\(rows.reduce(0) { $0 + $1.workouts }) workouts)"
        ]
        let measures: [(String, KeyPath<Row, Double>)] = [
            ("fitness (CTL)", \.fitness), ("fatigue (ATL)", \.fatigue), ("form (TSB)", \.form),
            ("load (TRIMP)", \.load), ("resting HR", \.restingHeartRate),
        ]
        for (name, path) in measures {
            let values = rows.map { $0[keyPath: path] }
            let known = values.filter(\.isFinite)
            guard let firstValue = known.first, let lastValue = known.last else { continue }
            lines.append(
                name.padding(toLength: 14, withPad: " ", startingAt: 0) + Self.rightAligned(Self.whole(firstValue))
                    + " " + Self.sparkline(values, width: width) + " \(Self.whole(lastValue))"
            )
        }
        lines.append(
            "\(last.day): fitness \(Self.whole(last.fitness)) · fatigue \(Self.whole(last.fatigue)) · "
                + "form \(Self.whole(last.form)), \(Self.formBand(last.form))"
        )
        lines.append(summary(of: last))
        // The resting heart rate's trend: the last week's days with one against the four weeks before.
        let resting = rows.map(\.restingHeartRate)
        if let week = Self.mean(resting.suffix(7)) {
            let before =
                Self.mean(resting.dropLast(7).suffix(28)).map { ", the 4 weeks before \(Self.whole($0))" } ?? ""
            lines.append("resting HR: last 7 days \(Self.whole(week)) bpm\(before)")
        }
        return lines
    }

    /// The day against its goals, as the health apps' rings: `workouts 1 of 1 ✓ · zone 2+ 34 of 30 min ✓ · …`.
    func summary(of row: Row) -> String {
        func part(_ name: String, _ value: Double, _ goal: Double?, _ unit: String) -> String {
            guard let goal, goal > 0 else { return "\(name) \(Self.whole(value))\(unit)" }
            let reached = value >= goal ? " ✓" : " (\(Self.whole(100 * value / goal)) %)"
            return "\(name) \(Self.whole(value)) of \(Self.whole(goal))\(unit)\(reached)"
        }
        return "\(row.day) against your goals: "
            + [
                part("workouts", Double(row.workouts), goals["workouts"]?.number, ""),
                part("zone 2+", row.zoneMinutes, goals["zoneMinutes"]?.number, " min"),
                part("energy", row.energy / 4.184, goals["energy"]?.number.map { $0 / 4.184 }, " kcal"),
            ].joined(separator: " · ")
    }

    /// The mean of the values that are numbers; nil without any.
    static func mean(_ values: some Collection<Double>) -> Double? {
        let known = values.filter(\.isFinite)
        return known.isEmpty ? nil : known.reduce(0, +) / Double(known.count)
    }

    static func rightAligned(_ text: String, width: Int = 4) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    static func whole(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 1e9 else { return "?" }
        return String(Int(value.rounded()))
    }

    /// Values as ▁…█ from their minimum to their maximum, in at most `width` columns.
    static func sparkline(_ values: [Double], width: Int) -> String {
        let finite = values.filter(\.isFinite)
        guard let low = finite.min(), let high = finite.max(), width > 0 else { return "" }
        let bars = Array("▁▂▃▄▅▆▇█")
        let columns = min(width, values.count)
        return String(
            (0..<columns).map { column in
                let slice = values[column * values.count / columns..<(column + 1) * values.count / columns]
                    .filter(\.isFinite)
                guard !slice.isEmpty else { return " " }
                let mean = slice.reduce(0, +) / Double(slice.count)
                // Values at the ends of Double's range make the span infinite and the level not a number.
                let span = (mean - low) / (high - low)
                let level = high > low && span.isFinite ? span : 0
                return bars[min(bars.count - 1, max(0, Int(level * Double(bars.count - 1) + 0.5)))]
            }
        )
    }
}
