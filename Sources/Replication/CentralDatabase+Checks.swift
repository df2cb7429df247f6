import Foundation
import WorkoutKit

extension CentralDatabase {
    /// A workout row that could not be taken: its id as the row has it, its receiver, and why.
    public struct Unreadable: Sendable {
        public var id: String
        public var receiver: String
        public var reason: String
    }

    /// Finished workouts and the rows that could not be read.
    public struct Listing: Sendable {
        public var entries: [Entry]
        public var unreadable: [Unreadable]
    }

    /// The dates a workout from the central database may have: every receiver writes into it, and one with a
    /// broken clock or a hostile one must not make `systole` trap or work for hours (a date of 1e300 seconds, a
    /// span of centuries).
    static let earliest = Date(timeIntervalSince1970: 0)
    static let latest = Date(timeIntervalSince1970: 7_258_118_400)  // 2200-01-01

    /// What is wrong with a workout read from the central database, if anything.
    static func problem(with workout: Workout) -> String? {
        var dates = [workout.startDate, workout.endDate]
        for event in workout.events { dates += [event.startDate, event.endDate] }
        for activity in workout.activities { dates += [activity.startDate] + (activity.endDate.map { [$0] } ?? []) }
        guard dates.allSatisfy({ $0 >= earliest && $0 <= latest }) else {
            return "a date before 1970 or after 2199"
        }
        guard workout.endDate >= workout.startDate else { return "it ends before it starts" }
        let span = workout.endDate.timeIntervalSince(workout.startDate)
        guard workout.duration.isFinite, workout.duration >= 0, workout.duration <= span + 1 else {
            return "its duration (\(workout.duration) s) does not fit between its start and end"
        }
        return nil
    }

    /// Whether a sample value from the central database can be used (PostgreSQL keeps infinities and NaN).
    static func isUsable(_ value: Double, readings: Int) -> Bool {
        value.isFinite && readings >= 0
    }
}
