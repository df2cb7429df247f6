import BlueZ
import Foundation
import HeartRateProfile

/// Which sensor a ``HeartRateSensor`` keeps connected.
public enum SensorTarget: Sendable, Hashable, CustomStringConvertible {
    /// The sensor with this address.
    case address(BluetoothAddress)
    /// The first heart-rate sensor seen (a connected or known one first, else the first discovery finds); once
    /// chosen, that sensor is kept.
    case anyHeartRateSensor

    public var description: String {
        switch self {
        case .address(let address): "\(address)"
        case .anyHeartRateSensor: "any heart-rate sensor"
        }
    }
}

/// Where a sensor's connection stands.
public enum SensorConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Discovering on these adapters (`hci0`): the sensor is not known to bluetoothd yet.
    case searching(adapters: [String])
    /// Connecting to the sensor through this adapter.
    case connecting(BluetoothAddress, adapter: String)
    /// Connected; waiting for bluetoothd to resolve GATT services.
    case resolvingServices
    /// Pairing, because the sensor refused notifications to an unpaired host.
    case pairing
    /// Subscribed to 0x2A37 and receiving.
    case streaming
    /// Connected and subscribed, but silent for longer than three of its usual intervals: its last value is
    /// not current.
    case stale
    /// The connection ended or could not be made, with the reason.
    case disconnected(reason: String)
    /// Waiting before the next attempt.
    case waitingToReconnect(attempt: Int, delay: Duration)

    public var description: String {
        switch self {
        case .searching(let adapters): "searching on \(adapters.joined(separator: ", "))"
        case .connecting(let address, let adapter): "connecting to \(address) on \(adapter)"
        case .resolvingServices: "resolving services"
        case .pairing: "pairing"
        case .streaming: "streaming"
        case .stale: "stale"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .waitingToReconnect(let attempt, let delay): "reconnecting in \(delay) (attempt \(attempt))"
        }
    }
}

/// One beat, back-dated from the notification that reported it.
public struct Beat: Sendable, Hashable {
    /// The interval ending at this beat.
    public var interval: RRInterval
    /// Monotonic time of the beat.
    public var time: ContinuousClock.Instant
    /// Wall-clock time of the beat.
    public var date: Date
}

/// A decoded Heart Rate Measurement with when it was received and where its beats fall.
public struct HeartRateReading: Sendable, Hashable {
    public var sensor: BluetoothAddress
    public var measurement: HeartRateMeasurement
    /// Monotonic receive time.
    public var receivedAt: ContinuousClock.Instant
    /// Wall-clock receive time.
    public var receivedDate: Date
    /// The RR intervals placed on the sensor's beat timeline.
    public var beats: [Beat]
    /// False when these beats start a new segment of the timeline: beats before them were lost (or this is the
    /// first notification of a connection).
    public var isContinuous: Bool
    /// The energy expended since the sensor's previous energy value, once checked against what a person can
    /// expend; nil when the notification carried none, it was the first, or it was rejected.
    public var energy: EnergyIncrement?

    public init(
        sensor: BluetoothAddress,
        measurement: HeartRateMeasurement,
        receivedAt: ContinuousClock.Instant,
        receivedDate: Date,
        beats: [Beat],
        isContinuous: Bool,
        energy: EnergyIncrement? = nil
    ) {
        self.sensor = sensor
        self.measurement = measurement
        self.receivedAt = receivedAt
        self.receivedDate = receivedDate
        self.beats = beats
        self.isContinuous = isContinuous
        self.energy = energy
    }
}

/// What a ``HeartRateSensor`` reports.
public enum HeartRateSensorEvent: Sendable {
    case state(SensorConnectionState)
    case reading(HeartRateReading)
    /// A payload that is not a valid measurement; it was counted and skipped.
    case malformed(payload: [UInt8], error: HeartRateMeasurement.DecodingError)
    /// `count` values or notifications outside ``RadioLimits`` were counted and left out, with what they were.
    case rejected(RejectionReason, count: Int, detail: String)
    case bodySensorLocation(BodySensorLocation)
    case batteryLevel(BatteryLevel)
    /// Energy expended reached 0xFFFF kJ and was reset through the control point.
    case energyExpendedReset
    /// The sensor chosen for ``SensorTarget/anyHeartRateSensor``, or identified for an address: name and maker.
    case identified(address: BluetoothAddress, name: String?, manufacturer: String?)
    /// Subscribed: how the notifications travel, and when that is StartNotify although AcquireNotify was wanted,
    /// why (it falls back on its own, see ``HeartRateSensor/Options/notify``).
    case notifying(NotifyMethod, reason: String?)
    /// Polar's Measurement Data (ECG, accelerometer): started, refused, stopped, frames refused.
    case pmd(PMDEvent)
    /// The samples of a PMD frame.
    case pmdReading(PMDReading)
}
