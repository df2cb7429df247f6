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
            let weight = try number(entry)
            guard Range.weightKilograms.contains(weight) else {
                throw Reason("profile.weight_kg is in kilograms, from 20 to 300")
            }
            profile.weightKilograms = weight
        case "resting_hr":
            let rate = try number(entry)
            guard Range.restingHeartRate.contains(rate) else {
                throw Reason("profile.resting_hr is in beats a minute, from 25 to 120")
            }
            profile.restingHeartRate = rate
        case "max_hr":
            let rate = try number(entry)
            guard Range.maxHeartRate.contains(rate) else {
                throw Reason("profile.max_hr is in beats a minute, from 100 to 240")
            }
            profile.maxHeartRate = rate
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
            let energy = try number(entry)
            guard DailyGoals.Range.energyKilocalories.contains(energy) else {
                throw Reason("profile.goal_energy_kcal is the day's active energy in kcal, from 50 to 10000")
            }
            profile.goals.energyKilocalories = energy
        case "goal_zone_minutes":
            let minutes = try number(entry)
            guard DailyGoals.Range.zoneMinutes.contains(minutes) else {
                throw Reason("profile.goal_zone_minutes is the day's minutes in zone 2 and above, from 5 to 600")
            }
            profile.goals.zoneMinutes = minutes
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
}
