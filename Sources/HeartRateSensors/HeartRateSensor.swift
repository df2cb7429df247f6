import BlueZ
import DBus
import Foundation
import HeartRateProfile
import Synchronization

/// Keeps one heart-rate sensor connected through BlueZ and reports its decoded measurements.
///
/// ``run()`` connects (stopping discovery first), waits for services, subscribes to 0x2A37, reads Body Sensor
/// Location and Battery Level, and yields readings with receive times and back-dated beats. When the link drops
/// or bluetoothd restarts it reconnects with capped exponential backoff, waking early when bluetoothd itself
/// reconnects the sensor (through the `GattProfile1` auto-connect registration). Every state change is an event.
/// Everything goes to its ``HeartRateSensorDelegate`` as it happens: a reading per notification, and the end of each
/// read.
public final class HeartRateSensor: Sendable {
    /// Tuning for connection handling.
    public struct Options: Sendable {
        /// The adapter to use (`hci1`); nil: every powered adapter (the sensor is looked for on all of them).
        public var adapter: String?
        /// First reconnect delay; doubled after each failed attempt up to ``maximumReconnectDelay``.
        public var initialReconnectDelay: Duration = .seconds(1)
        public var maximumReconnectDelay: Duration = .seconds(30)
        /// How long discovery may look for the sensor in one attempt.
        public var discoveryTimeout: Duration = .seconds(10)
        /// How long bluetoothd may take to resolve services after connecting.
        public var servicesTimeout: Duration = .seconds(20)
        /// How long after ServicesResolved the GATT objects may take to appear before a device without 0x2A37
        /// counts as not a heart-rate sensor.
        public var gattObjectsGrace: Duration = .seconds(2)
        /// A sensor silent for this many of its usual notification intervals is stale.
        public var staleIntervals: Double = 3
        /// Assumed interval before one has been measured.
        public var assumedInterval: Duration = .seconds(2)
        /// Pair when the sensor refuses notifications to an unpaired host (needs an agent, see ``PairingAgent``).
        public var pairsWhenRequired = true
        /// Register a `GattProfile1` for 0x180D so bluetoothd auto-connects the sensor when it advertises.
        public var registersAutoConnectProfile = true
        /// The agent that pairs (``PairingAgent/pair(_:timeout:)``: a window for this sensor alone); nil: a plain
        /// `Pair()`, answered by whatever agent bluetoothd picks.
        public var agent: PairingAgent?
        /// Shared with the other sensors of the same owner so that each keeps a different sensor (see
        /// ``SensorClaims``); nil: this sensor takes whichever matches, even one another sensor has.
        public var claims: SensorClaims?
        /// What the sensor may plausibly send; anything else is rejected (``HeartRateSensorEvent/rejected(_:count:detail:)``).
        public var limits = RadioLimits()
        /// How notifications should travel (``NotifyMethod``); with `acquire`, the sensor falls back to `signal` on
        /// its own when AcquireNotify is refused, not answered, stays silent or its socket breaks, and remembers
        /// that for the device until it is created again.
        public var notify = NotifyMethod.signal
        /// ``notify`` for particular sensors.
        public var notifyOverrides: [BluetoothAddress: NotifyMethod] = [:]
        /// How long bluetoothd may take to answer AcquireNotify.
        public var acquireTimeout: Duration = .seconds(10)
        /// An acquired socket that carries nothing for this long is given up for StartNotify: some sensors send
        /// their first notifications before bluetoothd is ready for them on this path, and some then send none.
        /// Two intervals of the slowest sensor known (earbuds notifying every 5 s).
        public var acquireFirstValueTimeout: Duration = .seconds(10)
        /// After the socket hangs up, how long the device has to report its disconnect before the hang-up counts as
        /// the socket failing while the device stayed connected.
        public var hangUpGrace: Duration = .seconds(2)

        public init(adapter: String? = nil) {
            self.adapter = adapter
        }
    }

    /// Counts since ``run()`` started.
    public struct Counters: Sendable, Hashable {
        public var notifications = 0
        public var malformed = 0
        public var connections = 0
        public var gaps = 0
    }

    public let client: BlueZClient
    public let target: SensorTarget
    public let options: Options
    /// Where everything the sensor reports goes.
    public let delegate: any HeartRateSensorDelegate
    let state: Mutex<SharedState>

    struct SharedState {
        var connections = 0
        var chosen: BluetoothAddress?
        /// Everything from a notification's bytes to a reading.
        var processor: HeartRateReadingProcessor
        var currentState: SensorConnectionState?
        /// Notifications are handled as they arrive once streaming has begun; those that come between StartNotify
        /// and then wait here, in order.
        var handlesNotifications = false
        var early: [GattNotification] = []
        /// The measurement's `Value` signals, routed from the first StartNotify for as long as the sensor runs:
        /// bluetoothd resumes a StartNotify session by itself when the link comes back, before this sensor has
        /// subscribed again, and what the strap sends meanwhile waits in `early` instead of being lost.
        var standingRoute: (path: String, route: DBusByteValueRoute)?
        /// Where the routed values go during a StartNotify session, and the end of each read; nil between sessions.
        var onValue: (@Sendable (GattNotification) -> Void)?
        var onReadComplete: (@Sendable () -> Void)?

        init(limits: RadioLimits) { processor = HeartRateReadingProcessor(limits: limits) }
    }

    /// A sensor that reports to `delegate` (``HeartRateSensorEventStream`` puts the events in a stream). The
    /// sensor holds the delegate until it is released itself.
    public init(
        client: BlueZClient,
        target: SensorTarget,
        options: Options = Options(),
        delegate: any HeartRateSensorDelegate
    ) {
        self.client = client
        self.target = target
        self.options = options
        self.delegate = delegate
        state = Mutex(SharedState(limits: options.limits))
        if case .address(let address) = target {
            state.withLock { $0.chosen = address }
            options.claims?.reserve(address)
        }
    }

    public var counters: Counters {
        state.withLock { shared in
            Counters(
                notifications: shared.processor.notifications,
                malformed: shared.processor.malformed,
                connections: shared.connections,
                gaps: shared.processor.gaps
            )
        }
    }
    /// The sensor's address once known.
    public var address: BluetoothAddress? { state.withLock { $0.chosen } }

    func emit(_ event: HeartRateSensorEvent) {
        delegate.sensor(self, didReport: event)
    }

    /// The readings of one read are all reported.
    func completeRead() {
        delegate.sensorDidCompleteRead(self)
    }

    func report(_ state: SensorConnectionState) {
        let changed = self.state.withLock { shared -> Bool in
            guard shared.currentState != state else { return false }
            shared.currentState = state
            return true
        }
        if changed { emit(.state(state)) }
    }

    // MARK: Running

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
                let refusal = Self.refusal(error, of: link.device)
                return machine.subscribeRefused(refusal, generation: client.serviceGeneration)
            }
        case .pair:
            report(.pairing)
            if let agent = options.agent {
                try await agent.pair(link.device)
            } else {
                try await link.device.pair()
            }
            return machine.paired()
        case .stream(let firstOfConnection):
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
    /// failed while the device stayed connected (the caller falls back to StartNotify), or nil.
    private func stream(
        _ subscription: NotifySubscription,
        device: BluetoothDevice,
        address: BluetoothAddress,
        deviceEvents: AsyncStream<BlueZEvent>
    ) async throws -> String? {
        let before = state.withLock { shared in
            shared.processor.newConnection(at: .now, listeningSince: subscription.asked)
            return shared.processor.notifications + shared.processor.malformed
        }
        startHandlingNotifications(address: address, device: device)
        defer { state.withLock { $0.handlesNotifications = false } }
        return try await withThrowingTaskGroup(of: String?.self) { group in
            let options = options
            let client = client
            let generation = client.serviceGeneration
            group.addTask {
                // Values are handled as they arrive (see subscribe); this waits for the session to end.
                do {
                    try await subscription.session.ended()
                } catch let ended as AcquiredNotificationsEnded {
                    // The socket hangs up when the device disconnects too; it only counts as broken when the
                    // device still says it is connected a moment later.
                    let deadline = ContinuousClock.now + options.hangUpGrace
                    while ContinuousClock.now < deadline {
                        if !device.isConnected || client.serviceGeneration != generation || !client.isServiceRunning {
                            return nil
                        }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    return "\(ended) while the sensor stayed connected"
                }
                return nil
            }
            if subscription.method == .acquire {
                group.addTask {
                    try await Task.sleep(for: options.acquireFirstValueTimeout)
                    let after = self.state.withLock { $0.processor.notifications + $0.processor.malformed }
                    // Something came: nothing more for this task to do until the session ends.
                    while after > before { try await Task.sleep(for: .seconds(3600)) }
                    return "no notification arrived over AcquireNotify within \(options.acquireFirstValueTimeout)"
                }
            }
            group.addTask {
                // bluetoothd keeps GATT objects when the link drops, so the device's own properties say it went.
                for await event in deviceEvents {
                    switch event {
                    case .propertiesChanged(let change)
                    where change.path == device.path
                        && (change.changed["Connected"]?.bool == false
                            || change.changed["ServicesResolved"]?.bool == false):
                        return nil
                    case .serviceStopped, .serviceStarted:
                        return nil
                    default:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                await self.watchForSilence()
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await group.next() ?? nil
            } catch let error as BlueZError where error.kind == .notConnected {
                // The characteristic went away with the connection: a disconnect, not a failure.
                return nil
            }
        }
    }

    func handle(
        _ notification: GattNotification,
        address: BluetoothAddress,
        device: BluetoothDevice
    ) {
        let outcome = state.withLock { $0.processor.process(notification, from: address) }
        if outcome.isResumed { report(.streaming) }
        for event in outcome.events { emit(event) }
        guard outcome.requestsEnergyReset else { return }
        // Looked up when needed: bluetoothd may announce 0x2A39 a moment after 0x2A37, when streaming began.
        guard let controlPoint = device.characteristic(.heartRateControlPoint, in: .heartRateService) else {
            // Not there (yet): the next saturated reading tries again.
            state.withLock { $0.processor.energyResetFailed() }
            return
        }
        // The write waits for bluetoothd; notifications go on being handled meanwhile.
        Task {
            do {
                try await controlPoint.writeValue([HeartRateControlPoint.resetEnergyExpended.rawValue])
                self.emit(.energyExpendedReset)
            } catch {
                self.state.withLock { $0.processor.energyResetFailed() }
            }
        }
    }

    /// Where silence checks fall due: every quarter of a second from the first sensor's start.
    private static let silenceCheckGrid = InstantGrid(step: .milliseconds(250))

    /// Reports the sensor stale when it stays silent for ``Options/staleIntervals`` usual intervals, until
    /// cancelled. Checked on the bus's loop thread when the deadline comes (``DBus/DBusConnection/runOnLoop(at:repeating:)``),
    /// which moves on with every notification: a streaming strap's check costs a wakeup of that thread every few
    /// seconds, or none while other notifications keep it awake.
    private func watchForSilence() async {
        let options = options
        let timer = client.connection.runOnLoop(at: .now) { [weak self] in
            guard let self else { return nil }
            let (becameStale, deadline) = self.state.withLock {
                $0.processor.checkSilence(
                    at: .now,
                    staleIntervals: options.staleIntervals,
                    assumedInterval: options.assumedInterval
                )
            }
            if becameStale { self.report(.stale) }
            // Never sooner than a quarter of a second (a tiny `staleIntervals` must not spin the loop thread), and
            // on a quarter-second grid, so that a hundred sensors' checks fall due together a few times a second
            // instead of each at its own moment.
            return Self.silenceCheckGrid.next(atOrAfter: max(deadline, .now + .milliseconds(250)))
        }
        // Suspends until cancelled: the sensor's task group cancels this when the connection ends.
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        timer.cancel()
    }
}
