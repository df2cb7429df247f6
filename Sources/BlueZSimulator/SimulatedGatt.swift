import DBus
import HeartRateProfile
import PolarMeasurementData

/// The GATT objects bluetoothd exports for a connected heart-rate sensor: Generic Attribute (0x1801 with Service
/// Changed, 0x2A05 indicate), Device Information (0x180A with the manufacturer name, 0x2A29 read), the Heart Rate
/// service (0x180D with 0x2A37 notify, 0x2A38 read, 0x2A39 write) and the Battery service (0x180F with 0x2A19
/// read + notify), at paths named after attribute handles as BlueZ names them. bluetoothd keeps Generic Access
/// (0x1800) to itself, as it does for every device.
struct SimulatedGatt: Sendable {
    let genericAttribute: DBusObject
    let serviceChanged: DBusObject
    let serviceChangedCCC: DBusObject
    let deviceInformation: DBusObject
    let manufacturerName: DBusObject
    let heartRateService: DBusObject
    let measurement: DBusObject
    let measurementCCC: DBusObject
    let location: DBusObject
    let controlPoint: DBusObject
    let batteryService: DBusObject
    let battery: DBusObject
    let batteryCCC: DBusObject
    /// Polar's Measurement Data service, on a strap that has it.
    var pmd: SimulatedPMDGatt?

    var all: [DBusObject] {
        [
            genericAttribute, serviceChanged, serviceChangedCCC, deviceInformation, manufacturerName,
            heartRateService, measurement, measurementCCC, location, controlPoint, batteryService, battery, batteryCCC,
        ] + (pmd?.all ?? [])
    }

    func export(on connection: DBusConnection) {
        for object in all { connection.export(object) }
    }

    func unexport(from connection: DBusConnection?) {
        for object in all.reversed() { connection?.unexport(path: object.path) }
    }
}

extension BlueZSimulator {
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let descriptorInterface = "org.bluez.GattDescriptor1"

    static func uuid(_ short: UInt16) -> String { BluetoothUUID(short).bluezString }

    enum Characteristic: Sendable {
        case serviceChanged
        case manufacturerName
        case measurement
        case location
        case controlPoint
        case battery
        case pmdControlPoint
        case pmdData
    }

    func makeGatt(devicePath: String, mtu: UInt16, pmd: Bool) -> SimulatedGatt {
        let weakSelf = WeakSimulator(self)
        func service(_ handle: String, _ uuid: String) -> DBusObject {
            let object = DBusObject(path: "\(devicePath)/service\(handle)")
            object.addInterface(
                DBusInterface(
                    Self.serviceInterface,
                    properties: [
                        DBusProperty("UUID", .string), DBusProperty("Device", .objectPath),
                        DBusProperty("Primary", .boolean), DBusProperty("Includes", .array(.objectPath)),
                    ]
                ),
                values: [
                    "UUID": .string(uuid), "Device": .objectPath(devicePath), "Primary": .boolean(true),
                    "Includes": .objectPaths([]),
                ]
            )
            return object
        }
        func characteristic(
            _ service: DBusObject,
            _ handle: String,
            _ uuid: String,
            _ kind: Characteristic,
            flags: [String]
        ) -> DBusObject {
            let path = "\(service.path)/char\(handle)"
            let object = DBusObject(path: path)
            let notifies = flags.contains("notify") || flags.contains("indicate")
            var values: [String: DBusValue] = [
                "UUID": .string(uuid), "Service": .objectPath(service.path), "Value": .bytes([]),
                "Flags": .strings(flags), "MTU": .uint16(mtu),
            ]
            var properties = [
                DBusProperty("UUID", .string), DBusProperty("Service", .objectPath),
                DBusProperty("Value", .array(.byte)), DBusProperty("Flags", .array(.string)),
                DBusProperty("MTU", .uint16),
            ]
            if notifies {
                values["Notifying"] = .boolean(false)
                values["NotifyAcquired"] = .boolean(false)
                properties += [DBusProperty("Notifying", .boolean), DBusProperty("NotifyAcquired", .boolean)]
            }
            let options = DBusType.array(.dictEntry(key: .string, value: .variant))
            object.addInterface(
                DBusInterface(
                    Self.characteristicInterface,
                    methods: [
                        DBusMethod("ReadValue", inputs: [("options", options)], outputs: [("value", .array(.byte))]) {
                            _ throws(DBusError) in
                            [.bytes(try await weakSelf.get().readValue(devicePath, kind, flags: flags))]
                        },
                        DBusMethod("WriteValue", inputs: [("value", .array(.byte)), ("options", options)]) {
                            call throws(DBusError) in
                            try await weakSelf.get().writeValue(
                                devicePath,
                                kind,
                                call.arguments[0].bytes ?? [],
                                flags: flags
                            )
                            return []
                        },
                        DBusMethod("StartNotify") { call throws(DBusError) in
                            try await weakSelf.get().startNotify(devicePath, kind, client: call.sender, flags: flags)
                            return []
                        },
                        DBusMethod("StopNotify") { call throws(DBusError) in
                            try await weakSelf.get().stopNotify(devicePath, kind, client: call.sender)
                            return []
                        },
                        DBusMethod(
                            "AcquireNotify",
                            inputs: [("options", options)],
                            outputs: [("fd", .unixFD), ("mtu", .uint16)]
                        ) { call throws(DBusError) in
                            try await weakSelf.get().acquireNotify(devicePath, kind, client: call.sender, flags: flags)
                        },
                    ],
                    properties: properties
                ),
                values: values
            )
            return object
        }
        func clientConfiguration(_ characteristic: DBusObject, _ handle: String) -> DBusObject {
            let object = DBusObject(path: "\(characteristic.path)/desc\(handle)")
            object.addInterface(
                DBusInterface(
                    Self.descriptorInterface,
                    properties: [
                        DBusProperty("UUID", .string), DBusProperty("Characteristic", .objectPath),
                        DBusProperty("Value", .array(.byte)),
                    ]
                ),
                values: [
                    "UUID": .string(Self.uuid(0x2902)), "Characteristic": .objectPath(characteristic.path),
                    "Value": .bytes([]),
                ]
            )
            return object
        }
        let genericAttribute = service("0001", Self.uuid(0x1801))
        let serviceChanged = characteristic(
            genericAttribute,
            "0002",
            Self.uuid(0x2A05),
            .serviceChanged,
            flags: ["indicate"]
        )
        let deviceInformation = service("0005", Self.uuid(0x180A))
        let heartRate = service("000a", Self.uuid(0x180D))
        let measurement = characteristic(heartRate, "000b", Self.uuid(0x2A37), .measurement, flags: ["notify"])
        let location = characteristic(heartRate, "000e", Self.uuid(0x2A38), .location, flags: ["read"])
        let controlPoint = characteristic(heartRate, "0010", Self.uuid(0x2A39), .controlPoint, flags: ["write"])
        let batteryService = service("0012", Self.uuid(0x180F))
        let battery = characteristic(batteryService, "0013", Self.uuid(0x2A19), .battery, flags: ["read", "notify"])
        var pmdGatt: SimulatedPMDGatt?
        if pmd {
            let pmdService = service("0016", PMDService.serviceUUID)
            let pmdControlPoint = characteristic(
                pmdService,
                "0017",
                PMDService.controlPointUUID,
                .pmdControlPoint,
                flags: ["read", "write", "indicate"]
            )
            let pmdData = characteristic(pmdService, "001a", PMDService.dataUUID, .pmdData, flags: ["notify"])
            pmdGatt = SimulatedPMDGatt(
                service: pmdService,
                controlPoint: pmdControlPoint,
                controlPointCCC: clientConfiguration(pmdControlPoint, "0019"),
                data: pmdData,
                dataCCC: clientConfiguration(pmdData, "001c")
            )
        }
        return SimulatedGatt(
            genericAttribute: genericAttribute,
            serviceChanged: serviceChanged,
            serviceChangedCCC: clientConfiguration(serviceChanged, "0004"),
            deviceInformation: deviceInformation,
            manufacturerName: characteristic(
                deviceInformation,
                "0006",
                Self.uuid(0x2A29),
                .manufacturerName,
                flags: ["read"]
            ),
            heartRateService: heartRate,
            measurement: measurement,
            measurementCCC: clientConfiguration(measurement, "000d"),
            location: location,
            controlPoint: controlPoint,
            batteryService: batteryService,
            battery: battery,
            batteryCCC: clientConfiguration(battery, "0015"),
            pmd: pmdGatt
        )
    }

    func connectedDevice(_ path: String) throws(DBusError) -> SimulatedDevice {
        guard let device = devices[path], device.connected, device.gatt != nil else {
            throw SimError.failed("Not connected")
        }
        return device
    }

    private func object(_ gatt: SimulatedGatt, _ kind: Characteristic) -> DBusObject {
        switch kind {
        case .serviceChanged: gatt.serviceChanged
        case .manufacturerName: gatt.manufacturerName
        case .measurement: gatt.measurement
        case .location: gatt.location
        case .controlPoint: gatt.controlPoint
        case .battery: gatt.battery
        case .pmdControlPoint: gatt.pmd?.controlPoint ?? gatt.controlPoint
        case .pmdData: gatt.pmd?.data ?? gatt.controlPoint
        }
    }

    func readValue(_ path: String, _ kind: Characteristic, flags: [String]) throws(DBusError) -> [UInt8] {
        let device = try connectedDevice(path)
        guard flags.contains("read") else { throw SimError.notSupported }
        if kind == .pmdControlPoint { return try readPMDFeatures(path) }
        let sensor = sensors[device.sensor]
        let value: [UInt8] =
            switch kind {
            case .battery: [sensor.battery]
            case .manufacturerName: Array(sensor.spec.model.manufacturerName.utf8)
            default: [sensor.spec.model.bodySensorLocation]
            }
        object(device.gatt!, kind).setProperty(Self.characteristicInterface, "Value", .bytes(value))
        return value
    }

    func writeValue(_ path: String, _ kind: Characteristic, _ bytes: [UInt8], flags: [String]) throws(DBusError) {
        let device = try connectedDevice(path)
        guard flags.contains("write") else { throw SimError.notSupported }
        if kind == .pmdControlPoint { return try writePMDCommand(path, bytes) }
        // The control point knows one command, Reset Energy Expended (0x01); anything else is ATT error 0x80.
        guard bytes == [0x01] else { throw SimError.failed("Operation failed with ATT error: 0x80") }
        sensors[device.sensor].behaviour.resetEnergyExpended()
    }

    func startNotify(_ path: String, _ kind: Characteristic, client: String, flags: [String]) throws(DBusError) {
        guard flags.contains("notify") || flags.contains("indicate") else { throw SimError.notSupported }
        if kind == .pmdControlPoint || kind == .pmdData { return try startPMDNotify(path, kind, client: client) }
        // Service Changed never fires here (the database does not change): its session is accepted and idle.
        guard kind == .measurement || kind == .battery else {
            _ = try connectedDevice(path)
            return
        }
        if let device = devices[path], !device.connected,
            (kind == .measurement ? device.heartRateSessions : device.batterySessions).contains(client)
        {
            // The session survives the disconnect and resumes by itself.
            throw SimError.make("InProgress", "In Progress")
        }
        let device = try connectedDevice(path)
        let sensor = sensors[device.sensor]
        if sensor.requiresPairing, !device.paired {
            // The sensor answers the CCCD write with Insufficient Authentication; BlueZ reports it like this.
            throw SimError.make("NotPermitted", "Not paired")
        }
        if kind == .measurement {
            releaseIfHungUp(path)
            guard devices[path]?.acquired == nil else { throw SimError.make("NotPermitted", "Notify acquired") }
        }
        let sessions = kind == .measurement ? device.heartRateSessions : device.batterySessions
        // A second StartNotify from the same client succeeds without a signal.
        guard !sessions.contains(client) else { return }
        if kind == .measurement {
            if sessions.isEmpty { devices[path]?.notifyingSince = now }
            devices[path]?.heartRateSessions.insert(client)
        } else {
            devices[path]?.batterySessions.insert(client)
        }
        if sessions.isEmpty {
            object(device.gatt!, kind).setProperty(Self.characteristicInterface, "Notifying", .boolean(true))
        }
    }

    func stopNotify(_ path: String, _ kind: Characteristic, client: String) throws(DBusError) {
        let device = try connectedDevice(path)
        let sessions =
            switch kind {
            case .measurement: device.heartRateSessions
            case .pmdControlPoint: device.pmdControlSessions
            case .pmdData: device.pmdDataSessions
            default: device.batterySessions
            }
        guard sessions.contains(client) else {
            // A call from a client that has since left was sent before it left, so bluetoothd, which takes the bus
            // in order, answered it while the session still existed. Here the departure (NameOwnerChanged) and the
            // call reach the actor by separate tasks and the departure may come first: answer as bluetoothd did.
            if sessionsOfDepartedClients.contains(Self.sessionKey(client, path, kind)) { return }
            throw SimError.failed("No notify session started")
        }
        devices[path]?.dropSessions(of: client, only: kind)
    }
}
