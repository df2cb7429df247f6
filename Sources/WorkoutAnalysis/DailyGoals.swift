/// A day's goals, as the "rings" of the health apps count them: active energy from workouts, minutes in heart-rate
/// zone 2 and above (zone 2 starts at 60 % of the zones' basis), and workouts (`[profile]` `goal_energy_kcal`,
/// `goal_zone_minutes`, `goal_workouts`).
public struct DailyGoals: Sendable, Equatable {
    /// The accepted ranges; a configuration outside them is refused with the range.
    public enum Range {
        public static let energyKilocalories = 50.0...10_000.0
        public static let zoneMinutes = 5.0...600.0
        public static let workouts = 1...10
    }

    /// Active energy a day, kcal; nil for no energy goal (systole knows only the workouts' energy, not the day's).
    public var energyKilocalories: Double?
    /// Minutes in zone 2 and above a day: 30 by default, the exercise ring's default and about the WHO's 150 minutes a
    /// week of moderate activity.
    public var zoneMinutes: Double
    /// Workouts a day.
    public var workouts: Int

    public init(energyKilocalories: Double? = nil, zoneMinutes: Double = 30, workouts: Int = 1) {
        self.energyKilocalories = energyKilocalories
        self.zoneMinutes = zoneMinutes
        self.workouts = workouts
    }
}
