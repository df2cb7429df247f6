import Synchronization
import SystoleTestSupport
import Testing

@testable import DBus

/// Signals read in place on the fast path: a route's reader gets the signals of its path, member and sender first;
/// what it declines, what another sender says and what comes after the route ends reach the subscriptions as before.
@Suite struct SignalRouteTests {
    static let sender = "org.systole.Test.Radio"
    static let path = "/org/systole/test/strap"
    static let interface = "org.systole.Test.Radio1"
    static let ay = ContiguousArray("ay".utf8CString)

    /// What a route handed over: the bytes of each value, in order.
    final class Received: Sendable {
        let values = Mutex<[[UInt8]]>([])
        func take(_ bytes: UnsafeRawBufferPointer) { values.withLock { $0.append(Array(bytes)) } }
    }

    /// Emits `Beat` with `arguments` (a route's reader takes one carrying `ay` alone).
    func beat(
        _ arguments: [DBusValue],
        member: String = "Beat",
        path: String = path,
        from connection: DBusConnection
    )
        throws
    {
        try connection.emit(path: path, interface: Self.interface, member: member, arguments: arguments)
    }

    /// Takes a signal of a byte array alone into `received`; declines anything else.
    static func reader(_ received: Received) -> DBusSignalReader {
        { message, _ in
            guard message.hasSignature(ay), let arguments = message.arguments() else { return false }
            return arguments.withBytes { received.take($0) } != nil
        }
    }

    func route(_ connection: DBusConnection, to received: Received) -> DBusSignalRoute {
        connection.routeSignals(
            path: Self.path,
            interface: Self.interface,
            member: "Beat",
            sender: Self.sender,
            to: Self.reader(received)
        )
    }

    /// A subscription to everything the sender says (which also makes the client follow the sender's owner), and a
    /// route for the characteristic's Value beside it.
    func setUp(_ fixture: BusFixture) async throws -> (SignalStream, Received, DBusSignalRoute) {
        try await fixture.server.requestName(Self.sender)
        let signals = try await fixture.client.signals(matching: DBusMatchRule(sender: Self.sender))
        let received = Received()
        let route = route(fixture.client, to: received)
        // A round trip after the route is queued: the loop thread has it in place before anything below is sent.
        _ = try await fixture.client.nameOwner(of: Self.sender)
        return (signals, received, route)
    }

    @Test func whatTheReaderTakesGoesToItAndWhatItDeclinesToTheSubscriptions() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            try beat([.bytes([0x16, 0x48, 0x54, 0x01])], from: fixture.server)
            try beat([.bytes([])], from: fixture.server)
            try beat([.bytes([0x00, 0x47]), .boolean(true)], from: fixture.server)
            try beat([.string("not bytes")], from: fixture.server)
            try beat([.bytes([0x00, 0x49])], member: "Other", from: fixture.server)
            try beat([.bytes([0x00, 0x4A])], path: Self.path + "x", from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            var general: [DBusValue] = []
            for try await signal in signals {
                if signal.member == "End" { break }
                general.append(signal.arguments[0])
            }
            #expect(received.values.withLock { $0 } == [[0x16, 0x48, 0x54, 0x01], []])
            #expect(
                general == [.bytes([0x00, 0x47]), .string("not bytes"), .bytes([0x00, 0x49]), .bytes([0x00, 0x4A])]
            )
        }
    }

    /// A reader that does not check the signature first is not trapped by what a sender chose to send: entering a
    /// string, or reading it as bytes, says no instead of reaching into libdbus with the wrong type.
    @Test func readingAnArgumentAsTheWrongTypeSaysNo() async throws {
        try await withBus { fixture in
            try await fixture.server.requestName(Self.sender)
            let signals = try await fixture.client.signals(matching: DBusMatchRule(sender: Self.sender))
            let answers = Mutex<[String]>([])
            fixture.client.routeSignals(path: Self.path, interface: Self.interface, member: "Beat", sender: Self.sender)
            {
                message,
                _ in
                guard let arguments = message.arguments() else { return false }
                let entered = arguments.entered() == nil ? "not a container" : "entered"
                let bytes = arguments.withBytes { _ in "bytes" } ?? "not bytes"
                answers.withLock { $0.append("\(entered), \(bytes)") }
                return false
            }
            _ = try await fixture.client.nameOwner(of: Self.sender)
            try beat([.string("\u{1B}[31m")], from: fixture.server)
            try beat([.uint32(7)], from: fixture.server)
            try beat([.strings(["a"])], from: fixture.server)
            try beat([.bytes([1, 2])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            var declined = 0
            for try await signal in signals {
                if signal.member == "End" { break }
                declined += 1
            }
            #expect(
                answers.withLock { $0 } == [
                    "not a container, not bytes", "not a container, not bytes", "entered, not bytes", "entered, bytes",
                ]
            )
            #expect(declined == 4, "what the reader declined went the general way")
        }
    }

    @Test func anotherSenderCannotFeedTheRoute() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            // A broad subscription makes the bus hand the client every sender's PropertiesChanged, so the
            // intruder's signal does reach the client: only the route's sender check keeps it out.
            let everything = try await fixture.client.signals(matching: DBusMatchRule(member: "Beat"))
            let intruder = try await DBusConnection.connect(to: .address(fixture.bus.address))
            defer { intruder.close() }
            try beat([.bytes([0x00, 0xFF])], from: intruder)
            // The intruder's signal is routed to the client before the round trip's reply.
            _ = try await intruder.nameOwner(of: Self.sender)
            try beat([.bytes([0x00, 0x50])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            for try await signal in signals where signal.member == "End" { break }
            #expect(received.values.withLock { $0 } == [[0x00, 0x50]])
            var broad = everything.makeAsyncIterator()
            let first = try await broad.next()
            #expect(first?.sender == intruder.uniqueName, "the intruder's signal reached the client's general path")
            #expect(first?.arguments.first == .bytes([0x00, 0xFF]))
        }
    }

    @Test func twoRoutesOfOnePathEachGetEveryValue() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            let second = Received()
            _ = route(fixture.client, to: second)
            _ = try await fixture.client.nameOwner(of: Self.sender)
            try beat([.bytes([0x00, 0x53])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            for try await signal in signals where signal.member == "End" { break }
            #expect(received.values.withLock { $0 } == [[0x00, 0x53]])
            #expect(second.values.withLock { $0 } == [[0x00, 0x53]])
        }
    }

    @Test func anEndedRouteSendsItsValuesTheGeneralWayAgain() async throws {
        try await withBus { fixture in
            let (signals, received, route) = try await setUp(fixture)
            try beat([.bytes([0x00, 0x51])], from: fixture.server)
            _ = await eventually { !received.values.withLock { $0.isEmpty } }
            fixture.client.removeRoute(route)
            _ = try await fixture.client.nameOwner(of: Self.sender)
            try beat([.bytes([0x00, 0x52])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            var general: [DBusValue] = []
            for try await signal in signals {
                if signal.member == "End" { break }
                if let value = signal.arguments.first { general.append(value) }
            }
            #expect(received.values.withLock { $0 } == [[0x00, 0x51]])
            #expect(general == [.bytes([0x00, 0x52])])
        }
    }

    @Test func aReadsValuesAreFollowedByOneReadCompleteOnTheLoopThread() async throws {
        try await withBus { fixture in
            // A 200 ms tick: the burst below is read and dispatched in one or two wakeups, not fifty.
            let client = try await DBusConnection.connect(
                to: .address(fixture.bus.address),
                coalescing: .milliseconds(200)
            )
            defer { client.close() }
            try await fixture.server.requestName(Self.sender)
            // Following the sender's owner, which a route needs.
            let signals = try await client.signals(matching: DBusMatchRule(sender: Self.sender))
            // "v" per value, "|" per read-complete, and whether each ran on the loop thread.
            let log = Mutex<(entries: [Character], offLoop: Int)>(([], 0))
            let loop = client.loop
            let note: @Sendable (Character) -> Void = { entry in
                log.withLock { log in
                    log.entries.append(entry)
                    if !loop.isCurrent { log.offLoop += 1 }
                }
            }
            client.routeSignals(
                path: Self.path,
                interface: Self.interface,
                member: "Beat",
                sender: Self.sender,
                to: { _, _ in
                    note("v")
                    return true
                },
                onReadComplete: { note("|") }
            )
            _ = try await client.nameOwner(of: Self.sender)
            for rate in 0..<50 { try beat([.bytes([0x00, UInt8(60 + rate)])], from: fixture.server) }
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            for try await signal in signals where signal.member == "End" { break }
            try await waitUntil("the read-complete after the last value") { log.withLock { $0.entries.last == "|" } }
            let (entries, offLoop) = log.withLock { $0 }
            #expect(entries.filter { $0 == "v" }.count == 50)
            // Every read-complete follows at least one value of its read, and the last value is followed by one.
            #expect(entries.first == "v")
            #expect(!zip(entries, entries.dropFirst()).contains { $0 == "|" && $1 == "|" })
            #expect(offLoop == 0)
            let reads = entries.filter { $0 == "|" }.count
            #expect(reads <= 3, "a burst read in one tick is one read: \(reads) reads of 50 values")
        }
    }
}
