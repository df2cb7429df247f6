import Foundation
import WorkoutAnalysis

extension ActivityRecording {
    /// The active energy of `interval` in kilocalories, nil when the workout's energy is unknown: its share of the
    /// workout's energy by what sensors measured inside it where they measured it, else by its share of the timer
    /// time (an estimate is spread evenly over the time worked out).
    func kilocalories(in interval: DateInterval) -> Double? {
        guard let energy else { return nil }
        let whole = DateInterval(start: start, end: max(start, end))
        let share: Double
        if !energy.isEstimated, !energyReadings.isEmpty {
            let inside = energyReadings.filter { interval.contains($0.date) }.map(\.kilojoules)
            share = inside.reduce(0, +) / max(1e-9, energy.kilojoules)
        } else {
            share = timerTime(of: interval) / max(1e-9, timerTime(of: whole))
        }
        return energy.kilocalories * min(1, share)
    }

    /// The active energy of each of `laps` in kilocalories (``kilocalories(in:)``); a single lap is the whole
    /// workout and gets all of it, measured inside or not.
    func kilocalories(ofLaps laps: [DateInterval]) -> [Double?] {
        guard laps.count > 1 else {
            return laps.map { _ in kilocalories(in: DateInterval(start: start, end: max(start, end))) }
        }
        return laps.map { kilocalories(in: $0) }
    }
}
