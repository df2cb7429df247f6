import Synchronization

/// When something last happened, read and set from any thread without a hop (a lock, never an actor: the workout
/// thread sets it after every batch, and hopping to an actor woke a thread of the pool each time).
package final class LastTime: Sendable {
    private let instant: Mutex<ContinuousClock.Instant>
    package init(_ instant: ContinuousClock.Instant = .now) { self.instant = Mutex(instant) }
    package func set(_ now: ContinuousClock.Instant) { instant.withLock { $0 = now } }
    package var age: Duration { .now - instant.withLock { $0 } }
}
