import CDBus
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The thread that owns one libdbus connection: it polls the connection's watches plus an eventfd, runs
/// libdbus's timeouts, dispatches incoming messages, and runs jobs other threads hand it.
///
/// Every libdbus call on the connection happens here, so libdbus never runs on Swift's cooperative pool and no
/// two threads touch the connection at once. Other threads talk to it only through ``enqueue(_:)``.
final class LoopThread: @unchecked Sendable {
    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        /// Set once the loop has ended; later jobs are refused so callers can fail fast instead of waiting.
        var ended = false
    }
    private let queue = Mutex(Queue())
    /// A self-pipe: other threads write a byte to wake the loop out of poll().
    private let wakeRead: Int32
    private let wakeWrite: Int32
    // Loop-thread state.
    private var watches: [OpaquePointer] = []
    private var timeouts: [OpaquePointer: ContinuousClock.Instant] = [:]
    /// Scheduled actions by token, so a finished call's deadline goes at once rather than being walked by every
    /// iteration until it expires. The instants are kept apart from the actions, and the earliest is remembered:
    /// with many sensors' silence checks a deadline falls due in most iterations, and finding it must not touch the
    /// closures (a retain and release each). See docs/performance.md.
    private var deadlines = Deadlines()
    private var nextDeadline: UInt64 = 0
    private var running = true
    /// Called on the loop thread when polling fails for good (not EINTR), just before the loop ends: the
    /// connection's state fails its calls and ends its subscriptions, so nobody waits for a loop that is gone.
    var onFailure: ((DBusError) -> Void)?
    /// poll(2); tests replace it to make polling fail.
    var poll: (UnsafeMutablePointer<pollfd>, nfds_t, Int32) -> Int32 = { Glibc.poll($0, $1, $2) }
    /// Set while `dispatchAll` runs or sockets are read, with what to do after it (loop thread only).
    private var dispatching = false
    /// Descriptors read beside the bus (`DescriptorWatch.swift`).
    var watched: [Watched] = []
    private var endOfDispatch: [() -> Void] = []
    /// Routes and sockets whose read-complete runs at the end of this dispatch (once each).
    private var completing: Set<UInt64> = []
    /// The loop thread's pthread_t, once started: any thread asks whether it is the loop thread.
    private let threadID = Atomic<UInt>(0)
    private var connection: OpaquePointer?
    /// The least time between two reads of the bus (zero: read as soon as data arrives).
    private let coalescing: Duration
    /// Until then the bus socket is not polled for input: whatever arrives meanwhile is read and dispatched in
    /// one wakeup.
    private var quietUntil: ContinuousClock.Instant?
    /// When the bus was last read because input arrived.
    private var lastRead: ContinuousClock.Instant?

    /// - Parameter coalescing: the least time between two reads of the bus. A daemon taking hundreds of
    ///   notifications a second wakes once per tick for all of them instead of once per message; replies and
    ///   signals wait at most this long. Jobs from other threads (sending a call, say) still run at once.
    init(coalescing: Duration = .zero) throws(DBusError) {
        self.coalescing = coalescing
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw DBusError(.failed, "cannot create the wakeup pipe: errno \(errno)") }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Starts the OS thread with `spawn`; `body` runs on it first (it opens the connection), then the loop.
    ///
    /// - Throws: when no thread could be started. `body` never runs then, and the loop refuses jobs.
    func start(
        spawn: ThreadSpawner = spawnDetachedThread,
        _ body: @escaping @Sendable (LoopThread) -> OpaquePointer?
    ) throws(DBusError) {
        let result = spawn { self.threadMain(body) }
        guard result == 0 else {
            queue.withLock { $0.ended = true }
            throw DBusError(
                .failed,
                "could not start the connection's loop thread: \(String(cString: strerror(result)))"
            )
        }
    }

    /// Whether the caller runs on this loop's thread (never before the thread starts or after it ends).
    var isCurrent: Bool {
        pthread_equal(pthread_self(), pthread_t(threadID.load(ordering: .acquiring))) != 0
    }

    /// In debug builds, traps unless the caller runs on this loop's thread, as SwiftNIO's `assertInEventLoop`
    /// does: the loop-thread state has no lock, so a caller on another thread would race with the loop. Release
    /// builds check nothing.
    @inline(__always)
    func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(isCurrent, "called off the D-Bus connection's loop thread", file: file, line: line)
    }

    /// Runs `job` on the loop thread soon. Safe from any thread. Returns false (and drops the job) when the
    /// loop has already ended.
    @discardableResult
    func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = queue.withLock { queue -> Bool in
            guard !queue.ended else { return false }
            queue.jobs.append(job)
            return true
        }
        guard accepted else { return false }
        // A full pipe already guarantees a wakeup, so a failed write needs no handling.
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
        return true
    }

    /// Loop thread only: run `action` at `instant` unless the loop stops first or ``cancelScheduled(_:)`` is
    /// called with the returned token.
    @discardableResult
    func schedule(at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        assertOnLoopThread()
        nextDeadline += 1
        deadlines.add(nextDeadline, at: instant, action)
        return nextDeadline
    }

    /// Loop thread only: forget a scheduled action.
    func cancelScheduled(_ token: UInt64) {
        assertOnLoopThread()
        deadlines.remove(token)
    }

    /// Loop thread only: stop after this iteration.
    func stop() {
        assertOnLoopThread()
        running = false
    }

    private func threadMain(_ open: @Sendable (LoopThread) -> OpaquePointer?) {
        defer {
            endQueue()
            // pthread_t values are reused: a thread started later must not pass for this one.
            threadID.store(0, ordering: .releasing)
        }
        nameCurrentThread("dbus-loop")
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        guard let connection = open(self) else { return }
        self.connection = connection
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            connection,
            { watch, data in
                let loop = LoopThread.from(data)
                loop.assertOnLoopThread()
                loop.watches.append(watch!)
                return 1
            },
            { watch, data in
                let loop = LoopThread.from(data)
                loop.assertOnLoopThread()
                loop.watches.removeAll { $0 == watch }
            },
            nil,
            context,
            nil
        )
        dbus_connection_set_timeout_functions(
            connection,
            { timeout, data in
                let loop = LoopThread.from(data)
                loop.assertOnLoopThread()
                loop.timeouts[timeout!] = .now + .milliseconds(Int(dbus_timeout_get_interval(timeout)))
                return 1
            },
            { timeout, data in
                let loop = LoopThread.from(data)
                loop.assertOnLoopThread()
                loop.timeouts[timeout!] = nil
            },
            { timeout, data in
                let loop = LoopThread.from(data)
                loop.assertOnLoopThread()
                loop.timeouts[timeout!] = .now + .milliseconds(Int(dbus_timeout_get_interval(timeout)))
            },
            context,
            nil
        )
        runLoop(connection)
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> LoopThread {
        Unmanaged<LoopThread>.fromOpaque(data!).takeUnretainedValue()
    }

    private func runLoop(_ connection: OpaquePointer) {
        var pollFDs: [pollfd] = []
        while running {
            runJobs()
            dispatchAll(connection)
            if !running { break }

            pollFDs.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            var polled: [OpaquePointer] = []
            if let until = quietUntil, until <= .now { quietUntil = nil }
            for watch in watches where dbus_watch_get_enabled(watch) != 0 {
                let flags = dbus_watch_get_flags(watch)
                var events: Int16 = 0
                // While quiet, input waits in the socket; a hangup or error is still reported.
                if flags & DBUS_WATCH_READABLE.rawValue != 0, quietUntil == nil { events |= Int16(POLLIN) }
                if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
                pollFDs.append(pollfd(fd: dbus_watch_get_unix_fd(watch), events: events, revents: 0))
                polled.append(watch)
            }
            let firstSource = pollFDs.count
            let sources = watched
            for source in sources {
                // While quiet, input waits in the descriptors as the bus's does; a hang-up is still reported.
                pollFDs.append(pollfd(fd: source.fd, events: quietUntil == nil ? Int16(POLLIN) : 0, revents: 0))
            }
            let timeout = nextTimeoutMilliseconds()
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), timeout)
            if ready < 0 && errno != EINTR {
                let reason = String(cString: strerror(errno))
                onFailure?(DBusError(.disconnected, "the connection to the bus failed: poll: \(reason)"))
                break
            }

            if pollFDs[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 256)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            for (index, watch) in polled.enumerated() {
                let revents = pollFDs[index + 1].revents
                guard revents != 0, watches.contains(watch) else { continue }
                if revents & Int16(POLLIN) != 0 { noteInput() }
                var flags: UInt32 = 0
                if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
                if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
                if revents & Int16(POLLERR) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
                dbus_watch_handle(watch, flags)
                if flags & DBUS_WATCH_READABLE.rawValue != 0 { readBacklog(watch) }
            }
            readSources(sources, pollFDs[firstSource...])
            fireTimeouts()
        }
        runJobs()
        // Before the connection leaves the bus: BlueZ 5.66 may touch a released notify session otherwise.
        removeAllWatched()
        dbus_connection_set_watch_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection, nil, nil, nil, nil, nil)
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        self.connection = nil
        watches = []
        timeouts = [:]
        deadlines = Deadlines()
    }

    /// Input arrived. Quiet only while busy: input within two ticks of the last read (one quiet tick and the poll's
    /// lateness) starts another tick, so steady traffic is read once a tick; input after a quiet spell (a single
    /// strap at 1 Hz) is read at once, costing one wakeup instead of two and no delay.
    private func noteInput() {
        guard coalescing > .zero else { return }
        let now = ContinuousClock.now
        if let lastRead, now - lastRead < coalescing * 2 { quietUntil = now + coalescing }
        lastRead = now
    }

    /// Reads the descriptors poll found ready, as one dispatch: what their readers leave for the end of the dispatch
    /// runs once the bus's messages of this wakeup are dispatched too.
    private func readSources(_ sources: [Watched], _ polled: ArraySlice<pollfd>) {
        guard polled.contains(where: { $0.revents != 0 }) else { return }
        if polled.contains(where: { $0.revents & Int16(POLLIN) != 0 }) { noteInput() }
        dispatching = true
        for (source, entry) in zip(sources, polled) where entry.revents != 0 {
            // A reader may have ended another watch meanwhile.
            guard watched.contains(where: { $0.id == source.id }) else { continue }
            readWatched(source, revents: entry.revents)
        }
        dispatching = false
    }

    /// Reads on while the socket has data: libdbus reads at most 2 KiB per `dbus_watch_handle`, so after a
    /// quiet tick one read would take only part of what arrived, and the rest would wait for the next tick.
    private func readBacklog(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        for _ in 0..<4096 {
            guard watches.contains(watch), dbus_watch_get_enabled(watch) != 0 else { return }
            var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&probe, 1, 0) > 0, probe.revents & Int16(POLLIN) != 0 else { return }
            dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
        }
    }

    private func runJobs() {
        // Jobs may enqueue more jobs; loop until the queue stays empty.
        while true {
            // Taken whole and replaced by an empty array: `removeAll(keepingCapacity:)` on the array just handed
            // out allocated a copy of its buffer at every loop iteration (its capacity is the largest burst yet).
            let batch = queue.withLock { queue -> [@Sendable () -> Void] in
                guard !queue.jobs.isEmpty else { return [] }
                defer { queue.jobs = [] }
                return queue.jobs
            }
            if batch.isEmpty { return }
            for job in batch { job() }
        }
    }

    /// Refuses further jobs and runs those already queued; the connection is closed by now, so they fail fast.
    private func endQueue() {
        let remaining = queue.withLock { queue -> [@Sendable () -> Void] in
            queue.ended = true
            defer { queue.jobs = [] }
            return queue.jobs
        }
        for job in remaining { job() }
    }

    /// Handles every message already read (the whole backlog per wakeup, not one message per wakeup).
    private func dispatchAll(_ connection: OpaquePointer) {
        dispatching = true
        while dbus_connection_get_dispatch_status(connection) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(connection)
        }
        dispatching = false
        while !endOfDispatch.isEmpty {
            let actions = endOfDispatch
            endOfDispatch = []
            for action in actions { action() }
        }
    }

    /// Runs the read-complete of the route or socket `id` at the end of this dispatch, once however many values it
    /// delivered; at once outside a dispatch.
    func readComplete(_ id: UInt64, _ action: @escaping @Sendable () -> Void) {
        guard completing.insert(id).inserted else { return }
        let scheduled = atEndOfDispatch { [unowned self] in
            completing.remove(id)
            action()
        }
        if !scheduled {
            completing.remove(id)
            action()
        }
    }

    /// Runs `action` once the messages being dispatched now are all dispatched, and returns true, when called
    /// from a handler the loop is dispatching a message to; otherwise does nothing and returns false. For
    /// consumers that want a wakeup's messages handed on together rather than one at a time.
    func atEndOfDispatch(_ action: @escaping () -> Void) -> Bool {
        // The thread first: `dispatching` is the loop thread's alone.
        guard isCurrent, dispatching else { return false }
        endOfDispatch.append(action)
        return true
    }

    private func nextTimeoutMilliseconds() -> Int32 {
        var next: ContinuousClock.Instant?
        for (timeout, deadline) in timeouts where dbus_timeout_get_enabled(timeout) != 0 {
            if next == nil || deadline < next! { next = deadline }
        }
        if let earliest = deadlines.earliest, next == nil || earliest < next! { next = earliest }
        if let quietUntil, next == nil || quietUntil < next! { next = quietUntil }
        guard let next else { return -1 }
        let remaining = ContinuousClock.now.duration(to: next)
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    private func fireTimeouts() {
        let now = ContinuousClock.now
        for (timeout, deadline) in timeouts where deadline <= now && dbus_timeout_get_enabled(timeout) != 0 {
            timeouts[timeout] = now + .milliseconds(Int(dbus_timeout_get_interval(timeout)))
            dbus_timeout_handle(timeout)
        }
        for action in deadlines.takeDue(at: now) { action() }
    }
}

/// The loop's scheduled actions: instants by token, actions by token, and the earliest instant, recomputed only
/// when it leaves.
private struct Deadlines {
    private var instants: [UInt64: ContinuousClock.Instant] = [:]
    private var actions: [UInt64: @Sendable () -> Void] = [:]
    /// The earliest instant, or nil when none is scheduled.
    private(set) var earliest: ContinuousClock.Instant?

    mutating func add(_ token: UInt64, at instant: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        instants[token] = instant
        actions[token] = action
        if earliest.map({ instant < $0 }) ?? true { earliest = instant }
    }

    mutating func remove(_ token: UInt64) {
        guard let instant = instants.removeValue(forKey: token) else { return }
        actions[token] = nil
        if instant == earliest { earliest = instants.values.min() }
    }

    /// Removes the actions due at `now` and returns them in the order they were scheduled.
    mutating func takeDue(at now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        guard let earliest, earliest <= now else { return [] }
        let due = instants.compactMap { token, instant in instant <= now ? token : nil }.sorted()
        var taken: [@Sendable () -> Void] = []
        taken.reserveCapacity(due.count)
        for token in due {
            instants[token] = nil
            if let action = actions.removeValue(forKey: token) { taken.append(action) }
        }
        self.earliest = instants.values.min()
        return taken
    }
}

/// Names the calling thread for ps, top and perf (otherwise it has the name of the thread that started it); the
/// daemon names its workout thread with it too.
/// Through /proc: Glibc's module leaves out pthread_setname_np.
public func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = name.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
    close(fd)
}
