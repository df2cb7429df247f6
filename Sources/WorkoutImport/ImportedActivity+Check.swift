import Foundation
import SafeText

extension ImportedActivity {
    /// Checks the whole activity against ``ImportLimits``: what the readers checked value by value, and what only
    /// the whole shows (every time within the activity, readings in order). systoled checks again what `systole
    /// import` sends, since anyone in group systole may call the method with values of their own.
    public func check(now: Date = Date()) throws(ImportError) {
        let dates = ImportLimits.dates(now: now)
        guard dates.contains(start), dates.contains(end) else {
            throw ImportError("the activity's start or end is before 2000 or in the future")
        }
        guard end > start else { throw ImportError("the activity ends before it starts") }
        guard end.timeIntervalSince(start) <= ImportLimits.duration else {
            throw ImportError("an activity of \(Int(end.timeIntervalSince(start) / 3600)) hours (at most a week)")
        }
        try Self.check(pauses, "pauses", within: start...end, most: ImportLimits.timerEvents / 2)
        // Pauses in order, none inside another: a workout's time and statistics subtract each once.
        if let index = pauses.indices.dropFirst().first(where: { pauses[$0].start < pauses[$0 - 1].end }) {
            throw ImportError("pause \(index + 1) starts before pause \(index) ends")
        }
        try Self.check(laps, "laps", within: start...end, most: ImportLimits.laps)
        guard heartRates.count <= ImportLimits.heartRates else {
            throw ImportError("more than \(ImportLimits.heartRates) heart-rate readings")
        }
        var previous = start
        for (index, reading) in heartRates.enumerated() {
            guard ImportLimits.heartRate.contains(reading.beatsPerMinute) else {
                throw ImportError(
                    "heart-rate reading \(index + 1) is not within \(Self.range(ImportLimits.heartRate)) bpm"
                )
            }
            guard reading.date >= previous, reading.date <= end else {
                throw ImportError("heart-rate reading \(index + 1) is out of order or outside the activity")
            }
            previous = reading.date
        }
        guard rrIntervals.count <= ImportLimits.rrIntervals else {
            throw ImportError("more than \(ImportLimits.rrIntervals) RR intervals")
        }
        guard heartRates.count + rrIntervals.count <= ImportLimits.readings else {
            throw ImportError(
                "more than \(ImportLimits.readings) heart-rate readings and RR intervals together (thirty hours at a reading a second with every beat), more than systole imports of one activity; export the activity in parts if the device or service can"
            )
        }
        if let index = rrIntervals.firstIndex(where: { !ImportLimits.rrInterval.contains($0) }) {
            throw ImportError("RR interval \(index + 1) is not within \(Self.range(ImportLimits.rrInterval)) s")
        }
        if let energy = energyKilocalories, !ImportLimits.energy.contains(energy) {
            throw ImportError("an energy not within \(Self.range(ImportLimits.energy)) kcal")
        }
        for name in [recorder.manufacturer, recorder.product, recorder.serialNumber].compactMap({ $0 }) {
            guard UntrustedText.clean(name) == name else {
                throw ImportError("a device name \(name.quotedExcerpt()) that is not cleaned text")
            }
        }
    }

    /// Checks the activities of one file: each, and together at most what one activity may hold (a file imports
    /// whole or not at all, in one transaction).
    public static func check(_ activities: [ImportedActivity], now: Date = Date()) throws(ImportError) {
        guard !activities.isEmpty else { throw ImportError("the file holds no activity") }
        guard activities.count <= ImportLimits.laps else {
            throw ImportError("more than \(ImportLimits.laps) activities in one file")
        }
        for (index, activity) in activities.enumerated() {
            do {
                try activity.check(now: now)
            } catch {
                throw activities.count == 1 ? error : ImportError("activity \(index + 1): \(error.description)")
            }
        }
        // One file is one transaction and one message to systoled: it holds at most what one activity may.
        guard activities.reduce(0, { $0 + $1.heartRates.count + $1.rrIntervals.count }) <= ImportLimits.readings
        else {
            throw ImportError(
                "more than \(ImportLimits.readings) heart-rate readings and RR intervals in one file; export its activities one file each"
            )
        }
    }

    private static func check(
        _ intervals: [DateInterval],
        _ what: String,
        within activity: ClosedRange<Date>,
        most: Int
    ) throws(ImportError) {
        guard intervals.count <= most else { throw ImportError("more than \(most) \(what)") }
        for (index, interval) in intervals.enumerated()
        where interval.start < activity.lowerBound || interval.end > activity.upperBound {
            throw ImportError("\(what.dropLast()) \(index + 1) lies outside the activity")
        }
    }

    static func range(_ range: ClosedRange<Double>) -> String { FITActivityParts.range(range) }
}
