import Synchronization

/// The task in `DBusConnection.connect` waiting for the loop thread to open the connection, resumed once by
/// whichever comes first: the loop thread with the connection's unique name or an error, the deadline, or the
/// task's cancellation.
///
/// The deadline is needed because libdbus's blocking connect can outlast any: its reply timeout starts only once
/// the bus has authenticated the client, so a bus that accepts the socket but never answers (a stopped
/// dbus-daemon, whose listening socket the kernel still accepts on) would hold the loop thread and its caller for
/// ever. The caller stops waiting; the loop thread, once libdbus returns, finds nobody waiting and closes what it
/// opened.
final class ConnectWaiter: Sendable {
    typealias Outcome = Result<String, DBusError>

    private enum Slot {
        /// Nobody is waiting yet and nothing has happened.
        case empty
        case waiting(CheckedContinuation<Outcome, Never>)
        /// Decided: the outcome is kept when it came before the task began to wait, nil once handed over.
        case decided(Outcome?)
    }
    private let slot = Mutex(Slot.empty)

    /// Waits for the outcome, at most `timeout`. `start` begins the attempt (it starts the loop thread, which
    /// reports through ``takeWaiting()`` and ``finish(_:)``); it is skipped when the task was cancelled before.
    func outcome(
        connecting bus: DBusBus,
        within timeout: Duration,
        start: (ConnectWaiter) throws(DBusError) -> Void
    ) async -> Outcome {
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    do { try await Task.sleep(for: timeout) } catch { return }
                    let error = DBusError(.timeout, "cannot connect to the \(bus) bus: no answer in \(timeout)")
                    self.finish(.failure(error))
                }
                let outcome = await withCheckedContinuation { continuation in
                    guard wait(continuation) else { return }
                    do throws(DBusError) {
                        try start(self)
                    } catch {
                        finish(.failure(error))
                    }
                }
                group.cancelAll()
                return outcome
            }
        } onCancel: {
            finish(.failure(DBusError(.failed, "cannot connect to the \(bus) bus: cancelled")))
        }
    }

    /// Stores the waiting task's continuation, or resumes it at once (and returns false) when the outcome came
    /// first.
    private func wait(_ continuation: CheckedContinuation<Outcome, Never>) -> Bool {
        let early = slot.withLock { slot -> Outcome? in
            switch slot {
            case .empty:
                slot = .waiting(continuation)
                return nil
            case .decided(let outcome?):
                slot = .decided(nil)
                return outcome
            case .decided(nil), .waiting:
                preconditionFailure("a connect attempt is awaited once")
            }
        }
        guard let early else { return true }
        continuation.resume(returning: early)
        return false
    }

    /// Ends the wait with `outcome`, unless it has ended already.
    func finish(_ outcome: Outcome) {
        takeWaiting(orKeep: outcome)?.resume(returning: outcome)
    }

    /// The waiting task, which the caller must resume, or nil when the wait has ended (timed out or cancelled):
    /// the loop thread asks before it hands the connection over, and closes it on nil.
    func takeWaiting() -> CheckedContinuation<Outcome, Never>? {
        takeWaiting(orKeep: nil)
    }

    private func takeWaiting(orKeep outcome: Outcome?) -> CheckedContinuation<Outcome, Never>? {
        slot.withLock { slot in
            switch slot {
            case .waiting(let continuation):
                slot = .decided(nil)
                return continuation
            case .empty:
                if let outcome { slot = .decided(outcome) }
                return nil
            case .decided:
                return nil
            }
        }
    }
}
