import DBus
import Synchronization
import SystoleTestSupport
import Testing

@Suite struct SignalTests {
    /// Emits the test signal `member` (Beat, or another) from /test/emitter with `beat` as its argument.
    func emit(_ beat: Int32, member: String = "Beat", from server: DBusConnection) throws {
        try server.emit(
            path: "/test/emitter",
            interface: "org.systole.Test.Signals",
            member: member,
            arguments: [.int32(beat)]
        )
    }

    @Test func subscribersReceiveMatchingSignalsInOrder() async throws {
        try await withBus { fixture in
            let rule = DBusMatchRule(path: "/test/emitter", interface: "org.systole.Test.Signals", member: "Beat")
            let stream = try await fixture.client.signals(matching: rule)
            for beat in Int32(0)..<50 {
                try emit(beat, from: fixture.server)
                // Not matched: another member and another path.
                try emit(-1, member: "Other", from: fixture.server)
                try fixture.server.emit(
                    path: "/test/elsewhere",
                    interface: "org.systole.Test.Signals",
                    member: "Beat",
                    arguments: [.int32(-1)]
                )
            }
            var received: [Int32] = []
            for try await signal in stream {
                #expect(signal.sender == fixture.server.uniqueName)
                #expect(signal.path == "/test/emitter")
                if case .int32(let beat) = signal.arguments.first { received.append(beat) }
                if received.count == 50 { break }
            }
            #expect(received == Array(0..<50))
        }
    }

    @Test func aHandlerTakesMatchingSignalsInOrderUntilItsSubscriptionIsCancelled() async throws {
        try await withBus { fixture in
            let client = try await DBusConnection.connect(to: .address(fixture.bus.address))
            let received = Mutex<[Int32]>([])
            let rule = DBusMatchRule(path: "/test/emitter", interface: "org.systole.Test.Signals", member: "Beat")
            let subscription = try await client.subscribe(to: rule) { signal in
                if case .int32(let beat) = signal.arguments.first { received.withLock { $0.append(beat) } }
            }
            let consumer = Task { try await subscription.ended() }
            for beat in Int32(0)..<50 {
                try emit(beat, from: fixture.server)
                try emit(-1, member: "Other", from: fixture.server)
            }
            _ = await eventually { received.withLock { $0.count } >= 50 }
            #expect(received.withLock { $0 } == Array(0..<50))

            // Once the task waiting for its end is cancelled, the handler is called no more.
            consumer.cancel()
            try await consumer.value
            // The subscription's end was handed to the client's loop before this call, which it answers after.
            _ = try await client.nameOwner(of: fixture.server.uniqueName)
            try emit(99, from: fixture.server)
            // Round trips after the emit: the bus has routed the signal, and the client has read past it.
            _ = try await fixture.server.nameOwner(of: fixture.server.uniqueName)
            _ = try await client.nameOwner(of: fixture.server.uniqueName)
            #expect(received.withLock { $0 } == Array(0..<50))

            // Closing the connection ends a subscription too.
            let second = try await client.subscribe(to: rule) { _ in }
            let ended = Atomic(false)
            let waiter = Task {
                try? await second.ended()
                ended.store(true, ordering: .releasing)
            }
            client.close()
            let didEnd = await eventually { ended.load(ordering: .acquiring) }
            #expect(didEnd, "the subscription should end when the connection closes")
            waiter.cancel()
        }
    }

    @Test func aCoalescingConnectionTakesEveryMessageOfABurstAndStillAnswersCalls() async throws {
        try await withBus { fixture in
            // Reads the bus at most every 50 ms; a burst of 40 KiB is far more than libdbus reads at once.
            let client = try await DBusConnection.connect(
                to: .address(fixture.bus.address),
                coalescing: .milliseconds(50)
            )
            defer { client.close() }
            let rule = DBusMatchRule(path: "/test/emitter", interface: "org.systole.Test.Signals", member: "Beat")
            let stream = try await client.signals(matching: rule)
            let padding = String(repeating: "x", count: 200)
            for beat in Int32(0)..<200 {
                try fixture.server.emit(
                    path: "/test/emitter",
                    interface: "org.systole.Test.Signals",
                    member: "Beat",
                    arguments: [.int32(beat), .string(padding)]
                )
            }
            var received: [Int32] = []
            for try await signal in stream {
                if case .int32(let beat) = signal.arguments.first { received.append(beat) }
                if received.count == 200 { break }
            }
            #expect(received == Array(0..<200))
            // Calls and their replies still go through between ticks.
            let names = try await client.call(
                destination: "org.freedesktop.DBus",
                path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                method: "ListNames"
            )
            #expect(names.first?.strings?.contains(fixture.server.uniqueName) == true)
        }
    }

    @Test func senderRulesWithWellKnownNamesFollowTheOwner() async throws {
        try await withBus { fixture in
            try await fixture.server.requestName("org.systole.Test.Sender")
            let stream = try await fixture.client.signals(
                matching: DBusMatchRule(sender: "org.systole.Test.Sender", interface: "org.systole.Test.Signals")
            )
            // A second, broader subscription on the same connection makes the bus route every sender's signals
            // here; the sender-filtered stream must still see only the owner's.
            let everything = try await fixture.client.signals(
                matching: DBusMatchRule(interface: "org.systole.Test.Signals")
            )
            _ = everything
            let third = try await DBusConnection.connect(to: .address(fixture.bus.address))
            defer { third.close() }
            try third.emit(path: "/x", interface: "org.systole.Test.Signals", member: "Fake")
            // A round trip through the bus after the emit means the bus has already routed "Fake" to the client,
            // so it reaches the client before "Real": only the sender check can keep it out of the stream.
            _ = try await third.nameOwner(of: "org.systole.Test.Sender")
            try fixture.server.emit(path: "/x", interface: "org.systole.Test.Signals", member: "Real")
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.member == "Real")
        }
    }

    @Test func pathNamespaceAndArg0Match() async throws {
        try await withBus { fixture in
            let stream = try await fixture.client.signals(
                matching: DBusMatchRule(pathNamespace: "/org/bluez/hci0", arg0: "org.bluez.Device1")
            )
            try fixture.server.emit(
                path: "/org/bluez/hci1/dev_1",
                interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [.string("org.bluez.Device1")]
            )
            try fixture.server.emit(
                path: "/org/bluez/hci0/dev_1",
                interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [.string("org.bluez.Adapter1")]
            )
            try fixture.server.emit(
                path: "/org/bluez/hci0/dev_2",
                interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [.string("org.bluez.Device1")]
            )
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.path == "/org/bluez/hci0/dev_2")
        }
    }

    @Test func cancellingTheConsumerEndsTheStream() async throws {
        try await withBus { fixture in
            let stream = try await fixture.client.signals(matching: DBusMatchRule(interface: "org.systole.Test.Never"))
            let iterating = Atomic(false)
            let consumer = Task {
                var count = 0
                iterating.store(true, ordering: .releasing)
                for try await _ in stream { count += 1 }
                return count
            }
            try await waitUntil("the consumer iterating") { iterating.load(ordering: .acquiring) }
            consumer.cancel()
            let count = try await consumer.value
            #expect(count == 0)
            // The connection keeps working for other subscriptions.
            let other = try await fixture.client.signals(matching: DBusMatchRule(member: "Again"))
            try fixture.server.emit(path: "/x", interface: "org.systole.Test.Signals", member: "Again")
            var iterator = other.makeAsyncIterator()
            #expect(try await iterator.next()?.member == "Again")
        }
    }
}
