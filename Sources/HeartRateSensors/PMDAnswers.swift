import PolarMeasurementData
import Synchronization

/// The control point's indications, waiting for the command that asked for them: put on the bus's loop thread,
/// taken by the one task that sends commands.
final class PMDAnswers: Sendable {
    private struct State {
        var pending: [PMDControlPointMessage] = []
        var waiter: CheckedContinuation<PMDControlPointMessage?, Never>?
    }

    private let state = Mutex(State())
    /// More answers than any command gets are a sensor talking to itself: the oldest go.
    private static let limit = 32

    func put(_ message: PMDControlPointMessage) {
        let waiter = state.withLock { state -> CheckedContinuation<PMDControlPointMessage?, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending.append(message)
            if state.pending.count > Self.limit { state.pending.removeFirst() }
            return nil
        }
        waiter?.resume(returning: message)
    }

    /// The next message, or nil when none comes within `timeout` (or the task is cancelled).
    func take(timeout: Duration) async -> PMDControlPointMessage? {
        await withTaskGroup(of: PMDControlPointMessage?.self) { group in
            group.addTask { await self.take() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // A message taken just as the time ran out is not lost: it waits for the next command.
            for await late in group { if let late { self.putBack(late) } }
            return first
        }
    }

    private func take() async -> PMDControlPointMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> PMDControlPointMessage?? in
                    if !state.pending.isEmpty { return .some(state.pending.removeFirst()) }
                    if Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<PMDControlPointMessage?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private func putBack(_ message: PMDControlPointMessage) {
        state.withLock { $0.pending.insert(message, at: 0) }
    }
}
