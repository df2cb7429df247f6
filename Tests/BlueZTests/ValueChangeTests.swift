import DBus
import Synchronization
import SystoleTestSupport
import Testing

@testable import BlueZ

/// A characteristic's `Value` on the fast path: a `PropertiesChanged` of the value alone, from bluetoothd, reaches
/// the route with its bytes and nothing else; everything the route cannot take whole (more properties,
/// invalidations, another interface, not bytes, another object) reaches the subscriptions as before.
@Suite struct ValueChangeTests {
    static let path = "/org/bluez/hci0/dev_00_11_22_33_44_55/service000c/char000d"

    final class Received: Sendable {
        let values = Mutex<[[UInt8]]>([])
    }

    func changed(
        _ properties: [String: DBusValue],
        interface: String = BlueZ.Interface.gattCharacteristic,
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

    @Test func aValueAloneGoesToTheRouteAndAnythingMoreToTheSubscriptions() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let bluetoothd = try await DBusConnection.connect(to: .address(bus.address))
        defer { bluetoothd.close() }
        let client = try await DBusConnection.connect(to: .address(bus.address))
        defer { client.close() }
        try await bluetoothd.requestName(BlueZ.service)
        // Following bluetoothd's owner, which a route needs.
        let signals = try await client.signals(matching: DBusMatchRule(sender: BlueZ.service))
        let received = Received()
        _ = GattCharacteristic.routeValues(of: Self.path, on: client) { notification in
            received.values.withLock { $0.append(notification.value) }
        }
        // A round trip after the route is queued: the loop thread has it in place before anything below is sent.
        _ = try await client.nameOwner(of: BlueZ.service)
        try changed(["Value": .bytes([0x16, 0x48, 0x54, 0x01])], from: bluetoothd)
        try changed(["Value": .bytes([])], from: bluetoothd)
        try changed(["Value": .bytes([0x00, 0x47]), "Notifying": .boolean(true)], from: bluetoothd)
        try changed(["Value": .bytes([0x00, 0x48])], invalidated: ["Flags"], from: bluetoothd)
        try changed(["Value": .bytes([0x00, 0x49])], interface: "org.bluez.GattDescriptor1", from: bluetoothd)
        try changed(["Value": .string("not bytes")], from: bluetoothd)
        try changed(["Value": .bytes([0x00, 0x4A])], path: Self.path + "x", from: bluetoothd)
        try bluetoothd.emit(path: Self.path, interface: "org.systole.Test.Signals", member: "End")
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
