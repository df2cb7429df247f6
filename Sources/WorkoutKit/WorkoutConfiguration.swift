/// The kind of workout. Raw values are HealthKit's `HKWorkoutActivityType` values, so they are stable and
/// familiar.
public enum WorkoutActivityType: UInt, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case crossTraining = 11
    case cycling = 13
    case elliptical = 16
    case functionalStrengthTraining = 20
    case hiking = 24
    case rowing = 35
    case running = 37
    case stairClimbing = 44
    case swimming = 46
    case traditionalStrengthTraining = 50
    case walking = 52
    case yoga = 57
    case highIntensityIntervalTraining = 63
    case other = 3000

    /// The name used on the command line and in logs (`running`, `hiit`, …).
    public var name: String {
        switch self {
        case .crossTraining: "cross-training"
        case .cycling: "cycling"
        case .elliptical: "elliptical"
        case .functionalStrengthTraining: "functional-strength-training"
        case .hiking: "hiking"
        case .rowing: "rowing"
        case .running: "running"
        case .stairClimbing: "stair-climbing"
        case .swimming: "swimming"
        case .traditionalStrengthTraining: "traditional-strength-training"
        case .walking: "walking"
        case .yoga: "yoga"
        case .highIntensityIntervalTraining: "hiit"
        case .other: "other"
        }
    }

    public init?(name: String) {
        guard let type = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = type
    }

    public var description: String { name }
}

/// Where the workout happens. Raw values are HealthKit's `HKWorkoutSessionLocationType` values.
public enum WorkoutSessionLocationType: Int, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case unknown = 1
    case indoor = 2
    case outdoor = 3

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .indoor: "indoor"
        case .outdoor: "outdoor"
        }
    }
}

/// What a workout is: its activity and location.
public struct WorkoutConfiguration: Hashable, Sendable, Codable {
    public var activityType: WorkoutActivityType
    public var locationType: WorkoutSessionLocationType

    public init(activityType: WorkoutActivityType = .other, locationType: WorkoutSessionLocationType = .unknown) {
        self.activityType = activityType
        self.locationType = locationType
    }
}
