import CDBus
import Glibc
import Synchronization

/// What the loop thread knows about its connection: pending calls, signal subscriptions, exported objects.
/// Only the loop thread reads or writes the stored properties (hence `@unchecked Sendable`); other threads
/// reach it through `LoopThread.enqueue`.
final class LoopRegistry: @unchecked Sendable {
    var raw: OpaquePointer?
    weak var loop: LoopThread?
    var owner: WeakConnection?
    let isOpen = Atomic<Bool>(false)
    let callIDs = Atomic<UInt64>(0)

    struct PendingCall {
        var callID: UInt64
        var continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>
        var description: String
        /// The loop's token for this call's deadline, cancelled when the reply comes.
        var deadline: UInt64 = 0
    }
    var pending: [UInt32: PendingCall] = [:]
    var serialByCallID: [UInt64: UInt32] = [:]

    struct Subscription {
        var rule: DBusMatchRule
        /// Ends the subscription's stream (when the connection closes).
        var continuation: AsyncThrowingStream<DBusSignal, any Error>.Continuation
        /// Takes each matching signal: yields it to the stream, or calls the subscriber's handler.
        var deliver: @Sendable (DBusSignal) -> Void
    }
    var subscriptions: [UInt64: Subscription] = [:]
    var nameOwners: [String: String] = [:]
    var watchedOwners: Set<String> = []
    let watchedOwnersLock = Mutex<Set<String>>([])

    var objects: [String: DBusObject] = [:]
    var managers: Set<String> = []
    /// Signals read in place on the fast path, by object path.
    var signalRoutes: [String: [SignalRouteEntry]] = [:]
    /// Tasks waiting for the connection to close (any thread adds or removes one; the loop thread resumes them).
    let closeWaiters = Mutex<CloseWaiters>(CloseWaiters())

    struct CloseWaiters {
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var closed = false
    }

    func nextCallID() -> UInt64 { callIDs.add(1, ordering: .relaxed).newValue }

    /// In debug builds, traps unless the caller runs on the connection's loop thread, which ``attach(_:loop:)``
    /// names; see `LoopThread.assertOnLoopThread`.
    @inline(__always)
    func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(loop?.isCurrent ?? false, "called off the D-Bus connection's loop thread", file: file, line: line)
    }

    /// Loop thread: the connection is open; install the message filter.
    func attach(_ raw: OpaquePointer, loop: LoopThread) {
        loop.assertOnLoopThread()
        self.raw = raw
        self.loop = loop
        loop.onFailure = { [weak self] error in self?.shutDown(error) }
        isOpen.store(true, ordering: .releasing)
        let context = Unmanaged.passRetained(self).toOpaque()
        dbus_connection_add_filter(
            raw,
            { _, message, data in
                let state = Unmanaged<LoopRegistry>.fromOpaque(data!).takeUnretainedValue()
                return state.handle(Message(retaining: message!))
            },
            context,
            { data in Unmanaged<LoopRegistry>.fromOpaque(data!).release() }
        )
    }

    // MARK: Sending

    /// Loop thread: send a method call; `continuation` gets its reply, or an error at `deadline`.
    func send(
        _ message: Message,
        callID: UInt64,
        deadline: ContinuousClock.Instant,
        description: String,
        loop: LoopThread,
        continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>
    ) {
        assertOnLoopThread()
        guard let raw, isOpen.load(ordering: .acquiring) else {
            continuation.resume(returning: .failure(DBusError(.disconnected, "not connected: \(description)")))
            return
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(raw, message.raw, &serial) != 0 else {
            continuation.resume(returning: .failure(DBusError(.noMemory, "out of memory sending \(description)")))
            return
        }
        pending[serial] = PendingCall(callID: callID, continuation: continuation, description: description)
        serialByCallID[callID] = serial
        pending[serial]?.deadline = loop.schedule(at: deadline) { [self, serial] in
            guard let call = pending[serial], call.callID == callID else { return }
            finish(serial, .failure(DBusError(.timeout, "no reply to \(description) in time")))
        }
    }

    /// Loop thread: send a message that expects no reply.
    func sendOnly(_ message: Message) {
        assertOnLoopThread()
        guard let raw, isOpen.load(ordering: .acquiring) else { return }
        dbus_connection_send(raw, message.raw, nil)
    }

    /// Loop thread: fail a pending call, its caller having stopped waiting.
    func cancelCall(_ callID: UInt64) {
        assertOnLoopThread()
        guard let serial = serialByCallID[callID] else { return }
        finish(serial, .failure(DBusError(.failed, "cancelled")))
    }

    func finish(_ serial: UInt32, _ result: Result<[DBusValue], DBusError>) {
        guard let call = pending.removeValue(forKey: serial) else { return }
        serialByCallID[call.callID] = nil
        loop?.cancelScheduled(call.deadline)
        call.continuation.resume(returning: result)
    }

    // MARK: Shutdown

    /// Any thread: returns once the connection has closed (at once if it has), or the calling task is cancelled.
    func waitUntilClosed() async {
        let id = nextCallID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let closed = closeWaiters.withLock { waiters -> Bool in
                    if waiters.closed || Task.isCancelled { return true }
                    waiters.waiting[id] = continuation
                    return false
                }
                if closed { continuation.resume() }
            }
        } onCancel: {
            closeWaiters.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// Loop thread: fail every pending call and end every stream.
    func shutDown(_ error: DBusError) {
        assertOnLoopThread()
        isOpen.store(false, ordering: .releasing)
        let calls = pending
        pending = [:]
        serialByCallID = [:]
        for call in calls.values {
            call.continuation.resume(
                returning: .failure(DBusError(name: error.name, message: "\(error.message) (\(call.description))"))
            )
        }
        let streams = subscriptions
        subscriptions = [:]
        for subscription in streams.values { subscription.continuation.finish(throwing: error) }
        for object in objects.values { object.detach() }
        objects = [:]
        let waiting = closeWaiters.withLock { waiters in
            waiters.closed = true
            defer { waiters.waiting = [:] }
            return waiters.waiting
        }
        for waiter in waiting.values { waiter.resume() }
    }
}
