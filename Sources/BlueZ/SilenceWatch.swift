import Synchronization

/// One timer for every sensor's silence check: each checks four times a second whether its sensor has gone quiet.
///
/// A timer per sensor, re-armed as each notification moved its deadline, woke the process about once per
/// notification interval per sensor; with a hundred sensors that was more wakeups than the notifications
/// themselves bring (docs/performance.md). A silent sensor is now reported at most a quarter of a second late.
final class SilenceWatch: Sendable {
    static let shared = SilenceWatch()
    /// How often the checks run.
    static let tick: Duration = .milliseconds(250)

    private struct State {
        var checks: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        var ticking = false
    }
    private let state = Mutex(State())

    /// Runs `check` every tick until the calling task is cancelled.
    func watch(_ check: @escaping @Sendable () -> Void) async {
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
        while true {
            try? await Task.sleep(for: Self.tick)
            let checks = state.withLock { state -> [@Sendable () -> Void]? in
                if state.checks.isEmpty {
                    state.ticking = false
                    return nil
                }
                return Array(state.checks.values)
            }
            guard let checks else { return }
            for check in checks { check() }
        }
    }
}
