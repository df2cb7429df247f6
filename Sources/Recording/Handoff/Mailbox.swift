import Synchronization

/// One consumer's queue that hands over everything waiting at once (an `AsyncStream` gives one element per
/// `next()`). Keeps at most `limit` values; beyond that the oldest go, as with `.bufferingNewest`, and are
/// counted (`takeDropped()`).
package final class Mailbox<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiter: CheckedContinuation<[Value]?, Never>?
        var finished = false
        var dropped = 0
    }
    private let state = Mutex(State())
    /// The most values kept.
    package let limit: Int
    private let onEnd: @Sendable () -> Void

    package init(limit: Int, onEnd: @escaping @Sendable () -> Void = {}) {
        self.limit = limit
        self.onEnd = onEnd
    }

    /// Adds `values` at once: a waiting consumer gets them in one batch.
    package func put(contentsOf values: some Collection<Value>) {
        guard !values.isEmpty else { return }
        let handOver = state.withLock { state -> (CheckedContinuation<[Value]?, Never>, [Value])? in
            guard !state.finished else { return nil }
            state.values.append(contentsOf: values)
            if state.values.count > limit {
                state.dropped += state.values.count - limit
                state.values.removeFirst(state.values.count - limit)
            }
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            defer { state.values = [] }
            return (waiter, state.values)
        }
        if let (waiter, values) = handOver { waiter.resume(returning: values) }
    }

    /// No more values: a waiting or later ``next()`` returns what is left, then nil.
    package func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[Value]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        onEnd()
    }

    /// How many values were dropped (the oldest, beyond `limit`) since the last call.
    package func takeDropped() -> Int {
        state.withLock { state in
            defer { state.dropped = 0 }
            return state.dropped
        }
    }

    /// Whether a consumer is waiting in ``next()`` (tests only: they hand it a batch while it waits).
    package var hasWaitingConsumer: Bool { state.withLock { $0.waiter != nil } }

    /// Everything that arrived since the last call, waiting for at least one value; nil once finished (or the
    /// task is cancelled) and nothing is left.
    package func next() async -> [Value]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Value]?, Never>) in
                let ready = state.withLock { state -> [Value]?? in
                    if !state.values.isEmpty {
                        defer { state.values = [] }
                        return .some(state.values)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }
}
