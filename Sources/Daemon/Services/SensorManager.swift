import BlueZ
import Foundation
import HeartRateProfile
import Logging
import ServiceLifecycle
import Synchronization

/// What the daemon knows of one sensor, for `systole sensors` and the `Sensors` property.
public struct SensorStatus: Sendable, Equatable {
    public var address: String?
    public var name: String?
    public var manufacturer: String?
    /// The connection state, as `HeartRateSensor` reports it ("streaming", "stale", "searching", …).
    public var state: String
    public var isConnected: Bool
    public var batteryPercent: Int?
    public var bodyLocation: String?
    public var contact: String?
    public var lastHeartRate: Int?
    public var lastReadingDate: Date?
}

/// A reading with the sensor it came from, as the daemon passes it around.
public struct DaemonReading: Sendable {
    public var reading: HeartRateReading
    public var name: String?
    public var manufacturer: String?
    public var bodyLocation: String?
}

/// Keeps the configured sensors connected (each a `HeartRateSensor`, which reconnects with backoff and marks
/// gaps) and publishes their readings and status to the rest of the daemon.
final class SensorManager: Service, Sendable {
    let readings = Broadcast<DaemonReading>()
    /// Fires whenever any sensor's status changes, except its last heart rate and reading date alone (those the
    /// control object picks up with its once-a-second refresh).
    let statusChanged = Broadcast<Void>()
    private let client: BlueZClient
    private let targets: [SensorTarget]
    private let options: HeartRateSensor.Options
    private let statuses: Mutex<[Int: SensorStatus]>
    private let agent = PairingAgent()
    /// Readings of the current bus wakeup not yet published (nil: none).
    private let heldReadings = Mutex<[DaemonReading]?>(nil)

    private let logger: Logger

    init(client: BlueZClient, sensors: [DaemonConfiguration.Sensor], adapter: String?, logger: Logger) {
        self.logger = logger
        self.client = client
        targets = sensors.map { sensor in
            switch sensor {
            case .any: .anyHeartRateSensor
            case .address(let address): .address(address)
            }
        }
        var options = HeartRateSensor.Options(adapter: adapter)
        options.registersAutoConnectProfile = true
        self.options = options
        statuses = Mutex(
            Dictionary(
                uniqueKeysWithValues: targets.enumerated().map { index, target in
                    let address: String? = if case .address(let a) = target { a.description } else { nil }
                    return (index, SensorStatus(address: address, state: "searching", isConnected: false))
                }
            )
        )
    }

    /// Every configured sensor's status, in configuration order.
    var sensors: [SensorStatus] {
        statuses.withLock { statuses in statuses.keys.sorted().compactMap { statuses[$0] } }
    }

    func run() async throws {
        // Sensors run until the daemon shuts down; then their tasks are cancelled and let go of the links.
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.keepAgentRegistered() }
                for (index, target) in self.targets.enumerated() {
                    // Events are taken as they happen, on the sensor's own task: a task of our own per sensor
                    // would cost a switch per reading.
                    let sensor = HeartRateSensor(client: self.client, target: target, options: self.options) {
                        [weak self] event in self?.take(event, index: index)
                    }
                    group.addTask { await sensor.run() }
                }
            }
        }
        readings.finish()
        statusChanged.finish()
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
        if case .state(let state) = event {
            let address = statuses.withLock { $0[index]?.address }
            logger.info("sensor \(address ?? "any"): \(state)")
        }
        update(index) { status in
            switch event {
            case .state(let state):
                status.state = state.description
                status.isConnected = state == .streaming || state == .stale
                if case .disconnected = state { status.contact = nil }
            case .reading(let reading):
                status.address = reading.sensor.description
                status.lastHeartRate = Int(reading.measurement.heartRate)
                status.lastReadingDate = reading.receivedDate
                status.contact = reading.measurement.sensorContact.rawValue
            case .bodySensorLocation(let location):
                status.bodyLocation = location.description
            case .batteryLevel(let level):
                status.batteryPercent = Int(level.percent)
            case .identified(let address, let name, let manufacturer):
                status.address = address.description
                status.name = name
                status.manufacturer = manufacturer
            case .malformed, .energyExpendedReset:
                break
            }
        }
        if case .reading(let reading) = event {
            let status = statuses.withLock { $0[index] }
            publish(
                DaemonReading(
                    reading: reading,
                    name: status?.name,
                    manufacturer: status?.manufacturer,
                    bodyLocation: status?.bodyLocation
                )
            )
        }
    }

    /// Publishes a reading with the others of the same bus wakeup: they arrive on the bus's loop thread one
    /// notification at a time, and handing on the first at once woke the workout for it alone, so a tick's
    /// readings took two or three commits instead of one. Outside the loop's dispatch it goes at once.
    private func publish(_ reading: DaemonReading) {
        let first = heldReadings.withLock { held -> Bool in
            if held == nil {
                held = [reading]
                return true
            }
            held!.append(reading)
            return false
        }
        guard first else { return }
        if !client.connection.atEndOfDispatch({ self.publishHeldReadings() }) { publishHeldReadings() }
    }

    private func publishHeldReadings() {
        let batch = heldReadings.withLock { held in
            defer { held = nil }
            return held ?? []
        }
        readings.publish(contentsOf: batch)
    }

    private func update(_ index: Int, _ change: (inout SensorStatus) -> Void) {
        let changed = statuses.withLock { statuses -> Bool in
            guard var status = statuses[index] else { return false }
            let before = status
            change(&status)
            statuses[index] = status
            // A new reading changes the last value and date, which the control object announces with its
            // once-a-second refresh; announcing at once is for everything else (a hundred sensors' readings made
            // this a wakeup of the control service per reading).
            var significant = status
            significant.lastHeartRate = before.lastHeartRate
            significant.lastReadingDate = before.lastReadingDate
            return significant != before
        }
        if changed { statusChanged.publish(()) }
    }
}
