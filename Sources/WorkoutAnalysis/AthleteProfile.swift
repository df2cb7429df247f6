/// Who works out: what zones, training load and the energy estimate need to know (the `[profile]` section of
/// systoled.toml). Values the user did not give are estimated or defaulted, and each says where it came from.
public struct AthleteProfile: Sendable, Equatable {
    /// Sex, for the sex-specific coefficients of TRIMP and Keytel's equation.
    public enum Sex: String, Sendable, CaseIterable {
        case female
        case male
    }

    /// What the five zones are percentages of.
    public enum ZoneBasis: String, Sendable, CaseIterable {
        /// Percent of maximum heart rate (Garmin's and Polar's default).
        case maxHeartRate = "max_hr"
        /// Percent of heart-rate reserve above resting (Karvonen).
        case heartRateReserve = "reserve"
    }

    /// Where an effective value came from.
    public enum Source: Sendable, Equatable, CustomStringConvertible {
        /// The configuration file.
        case configured
        /// Computed from other values (`how` says from what).
        case estimated(how: String)
        /// A default, used because the configuration gives nothing better.
        case defaulted(why: String)

        public var description: String {
            switch self {
            case .configured: "configured"
            case .estimated(let how): "estimated: \(how)"
            case .defaulted(let why): "default: \(why)"
            }
        }
    }

    /// A value with its source.
    public struct Effective<Value: Sendable & Equatable>: Sendable, Equatable {
        public var value: Value
        public var source: Source
    }

    /// The accepted ranges; a configuration outside them is refused with the range.
    public enum Range {
        public static let age = 10...100
        public static let weightKilograms = 20.0...300.0
        public static let restingHeartRate = 25.0...120.0
        public static let maxHeartRate = 100.0...240.0
        /// The least difference between maximum and resting heart rate (a reserve to take percentages of).
        public static let minimumReserve = 20.0
    }

    public var age: Int?
    public var sex: Sex?
    public var weightKilograms: Double?
    public var restingHeartRate: Double?
    public var maxHeartRate: Double?
    public var zoneBasis: ZoneBasis?
    /// The day's goals (the daily summary in `systole trends`).
    public var goals = DailyGoals()

    public init(
        age: Int? = nil,
        sex: Sex? = nil,
        weightKilograms: Double? = nil,
        restingHeartRate: Double? = nil,
        maxHeartRate: Double? = nil,
        zoneBasis: ZoneBasis? = nil
    ) {
        self.age = age
        self.sex = sex
        self.weightKilograms = weightKilograms
        self.restingHeartRate = restingHeartRate
        self.maxHeartRate = maxHeartRate
        self.zoneBasis = zoneBasis
    }

    /// The maximum heart rate: configured, else 208 − 0.7 × age (Tanaka, Monahan & Seals 2001), else 190.
    public var effectiveMaxHeartRate: Effective<Double> {
        if let maxHeartRate { return .init(value: maxHeartRate, source: .configured) }
        if let age {
            return .init(value: 208 - 0.7 * Double(age), source: .estimated(how: "208 − 0.7 × age"))
        }
        return .init(value: 190, source: .defaulted(why: "set max_hr or age in [profile]"))
    }

    /// The resting heart rate: configured, else 60.
    public var effectiveRestingHeartRate: Effective<Double> {
        if let restingHeartRate { return .init(value: restingHeartRate, source: .configured) }
        return .init(value: 60, source: .defaulted(why: "set resting_hr in [profile]"))
    }

    /// The zone basis: configured, else percent of maximum heart rate.
    public var effectiveZoneBasis: Effective<ZoneBasis> {
        if let zoneBasis { return .init(value: zoneBasis, source: .configured) }
        return .init(value: .maxHeartRate, source: .defaulted(why: "set zones = \"reserve\" for heart-rate reserve"))
    }

    /// Why the profile is unusable, or nil: values out of range, or a maximum too close to the resting rate.
    public var problem: String? {
        if let age, !Range.age.contains(age) { return "age \(age) is outside \(Range.age)" }
        if let weightKilograms, !Range.weightKilograms.contains(weightKilograms) {
            return "weight_kg \(weightKilograms) is outside 20 to 300"
        }
        if let restingHeartRate, !Range.restingHeartRate.contains(restingHeartRate) {
            return "resting_hr \(restingHeartRate) is outside 25 to 120"
        }
        if let maxHeartRate, !Range.maxHeartRate.contains(maxHeartRate) {
            return "max_hr \(maxHeartRate) is outside 100 to 240"
        }
        let reserve = effectiveMaxHeartRate.value - effectiveRestingHeartRate.value
        if reserve < Range.minimumReserve {
            return "max_hr (\(effectiveMaxHeartRate.value)) must be at least 20 above resting_hr "
                + "(\(effectiveRestingHeartRate.value))"
        }
        return nil
    }
}
