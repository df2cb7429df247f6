import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors
import Logging
import PolarMeasurementData
import ServiceLifecycle
import Synchronization

/// Keeps the configured sensors connected (each a `HeartRateSensor`, which reconnects with backoff and marks
/// gaps) and publishes their readings and status to the rest of the daemon.
package final class SensorManager: Service, Sendable {
    package let readings = Broadcast<SensorReport>()
    /// Fires whenever any sensor's status changes, except its readings alone: its last heart rate and reading
    /// date, and its counts of readings and rejected notifications (``takeChanges()`` tells those apart).
    package let statusChanged = Broadcast<Void>()
    private let client: BlueZClient
    private let targets: [SensorTarget]
    private let athletes: Athletes
    private let options: HeartRateSensor.Options
    private let statuses: Mutex<[Int: SensorStatus]>
    /// ``SensorChanges`` since ``takeChanges()`` was last called.
    private let pendingChanges = Atomic<Int>(0)
    /// Registered while the daemon runs, but bluetoothd's default agent only while we pair a sensor (see
    /// ``PairingAgent``): the sensors' own pairing and `systole pair` go through it.
    package let agent: PairingAgent
    /// Per sensor (by configuration index): when to log its malformed notifications.
    private let malformedLog = Mutex<[Int: RejectionLogLimiter]>([:])
    /// Per sensor (by configuration index): when to log its refused PMD frames.
    private let pmdRejectionLog = Mutex<[Int: RejectionLogLimiter]>([:])
    /// Per sensor and reason: when to log values rejected by the radio limits.
    private let rejectionLog = Mutex<[Key: RejectionLogLimiter]>([:])
    /// Per sensor (by configuration index): which connection states to log.
    private let journals = Mutex<[Int: SensorJournal]>([:])
    /// Readings of the current read not yet published.
    private let heldReadings = Mutex<[SensorReport]>([])
    /// The sensors while they run, to turn their ECG on and off (``measureWaveforms(_:)``).
    private let running = Mutex<[HeartRateSensor]>([])
    /// Whether the sensors are to stream their ECG (and acceleration) now: kept for sensors that start later.
    private let waveformsWanted = Mutex(false)

    private let logger: Logger

    package init(
        client: BlueZClient,
        targets: [SensorTarget],
        adapter: String?,
        notificationLimit: Double = RadioLimits().notificationsPerSecond,
        athletes: Athletes = Athletes(),
        notify: NotifyMethod = .acquire,
        notifyBySensor: [BluetoothAddress: NotifyMethod] = [:],
        pmd: PMDOptions? = nil,
        pmdBySensor: [BluetoothAddress: PMDOptions] = [:],
        logger: Logger
    ) {
        self.logger = logger
        self.client = client
        self.athletes = athletes
        self.targets = targets
        agent = PairingAgent { reason in logger.warning("refused a Bluetooth request: \(reason)") }
        var options = HeartRateSensor.Options(adapter: adapter)
        options.registersAutoConnectProfile = true
        options.agent = agent
        options.limits.notificationsPerSecond = notificationLimit
        options.limits.notificationBurst = 2 * notificationLimit
        options.notify = notify
        options.notifyOverrides = notifyBySensor
        options.pmd = pmd
        options.pmdOverrides = pmdBySensor
        // Each entry keeps a sensor of its own: "any" entries skip configured addresses and each other's.
        options.claims = SensorClaims()
        for target in targets {
            if case .address(let address) = target { options.claims?.reserve(address) }
        }
        self.options = options
        statuses = Mutex(
            Dictionary(
                uniqueKeysWithValues: targets.enumerated().map { index, target in
                    let address: String? = if case .address(let a) = target { a.description } else { nil }
                    let status = SensorStatus(
                        address: address,
                        athlete: athletes.athlete(wearing: address),
                        state: "searching",
                        isConnected: false
                    )
                    return (index, status)
                }
            )
        )
    }

    /// Every configured sensor's status, in configuration order.
    package var sensors: [SensorStatus] {
        statuses.withLock { statuses in statuses.keys.sorted().compactMap { statuses[$0] } }
    }

    package func run() async throws {
        // Sensors run until the daemon shuts down; then their tasks are cancelled and let go of the links.
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.keepAgentRegistered() }
                for (index, target) in self.targets.enumerated() {
                    // Events are taken as they happen, where the sensor reports them (readings on the bus's loop
                    // thread): a task of our own per sensor would cost a switch per reading.
                    let sensor = HeartRateSensor(
                        client: self.client,
                        target: target,
                        options: self.options,
                        delegate: Delegate(manager: self, index: index)
                    )
                    self.running.withLock { sensors in
                        sensors.append(sensor)
                        sensor.measurePMD(self.waveformsWanted.withLock { $0 })
                    }
                    group.addTask { await sensor.run() }
                }
            }
        }
        readings.finish()
        statusChanged.finish()
    }

    /// Has every sensor with ECG (or acceleration) configured stream it (true: a workout is in progress) or stop
    /// (false). Sensors without it configured, or without Polar's service, are not affected.
    package func measureWaveforms(_ on: Bool) {
        running.withLock { sensors in
            waveformsWanted.withLock { $0 = on }
            for sensor in sensors { sensor.measurePMD(on) }
        }
    }

    /// Whether `address` is one of the configured sensors' addresses.
    package func isConfigured(_ address: BluetoothAddress) -> Bool {
        targets.contains(.address(address))
    }

    /// Pairs a sensor through our agent's window (one pairing at a time, the sensors' own included).
    package func pair(_ device: BluetoothDevice) async throws(BlueZError) {
        try await agent.pair(device)
    }

    /// Our Just Works agent, registered whenever bluetoothd runs (it forgets agents when it restarts): pairing
    /// earbuds that refuse an unpaired host, and `systole pair`, need one.
    private func keepAgentRegistered() async {
        let events = client.events {
            if case .serviceStarted = $0 { true } else { false }
        }
        if client.isServiceRunning { try? await agent.register(with: client) }
        for await event in events {
            if case .serviceStarted = event { try? await agent.register(with: client) }
        }
    }

    private func take(_ event: HeartRateSensorEvent, index: Int) {
        // Connection changes go to the journal: they are what explains a gap in a workout.
        // A failure that repeats while the sensor stays away is logged once (see SensorJournal).
        if case .state(let state) = event,
            let line = journals.withLock({ $0[index, default: SensorJournal()].line(for: state) })
        {
            let address = statuses.withLock { $0[index]?.address }
            logger.info("sensor \(address ?? "any"): \(line)")
        }
        // A fallback is logged once: the sensor remembers it, and its later connections report the same reason.
        if case .notifying(_, let reason?) = event, statuses.withLock({ $0[index]?.notifyFallback }) != reason {
            let address = statuses.withLock { $0[index]?.address } ?? "any"
            logger.warning(
                "sensor \(address): notifications over D-Bus signals (StartNotify) instead of AcquireNotify until systoled restarts: \(reason). To keep it on signals without trying again, set \"\(address)\" = \"signal\" under [bluetooth]"
            )
        }
        update(index) { status in
            switch event {
            case .state(let state):
                status.state = state.description
                status.isConnected = state == .streaming || state == .stale
                if case .disconnected = state { status.contact = nil }
            case .reading(let reading):
                if status.athlete == nil { status.athlete = athletes.athlete(wearing: reading.sensor.description) }
                status.address = reading.sensor.description
                status.lastHeartRate = Int(reading.measurement.heartRate)
                status.lastReadingDate = reading.receivedDate
                status.readings += 1
                status.contact = reading.measurement.sensorContact.rawValue
            case .bodySensorLocation(let location):
                status.bodyLocation = location.description
            case .batteryLevel(let level):
                status.batteryPercent = Int(level.percent)
            case .identified(let address, let name, let manufacturer):
                status.address = address.description
                status.athlete = athletes.athlete(wearing: address.description)
                status.name = name
                status.manufacturer = manufacturer
            case .malformed:
                status.rejected.malformed += 1
            case .rejected(let reason, let count, _):
                status.rejected.add(count, reason)
            case .notifying(let method, let reason):
                status.notify = method.rawValue
                status.notifyFallback = reason
            case .energyExpendedReset:
                break
            case .pmd(let event):
                status.apply(event)
            case .pmdReading:
                break
            }
        }
        if case .pmd(let event) = event { logPMD(event, index: index) }
        if case .pmdReading(let reading) = event {
            let status = statuses.withLock { $0[index] }
            hold(
                .waveform(
                    DaemonWaveform(
                        reading: reading,
                        name: status?.name,
                        manufacturer: status?.manufacturer,
                        bodyLocation: status?.bodyLocation,
                        athlete: status?.athlete
                    )
                )
            )
        }
        if case .malformed(let payload, let error) = event { logMalformed(payload, error, index: index) }
        if case .rejected(let reason, let count, let detail) = event {
            logRejected(reason, count, detail, index: index)
        }
        if case .reading(let reading) = event {
            let status = statuses.withLock { $0[index] }
            hold(
                .heartRate(
                    DaemonReading(
                        reading: reading,
                        name: status?.name,
                        manufacturer: status?.manufacturer,
                        bodyLocation: status?.bodyLocation,
                        athlete: status?.athlete
                    )
                )
            )
        }
    }

    /// PMD's starts, refusals and stops are the journal of the ECG: a refusal says what the person at the strap
    /// can do. Refused frames are logged as malformed notifications are: the first at once, then a line a minute.
    private func logPMD(_ event: PMDEvent, index: Int) {
        let address = statuses.withLock { $0[index]?.address } ?? "any"
        switch event {
        case .started(let type): logger.info("sensor \(address): \(type) streaming")
        case .refused(let type, let reason): logger.warning("sensor \(address): \(type) refused: \(reason)")
        case .stopped(let type, let reason): logger.info("sensor \(address): \(type) stopped: \(reason)")
        case .frameRejected(let reason):
            let count = pmdRejectionLog.withLock { $0[index, default: RejectionLogLimiter()].record(at: .now) }
            if count != nil { logger.warning("sensor \(address): refused a PMD frame: \(reason)") }
        case .duplicateFrame: break
        }
    }

    private func logMalformed(_ payload: [UInt8], _ error: HeartRateMeasurement.DecodingError, index: Int) {
        let count = malformedLog.withLock { $0[index, default: RejectionLogLimiter()].record(at: .now) }
        guard let count else { return }
        let address = statuses.withLock { $0[index]?.address } ?? "any"
        if count == 1 {
            let line =
                "sensor \(address): skipped a malformed notification of \(payload.count) bytes: \(error) (counted in "
                + "'systole sensors'; further ones are logged at most once a minute)"
            logger.warning("\(line)")
        } else {
            let line =
                "sensor \(address): skipped \(count) malformed notifications in the last minute or more, the last "
                + "of \(payload.count) bytes: \(error)"
            logger.warning("\(line)")
        }
    }

    /// Logs values rejected for `reason` like malformed notifications: the first at once, then at most a line a
    /// minute per sensor and reason with the count since.
    private func logRejected(_ reason: RejectionReason, _ count: Int, _ detail: String, index: Int) {
        let reported = rejectionLog.withLock {
            $0[Key(index: index, reason: reason), default: RejectionLogLimiter()].record(count, at: .now)
        }
        guard let reported else { return }
        let address = statuses.withLock { $0[index]?.address } ?? "any"
        let line =
            reported == count
            ? "sensor \(address): \(detail) (\(reason.rawValue), counted in 'systole sensors'; further ones are "
                + "logged at most once a minute)"
            : "sensor \(address): \(reported) values rejected (\(reason.rawValue)) in the last minute or more; the last: "
                + detail
        logger.warning("\(line)")
    }

    private struct Key: Hashable {
        var index: Int
        var reason: RejectionReason
    }

    /// Stage 1 of the ``RecordingPipeline``: holds a reading until its read is complete. Readings arrive on the
    /// bus's loop thread one notification at a time, and handing on the first at once would wake the workout for it
    /// alone, so a tick's readings would take two or three commits instead of one.
    private func hold(_ reading: SensorReport) {
        heldReadings.withLock { $0.append(reading) }
    }

    /// A sensor's read is complete: everything held is handed over to the workout as one batch (the first sensor
    /// to complete a read of the bus takes every sensor's readings of it; the others then find nothing held).
    private func handOverHeldReadings() {
        let batch = heldReadings.withLock { held in
            defer { held = [] }
            return held
        }
        readings.publish(contentsOf: batch)
    }

    /// One sensor's delegate: its events with its place in the configuration.
    private final class Delegate: HeartRateSensorDelegate {
        private weak let manager: SensorManager?
        private let index: Int

        init(manager: SensorManager, index: Int) {
            self.manager = manager
            self.index = index
        }

        func sensor(_ sensor: HeartRateSensor, didReport event: HeartRateSensorEvent) {
            manager?.take(event, index: index)
        }

        func sensorDidCompleteRead(_ sensor: HeartRateSensor) {
            manager?.handOverHeldReadings()
        }

        /// A stopping sensor leaves nothing held (the daemon's shutdown records what was read).
        func sensorDidStop(_ sensor: HeartRateSensor) {
            manager?.handOverHeldReadings()
        }
    }

    private func update(_ index: Int, _ change: (inout SensorStatus) -> Void) {
        let changed = statuses.withLock { statuses -> Bool in
            guard var status = statuses[index] else { return false }
            let before = status
            change(&status)
            statuses[index] = status
            if status != before { pendingChanges.bitwiseOr(SensorChanges.readings.rawValue, ordering: .relaxed) }
            // A new reading changes the last value and date, which the control object announces with its
            // once-a-second refresh; announcing at once is for everything else (a hundred sensors' readings made
            // this a wakeup of the control service per reading).
            var significant = status
            significant.lastHeartRate = before.lastHeartRate
            significant.lastReadingDate = before.lastReadingDate
            significant.readings = before.readings
            significant.rejected = before.rejected
            return significant != before
        }
        if changed {
            pendingChanges.bitwiseOr(SensorChanges.status.rawValue, ordering: .relaxed)
            statusChanged.publish(())
        }
    }

    /// What changed in the sensors' statuses since the last call: their readings alone (last heart rate and
    /// date, counts), or more (``statusChanged`` fired).
    package func takeChanges() -> SensorChanges {
        SensorChanges(rawValue: pendingChanges.exchange(0, ordering: .relaxed))
    }
}

/// What changed in the sensors' statuses (``SensorManager/takeChanges()``).
package struct SensorChanges: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }
    /// A sensor's last heart rate, its date, or its counts of readings and rejected notifications.
    package static let readings = SensorChanges(rawValue: 1)
    /// Anything else: its state, connection, battery, contact, name, athlete, notify method.
    package static let status = SensorChanges(rawValue: 2)
}
