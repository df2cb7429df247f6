import Foundation

/// Something that happened during a workout. Raw values are HealthKit's `HKWorkoutEventType` values.
public enum WorkoutEventType: Int, Hashable, Sendable, CaseIterable, Codable {
    case pause = 1
    case resume = 2
    case lap = 3
    case marker = 4
    case motionPaused = 5
    case motionResumed = 6
    case segment = 7
    case pauseOrResumeRequest = 8
}

/// A workout event over a date interval (an instant for pause, resume and marker).
public struct WorkoutEvent: Hashable, Sendable, Codable {
    public var type: WorkoutEventType
    public var startDate: Date
    public var endDate: Date
    public var metadata: [String: MetadataValue]

    public init(type: WorkoutEventType, start: Date, end: Date? = nil, metadata: [String: MetadataValue] = [:]) {
        self.type = type
        self.startDate = start
        self.endDate = end ?? start
        self.metadata = metadata
    }
}

/// One activity of a multi-activity workout (e.g. the bike leg of a triathlon).
public struct WorkoutActivity: Hashable, Sendable, Identifiable, Codable {
    public var id: UUID
    public var configuration: WorkoutConfiguration
    public var startDate: Date
    /// Nil while the activity is current.
    public var endDate: Date?
    public var metadata: [String: MetadataValue]

    public init(
        id: UUID = .random(),
        configuration: WorkoutConfiguration,
        start: Date,
        end: Date? = nil,
        metadata: [String: MetadataValue] = [:]
    ) {
        self.id = id
        self.configuration = configuration
        self.startDate = start
        self.endDate = end
        self.metadata = metadata
    }
}
