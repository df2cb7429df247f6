import SafeText
import WorkoutAnalysis

extension DaemonConfiguration {
    static let profileKeys = [
        "age", "sex", "weight_kg", "resting_hr", "max_hr", "zones", "goal_energy_kcal", "goal_zone_minutes",
        "goal_workouts",
    ]

    /// A `[profile]` setting, each in its range (AthleteProfile.Range); the maximum must leave a reserve above the
    /// resting rate, which is checked once the file is read (the keys may come in any order).
    mutating func applyProfile(_ entry: TOML.Entry) throws(Reason) {
        typealias Range = AthleteProfile.Range
        switch entry.key {
        case "age":
            let age = try integer(entry)
            guard Range.age.contains(age) else { throw Reason("profile.age is in years, from 10 to 100") }
            profile.age = age
        case "sex":
            let text = try string(entry)
            guard let sex = AthleteProfile.Sex(rawValue: text) else {
                throw Reason("profile.sex must be \"female\" or \"male\", not \(text.quotedExcerpt())")
            }
            profile.sex = sex
        case "weight_kg":
            profile.weightKilograms = try number(entry, in: Range.weightKilograms, "in kilograms, from 20 to 300")
        case "resting_hr":
            profile.restingHeartRate = try number(
                entry,
                in: Range.restingHeartRate,
                "in beats a minute, from 25 to 120"
            )
        case "max_hr":
            profile.maxHeartRate = try number(entry, in: Range.maxHeartRate, "in beats a minute, from 100 to 240")
        case "zones":
            let text = try string(entry)
            guard let basis = AthleteProfile.ZoneBasis(rawValue: text) else {
                throw Reason(
                    "profile.zones must be \"max_hr\" (percent of maximum) or \"reserve\" (percent of heart-rate "
                        + "reserve), not \(text.quotedExcerpt())"
                )
            }
            profile.zoneBasis = basis
        case "goal_energy_kcal":
            profile.goals.energyKilocalories = try number(
                entry,
                in: DailyGoals.Range.energyKilocalories,
                "the day's active energy in kcal, from 50 to 10000"
            )
        case "goal_zone_minutes":
            profile.goals.zoneMinutes = try number(
                entry,
                in: DailyGoals.Range.zoneMinutes,
                "the day's minutes in zone 2 and above, from 5 to 600"
            )
        case "goal_workouts":
            let workouts = try integer(entry)
            guard DailyGoals.Range.workouts.contains(workouts) else {
                throw Reason("profile.goal_workouts is the day's workouts, from 1 to 10")
            }
            profile.goals.workouts = workouts
        default:
            throw Reason(
                "unknown setting '\(entry.key)' in [profile]; known: \(Self.profileKeys.joined(separator: ", "))"
            )
        }
    }

    /// A number in `range`; outside it, refused as `profile.KEY is <what>`.
    private func number(_ entry: TOML.Entry, in range: ClosedRange<Double>, _ what: String) throws(Reason) -> Double {
        let value = try number(entry)
        guard range.contains(value) else { throw Reason("profile.\(entry.key) is \(what)") }
        return value
    }
}
