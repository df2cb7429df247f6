import BlueZ
import Foundation
import PolarMeasurementData

/// What to measure over Polar's Measurement Data service (PMD) on a sensor that has it (a Polar H10).
public struct PMDOptions: Sendable, Hashable {
    /// Stream the single-lead ECG (130 Hz on an H10).
    public var ecg: Bool
    /// Stream the accelerometer at this rate (25, 50, 100 or 200 Hz) and range (2, 4 or 8 G); nil: not at all.
    public var accelerometer: Accelerometer?

    public struct Accelerometer: Sendable, Hashable {
        public var rate: UInt32
        public var range: UInt32

        public init(rate: UInt32 = 50, range: UInt32 = 8) {
            self.rate = rate
            self.range = range
        }
    }

    public init(ecg: Bool = true, accelerometer: Accelerometer? = nil) {
        self.ecg = ecg
        self.accelerometer = accelerometer
    }

    /// Whether anything is asked for.
    public var isEnabled: Bool { ecg || accelerometer != nil }
}

/// The samples of one PMD frame, placed on the host's clock.
public struct PMDReading: Sendable {
    public var sensor: BluetoothAddress
    /// ECG in µV or acceleration in milli-g, oldest first.
    public var samples: PMDSamples
    /// Monotonic time of the first sample.
    public var firstSample: ContinuousClock.Instant
    /// Wall-clock time of the first sample.
    public var firstSampleDate: Date
    /// Time between samples, measured from the sensor's timestamps.
    public var interval: Duration
    /// Set when these samples begin a new segment (the stream's first, after lost frames, or a clock that jumped);
    /// nil when they continue the previous frame's.
    public var segmentBreak: PMDTimeline.Break?
    /// The frame's own timestamp: nanoseconds since 2000-01-01 on the sensor's clock, of the last sample.
    public var sensorTimestamp: UInt64
    /// When the frame arrived.
    public var receivedAt: ContinuousClock.Instant

    /// Samples a second.
    public var rate: Double {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        return seconds > 0 ? 1 / seconds : 0
    }
}

/// How a sensor's PMD measurements went.
public enum PMDEvent: Sendable, Hashable {
    /// The sensor answered the start with success.
    case started(PMDMeasurementType)
    /// The sensor would not start it, or could not be asked: why, in words for the person holding the strap.
    case refused(PMDMeasurementType, reason: String)
    /// It stopped, and why: no longer asked for, the sensor stopping, the strap itself, or the link going.
    case stopped(PMDMeasurementType, reason: String)
    /// A frame or control-point indication was refused (malformed, of a type not started, beyond the rate, more
    /// samples than its time) and counted; reported at most once a second with the count so far.
    case frameRejected(reason: String)
    /// A repeated frame was dropped.
    case duplicateFrame
}
