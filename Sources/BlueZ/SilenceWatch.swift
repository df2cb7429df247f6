import Synchronization

/// One timer for every sensor's silence check. Each check says when its sensor would go stale if nothing more
/// arrived, and the timer sleeps until the earliest of those (at most ``longestSleep``, at least ``shortestSleep``):
/// a strap at 1 Hz, stale after three silent seconds, costs a wakeup every two seconds, and a hundred sensors at
/// 4 Hz at most four a second, however many notifications they send.
final class SilenceWatch: Sendable {
    static let shared = SilenceWatch()
    /// The least time between two rounds of checks: with many sensors each has its deadline at another moment.
    static let shortestSleep: Duration = .milliseconds(250)
    /// The most: a sensor that starts being watched while the timer sleeps is checked at the latest then.
    static let longestSleep: Duration = .seconds(2)

    /// A check: reports the sensor stale when it is, and returns when it should be checked next.
    typealias Check = @Sendable () -> ContinuousClock.Instant

    private struct State {
        var checks: [UInt64: Check] = [:]
        var nextID: UInt64 = 0
        var ticking = false
    }
    private let state = Mutex(State())

    /// Runs `check` when it asks to be run (never more often than ``shortestSleep``) until the calling task is
    /// cancelled.
    func watch(_ check: @escaping Check) async {
        let (id, start) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            state.checks[state.nextID] = check
            defer { state.ticking = true }
            return (state.nextID, !state.ticking)
        }
        if start { Task { await self.tickWhileWatched() } }
        // Suspends until cancelled: the sensor's task group cancels this when the connection ends.
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        _ = state.withLock { $0.checks.removeValue(forKey: id) }
    }

    private func tickWhileWatched() async {
        var wake = ContinuousClock.now + Self.shortestSleep
        while true {
            try? await Task.sleep(until: wake)
            let checks = state.withLock { state -> [Check]? in
                if state.checks.isEmpty {
                    state.ticking = false
                    return nil
                }
                return Array(state.checks.values)
            }
            guard let checks else { return }
            let now = ContinuousClock.now
            var next = now + Self.longestSleep
            for check in checks { next = min(next, check()) }
            wake = max(next, now + Self.shortestSleep)
        }
    }
}
