extension WorkoutManager {
    /// Keeps a timer running while a workout is ongoing and none otherwise, until `changes` (a subscription to
    /// ``changes``, made before the workout could change) ends. Looks once at first (a workout recovered at start
    /// may have been announced before the subscription), then at each change. `start` starts the timer and returns
    /// what stops it.
    package nonisolated func whileOngoing(
        following changes: AsyncStream<Void>,
        start: () -> @Sendable () -> Void
    ) async {
        var stop: (@Sendable () -> Void)?
        var iterator = changes.makeAsyncIterator()
        repeat {
            let ongoing = currentSnapshot.workoutID != nil
            if ongoing, stop == nil {
                stop = start()
            } else if !ongoing {
                stop?()
                stop = nil
            }
        } while await iterator.next() != nil
        stop?()
    }
}
