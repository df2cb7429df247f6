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
