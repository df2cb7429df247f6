import Foundation

/// A finished workout, as saved by ``LiveWorkoutBuilder/finishWorkout()``.
public struct Workout: Hashable, Sendable, Identifiable, Codable {
    public var id: UUID
    public var configuration: WorkoutConfiguration
    public var startDate: Date
    public var endDate: Date
    /// Time spent working out: end − start minus pauses.
    public var duration: Double
    public var events: [WorkoutEvent]
    public var activities: [WorkoutActivity]
    public var metadata: [String: MetadataValue]
    /// Final statistics by quantity type identifier (samples during pauses excluded).
    public var statistics: [String: Statistics]
    /// The sensors that contributed samples.
    public var devices: [Device]

    public init(
        id: UUID,
        configuration: WorkoutConfiguration,
        startDate: Date,
        endDate: Date,
        duration: Double,
        events: [WorkoutEvent],
        activities: [WorkoutActivity],
        metadata: [String: MetadataValue],
        statistics: [String: Statistics],
        devices: [Device]
    ) {
        self.id = id
        self.configuration = configuration
        self.startDate = startDate
        self.endDate = endDate
        self.duration = duration
        self.events = events
        self.activities = activities
        self.metadata = metadata
        self.statistics = statistics
        self.devices = devices
    }

    public var activityType: WorkoutActivityType { configuration.activityType }

    /// Statistics for one quantity type.
    public func statistics(for type: QuantityType) -> Statistics? { statistics[type.identifier] }
}
