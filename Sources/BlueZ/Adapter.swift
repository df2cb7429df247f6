import DBus
import HeartRateProfile

/// A Bluetooth adapter (`org.bluez.Adapter1` at `/org/bluez/hciN`). A value identity: properties are read from
/// the client's cache when asked.
public struct Adapter: Sendable, Hashable {
    public let client: BlueZClient
    /// The object path, `/org/bluez/hci0`.
    public let path: String

    public init(client: BlueZClient, path: String) {
        self.client = client
        self.path = path
    }

    public static func == (lhs: Adapter, rhs: Adapter) -> Bool { lhs.path == rhs.path && lhs.client === rhs.client }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    private func value(_ name: String) -> DBusValue? {
        client.property(path, BlueZ.Interface.adapter, name)
    }

    /// The kernel's name for it, `hci0`.
    public var name: String { path.split(separator: "/").last.map(String.init) ?? path }
    public var address: BluetoothAddress? { value("Address")?.string.flatMap { try? BluetoothAddress($0) } }
    public var alias: String? { value("Alias")?.string }
    public var isPowered: Bool { value("Powered")?.bool ?? false }
    public var isDiscovering: Bool { value("Discovering")?.bool ?? false }
    /// Whether the adapter accepts pairing (bluetoothd sets it while an agent is registered).
    public var isPairable: Bool { value("Pairable")?.bool ?? false }
    /// Whether the adapter is still there.
    public var exists: Bool { client.properties(of: path, BlueZ.Interface.adapter) != nil }

    /// Turns the adapter on or off.
    public func setPowered(_ on: Bool) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.properties,
            "Set",
            [.string(BlueZ.Interface.adapter), .string("Powered"), .variant(.boolean(on))]
        )
    }

    /// Transport filter for discovery.
    public enum Transport: String, Sendable {
        case auto
        case bredr
        case le
    }

    /// Limits discovery to devices advertising one of `uuids` on `transport` (BlueZ merges the filters of all
    /// clients, so results must still be checked).
    public func setDiscoveryFilter(
        uuids: [BluetoothUUID],
        transport: Transport = .le,
        duplicateData: Bool = true
    ) async throws(BlueZError) {
        let filter: [String: DBusValue] = [
            "UUIDs": .strings(uuids.map(\.bluezString)),
            "Transport": .string(transport.rawValue),
            "DuplicateData": .boolean(duplicateData),
        ]
        _ = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.adapter,
            "SetDiscoveryFilter",
            [.propertyMap(filter)]
        )
    }

    public func startDiscovery() async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.adapter, "StartDiscovery")
    }

    public func stopDiscovery() async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.adapter, "StopDiscovery")
    }

    /// Removes a device and its bonding data.
    public func removeDevice(_ device: BluetoothDevice) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.adapter,
            "RemoveDevice",
            [.objectPath(device.path)]
        )
    }

    /// The devices bluetoothd knows on this adapter.
    public var devices: [BluetoothDevice] {
        client.paths(implementing: BlueZ.Interface.device, under: path).map {
            BluetoothDevice(client: client, path: $0)
        }
    }

    /// The known device with `address`, if any (found by its `Address` property, not by building a path).
    public func device(_ address: BluetoothAddress) -> BluetoothDevice? {
        devices.first { $0.address == address }
    }
}
