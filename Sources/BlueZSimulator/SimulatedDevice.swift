import DBus

/// bluetoothd's view of one sensor on one adapter.
struct SimulatedDevice: Sendable {
    let path: String
    let adapter: Int
    /// The sensor behind the address: the last to advertise it, when several claim one (an impostor).
    var sensor: Int
    let object: DBusObject
    var connected = false
    var connecting = false
    /// Disconnect() has taken the GATT client down (ServicesResolved false) and the link is going: as with
    /// bluetoothd, no notification reaches D-Bus any more.
    var disconnecting = false
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
    /// The 0x2A37 notify socket a client acquired (AcquireNotify), exclusive of every session above.
    var acquired: AcquiredSocket?
    /// Simulator seconds since when 0x2A37 notifications reach clients: the latest of the link coming up, the first
    /// session starting and the socket being acquired. A sensor sends nothing before it is subscribed, so a tick
    /// that fell due earlier and runs late (the simulator was slow) is not sent after the subscription.
    var notifyingSince = 0.0
    /// Clients with indications on the PMD control point, and with notifications on PMD data.
    var pmdControlSessions: Set<String> = []
    var pmdDataSessions: Set<String> = []
    /// The PMD measurements running, by type; the strap stops them when the link goes.
    var pmdStreams: [UInt8: PolarStream] = [:]

    /// Ends a client's notify sessions: on every characteristic (the client left), or on one (its StopNotify).
    mutating func dropSessions(of client: String, only kind: BlueZSimulator.Characteristic? = nil) {
        func drop(_ sessions: inout Set<String>, _ object: DBusObject?, _ which: BlueZSimulator.Characteristic) {
            guard kind == nil || kind == which, sessions.remove(client) != nil, sessions.isEmpty else { return }
            object?.setProperty(BlueZSimulator.characteristicInterface, "Notifying", .boolean(false))
        }
        drop(&heartRateSessions, gatt?.measurement, .measurement)
        drop(&batterySessions, gatt?.battery, .battery)
        drop(&pmdControlSessions, gatt?.pmd?.controlPoint, .pmdControlPoint)
        drop(&pmdDataSessions, gatt?.pmd?.data, .pmdData)
    }
}

extension BlueZSimulator {
    static let deviceInterface = "org.bluez.Device1"
    static let batteryInterface = "org.bluez.Battery1"

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
            "AdvertisingFlags": .bytes([0x06]),
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
                    DBusProperty("AdvertisingFlags", .array(.byte)),
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
        // bluetoothd answers Connect() on a connected device with success and no signal.
        guard !device.connected else { return }
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
        // As bluetoothd does, Connect() returns once the link is up; GATT discovery finishes a little later.
        let weakSelf = WeakSimulator(self)
        Task {
            try? await Task.sleep(for: .milliseconds(60))
            await weakSelf.value?.resolveServices(path)
        }
    }

    func establish(_ path: String) {
        guard let device = devices[path] else { return }
        devices[path]?.connected = true
        devices[path]?.lastSeen = now
        devices[path]?.notifyingSince = now
        sensors[device.sensor].connectedVia = path
        devices[path]?.object.setProperties(
            Self.deviceInterface,
            ["Connected": .boolean(true)],
            announce: !scenario.quietConnected
        )
    }

    func resolveServices(_ path: String) {
        guard let device = devices[path], device.connected, let connection else { return }
        var changes: [String: DBusValue?] = [
            "UUIDs": .strings(sensors[device.sensor].serviceUUIDs), "ServicesResolved": .boolean(true),
        ]
        // bluetoothd reads the GAP name while resolving and shows it in the same signal; an alias the user set
        // (one that differs from the name) stays.
        if let gapName = sensors[device.sensor].spec.gapName,
            let name = device.object.property(Self.deviceInterface, "Name"), name != .string(gapName)
        {
            changes["Name"] = .string(gapName)
            if device.object.property(Self.deviceInterface, "Alias") == name { changes["Alias"] = .string(gapName) }
        }
        // A new GATT database is announced after ServicesResolved, in bluetoothd's next main-loop turns (or
        // before, as bluetoothd also does), and kept across disconnects (BlueZ's GATT cache). Battery1 comes last.
        // A device without the Heart Rate service (the keyboard) resolves with no GATT objects played.
        guard sensors[device.sensor].spec.model.isHeartRateSensor else {
            setDevice(path, changes)
            return
        }
        guard device.gatt == nil else {
            setDevice(path, changes)
            addBattery(path)
            return
        }
        let spec = sensors[device.sensor].spec
        let gatt = makeGatt(devicePath: path, mtu: UInt16(spec.effectiveMTU), pmd: spec.pmd != nil)
        devices[path]?.gatt = gatt
        if scenario.gattObjectsBeforeResolved {
            gatt.export(on: connection)
            setDevice(path, changes)
            addBattery(path)
            return
        }
        setDevice(path, changes)
        let weakSelf = WeakSimulator(self)
        Task {
            try? await Task.sleep(for: .milliseconds(40))
            guard let simulator = weakSelf.value else { return }
            await simulator.announce(gatt, of: path)
        }
    }

    private func announce(_ gatt: SimulatedGatt, of path: String) {
        guard let connection, devices[path]?.gatt?.measurement === gatt.measurement, !gattWithheld else { return }
        gatt.export(on: connection)
        addBattery(path)
    }

    /// bluetoothd's battery plugin reads 0x2A19 and shows it on the device while connected.
    private func addBattery(_ path: String) {
        guard let device = devices[path], device.connected else { return }
        device.object.addInterface(
            DBusInterface(
                Self.batteryInterface,
                properties: [DBusProperty("Percentage", .byte), DBusProperty("Source", .string)]
            ),
            values: [
                "Percentage": .byte(sensors[device.sensor].battery), "Source": .string("GATT Battery Service"),
            ]
        )
    }

    /// A clean disconnect: Battery1 goes, then ServicesResolved false, the reply, then Connected false.
    func disconnectCall(_ path: String) async throws(DBusError) {
        guard let device = devices[path] else { throw SimError.doesNotExist }
        guard device.connected else { throw SimError.notConnected }
        device.object.removeInterface(Self.batteryInterface)
        try? await Task.sleep(for: .milliseconds(50))
        devices[path]?.disconnecting = true
        releaseAcquired(path)
        setDevice(path, ["ServicesResolved": .boolean(false)])
        let weakSelf = WeakSimulator(self)
        Task { await weakSelf.value?.linkLost(path, byUser: true) }
    }

    /// Ends a connection. A link loss announces ServicesResolved and Connected false in one signal. GATT objects
    /// and notify sessions stay (bluetoothd caches the database and resumes notifications on reconnect).
    func linkLost(_ path: String, byUser: Bool = false) {
        guard let device = devices[path], device.connected else { return }
        // Unlike a notify session, an acquired socket does not outlive the link.
        releaseAcquired(path)
        device.object.removeInterface(Self.batteryInterface)
        devices[path]?.connected = false
        devices[path]?.disconnecting = false
        // The strap forgets its measurements with the link: a client starts them again after reconnecting.
        devices[path]?.pmdStreams = [:]
        devices[path]?.lastSeen = now
        if byUser { devices[path]?.userDisconnected = true }
        if sensors[device.sensor].connectedVia == path { sensors[device.sensor].connectedVia = nil }
        setDevice(path, ["ServicesResolved": .boolean(false), "Connected": .boolean(false)])
    }

    /// What the kernel's auto-connect list does for devices a registered `GattProfile1` asks for: connect as
    /// soon as the sensor advertises again.
    func autoConnect(sensor index: Int) {
        let wanted = Set(applications.values.flatMap { $0 })
        guard !wanted.isDisjoint(with: sensors[index].advertisedUUIDs) else { return }
        let address = sensors[index].address
        for (path, device) in devices
        where sensors[device.sensor].address == address && !device.connected && !device.userDisconnected {
            guard isPowered(device.adapter), sensors[index].connectedVia == nil,
                !sensors[index].behaviour.isOutOfRange(at: now)
            else { continue }
            // Whoever advertised the address last is the one the controller connects to.
            devices[path]?.sensor = index
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
        guard agents[client] != nil || defaultAgent != nil else {
            // Seen with bluetoothd 5.66: with no agent anywhere, pairing fails and the link drops.
            try? await Task.sleep(for: .milliseconds(50))
            linkLost(path)
            throw SimError.make("AuthenticationFailed", "Authentication Failed")
        }
        try? await Task.sleep(for: .milliseconds(50))
        // Just Works started by Pair(): bluetoothd accepts it without asking the pairing client's agent (the
        // call is the user's consent; BlueZ ≥ 5.55, device_confirm_passkey). The other side may ask its own.
        if scenario.mirrorPairing {
            try await askPeripheralSide(pairing: path)
        }
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
