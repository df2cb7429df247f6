import SystoleTestSupport
import Testing

@testable import DBus

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
