import BlueZ
import Foundation
import HeartRateProfile

/// Finding the sensor to connect: among the devices bluetoothd knows, else by discovery, on every adapter allowed.
extension HeartRateSensor {
    /// The adapters this sensor may use: the configured one, or every powered adapter.
    func allowedAdapters() throws(BlueZError) -> [Adapter] {
        try client.poweredAdapters(named: options.adapter)
    }

    /// Where the auto-connect profile is registered: the adapter the chosen sensor is on, else the first allowed.
    func profileAdapter() throws(BlueZError) -> Adapter {
        let adapters = try allowedAdapters()
        if let chosen = address,
            let adapter = adapters.first(where: { $0.device(chosen) != nil })
        {
            return adapter
        }
        return adapters[0]
    }

    /// The device to connect: known to bluetoothd already on one of `adapters`, or found by discovery filtered to
    /// 0x180D on all of them at once.
    func findDevice(on adapters: [Adapter]) async throws(BlueZError) -> BluetoothDevice {
        if let device = knownDevice(on: adapters) { return device }
        report(.searching(adapters: adapters.map(\.name)))
        let appeared = client.events(under: adapters.count == 1 ? adapters[0].path : nil) {
            !$0.isCharacteristicValue
        }
        var discovering: [Adapter] = []
        var refusal: BlueZError?
        for adapter in adapters {
            do {
                try await Self.startDiscovery(on: adapter)
                discovering.append(adapter)
            } catch {
                refusal = refusal ?? error
            }
        }
        // One adapter that can search is enough; the others' refusals matter only when none could.
        if discovering.isEmpty, let refusal { throw refusal }
        let found = await firstMatchingDevice(on: adapters, appeared)
        for adapter in discovering { try? await adapter.stopDiscovery() }
        guard let found else {
            throw BlueZError(
                .doesNotExist,
                "no sensor matching \(target) found within \(options.discoveryTimeout) on "
                    + "\(adapters.map(\.name).joined(separator: ", ")): wake it (wear it, wet the electrodes) and "
                    + "check it with 'systole scan'"
            )
        }
        return found
    }

    /// Discovery filtered to the Heart Rate service over LE.
    private static func startDiscovery(on adapter: Adapter) async throws(BlueZError) {
        try await adapter.setDiscoveryFilter(uuids: [.heartRateService], transport: .le)
        do {
            try await adapter.startDiscovery()
        } catch {
            // InProgress: our own session is still running (e.g. after a cancelled attempt).
            guard error.kind == .inProgress else { throw error }
        }
    }

    /// Waits up to the discovery timeout for the target to show up.
    private func firstMatchingDevice(
        on adapters: [Adapter],
        _ events: AsyncStream<BlueZEvent>
    ) async -> BluetoothDevice? {
        let timeout = options.discoveryTimeout
        return await withTaskGroup(of: BluetoothDevice?.self) { group in
            group.addTask {
                if let device = self.knownDevice(on: adapters) { return device }
                for await _ in events {
                    if let device = self.knownDevice(on: adapters) { return device }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let found = await group.next() ?? nil
            group.cancelAll()
            return found
        }
    }

    /// The target among the devices bluetoothd knows on `adapters`. Filters are merged between clients, so the
    /// UUID is checked.
    ///
    /// For "any", a connected sensor comes first, then a paired one, then one with an RSSI (advertising now), then
    /// any other heart-rate sensor bluetoothd knows: some controllers report no RSSI at all, and bluetoothd forgets
    /// an unpaired device it discovered soon after discovery stops (`TemporaryTimeout`, 30 s), so one it still
    /// knows was seen a moment ago.
    func knownDevice(on adapters: [Adapter]) -> BluetoothDevice? {
        let devices = adapters.flatMap(\.devices)
        if let chosen = address { return Self.best(devices.filter { $0.address == chosen }).first }
        let preferred = Self.best(devices.filter(\.isHeartRateSensor))
        guard let claims = options.claims else { return preferred.first }
        // Among the sensors no other entry has or is configured with; the choice is claimed at once, so another
        // "any" sensor looking at the same moment takes a different one.
        guard let claimed = claims.claimFirst(of: preferred.compactMap(\.address), for: ObjectIdentifier(self)) else {
            return nil
        }
        state.withLock { $0.chosen = claimed }
        return preferred.first { $0.address == claimed }
    }

    /// `devices` in the order they are worth trying: connected, paired, advertising (with an RSSI), the rest; the
    /// order of `devices` (adapter, then path) within each.
    private static func best(_ devices: [BluetoothDevice]) -> [BluetoothDevice] {
        func rank(_ device: BluetoothDevice) -> Int {
            if device.isConnected { return 0 }
            if device.isPaired { return 1 }
            return device.rssi != nil ? 2 : 3
        }
        return devices.enumerated().sorted { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }.map(
            \.element
        )
    }
}
