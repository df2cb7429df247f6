import Foundation

extension ActivityRecording {
    /// How long a stretch of readings the lowest sustained heart rate averages.
    public static let sustainedSpan: TimeInterval = 5 * 60

    /// The lowest sustained heart rate of the recording: the lowest mean of the readings in any five minutes (from
    /// one reading to five minutes after it), counted only where those readings cover the five minutes: no silence
    /// between them longer than ``longestReadingSpan``, and the last at most that long before the five minutes end
    /// (so a lost contact never makes a low). Nil when no such stretch exists. A day's resting heart rate is the
    /// lowest of its workouts' (docs/trends.md).
    public var lowestSustainedHeartRate: Double? {
        let valid = readings.filter { $0.bpm.isFinite && $0.bpm > 0 }
        var lowest: Double?
        var end = 0
        var sum = 0.0
        for start in valid.indices {
            if end < start {
                end = start
                sum = 0
            }
            // Extend the window to the readings before start + 5 minutes, within the run.
            while end < valid.count, valid[end].date < valid[start].date + Self.sustainedSpan,
                end == start || valid[end].date.timeIntervalSince(valid[end - 1].date) <= Self.longestReadingSpan
            {
                sum += valid[end].bpm
                end += 1
            }
            // Whole when its last reading stands until the five minutes end.
            if valid[end - 1].date + Self.longestReadingSpan >= valid[start].date + Self.sustainedSpan {
                let mean = sum / Double(end - start)
                lowest = min(lowest ?? mean, mean)
            }
            sum -= valid[start].bpm
        }
        return lowest
    }
}
