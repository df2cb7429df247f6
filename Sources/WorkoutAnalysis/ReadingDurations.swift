import Foundation

extension ActivityRecording {
    /// The longest a reading stands for: a strap notifies about once a second, so a longer silence is lost signal
    /// (no contact, out of range), not time at the last heart rate.
    public static let longestReadingSpan: TimeInterval = 5

    /// Each reading with the seconds it stands for: until the next reading (at most ``longestReadingSpan``, and not
    /// past the end), less any part of that time the workout was paused.
    public func readingDurations() -> [(bpm: Double, seconds: TimeInterval)] {
        var result: [(bpm: Double, seconds: TimeInterval)] = []
        result.reserveCapacity(readings.count)
        let sortedPauses = pauses.sorted { $0.start < $1.start }
        for (index, reading) in readings.enumerated() where reading.bpm.isFinite && reading.bpm > 0 {
            let next = index + 1 < readings.count ? readings[index + 1].date : end
            let until = min(next, reading.date + Self.longestReadingSpan, max(end, reading.date))
            guard until > reading.date else { continue }
            let span = DateInterval(start: reading.date, end: until)
            var paused = 0.0
            for pause in sortedPauses where pause.start < span.end && pause.end > span.start {
                paused += pause.intersection(with: span)?.duration ?? 0
            }
            let seconds = span.duration - paused
            if seconds > 0 { result.append((reading.bpm, seconds)) }
        }
        return result
    }
}
