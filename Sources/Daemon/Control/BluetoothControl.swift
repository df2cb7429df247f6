import BlueZ
import ControlAPI
import DBus
import Foundation
import HeartRateSensors
import Recording
import SafeText

/// The sensors and the radio: the sensors systoled watches, a scan for heart-rate sensors nearby, pairing and
/// forgetting one (sensors only: other devices are not systoled's to pair).
struct BluetoothControl: ControlMethods {
    let client: BlueZClient
    let sensors: SensorManager
    /// The adapter `[bluetooth] adapter` names; nil for every powered one.
    let adapter: String?

    func addMethods(to methods: inout [DBusMethod]) {
        let map = DBusType.propertyMap
        methods += [
            DBusMethod("ListSensors", outputs: [("sensors", .array(map))]) { _ in
                [Self.sensorsValue(self.sensors)]
            },
            DBusMethod("Scan", inputs: [("seconds", .double)], outputs: [("devices", .array(map))]) {
                call throws(DBusError) in try await self.scan(call)
            },
            DBusMethod("Pair", inputs: [("address", .string)]) { call throws(DBusError) in
                try await self.pair(call)
            },
            DBusMethod("Forget", inputs: [("address", .string)]) { call throws(DBusError) in
                try await self.forget(call)
            },
        ]
    }

    /// The `Sensors` property: every configured sensor's status.
    static func sensorsValue(_ sensors: SensorManager) -> DBusValue {
        .array(.propertyMap, sensors.sensors.map { .propertyMap(values(of: $0)) })
    }

    static func values(of status: SensorStatus) -> [String: DBusValue] {
        var values: [String: DBusValue] = [
            "state": .string(status.state),
            "connected": .boolean(status.isConnected),
        ]
        values["address"] = status.address.map(DBusValue.string)
        values["name"] = status.name.map(DBusValue.string)
        values["athlete"] = status.athlete.map(DBusValue.string)
        values["manufacturer"] = status.manufacturer.map(DBusValue.string)
        values["battery"] = status.batteryPercent.map { .byte(UInt8(clamping: $0)) }
        values["location"] = status.bodyLocation.map(DBusValue.string)
        values["contact"] = status.contact.map(DBusValue.string)
        values["bpm"] = status.lastHeartRate.map { .uint32(UInt32(clamping: $0)) }
        values["lastReading"] = status.lastReadingDate.map { .double($0.timeIntervalSince1970) }
        values["malformed"] = .uint32(UInt32(clamping: status.rejected.malformed))
        values["outOfRange"] = .uint32(UInt32(clamping: status.rejected.outOfRange))
        values["excessBeats"] = .uint32(UInt32(clamping: status.rejected.excessBeats))
        values["throttled"] = .uint32(UInt32(clamping: status.rejected.throttled))
        values["notify"] = status.notify.map(DBusValue.string)
        values["notifyFallback"] = status.notifyFallback.map(DBusValue.string)
        values["ecg"] = status.ecg.map(DBusValue.string)
        return values
    }

    private func bluetooth<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch let error as BlueZError {
            throw DBusError(name: ControlAPI.ErrorName.bluetooth, message: error.description)
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.bluetooth, message: "\(error)")
        }
    }

    private func scan(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let seconds = try call.argument(0, "seconds").double ?? 5
        guard seconds > 0, seconds <= 60 else {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "scan for 0 to 60 seconds")
        }
        let devices = try await bluetooth { () async throws -> [(BluetoothDevice, Adapter)] in
            let adapters = try client.poweredAdapters(named: adapter)
            // A sensor still searching may have discovery running already on this connection; then it is
            // shared, and left running for the sensor.
            var started: [Adapter] = []
            var refusal: (any Error)?
            for adapter in adapters {
                do {
                    try await adapter.setDiscoveryFilter(uuids: [.heartRateService])
                    try await adapter.startDiscovery()
                    started.append(adapter)
                } catch let error as BlueZError where error.kind == .inProgress {
                    continue
                } catch {
                    refusal = refusal ?? error
                }
            }
            if started.isEmpty, adapters.allSatisfy({ !$0.isDiscovering }), let refusal { throw refusal }
            try? await Task.sleep(for: .seconds(seconds))
            // Read before stopping: bluetoothd drops a device's RSSI when discovery stops.
            let found = adapters.flatMap { adapter in
                adapter.devices.filter { $0.uuids.contains(.heartRateService) }.map { ($0, adapter) }
            }
            for adapter in started { try? await adapter.stopDiscovery() }
            return found
        }
        let map = DBusType.propertyMap
        return [
            .array(
                map,
                devices.map { device, adapter in
                    var values: [String: DBusValue] = [
                        "paired": .boolean(device.isPaired),
                        "connected": .boolean(device.isConnected),
                        "adapter": .string(adapter.name),
                    ]
                    values["address"] = device.address.map { .string($0.description) }
                    values["name"] = device.alias.map(DBusValue.string)
                    values["manufacturer"] = device.manufacturerName.map(DBusValue.string)
                    values["rssi"] = device.rssi.map { .int16($0) }
                    return .propertyMap(values)
                }
            )
        ]
    }

    private func device(_ call: DBusMethodCall) throws(DBusError) -> BluetoothDevice {
        let text = try ControlCall.text(call, 0, "an address")
        guard let address = try? BluetoothAddress(text) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(text.quotedExcerpt()) is not a Bluetooth address (like A0:9E:1A:12:34:56)"
            )
        }
        guard let device = client.devices.first(where: { $0.address == address }) else {
            throw DBusError(
                name: ControlAPI.ErrorName.notFound,
                message: "bluetoothd does not know \(address): wake the sensor and run 'systole scan' first"
            )
        }
        // Only sensors: pairing or forgetting a headset or keyboard is not systoled's to do.
        guard device.isHeartRateSensor || sensors.isConfigured(address) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message:
                    "\(address) (\(device.alias?.quotedExcerpt() ?? "unnamed")) is not a heart-rate sensor: it offers no Heart "
                    + "Rate service (0x180D) and is not in systoled's sensors; systole pairs and forgets sensors only "
                    + "(use bluetoothctl or your desktop's Bluetooth settings for other devices, or add its address "
                    + "to sensors in systoled.toml if it is a sensor)"
            )
        }
        return device
    }

    private func pair(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let device = try device(call)
        try await bluetooth {
            if !device.isPaired {
                do {
                    try await sensors.pair(device)
                } catch {
                    // The sensor manager may be pairing the same sensor (earbuds ask for it): wait for that.
                    guard let refusal = error as? BlueZError,
                        refusal.kind == .inProgress || refusal.kind == .alreadyExists
                    else { throw error }
                    for _ in 0..<200 where !device.isPaired { try await Task.sleep(for: .milliseconds(100)) }
                    guard device.isPaired else { throw error }
                }
            }
            try await device.setTrusted(true)
        }
        return []
    }

    private func forget(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let device = try device(call)
        try await bluetooth { try await device.remove() }
        return []
    }
}
