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
        /// What to measure over Polar's Measurement Data service when ``HeartRateSensor/measurePMD(_:)`` asks for
        /// it (ECG, accelerometer); nil: nothing.
        public var pmd: PMDOptions?
        /// ``pmd`` for particular sensors.
        public var pmdOverrides: [BluetoothAddress: PMDOptions] = [:]
        /// How long a sensor may take to answer a PMD command.
        public var pmdAnswerTimeout: Duration = .seconds(5)

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
    /// Whether PMD measurements are asked for (``measurePMD(_:)``).
    let pmdWanted = WaitableSwitch()

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
        var standingRoute: (path: String, route: DBusSignalRoute)?
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
}
