import Foundation
import SQLiteStore
import WorkoutKit

/// A finished workout's heart rate per minute, as `GetWorkout` and the web page chart it.
enum WorkoutChart {
    /// The most minutes charted: a week's (a chart no terminal shows whole; the reply stays small).
    static let minutesLimit: Double = 7 * 24 * 60

    /// The average heart rate of each minute of `workout`, nil for a minute without one.
    static func heartRatePerMinute(of workout: Workout, in store: SQLiteHealthStore) async throws -> [Double?] {
        let minutes = try await store.statisticsCollection(
            of: .heartRate,
            from: workout.startDate,
            // Only the minutes charted are asked for: a workout whose clock jumped spans decades of minutes.
            to: min(workout.endDate, workout.startDate.addingTimeInterval(minutesLimit * 60)),
            anchor: workout.startDate,
            interval: .minutes(1)
        )
        let minutesLong = (workout.endDate.timeIntervalSince(workout.startDate) / 60).rounded(.up)
        var perMinute = [Double?](
            repeating: nil,
            count: minutesLong.isFinite ? Int(max(0, min(minutesLong, minutesLimit))) : 0
        )
        for bucket in minutes {
            let index = Int(bucket.startDate.timeIntervalSince(workout.startDate) / 60)
            if perMinute.indices.contains(index), let average = bucket.averageQuantity() {
                perMinute[index] = average.value
            }
        }
        return perMinute
    }
}
