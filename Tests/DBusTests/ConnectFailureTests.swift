import Dispatch
import Synchronization
import SystoleTestSupport
import Testing

@testable import DBus

#if canImport(Glibc)
import Glibc
#endif

/// How `connect` ends when it cannot finish: it throws, promptly, and leaves nothing open behind.
@Suite struct ConnectFailureTests {
    /// Starts real loop threads; each one's end is reported on `ended`, and each waits for `go` (if given) before
    /// it begins to connect.
    struct WatchedThreads {
        let ended: AsyncStream<Void>
        let spawn: ThreadSpawner

        init(waitingFor go: DispatchSemaphore? = nil) {
            let (ended, reportEnd) = AsyncStream.makeStream(of: Void.self)
            self.ended = ended
            spawn = { main in
                spawnDetachedThread {
                    go?.wait()
                    main()
                    reportEnd.yield()
                }
            }
        }

        /// Waits until one of the threads has ended.
        func firstEnd() async throws {
            try await withTimeout(.seconds(10), "the loop thread ended") {
                var iterator = ended.makeAsyncIterator()
                _ = await iterator.next()
            }
        }
    }

    func connect(
        _ address: String,
        timeout: Duration,
        spawnThread: @escaping ThreadSpawner
    ) async -> Result<String, DBusError> {
        do {
            let connection = try await DBusConnection.connect(
                to: .address(address),
                coalescing: .zero,
                timeout: timeout,
                spawnThread: spawnThread
            )
            connection.close()
            return .success(connection.uniqueName)
        } catch {
            return .failure(error)
        }
    }

    @Test func connectThrowsAtOnceWhenItsLoopThreadCannotStart() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let attempts = Mutex(0)
        // Far below the connect timeout: the failure has to come from the spawner, not from the deadline.
        let result = await outcome(within: .seconds(10)) {
            await connect(bus.address, timeout: .seconds(25)) { _ in
                attempts.withLock { $0 += 1 }
                return EAGAIN
            }
        }
        let expected = DBusError(
            .failed,
            "could not start the connection's loop thread: \(String(cString: strerror(EAGAIN)))"
        )
        #expect(result == .failure(expected), "connect did not hang")
        #expect(attempts.withLock { $0 } == 1)
    }

    @Test func connectGivesUpOnABusThatNeverAnswersAndItsThreadEndsWithTheSocket() async throws {
        let silent = try SilentSocket()
        defer { silent.close() }
        let threads = WatchedThreads()
        let started = ContinuousClock.now
        let result = await outcome(within: .seconds(10)) {
            await connect(silent.address, timeout: .milliseconds(300), spawnThread: threads.spawn)
        }
        let finished = try #require(result, "connect did not hang")
        let error = try #require(finished.failure)
        #expect(error.is(.timeout), "\(error)")
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        // libdbus is still blocked on the socket; it returns once the socket goes, and so does the thread.
        silent.close()
        try await threads.firstEnd()
    }

    @Test func aCancelledConnectReturnsAtOnce() async throws {
        let silent = try SilentSocket()
        defer { silent.close() }
        let connecting = Task {
            try await DBusConnection.connect(
                to: .address(silent.address),
                coalescing: .zero,
                timeout: .seconds(60),
                spawnThread: spawnDetachedThread
            )
        }
        // libdbus has connected (the connection waits in the listening queue) and waits for an answer.
        try await waitUntil("the connection reaching the silent socket") { silent.hasWaitingConnection }
        connecting.cancel()
        let result = try #require(await outcome(within: .seconds(10)) { await connecting.result })
        #expect(throws: DBusError.self) { try result.get() }
        #expect((result.failure as? DBusError)?.message.hasSuffix("cancelled") == true, "\(String(describing: result))")
    }

    @Test func aConnectionThatOpensAfterTheCallerGaveUpIsClosed() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let go = DispatchSemaphore(value: 0)
        let threads = WatchedThreads(waitingFor: go)
        let result = await connect(bus.address, timeout: .milliseconds(100), spawnThread: threads.spawn)
        #expect(result.failure?.is(.timeout) == true, "\(result)")
        // Now the loop thread connects and registers, finds nobody waiting, and closes the connection.
        go.signal()
        try await threads.firstEnd()

        let observer = try await DBusConnection.connect(to: .address(bus.address))
        defer { observer.close() }
        // The bus sees the hang-up when it gets to it, not necessarily before the observer's call.
        var names: [String] = []
        _ = try await eventually {
            let reply = try await observer.call(
                destination: "org.freedesktop.DBus",
                path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                method: "ListNames"
            )
            names = reply.first?.strings ?? []
            return names.count <= 2
        }
        #expect(names.sorted() == ["org.freedesktop.DBus", observer.uniqueName].sorted())
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
