import DBus
import HeartRateProfile

/// A GATT application holding one `org.bluez.GattProfile1` for the given services, registered with an adapter's
/// `GattManager1`: bluetoothd then keeps known devices offering those services on the kernel's auto-connect
/// list and connects them whenever they advertise.
public final class GattProfileApplication: Sendable {
    public static let defaultRoot = "/org/systole/gatt"

    /// The application root (it exports `ObjectManager`).
    public let root: String
    public let uuids: [BluetoothUUID]

    public init(root: String = GattProfileApplication.defaultRoot, uuids: [BluetoothUUID] = [.heartRateService]) {
        self.root = root
        self.uuids = uuids
    }

    private var profilePath: String { root + "/profile0" }

    /// Exports the application and registers it with `adapter`.
    public func register(on adapter: Adapter) async throws(BlueZError) {
        let connection = adapter.client.connection
        let profile = DBusObject(path: profilePath)
        profile.addInterface(
            DBusInterface(
                BlueZ.Interface.gattProfile,
                methods: [DBusMethod("Release") { _ in [] }],
                properties: [DBusProperty("UUIDs", .array(.string))]
            ),
            values: ["UUIDs": .strings(uuids.map(\.bluezString))]
        )
        connection.addObjectManager(at: root)
        connection.export(profile)
        _ = try await connection.callBlueZ(
            adapter.path,
            BlueZ.Interface.gattManager,
            "RegisterApplication",
            [.objectPath(root), .propertyMap([:])]
        )
    }

    /// Unregisters the application (best effort) and removes its objects.
    public func unregister(from adapter: Adapter) async {
        let connection = adapter.client.connection
        _ = try? await connection.callBlueZ(
            adapter.path,
            BlueZ.Interface.gattManager,
            "UnregisterApplication",
            [.objectPath(root)]
        )
        connection.unexport(path: profilePath)
    }
}
