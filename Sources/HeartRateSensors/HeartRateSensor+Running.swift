import BlueZ
import DBus
import Foundation
import HeartRateProfile
import Synchronization

/// Running the sensor: the driver of ``SensorConnection``, and the steps its actions name (finding, connecting,
/// resolving services, pairing, waiting to reconnect).
extension HeartRateSensor {
    /// Keeps the sensor connected until the task is cancelled; then tells the delegate it stopped. Each step is one
    /// of ``SensorConnection``'s actions, and how it went is the machine's next event.
    public func run() async {
        defer {
            options.claims?.release(ObjectIdentifier(self))
            if let route = state.withLock({ $0.standingRoute?.route }) { client.connection.removeRoute(route) }
            delegate.sensorDidStop(self)
        }
        var machine = SensorConnection(
            initialReconnectDelay: options.initialReconnectDelay,
            maximumReconnectDelay: options.maximumReconnectDelay,
            pairsWhenRequired: options.pairsWhenRequired,
            generation: client.serviceGeneration
        )
        var link: Link?
        var profile: ProfileRegistration?
        var action = machine.start()
        while true {
            if Task.isCancelled, action != .stop { action = machine.cancelled() }
            do {
                switch action {
                case .stop:
                    if link?.subscription != nil { endSubscription() }
                    return
                case .reconnect(let reason, let attempt, let delay, let endsSubscription):
                    if endsSubscription { endSubscription() }
                    link = nil
                    report(.disconnected(reason: reason))
                    if Task.isCancelled { continue }
                    report(.waitingToReconnect(attempt: attempt, delay: delay))
                    await waitBeforeReconnecting(delay)
                    action = machine.waited()
                case .find:
                    try await registerAutoConnectProfile(&profile)
                    let found = try await find()
                    link = found
                    action = machine.found(found.address, isConnected: found.device.isConnected)
                default:
                    guard var current = link else { throw BlueZError(.doesNotExist, "the device vanished") }
                    action = try await perform(action, on: &current, &machine)
                    link = current
                }
            } catch is CancellationError {
                action = machine.cancelled()
            } catch {
                action = machine.failed("\(error)", generation: client.serviceGeneration)
            }
        }
    }

    /// What one connection has found and set up so far.
    struct Link {
        var device: BluetoothDevice
        var address: BluetoothAddress
        var adapter: Adapter
        /// The device's events, listened to from before connecting so that ServicesResolved is not missed.
        var events: AsyncStream<BlueZEvent>
        var measurement: GattCharacteristic?
        /// When notifications were first asked for on this connection: none of them was sent before.
        var asked: ContinuousClock.Instant?
        var onValue: (@Sendable (GattNotification) -> Void)?
        var subscription: NotifySubscription?
    }

    /// The adapter and bluetoothd a `GattProfile1` registration was made with.
    struct ProfileRegistration: Equatable {
        var adapter: String
        var generation: Int
    }

    /// Registers the auto-connect profile, again after bluetoothd restarted (a registration lives as long as the
    /// bluetoothd it was made with).
    private func registerAutoConnectProfile(_ registered: inout ProfileRegistration?) async throws {
        guard options.registersAutoConnectProfile, client.isServiceRunning else { return }
        let current = ProfileRegistration(adapter: try profileAdapter().path, generation: client.serviceGeneration)
        guard registered != current else { return }
        let application = GattProfileApplication(root: "/org/systole/gatt/sensor\(Self.nextID())")
        try? await application.register(on: Adapter(client: client, path: current.adapter))
        registered = current
    }

    /// Finds the sensor, says who it is, and listens to it from now on.
    private func find() async throws -> Link {
        let device = try await findDevice(on: try allowedAdapters())
        guard let address = device.address, let adapterPath = device.adapterPath else {
            throw BlueZError(.doesNotExist, "the device vanished")
        }
        let adapter = Adapter(client: client, path: adapterPath)
        state.withLock { $0.chosen = address }
        emit(.identified(address: address, name: device.alias, manufacturer: device.manufacturerName))
        if adapter.isDiscovering {
            // Connecting while discovering is unreliable on some controllers; our own session may be running.
            try? await adapter.stopDiscovery()
        }
        // Its GATT objects' values (the notifications themselves) are left out: nothing here reads them.
        let events = client.events(under: device.path) { !$0.isCharacteristicValue }
        return Link(device: device, address: address, adapter: adapter, events: events)
    }

    /// Does what `action` names on the connection `link` and tells `machine` how it went.
    private func perform(
        _ action: SensorConnection.Action,
        on link: inout Link,
        _ machine: inout SensorConnection
    ) async throws -> SensorConnection.Action {
        switch action {
        case .connect(let address):
            report(.connecting(address, adapter: link.adapter.name))
            try await link.device.connect()
            return machine.connected()
        case .resolveServices:
            report(.resolvingServices)
            try await waitForServices(link.device, link.events)
            guard let measurement = link.device.characteristic(.heartRateMeasurement, in: .heartRateService) else {
                throw BlueZError(
                    .notSupported,
                    "\(link.address) has no Heart Rate Measurement characteristic (0x2A37): it is not a heart-rate "
                        + "sensor; find one with 'systole scan'"
                )
            }
            link.measurement = measurement
            return machine.servicesResolved(wanted: options.notifyOverrides[link.address] ?? options.notify)
        case .subscribe(let method, let fallbackReason):
            return try await subscribe(method, fallbackReason: fallbackReason, on: &link, &machine)
        case .pair:
            report(.pairing)
            if let agent = options.agent {
                try await agent.pair(link.device)
            } else {
                try await link.device.pair()
            }
            return machine.paired()
        case .stream(let firstOfConnection):
            return try await stream(firstOfConnection: firstOfConnection, on: link, &machine)
        case .subscribeAfterRelease(let fallbackReason):
            guard let measurement = link.measurement else { throw BlueZError(.doesNotExist, "the device vanished") }
            link.subscription = try await subscribeAfterRelease(
                measurement,
                link.device,
                address: link.address,
                fallbackReason: fallbackReason
            )
            return machine.subscribed()
        case .find, .reconnect, .stop:
            return action
        }
    }

    /// Asks for `link`'s notifications by `method`; a refusal goes to `machine`, which decides what follows it.
    private func subscribe(
        _ method: NotifyMethod,
        fallbackReason: String?,
        on link: inout Link,
        _ machine: inout SensorConnection
    ) async throws -> SensorConnection.Action {
        guard let measurement = link.measurement else { throw BlueZError(.doesNotExist, "the device vanished") }
        let asked = link.asked ?? .now
        let onValue = link.onValue ?? notificationHandler(address: link.address, device: link.device)
        link.asked = asked
        link.onValue = onValue
        do {
            link.subscription = try await subscribe(
                measurement,
                method,
                fallbackReason: fallbackReason,
                asked: asked,
                onValue: onValue
            )
            return machine.subscribed()
        } catch {
            return machine.subscribeRefused(Self.refusal(error, of: link.device), generation: client.serviceGeneration)
        }
    }

    /// Streams until the link drops or the acquired path fails; a connection's first stream reads its static
    /// values and counts it.
    private func stream(
        firstOfConnection: Bool,
        on link: Link,
        _ machine: inout SensorConnection
    ) async throws -> SensorConnection.Action {
        guard let subscription = link.subscription else { throw BlueZError(.notConnected, "not subscribed") }
        if firstOfConnection {
            state.withLock { $0.connections += 1 }
            await readStaticValues(link.device)
            report(.streaming)
        }
        let failure = try await stream(
            subscription,
            device: link.device,
            address: link.address,
            deviceEvents: link.events
        )
        if let failure { return machine.acquiredPathFailed(failure) }
        return machine.streamEnded(generation: client.serviceGeneration)
    }

    /// What arrives after a subscribed connection ends belongs to the next one. An attempt that failed before
    /// subscribing leaves alone what arrived meanwhile: bluetoothd may have connected the sensor by itself and
    /// resumed the session while this attempt's own Connect() was still failing.
    private func endSubscription() {
        state.withLock { shared in
            shared.onValue = nil
            shared.onReadComplete = nil
            shared.early = []
        }
    }

    private static let ids = Atomic<Int>(0)
    private static func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }

    /// Sleeps `delay`, but returns at once when bluetoothd (re)appears or the sensor connects on its own.
    private func waitBeforeReconnecting(_ delay: Duration) async {
        let events = client.events { !$0.isCharacteristicValue }
        let client = client
        let chosen = address
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask {
                for await event in events {
                    switch event {
                    case .serviceStarted: return
                    // bluetoothd 5.66 does not always signal Connected; ServicesResolved always follows a connect.
                    case .propertiesChanged(let change)
                    where change.interface == BlueZ.Interface.device
                        && (change.changed["Connected"]?.bool == true
                            || change.changed["ServicesResolved"]?.bool == true):
                        if let chosen, BluetoothDevice(client: client, path: change.path).address == chosen { return }
                    default: continue
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Waits for ServicesResolved and then for 0x2A37 to be in the cache: bluetoothd 5.66 signals
    /// ServicesResolved before it announces the GATT objects (InterfacesAdded follows in the same burst). A device
    /// whose services resolved without 0x2A37 gets ``Options/gattObjectsGrace`` before the session gives up on it.
    private func waitForServices(_ device: BluetoothDevice, _ events: AsyncStream<BlueZEvent>) async throws {
        let hasMeasurement: @Sendable () -> Bool = {
            device.characteristic(.heartRateMeasurement, in: .heartRateService) != nil
        }
        if device.servicesResolved && hasMeasurement() { return }
        let timeout = options.servicesTimeout
        let grace = options.gattObjectsGrace
        let resolved = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { resolved.continuation.finish() }
                if device.servicesResolved { resolved.continuation.yield() }
                for await event in events {
                    switch event {
                    case .propertiesChanged(let change) where change.path == device.path:
                        if change.changed["ServicesResolved"]?.bool == true { resolved.continuation.yield() }
                        if change.changed["Connected"]?.bool == false {
                            throw BlueZError(
                                .connectionAttemptFailed,
                                "the sensor disconnected before its services resolved"
                            )
                        }
                    case .serviceStopped, .serviceStarted:
                        throw BlueZError(.disconnected, "bluetoothd restarted")
                    default:
                        break
                    }
                    if device.servicesResolved && hasMeasurement() { return }
                }
            }
            group.addTask {
                // Once resolved, the objects are due at once; without 0x2A37 after the grace the caller decides.
                for await _ in resolved.stream {
                    try await Task.sleep(for: grace)
                    return
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw BlueZError(.timeout, "services were not resolved within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func readStaticValues(_ device: BluetoothDevice) async {
        if let location = device.characteristic(.bodySensorLocation, in: .heartRateService),
            let bytes = try? await location.readValue(), let value = try? BodySensorLocation(decoding: bytes)
        {
            emit(.bodySensorLocation(value))
        }
        if let battery = device.characteristic(.batteryLevel, in: .batteryService),
            let bytes = try? await battery.readValue(), let value = try? BatteryLevel(decoding: bytes)
        {
            emit(.batteryLevel(value))
        }
    }

    /// Handles notifications until the link drops, watching for silence meanwhile. Returns why the acquired path
}
