import DBus
import HeartRateProfile

/// An adapter's state and its exported object.
struct SimulatedAdapter: Sendable {
    let index: Int
    let object: DBusObject
    /// Discovery sessions: client unique name → its filter.
    var discoveryClients: [String: DiscoveryFilter] = [:]
    var pendingFilters: [String: DiscoveryFilter] = [:]
    var lastRSSI: [Int: Double] = [:]
    /// When each sensor's RSSI was last announced (simulator seconds).
    var lastRSSIReport: [Int: Double] = [:]

    var name: String { "hci\(index)" }
    var path: String { "/org/bluez/hci\(index)" }
    var isDiscovering: Bool { !discoveryClients.isEmpty }
}

/// One client's `SetDiscoveryFilter`.
struct DiscoveryFilter: Sendable, Equatable {
    var uuids: [String] = []
    var transport = "auto"

    /// Whether a sensor advertising `advertised` passes (an LE sensor passes every transport but bredr).
    func accepts(_ advertised: [String]) -> Bool {
        guard transport != "bredr" else { return false }
        return uuids.isEmpty || uuids.contains { advertised.contains($0) }
    }
}

/// `org.bluez.Error.*` replies, with the messages bluetoothd uses.
enum SimError {
    static func make(_ kind: String, _ message: String) -> DBusError {
        DBusError(name: "org.bluez.Error." + kind, message: message)
    }
    static let notReady = make("NotReady", "Resource Not Ready")
    static let inProgress = make("InProgress", "Operation already in progress")
    static let alreadyExists = make("AlreadyExists", "Already Exists")
    static let doesNotExist = make("DoesNotExist", "Does Not Exist")
    static let notConnected = make("NotConnected", "Not Connected")
    static let notSupported = make("NotSupported", "Operation is not supported")
    static func invalidArguments(_ message: String = "Invalid arguments in method call") -> DBusError {
        make("InvalidArguments", message)
    }
    static func failed(_ message: String) -> DBusError { make("Failed", message) }
}

extension BlueZSimulator {
    static let adapterInterface = "org.bluez.Adapter1"

    func adapterAddress(_ index: Int) -> String {
        scenario.adapters[index].address?.uppercased() ?? String(format: "00:AA:01:%02X:00:%02X", index, index + 1)
    }

    func makeAdapter(_ index: Int) -> SimulatedAdapter {
        let spec = scenario.adapters[index]
        let object = DBusObject(path: "/org/bluez/hci\(index)")
        let weakSelf = WeakSimulator(self)
        let path = object.path
        object.addInterface(
            DBusInterface(
                Self.adapterInterface,
                methods: [
                    DBusMethod("StartDiscovery") { call throws(DBusError) in
                        try await weakSelf.get().startDiscovery(adapter: index, client: call.sender)
                        return []
                    },
                    DBusMethod("StopDiscovery") { call throws(DBusError) in
                        try await weakSelf.get().stopDiscoveryCall(adapter: index, client: call.sender)
                        return []
                    },
                    DBusMethod(
                        "SetDiscoveryFilter",
                        inputs: [("properties", .array(.dictEntry(key: .string, value: .variant)))]
                    ) {
                        call throws(DBusError) in
                        try await weakSelf.get().setDiscoveryFilter(
                            adapter: index,
                            client: call.sender,
                            call.arguments[0]
                        )
                        return []
                    },
                    DBusMethod("RemoveDevice", inputs: [("device", .objectPath)]) { call throws(DBusError) in
                        try await weakSelf.get().removeDeviceCall(adapter: index, path: call.arguments[0].string ?? "")
                        return []
                    },
                    DBusMethod("GetDiscoveryFilters", outputs: [("filters", .array(.string))]) { _ in
                        [
                            .strings([
                                "UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern",
                            ])
                        ]
                    },
                ],
                properties: [
                    DBusProperty("Address", .string),
                    DBusProperty("AddressType", .string),
                    DBusProperty("Name", .string),
                    DBusProperty("Alias", .string, access: .readwrite),
                    DBusProperty("Class", .uint32),
                    DBusProperty("Powered", .boolean, access: .readwrite) { value throws(DBusError) in
                        await weakSelf.value?.poweredWillChange(adapter: index, to: value.bool ?? false)
                    },
                    DBusProperty("PowerState", .string),
                    DBusProperty("Discoverable", .boolean, access: .readwrite),
                    DBusProperty("DiscoverableTimeout", .uint32, access: .readwrite),
                    DBusProperty("Pairable", .boolean, access: .readwrite),
                    DBusProperty("PairableTimeout", .uint32, access: .readwrite),
                    DBusProperty("Discovering", .boolean),
                    DBusProperty("UUIDs", .array(.string)),
                    DBusProperty("Modalias", .string),
                    DBusProperty("Roles", .array(.string)),
                ]
            ),
            values: [
                "Address": .string(adapterAddress(index)),
                "AddressType": .string("public"),
                "Name": .string("systole-sim"),
                "Alias": .string(spec.alias ?? "systole-sim"),
                "Class": .uint32(0),
                "Powered": .boolean(spec.powered),
                "PowerState": .string(spec.powered ? "on" : "off"),
                "Discoverable": .boolean(false),
                "DiscoverableTimeout": .uint32(180),
                "Pairable": .boolean(!agents.isEmpty),
                "PairableTimeout": .uint32(0),
                "Discovering": .boolean(false),
                "UUIDs": .strings([
                    "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
                    "0000180a-0000-1000-8000-00805f9b34fb",
                ]),
                "Modalias": .string("usb:v1D6Bp0246d0542"),
                "Roles": .strings(["central", "peripheral"]),
            ]
        )
        object.addInterface(makeGattManager(adapter: index, path: path))
        Self.addPluginInterfaces(to: object)
        return SimulatedAdapter(index: index, object: object)
    }

    func isPowered(_ adapter: Int) -> Bool {
        adapters.indices.contains(adapter)
            && adapters[adapter].object.property(Self.adapterInterface, "Powered")?.bool == true
    }

    func poweredWillChange(adapter: Int, to powered: Bool) {
        guard !powered, adapters.indices.contains(adapter) else { return }
        // Powering off ends discovery and every connection on the adapter.
        for client in adapters[adapter].discoveryClients.keys { stopDiscovery(adapter: adapter, client: client) }
        for (path, device) in devices where device.adapter == adapter && device.connected { linkLost(path) }
    }

    // MARK: Discovery

    func setDiscoveryFilter(adapter: Int, client: String, _ value: DBusValue) throws(DBusError) {
        guard let map = value.propertyMap else { throw SimError.invalidArguments() }
        var filter = DiscoveryFilter()
        for (key, entry) in map {
            switch key {
            case "UUIDs":
                guard let uuids = entry.strings else { throw SimError.invalidArguments() }
                filter.uuids = try uuids.map { uuid throws(DBusError) in try Self.normalisedUUID(uuid) }
            case "Transport":
                guard let transport = entry.string, ["auto", "bredr", "le"].contains(transport) else {
                    throw SimError.invalidArguments()
                }
                filter.transport = transport
            case "RSSI", "Pathloss", "DuplicateData", "Discoverable", "Pattern":
                continue
            default:
                throw SimError.invalidArguments()
            }
        }
        if adapters[adapter].discoveryClients[client] != nil {
            adapters[adapter].discoveryClients[client] = filter
        } else {
            adapters[adapter].pendingFilters[client] = filter
        }
    }

    /// A UUID in BlueZ's 128-bit lower-case form; 16- and 32-bit forms are expanded.
    static func normalisedUUID(_ text: String) throws(DBusError) -> String {
        // BluetoothUUID parses 16- and 128-bit forms; BlueZ also takes 32-bit ones, which sit on the same base.
        let expanded = text.count == 8 ? text + "-0000-1000-8000-00805f9b34fb" : text
        guard let uuid = BluetoothUUID(expanded) else { throw SimError.invalidArguments() }
        return uuid.bluezString
    }

    func startDiscovery(adapter: Int, client: String) throws(DBusError) {
        guard isPowered(adapter) else { throw SimError.notReady }
        guard adapters[adapter].discoveryClients[client] == nil else { throw SimError.inProgress }
        let filter = adapters[adapter].pendingFilters.removeValue(forKey: client) ?? DiscoveryFilter()
        let wasDiscovering = adapters[adapter].isDiscovering
        adapters[adapter].discoveryClients[client] = filter
        if !wasDiscovering {
            adapters[adapter].object.setProperty(Self.adapterInterface, "Discovering", .boolean(true))
        }
        discoveryTick(adapter: adapter, time: now)
    }

    func stopDiscoveryCall(adapter: Int, client: String) throws(DBusError) {
        guard isPowered(adapter) else { throw SimError.notReady }
        guard adapters[adapter].discoveryClients[client] != nil else { throw SimError.failed("No discovery started") }
        stopDiscovery(adapter: adapter, client: client)
    }

    func stopDiscovery(adapter: Int, client: String) {
        guard adapters.indices.contains(adapter),
            adapters[adapter].discoveryClients.removeValue(forKey: client) != nil,
            !adapters[adapter].isDiscovering
        else { return }
        adapters[adapter].object.setProperty(Self.adapterInterface, "Discovering", .boolean(false))
        // RSSI is only meaningful while discovery sees the device; BlueZ drops the property.
        for (path, device) in devices where device.adapter == adapter {
            device.object.setProperty(Self.deviceInterface, "RSSI", nil)
            devices[path]?.lastSeen = now
        }
        adapters[adapter].lastRSSI = [:]
        adapters[adapter].lastRSSIReport = [:]
    }

    /// Reports sensors in range that pass any client's filter (BlueZ merges filters; clients must re-check).
    func discoveryTick(adapter: Int, time: Double) {
        let filters = Array(adapters[adapter].discoveryClients.values)
        let spec = scenario.adapters[adapter]
        guard spec.seesSensors else { return }
        for sensor in sensors where sensor.inRange && sensor.connectedVia == nil {
            guard filters.contains(where: { $0.accepts(sensor.advertisedUUIDs) }) else { continue }
            let path = devicePath(adapter: adapter, sensor: sensor.index)
            devices[path]?.lastSeen = time
            // bluetoothd announces RSSI about once a second while discovering, even when it did not change.
            if devices[path] != nil, let last = adapters[adapter].lastRSSIReport[sensor.index], time - last < 1 {
                continue
            }
            adapters[adapter].lastRSSIReport[sensor.index] = time
            // RSSI moves a few dB per report, as it does for a strap worn a couple of metres away.
            let previous = adapters[adapter].lastRSSI[sensor.index] ?? Double(-55 - (sensor.index * 7) % 30)
            let rssi = max(-100, min(-30, previous + Double.random(in: -3...3, using: &airRandom)))
            adapters[adapter].lastRSSI[sensor.index] = rssi
            if devices[path] == nil {
                addDevice(
                    sensor: sensor.index,
                    adapter: adapter,
                    paired: false,
                    rssi: spec.reportsRSSI ? Int16(rssi) : nil
                )
            } else if let device = devices[path], device.sensor != sensor.index, !device.connected {
                // Another device advertising the same address (an impostor): bluetoothd keeps one object per
                // address and takes the name and data of the latest advertisement; a Connect() reaches this one.
                devices[path]?.sensor = sensor.index
                var changes: [String: DBusValue?] = [
                    "RSSI": spec.reportsRSSI ? .int16(Int16(rssi)) : nil, "Name": .string(sensor.name),
                    "ManufacturerData": .dictionary(
                        key: .uint16,
                        value: .variant,
                        [(.uint16(sensor.spec.model.companyID), .variant(.bytes([0x00, UInt8(sensor.index & 0xFF)])))]
                    ),
                ]
                if device.object.property(Self.deviceInterface, "Alias")
                    == device.object.property(Self.deviceInterface, "Name")
                {
                    changes["Alias"] = .string(sensor.name)
                }
                device.object.setProperties(Self.deviceInterface, changes, emitUnchanged: true)
            } else if spec.reportsRSSI {
                devices[path]?.object.setProperties(
                    Self.deviceInterface,
                    ["RSSI": .int16(Int16(rssi))],
                    emitUnchanged: true
                )
            }
        }
    }

    func removeDeviceCall(adapter: Int, path: String) throws(DBusError) {
        guard let device = devices[path], device.adapter == adapter else { throw SimError.doesNotExist }
        if device.connected { linkLost(path, byUser: true) }
        sensors[device.sensor].bonded = false
        removeDevice(path)
    }

    func removeStaleTemporaryDevices(time: Double) {
        for (path, device) in devices where !device.paired && !device.trusted && !device.connected {
            let discovering = adapters.indices.contains(device.adapter) && adapters[device.adapter].isDiscovering
            if !discovering, time - device.lastSeen > scenario.temporaryTimeout { removeDevice(path) }
        }
    }
}

/// Lets exported-object handlers (which outlive nothing) reach the simulator without keeping it alive.
final class WeakSimulator: Sendable {
    nonisolated(unsafe) weak var value: BlueZSimulator?
    init(_ value: BlueZSimulator) { self.value = value }

    func get() throws(DBusError) -> BlueZSimulator {
        guard let value else { throw DBusError(.disconnected, "the simulator stopped") }
        return value
    }
}
