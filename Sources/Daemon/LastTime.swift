import Synchronization

/// When something last happened, read and set from any thread without a hop (a lock, never an actor: the workout
/// thread sets it after every batch, and hopping to an actor woke a thread of the pool each time).
final class LastTime: Sendable {
    private let instant: Mutex<ContinuousClock.Instant>
    init(_ instant: ContinuousClock.Instant = .now) { self.instant = Mutex(instant) }
    func set(_ now: ContinuousClock.Instant) { instant.withLock { $0 = now } }
    var age: Duration { .now - instant.withLock { $0 } }
}
