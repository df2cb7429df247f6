import DBus
import Synchronization
import SystoleTestSupport

/// A private bus with a server connection exporting test objects and a client connection calling them.
struct BusFixture {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection
    /// Calls the slow method has received so far (a call counted here is pending at the server).
    let slowCalls = SlowCalls()

    final class SlowCalls: Sendable {
        let count = Atomic(0)
    }

    static func start() async throws -> BusFixture {
        let bus = try await PrivateBus.start()
        let server = try await DBusConnection.connect(to: .address(bus.address))
        let client = try await DBusConnection.connect(to: .address(bus.address))
        return BusFixture(bus: bus, server: server, client: client)
    }

    /// Exports `org.systole.Test.Slow.Wait` at `/test/slow` on the server: it answers after 30 s, so a call to it
    /// stays pending for as long as a test needs.
    func exportSlowMethod() {
        let calls = slowCalls
        let object = DBusObject(path: "/test/slow")
        object.addInterface(
            DBusInterface(
                "org.systole.Test.Slow",
                methods: [
                    DBusMethod("Wait") { _ in
                        calls.count.add(1, ordering: .relaxed)
                        try? await Task.sleep(for: .seconds(30))
                        return []
                    }
                ]
            )
        )
        server.export(object)
    }

    /// Waits until the server has received a call to the slow method: it is pending there from now on.
    func waitForASlowCall() async throws {
        try await waitUntil("a call of the slow method reaching the server") {
            slowCalls.count.load(ordering: .relaxed) > 0
        }
    }

    func stop() {
        client.close()
        server.close()
        bus.stop()
    }
}

/// Runs `body` with a fresh fixture and always tears it down.
func withBus(_ body: (BusFixture) async throws -> Void) async throws {
    let fixture = try await BusFixture.start()
    defer { fixture.stop() }
    try await body(fixture)
}

/// Every value kind, nested in every container kind.
let sampleValues: [DBusValue] = [
    .byte(0xFE), .boolean(true), .boolean(false), .int16(-12345), .uint16(54321), .int32(-2_000_000_000),
    .uint32(4_000_000_000), .int64(-9_000_000_000_000), .uint64(18_000_000_000_000_000_000), .double(-3.25),
    .string("héllo, wörld ❤️"), .string(""), .objectPath("/org/bluez/hci0/dev_00_11_22_33_44_55"),
    .signature("a{sv}"), .bytes([0x16, 0x48, 0x54, 0x01]), .bytes(Array(0...200).map { UInt8($0) }),
    .array(.int32, []), .strings(["a", "b"]), .variant(.variant(.uint16(7))),
    .structure([.string("x"), .int32(1), .variant(.boolean(true))]),
    .propertyMap(["Name": .string("Polar H10 1A2B3C4D"), "RSSI": .int16(-60), "UUIDs": .strings(["180d"])]),
    .dictionary(key: .uint16, value: .variant, [(.uint16(0x006B), .variant(.bytes([1, 2, 3])))]),
    .array(
        .array(.structure([.objectPath, .double])),
        [.array(.structure([.objectPath, .double]), [.structure([.objectPath("/a"), .double(1.5)])])]
    ),
]
