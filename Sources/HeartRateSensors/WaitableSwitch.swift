import Synchronization

/// A boolean that tasks can wait on: ``wait(until:)`` returns once it has the value asked for, or the waiting task
/// is cancelled. No polling: waiters are resumed by ``set(_:)``.
final class WaitableSwitch: Sendable {
    private struct State {
        var value: Bool
        var waiters: [Int: (want: Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextID = 0
    }

    private let state: Mutex<State>

    init(_ value: Bool = false) { state = Mutex(State(value: value)) }

    var value: Bool { state.withLock { $0.value } }

    func set(_ value: Bool) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.value = value
            let matching = state.waiters.filter { $0.value.want == value }
            for id in matching.keys { state.waiters[id] = nil }
            return matching.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns when the switch is `want`, or when the task is cancelled.
    func wait(until want: Bool) async {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.value == want || Task.isCancelled { return true }
                    state.waiters[id] = (want, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume()
        }
    }
}
