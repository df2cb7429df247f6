import WorkoutKit

/// What a person may add to a workout by hand (`AddSample`, `systole add`), in the type's canonical unit. Limits
/// are generous for real use and far below what breaks arithmetic: a sum of every allowed amount stays finite.
/// Heart rate has none: it comes from sensors, never from users.
package struct UserSampleLimit: Sendable, Equatable {
    /// The most one sample may hold.
    package var perSample: Double
    /// The most the workout may hold in all (what its sensors reported counts too).
    package var perWorkout: Double
    package var unit: Unit

    /// The limit for `type`, or nil when users cannot add it.
    package static func limit(for type: QuantityType) -> UserSampleLimit? {
        switch type {
        // A large bottle at once; more than a day's drinking in one workout.
        case .dietaryWater: UserSampleLimit(perSample: 5_000, perWorkout: 20_000, unit: .milliliter)
        // About 2 400 kcal at once; about 14 000 kcal in one workout, beyond a day-long ultramarathon.
        case .activeEnergyBurned: UserSampleLimit(perSample: 10_000, perWorkout: 60_000, unit: .kilojoule)
        default: nil
        }
    }

    /// Why `value` (in ``unit``) cannot be added to a workout that holds `total` already, or nil when it can.
    func refusal(of value: Double, total: Double, type: QuantityType) -> String? {
        let name = type.identifier
        guard !value.isNaN, value > 0 else {
            return "\(name) must be a positive amount, not \(value) \(unit)"
        }
        guard value <= perSample else {
            return "that is more \(name) than one sample may hold (at most \(Int(perSample)) \(unit)); "
                + "add a larger amount as several samples"
        }
        guard total + value <= perWorkout else {
            return "the workout would hold \(total + value) \(unit) of \(name), more than a workout may hold "
                + "(at most \(Int(perWorkout)) \(unit)); check the amount and its unit (250ml, not 250l)"
        }
        return nil
    }
}
