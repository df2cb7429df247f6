import Foundation
import WorkoutKit

/// One day's activity: energy burned, minutes of exercise and workouts, from workouts finished by the builder.
public struct ActivitySummary: Hashable, Sendable {
    /// The day, `2026-11-22`, in the store's calendar.
    public var day: String
    public var activeEnergyBurned: Quantity
    public var exerciseMinutes: Double
    public var workoutCount: Int

    static func key(for date: Date, in calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

/// The length of the buckets of a statistics collection, counted in the calendar (so a day is 23 or 25 hours
/// across a daylight-saving change).
public enum StatisticsInterval: Hashable, Sendable {
    case minutes(Int)
    case hours(Int)
    case days(Int)
    case weeks(Int)

    var components: DateComponents {
        switch self {
        case .minutes(let n): DateComponents(minute: n)
        case .hours(let n): DateComponents(hour: n)
        case .days(let n): DateComponents(day: n)
        case .weeks(let n): DateComponents(day: 7 * n)
        }
    }

    /// The length of one bucket, ignoring daylight-saving changes (which move a day by at most an hour).
    public var nominalLength: TimeInterval {
        switch self {
        case .minutes(let n): Double(n) * 60
        case .hours(let n): Double(n) * 3600
        case .days(let n): Double(n) * 86_400
        case .weeks(let n): Double(n) * 604_800
        }
    }
}
