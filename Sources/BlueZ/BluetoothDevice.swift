import DBus
import HeartRateProfile
import SafeText

/// A remote device (`org.bluez.Device1`). A value identity: properties are read from the client's cache.
public struct BluetoothDevice: Sendable, Hashable {
    public let client: BlueZClient
    /// The object path, `/org/bluez/hci0/dev_A0_9E_1A_12_34_56`.
    public let path: String

    public init(client: BlueZClient, path: String) {
        self.client = client
        self.path = path
    }

    public static func == (lhs: BluetoothDevice, rhs: BluetoothDevice) -> Bool {
        lhs.path == rhs.path && lhs.client === rhs.client
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(path) }

    private func value(_ name: String) -> DBusValue? {
        client.property(path, BlueZ.Interface.device, name)
    }

    /// Whether bluetoothd still has this device.
    public var exists: Bool { client.properties(of: path, BlueZ.Interface.device) != nil }
    public var address: BluetoothAddress? { value("Address")?.string.flatMap { try? BluetoothAddress($0) } }
    /// `public` or `random`.
    public var addressType: String? { value("AddressType")?.string }
    /// The name the device advertises, if it sent one, cleaned (``UntrustedText``).
    public var name: String? { value("Name")?.string.map(UntrustedText.clean) }
    /// The name to show: the user's alias, else the name, else the address (as BlueZ fills it), cleaned.
    public var alias: String? { value("Alias")?.string.map(UntrustedText.clean) }
    /// Signal strength in dBm; only present while discovery sees the device (127, HCI's "not available", is
    /// reported as nil).
    public var rssi: Int16? {
        guard let rssi = value("RSSI")?.int64, rssi != 127 else { return nil }
        return Int16(clamping: rssi)
    }
    /// Service UUIDs the device advertised or offers.
    public var uuids: [BluetoothUUID] { (value("UUIDs")?.strings ?? []).compactMap(BluetoothUUID.init) }
    /// Manufacturer data by company identifier.
    public var manufacturerData: [UInt16: [UInt8]] {
        var result: [UInt16: [UInt8]] = [:]
        for entry in value("ManufacturerData")?.dictionaryEntries ?? [] {
            guard let id = entry.key.int64, let key = UInt16(exactly: id) else { continue }
            result[key] = entry.value.bytes ?? []
        }
        return result
    }
    /// The maker named by the manufacturer data's company identifier (libbluetooth's table), if any.
    public var manufacturerName: String? {
        manufacturerData.keys.sorted().lazy.compactMap { CompanyIdentifier(rawValue: $0).name }.first
    }
    /// Whether the link is up: `Connected`, or `ServicesResolved` (true only on a live link). bluetoothd can leave
    /// `Connected` false on a link it made (5.66 does after a device was removed and found again: it logs "Device …
    /// is already connected" and never announces it; bluez/bluez#2485 is the same on later versions).
    public var isConnected: Bool { value("Connected")?.bool == true || servicesResolved }
    /// Whether GATT discovery finished: GATT objects exist only after this becomes true.
    public var servicesResolved: Bool { value("ServicesResolved")?.bool ?? false }
    public var isPaired: Bool { value("Paired")?.bool ?? false }
    public var isBonded: Bool { value("Bonded")?.bool ?? false }
    public var isTrusted: Bool { value("Trusted")?.bool ?? false }
    /// The adapter's path.
    public var adapterPath: String? { value("Adapter")?.string }

    /// Whether the device offers the Heart Rate service.
    public var isHeartRateSensor: Bool { uuids.contains(.heartRateService) }

    // MARK: Methods

    /// Connects (returns when connected; GATT services may still be resolving).
    public func connect(timeout: Duration = .seconds(25)) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.device, "Connect", timeout: timeout)
    }

    public func disconnect() async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.device, "Disconnect")
    }

    /// Pairs, through the calling client's agent or the default agent.
    public func pair(timeout: Duration = .seconds(60)) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.device, "Pair", timeout: timeout)
    }

    public func cancelPairing() async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(path, BlueZ.Interface.device, "CancelPairing")
    }

    /// Trusted devices stay on bluetoothd's auto-connect list.
    public func setTrusted(_ trusted: Bool) async throws(BlueZError) {
        _ = try await client.connection.callBlueZ(
            path,
            BlueZ.Interface.properties,
            "Set",
            [.string(BlueZ.Interface.device), .string("Trusted"), .variant(.boolean(trusted))]
        )
    }

    /// Removes the device (and its bonding data) from its adapter.
    public func remove() async throws(BlueZError) {
        guard let adapterPath else {
            throw BlueZError(.doesNotExist, "\(path) is not known to bluetoothd")
        }
        try await Adapter(client: client, path: adapterPath).removeDevice(self)
    }

    // MARK: GATT

    /// The characteristic with `uuid` in the service with `service`, found by UUID in the cache (never by a
    /// handle-derived path, which changes between devices and firmware versions).
    public func characteristic(_ uuid: BluetoothUUID, in service: BluetoothUUID) -> GattCharacteristic? {
        let services = client.paths(implementing: BlueZ.Interface.gattService, under: path).filter {
            client.property($0, BlueZ.Interface.gattService, "UUID")?.string.flatMap(BluetoothUUID.init) == service
        }
        for servicePath in services {
            for candidate in client.paths(implementing: BlueZ.Interface.gattCharacteristic, under: servicePath) {
                let characteristic = GattCharacteristic(client: client, path: candidate)
                if characteristic.uuid == uuid { return characteristic }
            }
        }
        return nil
    }
}
