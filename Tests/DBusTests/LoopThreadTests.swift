import Synchronization
import SystoleTestSupport
import Testing

@testable import DBus

#if canImport(Glibc)
import Glibc
#endif

/// Which code runs on a connection's loop thread.
@Suite struct LoopThreadTests {
    @Test func signalHandlersRunOnTheLoopThreadAndTheTestsTaskDoesNot() async throws {
        try await withBus { fixture in
            let loop = fixture.client.loop
            #expect(!loop.isCurrent)
            let (onLoop, report) = AsyncStream.makeStream(of: Bool.self)
            let rule = DBusMatchRule(path: "/test/emitter", interface: "org.systole.Test.Signals", member: "Beat")
            let subscription = try await fixture.client.subscribe(to: rule) { _ in
                loop.assertOnLoopThread()
                report.yield(loop.isCurrent)
            }
            let consumer = Task { try await subscription.ended() }
            defer { consumer.cancel() }
            try fixture.server.emit(
                path: "/test/emitter",
                interface: "org.systole.Test.Signals",
                member: "Beat",
                arguments: [.int32(1)]
            )
            let handled = try await withTimeout(.seconds(10), "the handler ran") {
                var iterator = onLoop.makeAsyncIterator()
                return await iterator.next()
            }
            #expect(handled == true)
            #expect(!loop.isCurrent)
            #expect(!fixture.server.loop.isCurrent)
        }
    }

    /// A loop timer runs its check on the loop thread at the deadlines it returns, never before one, until it
    /// returns nil; a cancelled one runs no more.
    @Test func loopTimersRunTheirChecksOnTheLoopThreadAtTheirDeadlines() async throws {
        try await withBus { fixture in
            let loop = fixture.client.loop
            let runs = Mutex<[(onLoop: Bool, early: Bool)]>([])
            let (done, finish) = AsyncStream.makeStream(of: Void.self)
            let due = Mutex(ContinuousClock.now + .milliseconds(20))
            _ = fixture.client.runOnLoop(at: due.withLock { $0 }) {
                let now = ContinuousClock.now
                let count = runs.withLock { runs in
                    runs.append((loop.isCurrent, now < due.withLock { $0 }))
                    return runs.count
                }
                guard count < 3 else {
                    finish.yield()
                    return nil
                }
                return due.withLock { due in
                    due = now + .milliseconds(30)
                    return due
                }
            }
            try await withTimeout(generousDeadline, "three checks") {
                var iterator = done.makeAsyncIterator()
                _ = await iterator.next()
            }
            #expect(runs.withLock { $0.map(\.onLoop) } == [true, true, true])
            #expect(runs.withLock { $0.map(\.early) } == [false, false, false])

            // Cancelled before its deadline: it never runs. A later timer shows the loop went past that deadline.
            let cancelledRan = Atomic<Bool>(false)
            let cancelled = fixture.client.runOnLoop(at: .now + .milliseconds(50)) {
                cancelledRan.store(true, ordering: .relaxed)
                return nil
            }
            cancelled.cancel()
            // Cancelled once armed and running every 20 ms: it runs at most once more (one may be under way).
            let (first, firstRan) = AsyncStream.makeStream(of: Void.self)
            let repeats = Atomic<Int>(0)
            let repeating = fixture.client.runOnLoop(at: .now) {
                repeats.add(1, ordering: .relaxed)
                firstRan.yield()
                return .now + .milliseconds(20)
            }
            try await withTimeout(generousDeadline, "the repeating check's first run") {
                var iterator = first.makeAsyncIterator()
                _ = await iterator.next()
            }
            repeating.cancel()
            let atCancel = repeats.load(ordering: .relaxed)
            let (later, laterRan) = AsyncStream.makeStream(of: Void.self)
            _ = fixture.client.runOnLoop(at: .now + .milliseconds(300)) {
                laterRan.yield()
                return nil
            }
            try await withTimeout(generousDeadline, "the later check") {
                var iterator = later.makeAsyncIterator()
                _ = await iterator.next()
            }
            let ran = cancelledRan.load(ordering: .relaxed)
            #expect(!ran)
            let afterCancel = repeats.load(ordering: .relaxed) - atCancel
            #expect(afterCancel <= 1, "\(afterCancel) runs after cancel")
        }
    }

    @Test func aPollThatFailsEndsTheConnectionAndEverythingWaitingOnIt() async throws {
        try await withBus { fixture in
            // A call to it is pending when polling fails.
            fixture.exportSlowMethod()
            let client = try await DBusConnection.connect(to: .address(fixture.bus.address))
            let subscription = try await client.subscribe(to: DBusMatchRule(member: "Never")) { _ in }
            // What the waiting tasks end with, noted where the test can look without waiting on them: if the loop
            // left them waiting, the test fails after its deadlines instead of hanging.
            let subscriptionEnd = Mutex<(any Error)??>(nil)
            Task {
                do {
                    try await subscription.ended()
                    subscriptionEnd.withLock { $0 = .some(nil) }
                } catch {
                    subscriptionEnd.withLock { $0 = .some(error) }
                }
            }
            let callEnd = Mutex<Result<[DBusValue], any Error>?>(nil)
            Task {
                let result: Result<[DBusValue], any Error>
                do {
                    result = .success(
                        try await client.call(
                            destination: fixture.server.uniqueName,
                            path: "/test/slow",
                            interface: "org.systole.Test.Slow",
                            method: "Wait",
                            timeout: .seconds(60)
                        )
                    )
                } catch {
                    result = .failure(error)
                }
                callEnd.withLock { $0 = result }
            }
            try await fixture.waitForASlowCall()
            // From now on poll(2) fails as it does when the kernel is out of memory.
            let loop = client.loop
            #expect(
                loop.enqueue {
                    loop.poll = { _, _, _ in
                        errno = ENOMEM
                        return -1
                    }
                }
            )
            _ = await eventually { callEnd.withLock { $0 } != nil && subscriptionEnd.withLock { $0 } != nil }
            let outcome = try #require(callEnd.withLock { $0 }, "the pending call is still waiting")
            guard case .failure(let failure) = outcome else {
                Issue.record("the call cannot succeed once polling failed")
                return
            }
            let error = try #require(failure as? DBusError)
            #expect(error.is(.disconnected))
            #expect(error.message.contains("poll"), "\(error.message)")
            let ended = try #require(subscriptionEnd.withLock { $0 }, "the subscription is still open")
            #expect((ended as? DBusError)?.is(.disconnected) == true, "\(String(describing: ended))")
            #expect(!client.isConnected)
            try await withTimeout(.seconds(10), "the connection closed") { await client.waitUntilClosed() }
            // Later calls fail at once instead of waiting for a loop that is gone.
            await #expect(throws: DBusError.self) { _ = try await client.nameOwner(of: fixture.server.uniqueName) }
        }
    }

    #if DEBUG
    @Test func loopThreadCodeCalledElsewhereTrapsInDebugBuilds() async throws {
        let exit = try #require(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let loop = try LoopThread()
                loop.assertOnLoopThread()
            }
        )
        let message = String(decoding: exit.standardErrorContent, as: UTF8.self)
        #expect(message.contains("called off the D-Bus connection's loop thread"), "\(message)")
    }
    #endif
}
