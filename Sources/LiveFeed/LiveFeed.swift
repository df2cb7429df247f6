import Synchronization

/// Tells the live outputs that something they show changed, without doing their work: systoled's output stage
/// calls ``changed()`` once per recorded batch (and on every workout or sensor change), which costs a lock when
/// nobody watches. Each watcher (a page's event stream, the MQTT publisher) waits in ``next(after:)`` and builds
/// what it shows itself, at its own pace, so a slow one never holds the pipeline.
public final class LiveFeed: Sendable {
    private struct State {
        var version: UInt64 = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<UInt64?, Never>] = [:]
        var watchers = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The current version; ``next(after:)`` returns once it passes the one given.
    public var version: UInt64 { state.withLock { $0.version } }

    /// How many watchers wait or work now (the web page's limit counts them).
    public var watchers: Int { state.withLock { $0.watchers } }

    /// Something shown changed: wakes every waiting watcher.
    public func changed() {
        let woken = state.withLock { state -> [CheckedContinuation<UInt64?, Never>] in
            state.version &+= 1
            guard !state.waiters.isEmpty else { return [] }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        let version = self.version
        for waiter in woken { waiter.resume(returning: version) }
    }

    /// Waits until the version passes `version` and returns the new one; nil when the task is cancelled.
    public func next(after version: UInt64) async -> UInt64? {
        let id = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<UInt64?, Never>) in
                let now = state.withLock { state -> UInt64? in
                    if state.version != version || Task.isCancelled { return state.version }
                    state.waiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: Task.isCancelled ? nil : now) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }

    /// Counts a watcher while `body` runs, if fewer than `limit` are counted; returns nil (and runs nothing) when
    /// `limit` are already watching.
    public func watching<T>(limit: Int, _ body: () async throws -> T) async rethrows -> T? {
        let admitted = state.withLock { state -> Bool in
            guard state.watchers < limit else { return false }
            state.watchers += 1
            return true
        }
        guard admitted else { return nil }
        defer { state.withLock { $0.watchers -= 1 } }
        return try await body()
    }
}
