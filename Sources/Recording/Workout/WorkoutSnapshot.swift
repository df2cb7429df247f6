import Foundation
import WorkoutKit

/// Why a workout command was refused (the control API replies with a D-Bus error name for each kind).
public struct WorkoutCommandError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A workout is already ongoing (HealthKit's intent response "failure: ongoing workout").
        case ongoingWorkout
        case noWorkout
        /// The session cannot make that change from its state (pause while paused, …).
        case invalidState
        case invalidArguments
        /// The store failed (a full disk, say).
        case store
    }

    public var kind: Kind
    public var message: String

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The workout in progress and how it got there, for the control API, the live log and the systemd status.
public struct WorkoutSnapshot: Sendable, Equatable {
    public var state: WorkoutSessionState
    public var workoutID: UUID?
    public var activity: WorkoutActivityType?
    public var location: WorkoutSessionLocationType?
    public var startDate: Date?
    /// Seconds worked out, pauses excluded.
    public var elapsed: Double
    public var heartRate: Statistics?
    /// Why the store refuses the workout's readings (a full disk, say), while it does: they are kept in memory
    /// and saved once it takes them again.
    public var storeError: String?
    /// The athlete it records, when the sensor's athlete is named in `[athletes]`.
    public var athlete: String?
    /// The team session it is part of (each athlete of a team session has a workout of their own).
    public var teamSessionID: UUID?

    package static let idle = WorkoutSnapshot(state: .notStarted, elapsed: 0)

    /// The session's state, or `idle` when there is no workout.
    public var stateName: String { workoutID == nil ? "idle" : "\(state)" }
}
