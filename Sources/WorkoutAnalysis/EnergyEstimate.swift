/// Energy expended, estimated from heart rate with Keytel et al. (2005, J Sports Sci 23:289) for workouts whose
/// sensors report none — what Garmin and Polar show as calories without a power meter. Per minute, in kJ:
///
///     men:    −55.0969 + 0.6309 × HR + 0.1988 × weight(kg) + 0.2017 × age
///     women:  −20.4022 + 0.4472 × HR − 0.1263 × weight(kg) + 0.0740 × age
///
/// and the mean of the two when the profile gives no sex. A minute never counts below zero (the equations go
/// negative at low heart rates, where they were not fitted). Pauses are left out. It needs age and weight: without
/// them there is no estimate, and ``unavailableReason(_:)`` says what to set.
public enum EnergyEstimate {
    /// kJ per minute at a heart rate, for the profile's age, weight and sex.
    public static func kilojoulesPerMinute(
        bpm: Double,
        age: Int,
        weightKilograms: Double,
        sex: AthleteProfile.Sex?
    )
        -> Double
    {
        let age = Double(age)
        let men = -55.0969 + 0.6309 * bpm + 0.1988 * weightKilograms + 0.2017 * age
        let women = -20.4022 + 0.4472 * bpm - 0.1263 * weightKilograms + 0.0740 * age
        let perMinute =
            switch sex {
            case .male: men
            case .female: women
            case nil: (men + women) / 2
            }
        return max(0, perMinute)
    }

    /// Why the profile allows no estimate (nil when it does).
    public static func unavailableReason(_ profile: AthleteProfile) -> String? {
        switch (profile.age, profile.weightKilograms) {
        case (nil, nil): "set age and weight_kg in [profile] for an estimate from heart rate"
        case (nil, _): "set age in [profile] for an estimate from heart rate"
        case (_, nil): "set weight_kg in [profile] for an estimate from heart rate"
        default: profile.problem
        }
    }

    /// The estimated energy of a recording in kJ, or nil when the profile lacks age or weight.
    public static func kilojoules(_ recording: ActivityRecording, profile: AthleteProfile) -> Double? {
        guard unavailableReason(profile) == nil, let age = profile.age, let weight = profile.weightKilograms else {
            return nil
        }
        return recording.readingDurations().reduce(0) { total, reading in
            total + kilojoulesPerMinute(bpm: reading.bpm, age: age, weightKilograms: weight, sex: profile.sex)
                * reading.seconds / 60
        }
    }
}
