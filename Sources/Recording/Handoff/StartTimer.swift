/// Starts a check that runs at `instant`, then at each instant it returns, until it returns nil; returns what
/// stops it. systoled runs its checks on the bus's loop thread (`DBusConnection.runOnLoop`), where a check costs
/// one wakeup.
package typealias StartTimer =
    @Sendable (
        _ instant: ContinuousClock.Instant, _ check: @escaping @Sendable () -> ContinuousClock.Instant?
    ) -> @Sendable () -> Void

/// A ``StartTimer`` on a task of its own (for tests and tools without a bus).
package let taskTimer: StartTimer = { instant, check in
    let task = Task {
        var next: ContinuousClock.Instant? = instant
        while let instant = next {
            try await Task.sleep(until: instant)
            next = check()
        }
    }
    return { task.cancel() }
}
