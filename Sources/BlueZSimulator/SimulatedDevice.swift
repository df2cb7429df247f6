import DBus

/// bluetoothd's view of one sensor on one adapter.
struct SimulatedDevice: Sendable {
    let path: String
    let adapter: Int
    let sensor: Int
    let object: DBusObject
    var connected = false
    var connecting = false
    var pairing = false
    var paired: Bool
    var trusted = false
    /// Disconnect() was called: no automatic reconnection until the next Connect().
    var userDisconnected = false
    /// Seconds (simulator time) the device was last seen advertising or connected.
    var lastSeen: Double
    var gatt: SimulatedGatt?
    /// Clients with a notify session on 0x2A37 / 0x2A19.
    var heartRateSessions: Set<String> = []
    var batterySessions: Set<String> = []

    mutating func dropSessions(of client: String) {
        if heartRateSessions.remove(client) != nil, heartRateSessions.isEmpty {
            gatt?.measurement.setProperty(BlueZSimulator.characteristicInterface, "Notifying", .boolean(false))
        }
        if batterySessions.remove(client) != nil, batterySessions.isEmpty {
            gatt?.battery.setProperty(BlueZSimulator.characteristicInterface, "Notifying", .boolean(false))
        }
    }
}

extension BlueZSimulator {
    static let deviceInterface = "org.bluez.Device1"

    func devicePath(adapter: Int, sensor: Int) -> String {
        "/org/bluez/hci\(adapter)/dev_" + sensors[sensor].address.replacingOccurrences(of: ":", with: "_")
    }

    /// Exports a device (announced with `InterfacesAdded`), as found by discovery or loaded as paired.
    func addDevice(sensor index: Int, adapter: Int, paired: Bool, rssi: Int16? = nil) {
        let path = devicePath(adapter: adapter, sensor: index)
        guard devices[path] == nil, let connection else { return }
        let sensor = sensors[index]
        let object = DBusObject(path: path)
        let weakSelf = WeakSimulator(self)
        var values: [String: DBusValue] = [
            "Address": .string(sensor.address),
            "AddressType": .string(sensor.spec.model.addressType),
            "Name": .string(sensor.name),
            "Alias": .string(sensor.name),
            "Appearance": .uint16(sensor.spec.model.appearance),
            "Paired": .boolean(paired),
            "Bonded": .boolean(paired),
            "Trusted": .boolean(false),
            "Blocked": .boolean(false),
            "LegacyPairing": .boolean(false),
            "Connected": .boolean(false),
            "UUIDs": .strings(sensor.advertisedUUIDs),
            "Adapter": .objectPath("/org/bluez/hci\(adapter)"),
            "ManufacturerData": .dictionary(
                key: .uint16,
                value: .variant,
                [(.uint16(sensor.spec.model.companyID), .variant(.bytes([0x00, UInt8(index & 0xFF)])))]
            ),
            "ServicesResolved": .boolean(false),
        ]
        if let rssi { values["RSSI"] = .int16(rssi) }
        object.addInterface(
            DBusInterface(
                Self.deviceInterface,
                methods: [
                    DBusMethod("Connect") { _ throws(DBusError) in
                        try await weakSelf.get().connect(path)
                        return []
                    },
                    DBusMethod("Disconnect") { _ throws(DBusError) in
                        try await weakSelf.get().disconnectCall(path)
                        return []
                    },
                    DBusMethod("Pair") { call throws(DBusError) in
                        try await weakSelf.get().pair(path, client: call.sender)
                        return []
                    },
                    DBusMethod("CancelPairing") { _ throws(DBusError) in
                        try await weakSelf.get().cancelPairing(path)
                        return []
                    },
                    DBusMethod("ConnectProfile", inputs: [("UUID", .string)]) { _ throws(DBusError) in
                        throw SimError.notSupported
                    },
                    DBusMethod("DisconnectProfile", inputs: [("UUID", .string)]) { _ throws(DBusError) in
                        throw SimError.notSupported
                    },
                ],
                properties: [
                    DBusProperty("Address", .string),
                    DBusProperty("AddressType", .string),
                    DBusProperty("Name", .string),
                    DBusProperty("Alias", .string, access: .readwrite),
                    DBusProperty("Appearance", .uint16),
                    DBusProperty("Paired", .boolean),
                    DBusProperty("Bonded", .boolean),
                    DBusProperty("Trusted", .boolean, access: .readwrite) { value throws(DBusError) in
                        await weakSelf.value?.trustedWillChange(path, to: value.bool ?? false)
                    },
                    DBusProperty("Blocked", .boolean, access: .readwrite),
                    DBusProperty("LegacyPairing", .boolean),
                    DBusProperty("RSSI", .int16),
                    DBusProperty("Connected", .boolean),
                    DBusProperty("UUIDs", .array(.string)),
                    DBusProperty("Adapter", .objectPath),
                    DBusProperty("ManufacturerData", .array(.dictEntry(key: .uint16, value: .variant))),
                    DBusProperty("ServicesResolved", .boolean),
                ]
            ),
            values: values
        )
        devices[path] = SimulatedDevice(
            path: path,
            adapter: adapter,
            sensor: index,
            object: object,
            paired: paired,
            lastSeen: now
        )
        connection.export(object)
    }

    func removeDevice(_ path: String) {
        guard let device = devices.removeValue(forKey: path) else { return }
        if let gatt = device.gatt { gatt.unexport(from: connection) }
        connection?.unexport(path: path)
    }

    func trustedWillChange(_ path: String, to trusted: Bool) {
        devices[path]?.trusted = trusted
    }

    private func setDevice(_ path: String, _ changes: [String: DBusValue?]) {
        devices[path]?.object.setProperties(Self.deviceInterface, changes)
    }

    // MARK: Connecting

    func connect(_ path: String) async throws(DBusError) {
        guard let device = devices[path] else { throw SimError.doesNotExist }
        guard isPowered(device.adapter) else { throw SimError.notReady }
        guard !device.connected else { throw SimError.make("AlreadyConnected", "Already Connected") }
        guard !device.connecting else { throw SimError.inProgress }
        devices[path]?.connecting = true
        devices[path]?.userDisconnected = false
        defer { devices[path]?.connecting = false }
        guard sensors[device.sensor].inRange, sensors[device.sensor].connectedVia == nil else {
            // An LE connection to a device that does not answer is abandoned by the host after a while.
            try? await Task.sleep(for: .seconds(scenario.connectTimeout))
            throw SimError.failed("le-connection-abort-by-local")
        }
        try? await Task.sleep(for: .milliseconds(30))
        guard devices[path] != nil, isRunning else { throw SimError.doesNotExist }
        establish(path)
        // GATT discovery takes a little while; Connect() returns once services are resolved.
        try? await Task.sleep(for: .milliseconds(60))
        resolveServices(path)
    }

    func establish(_ path: String) {
        guard let device = devices[path] else { return }
        devices[path]?.connected = true
        devices[path]?.lastSeen = now
        sensors[device.sensor].connectedVia = path
        setDevice(path, ["Connected": .boolean(true)])
    }

    func resolveServices(_ path: String) {
        guard let device = devices[path], device.connected, let connection else { return }
        if device.gatt == nil {
            let gatt = makeGatt(devicePath: path)
            devices[path]?.gatt = gatt
            gatt.export(on: connection)
        }
        setDevice(path, ["ServicesResolved": .boolean(true)])
    }

    func disconnectCall(_ path: String) throws(DBusError) {
        guard let device = devices[path] else { throw SimError.doesNotExist }
        guard device.connected else { throw SimError.notConnected }
        linkLost(path, byUser: true)
    }

    /// Ends a connection: services unresolved, GATT objects of an unbonded device removed (a bonded device's
    /// are cached and its notify sessions kept), then `Connected` false.
    func linkLost(_ path: String, byUser: Bool = false) {
        guard let device = devices[path], device.connected else { return }
        setDevice(path, ["ServicesResolved": .boolean(false)])
        if !device.paired, let gatt = device.gatt {
            gatt.unexport(from: connection)
            devices[path]?.gatt = nil
            devices[path]?.heartRateSessions = []
            devices[path]?.batterySessions = []
        }
        devices[path]?.connected = false
        devices[path]?.lastSeen = now
        if byUser { devices[path]?.userDisconnected = true }
        if sensors[device.sensor].connectedVia == path { sensors[device.sensor].connectedVia = nil }
        setDevice(path, ["Connected": .boolean(false)])
    }

    /// What the kernel's auto-connect list does for devices a registered `GattProfile1` asks for: connect as
    /// soon as the sensor advertises again.
    func autoConnect(sensor index: Int) {
        let wanted = Set(applications.values.flatMap { $0 })
        guard !wanted.isDisjoint(with: sensors[index].advertisedUUIDs) else { return }
        for (path, device) in devices where device.sensor == index && !device.connected && !device.userDisconnected {
            guard isPowered(device.adapter), sensors[index].connectedVia == nil else { continue }
            establish(path)
            resolveServices(path)
            return
        }
    }

    // MARK: Pairing

    func pair(_ path: String, client: String) async throws(DBusError) {
        guard let device = devices[path] else { throw SimError.doesNotExist }
        guard !device.paired else { throw SimError.alreadyExists }
        guard !device.pairing else { throw SimError.inProgress }
        guard sensors[device.sensor].inRange else {
            try? await Task.sleep(for: .seconds(scenario.connectTimeout))
            throw SimError.make("ConnectionAttemptFailed", "Page Timeout")
        }
        devices[path]?.pairing = true
        defer { devices[path]?.pairing = false }
        if !device.connected {
            establish(path)
            resolveServices(path)
        }
        try await authorizePairing(path, client: client)
        try? await Task.sleep(for: .milliseconds(50))
        guard devices[path]?.pairing == true else {
            throw SimError.make("AuthenticationCanceled", "Authentication Canceled")
        }
        devices[path]?.paired = true
        sensors[device.sensor].bonded = true
        setDevice(path, ["Paired": .boolean(true), "Bonded": .boolean(true)])
    }

    func cancelPairing(_ path: String) throws(DBusError) {
        guard devices[path]?.pairing == true else { throw SimError.doesNotExist }
        devices[path]?.pairing = false
    }
}
