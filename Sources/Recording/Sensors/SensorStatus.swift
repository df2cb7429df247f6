import BlueZ
import Foundation
import HeartRateProfile
import HeartRateSensors

/// What the daemon knows of one sensor, for `systole sensors` and the `Sensors` property.
public struct SensorStatus: Sendable, Equatable {
    public var address: String?
    public var name: String?
    /// Who wears it (`[athletes]`), once its address is known.
    public var athlete: String?
    public var manufacturer: String?
    /// The connection state, as `HeartRateSensor` reports it ("streaming", "stale", "searching", …).
    public var state: String
    public var isConnected: Bool
    public var batteryPercent: Int?
    public var bodyLocation: String?
    public var contact: String?
    public var lastHeartRate: Int?
    public var lastReadingDate: Date?
    /// Readings taken from it since the daemon started (decoded and within their ranges).
    public var readings = 0
    /// Notifications received but not turned into readings, by reason.
    public var rejected = RejectedNotifications()
    /// How its notifications travel ("signal" or "acquire"), once subscribed.
    public var notify: String?
    /// Why they travel as signals when AcquireNotify was configured (it fell back on its own).
    public var notifyFallback: String?
    /// How its ECG stream goes, when it was asked for one: "streaming", or why not ("refused: the strap is in its
    /// charger", "stopped: the link went").
    public var ecg: String?
}

/// What a sensor sent that was not used, counted by reason since the daemon started (see `RadioLimits`).
public struct RejectedNotifications: Sendable, Equatable {
    /// Notifications that are not a valid Heart Rate Measurement (cut short, or a length its flags do not announce).
    public var malformed = 0
    /// Values outside their range: a notification's heart rate (the whole notification is skipped), an RR
    /// interval, or an energy increase more than a person can expend.
    public var outOfRange = 0
    /// Beats that added up to more than the time that passed since the sensor's previous notification.
    public var excessBeats = 0
    /// Notifications beyond the sensor's rate bound.
    public var throttled = 0

    public init() {}

    mutating func add(_ count: Int, _ reason: RejectionReason) {
        switch reason {
        case .malformed: malformed += count
        case .outOfRange: outOfRange += count
        case .excessBeats: excessBeats += count
        case .throttled: throttled += count
        }
    }
}

/// What a sensor reports through the recording pipeline: a heart-rate reading, or a piece of the ECG or
/// acceleration it streams (a Polar H10 during a workout, with `[ecg]` on).
public enum SensorReport: Sendable {
    case heartRate(DaemonReading)
    case waveform(DaemonWaveform)

    /// The heart-rate reading, if this is one.
    public var heartRate: DaemonReading? {
        if case .heartRate(let reading) = self { reading } else { nil }
    }
}

/// One PMD frame's samples with the sensor they came from, as the daemon passes them around.
public struct DaemonWaveform: Sendable {
    public var reading: PMDReading
    public var name: String?
    public var manufacturer: String?
    public var bodyLocation: String?
    /// Who wears the sensor (`[athletes]`).
    public var athlete: String?
}

/// A reading with the sensor it came from, as the daemon passes it around.
public struct DaemonReading: Sendable {
    public var reading: HeartRateReading
    public var name: String?
    public var manufacturer: String?
    public var bodyLocation: String?
    /// Who wears the sensor (`[athletes]`).
    public var athlete: String?
}
