import Foundation
import Synchronization

/// Where the engine gets "now" (for calls without an explicit date). Injected, so tests control time.
public protocol WorkoutClock: Sendable {
    func now() -> Date
}

/// The system's wall clock.
public struct SystemWorkoutClock: WorkoutClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to (tests, replays).
public final class ManualWorkoutClock: WorkoutClock {
    private let current: Mutex<Date>

    public init(_ start: Date) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward by `seconds`.
    public func advance(by seconds: Double) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}
