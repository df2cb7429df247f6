/// Where a workout session is. Raw values are HealthKit's `HKWorkoutSessionState` values.
public enum WorkoutSessionState: Int, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case notStarted = 1
    case running = 2
    case ended = 3
    case paused = 4
    case prepared = 5
    case stopped = 6

    public var description: String {
        switch self {
        case .notStarted: "notStarted"
        case .running: "running"
        case .ended: "ended"
        case .paused: "paused"
        case .prepared: "prepared"
        case .stopped: "stopped"
        }
    }
}
