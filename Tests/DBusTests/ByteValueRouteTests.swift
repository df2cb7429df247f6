import Synchronization
import SystoleTestSupport
import Testing

@testable import DBus

/// The fast path for a characteristic's `Value`: routed signals reach the handler with their bytes and nothing
/// else; everything a route cannot take whole (more properties, invalidations, another interface, another sender,
/// after the route ends) reaches the subscriptions as before.
@Suite struct ByteValueRouteTests {
    static let sender = "org.systole.Test.Radio"
    static let path = "/org/bluez/hci0/dev_00_11_22_33_44_55/service000c/char000d"
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// What a route handed over: the bytes of each value, in order.
    final class Received: Sendable {
        let values = Mutex<[[UInt8]]>([])
        func take(_ bytes: UnsafeRawBufferPointer) { values.withLock { $0.append(Array(bytes)) } }
    }

    func changed(
        _ properties: [String: DBusValue],
        interface: String = characteristic,
        invalidated: [String] = [],
        path: String = path,
        from connection: DBusConnection
    ) throws {
        try connection.emit(
            path: path,
            interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            arguments: [.string(interface), .propertyMap(properties), .strings(invalidated)]
        )
    }

    /// A subscription to everything the sender says (which also makes the client follow the sender's owner), and a
    /// route for the characteristic's Value beside it.
    func setUp(_ fixture: BusFixture) async throws -> (SignalStream, Received, DBusByteValueRoute) {
        try await fixture.server.requestName(Self.sender)
        let signals = try await fixture.client.signals(matching: DBusMatchRule(sender: Self.sender))
        let received = Received()
        let route = fixture.client.routeByteValue(
            of: "Value",
            interface: Self.characteristic,
            path: Self.path,
            sender: Self.sender
        ) { bytes, _ in received.take(bytes) }
        // A round trip after the route is queued: the loop thread has it in place before anything below is sent.
        _ = try await fixture.client.nameOwner(of: Self.sender)
        return (signals, received, route)
    }

    @Test func aValueAloneGoesToTheRouteAndAnythingMoreToTheSubscriptions() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            try changed(["Value": .bytes([0x16, 0x48, 0x54, 0x01])], from: fixture.server)
            try changed(["Value": .bytes([])], from: fixture.server)
            try changed(["Value": .bytes([0x00, 0x47]), "Notifying": .boolean(true)], from: fixture.server)
            try changed(["Value": .bytes([0x00, 0x48])], invalidated: ["Flags"], from: fixture.server)
            try changed(["Value": .bytes([0x00, 0x49])], interface: "org.bluez.GattDescriptor1", from: fixture.server)
            try changed(["Value": .string("not bytes")], from: fixture.server)
            try changed(["Value": .bytes([0x00, 0x4A])], path: Self.path + "x", from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            var general: [DBusSignal] = []
            for try await signal in signals {
                if signal.member == "End" { break }
                general.append(signal)
            }
            #expect(received.values.withLock { $0 } == [[0x16, 0x48, 0x54, 0x01], []])
            let values = general.compactMap { $0.arguments[1].propertyMap?["Value"] }
            #expect(
                values == [
                    .bytes([0x00, 0x47]), .bytes([0x00, 0x48]), .bytes([0x00, 0x49]), .string("not bytes"),
                    .bytes([0x00, 0x4A]),
                ]
            )
        }
    }

    @Test func anotherSenderCannotFeedTheRoute() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            // A broad subscription makes the bus hand the client every sender's PropertiesChanged, so the
            // intruder's signal does reach the client: only the route's sender check keeps it out.
            let everything = try await fixture.client.signals(matching: DBusMatchRule(member: "PropertiesChanged"))
            let intruder = try await DBusConnection.connect(to: .address(fixture.bus.address))
            defer { intruder.close() }
            try changed(["Value": .bytes([0x00, 0xFF])], from: intruder)
            // The intruder's signal is routed to the client before the round trip's reply.
            _ = try await intruder.nameOwner(of: Self.sender)
            try changed(["Value": .bytes([0x00, 0x50])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            for try await signal in signals where signal.member == "End" { break }
            #expect(received.values.withLock { $0 } == [[0x00, 0x50]])
            var broad = everything.makeAsyncIterator()
            let first = try await broad.next()
            #expect(first?.sender == intruder.uniqueName, "the intruder's signal reached the client's general path")
            #expect(first?.arguments[1].propertyMap?["Value"] == .bytes([0x00, 0xFF]))
        }
    }

    @Test func twoRoutesOfOnePathEachGetEveryValue() async throws {
        try await withBus { fixture in
            let (signals, received, _) = try await setUp(fixture)
            let second = Received()
            fixture.client.routeByteValue(
                of: "Value",
                interface: Self.characteristic,
                path: Self.path,
                sender: Self.sender
            ) { bytes, _ in second.take(bytes) }
            _ = try await fixture.client.nameOwner(of: Self.sender)
            try changed(["Value": .bytes([0x00, 0x53])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            for try await signal in signals where signal.member == "End" { break }
            #expect(received.values.withLock { $0 } == [[0x00, 0x53]])
            #expect(second.values.withLock { $0 } == [[0x00, 0x53]])
        }
    }

    @Test func anEndedRouteSendsItsValuesTheGeneralWayAgain() async throws {
        try await withBus { fixture in
            let (signals, received, route) = try await setUp(fixture)
            try changed(["Value": .bytes([0x00, 0x51])], from: fixture.server)
            _ = await eventually { !received.values.withLock { $0.isEmpty } }
            fixture.client.removeRoute(route)
            _ = try await fixture.client.nameOwner(of: Self.sender)
            try changed(["Value": .bytes([0x00, 0x52])], from: fixture.server)
            try fixture.server.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
            var general: [DBusValue] = []
            for try await signal in signals {
                if signal.member == "End" { break }
                if let value = signal.arguments[1].propertyMap?["Value"] { general.append(value) }
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
            client.routeByteValue(
                of: "Value",
                interface: Self.characteristic,
                path: Self.path,
                sender: Self.sender,
                to: { _, _ in note("v") },
                onReadComplete: { note("|") }
            )
            _ = try await client.nameOwner(of: Self.sender)
            for beat in 0..<50 { try changed(["Value": .bytes([0x00, UInt8(60 + beat)])], from: fixture.server) }
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
