import Synchronization

/// A check that a connection's loop thread runs when it asks to be run (``DBusConnection/runOnLoop(at:repeating:)``).
///
/// The loop sleeps in `poll` until the next message, socket or deadline, so a deadline is one of its poll timeouts:
/// the check wakes the loop's thread alone, and while messages keep the loop busy it usually wakes nothing. A timer
/// on Swift's pool instead costs four wakeups a round (the dispatch manager, a pool thread for the timer, another
/// for the task, the manager again to arm the next).
public final class LoopTimer: Sendable {
    private struct State {
        var token: UInt64?
        var cancelled = false
    }
    private let state = Mutex(State())
    private let loop: LoopThread

    init(loop: LoopThread) {
        self.loop = loop
    }

    /// Stops the checks: none runs after this returns (one may be running on the loop thread as it is called).
    public func cancel() {
        state.withLock { $0.cancelled = true }
        loop.enqueue { [self] in
            if let token = state.withLock({ $0.token }) { loop.cancelScheduled(token) }
        }
    }

    /// Loop thread only: runs `check` at `instant`, then at each instant it returns.
    func arm(at instant: ContinuousClock.Instant, _ check: @escaping @Sendable () -> ContinuousClock.Instant?) {
        let token = loop.schedule(at: instant) { [self] in
            guard !state.withLock({ $0.cancelled }), let next = check() else { return }
            arm(at: next, check)
        }
        let keep = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.token = token
            return true
        }
        if !keep { loop.cancelScheduled(token) }
    }
}

extension DBusConnection {
    /// Runs `check` on this connection's loop thread at `instant`, then again at each instant it returns, until it
    /// returns nil, the timer is cancelled or the connection closes. For checks that run on a deadline that mostly
    /// moves on (a sensor's silence): the loop wakes only when a deadline passes, and not at all for a deadline that
    /// passes while it is awake anyway. `check` runs on the loop thread, so it must not wait; safe to call from any
    /// thread.
    public func runOnLoop(
        at instant: ContinuousClock.Instant,
        repeating check: @escaping @Sendable () -> ContinuousClock.Instant?
    ) -> LoopTimer {
        let timer = LoopTimer(loop: loop)
        loop.enqueue { timer.arm(at: instant, check) }
        return timer
    }
}
