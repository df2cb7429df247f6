import Foundation
import SafeText
import WorkoutKit

/// One TCX activity gathered as its elements come, each value checked with its line.
struct TCXActivityParts {
    let sport: String?
    let now: Date
    var id: Date?
    /// Each lap's start and total time (seconds), as the file gives them.
    var laps: [(start: Date, seconds: Double?)] = []
    var calories = 0.0
    var trackpointTime: Date?
    var heartRates: [ImportedActivity.HeartRate] = []
    var recorder = ImportedActivity.Recorder()

    init(sport: String?, now: Date) {
        self.sport = sport
        self.now = now
    }

    mutating func lapStarted(at text: String?, line: Int) throws(ImportError) {
        guard let text else { throw ImportError("line \(line): a lap without StartTime") }
        guard laps.count < ImportLimits.laps else {
            throw ImportError("line \(line): more than \(ImportLimits.laps) laps")
        }
        laps.append((try date(text, line: line, what: "a lap's StartTime"), nil))
    }

    /// Takes the text of the element at the end of `path`.
    mutating func take(_ text: String, at path: [String], line: Int) throws(ImportError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, let element = path.last else { return }
        let parent = path.count >= 2 ? path[path.count - 2] : ""
        switch (parent, element) {
        case ("Activity", "Id"):
            id = try date(trimmed, line: line, what: "the activity's Id")
        case ("Lap", "TotalTimeSeconds"):
            let seconds = try number(
                trimmed,
                line: line,
                what: "a lap's TotalTimeSeconds",
                in: 0...ImportLimits.duration
            )
            if !laps.isEmpty { laps[laps.count - 1].seconds = seconds }
        case ("Lap", "Calories"):
            calories += try number(trimmed, line: line, what: "a lap's Calories", in: ImportLimits.energy)
        case ("Trackpoint", "Time"):
            trackpointTime = try date(trimmed, line: line, what: "a trackpoint's Time")
        case ("HeartRateBpm", "Value") where path.dropLast(2).last == "Trackpoint":
            let bpm = try number(trimmed, line: line, what: "a heart rate", in: ImportLimits.heartRate)
            guard let time = trackpointTime else {
                throw ImportError("line \(line): a heart rate in a trackpoint without a Time before it")
            }
            if let previous = heartRates.last?.date, time < previous {
                throw ImportError("line \(line): a trackpoint earlier than the one before it")
            }
            guard heartRates.count < ImportLimits.heartRates else {
                throw ImportError("line \(line): more than \(ImportLimits.heartRates) heart-rate readings")
            }
            heartRates.append(ImportedActivity.HeartRate(date: time, beatsPerMinute: bpm))
        case ("Creator", "Name"):
            recorder.product = UntrustedText.clean(trimmed)
        case ("Creator", "UnitId"):
            recorder.serialNumber = UntrustedText.clean(trimmed)
        default:
            return
        }
    }

    func activity() throws(ImportError) -> ImportedActivity {
        let lapIntervals = laps.map { lap in
            DateInterval(start: lap.start, duration: lap.seconds ?? 0)
        }
        let start = [id, laps.first?.start, heartRates.first?.date].compactMap { $0 }.min()
        let end = (lapIntervals.map(\.end) + [heartRates.last?.date].compactMap { $0 }).max()
        guard let start, let end, end > start else {
            throw ImportError("no laps with a duration and no timed heart rate: nothing to import")
        }
        guard end.timeIntervalSince(start) <= ImportLimits.duration else {
            throw ImportError("an activity of \(Int(end.timeIntervalSince(start) / 3600)) hours (at most a week)")
        }
        return ImportedActivity(
            format: .tcx,
            activity: Self.activity(sport),
            start: start,
            end: end,
            pauses: [],
            laps: lapIntervals.filter { $0.duration > 0 },
            heartRates: heartRates,
            rrIntervals: [],
            energyKilocalories: laps.isEmpty ? nil : calories,
            recorder: recorder
        )
    }

    /// TCX knows three sports.
    static func activity(_ sport: String?) -> WorkoutActivityType {
        switch sport {
        case "Running": .running
        case "Biking": .cycling
        default: .other
        }
    }

    private func date(_ text: String, line: Int, what: String) throws(ImportError) -> Date {
        let parsed =
            (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        guard let parsed else { throw ImportError("line \(line): \(what) \"\(text.prefix(40))\" is not a date") }
        guard ImportLimits.dates(now: now).contains(parsed) else {
            throw ImportError("line \(line): \(what) is \(text.prefix(40)), before 2000 or in the future")
        }
        return parsed
    }

    private func number(
        _ text: String,
        line: Int,
        what: String,
        in range: ClosedRange<Double>
    ) throws(ImportError) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw ImportError("line \(line): \(what) \"\(text.prefix(40))\" is not a number")
        }
        guard range.contains(value) else {
            throw ImportError("line \(line): \(what) of \(value.formatted()) (\(FITActivityParts.range(range)))")
        }
        return value
    }
}
