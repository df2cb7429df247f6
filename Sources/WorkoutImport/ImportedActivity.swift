import Foundation
import WorkoutKit

/// An activity read from a file another device or service wrote (FIT or TCX), before it becomes a workout: what
/// systole keeps of it, every value checked against ``ImportLimits``.
public struct ImportedActivity: Sendable, Equatable {
    /// The file format it came from.
    public enum Format: String, Sendable {
        case fit = "FIT"
        case tcx = "TCX"
    }

    /// One heart-rate reading.
    public struct HeartRate: Sendable, Equatable {
        public var date: Date
        public var beatsPerMinute: Double

        public init(date: Date, beatsPerMinute: Double) {
            self.date = date
            self.beatsPerMinute = beatsPerMinute
        }
    }

    /// The device that recorded it, as the file names it (names cleaned of control characters and escapes).
    public struct Recorder: Sendable, Equatable {
        public var manufacturer: String?
        public var product: String?
        public var serialNumber: String?

        public init(manufacturer: String? = nil, product: String? = nil, serialNumber: String? = nil) {
            self.manufacturer = manufacturer
            self.product = product
            self.serialNumber = serialNumber
        }
    }

    public var format: Format
    public var activity: WorkoutActivityType
    public var start: Date
    public var end: Date
    /// Times the timer was stopped (FIT's timer events; a TCX file has none).
    public var pauses: [DateInterval]
    public var laps: [DateInterval]
    public var heartRates: [HeartRate]
    /// Beat-to-beat intervals in seconds, in order (FIT's HRV messages); they carry no times of their own.
    public var rrIntervals: [Double]
    /// The energy the file gives for the whole activity, kcal.
    public var energyKilocalories: Double?
    public var recorder: Recorder

    public init(
        format: Format,
        activity: WorkoutActivityType,
        start: Date,
        end: Date,
        pauses: [DateInterval] = [],
        laps: [DateInterval] = [],
        heartRates: [HeartRate] = [],
        rrIntervals: [Double] = [],
        energyKilocalories: Double? = nil,
        recorder: Recorder = Recorder()
    ) {
        self.format = format
        self.activity = activity
        self.start = start
        self.end = end
        self.pauses = pauses
        self.laps = laps
        self.heartRates = heartRates
        self.rrIntervals = rrIntervals
        self.energyKilocalories = energyKilocalories
        self.recorder = recorder
    }
}

/// The values an imported activity may hold: a file outside them is refused, with what and where.
public enum ImportLimits {
    public static let heartRate: ClosedRange<Double> = 20...250
    /// RR intervals in seconds: 300 bpm to 12 bpm, what a strap's raw intervals can hold with artifacts.
    public static let rrInterval: ClosedRange<Double> = 0.2...5
    /// Dates from 2000 to a day after now (a device's clock may run ahead).
    public static func dates(now: Date = Date()) -> ClosedRange<Date> {
        Date(timeIntervalSince1970: 946_684_800)...now.addingTimeInterval(86_400)
    }
    /// The longest activity taken: a week.
    public static let duration: TimeInterval = 7 * 86_400
    /// Energy for a whole activity, kcal.
    public static let energy: ClosedRange<Double> = 0...50_000
    /// Heart-rate readings and RR intervals together, in one activity and in one file: thirty hours of a reading a
    /// second with every beat at 150 bpm (378 000). It bounds what systoled holds while it imports (about 50 bytes a
    /// reading: docs/performance.md), well within its service's memory limit.
    public static let readings = 400_000
    /// Heart-rate readings alone.
    public static let heartRates = readings
    /// RR intervals alone.
    public static let rrIntervals = readings
    /// Laps (and sessions) of one activity.
    public static let laps = 10_000
    /// Timer stops and starts of one activity.
    public static let timerEvents = 100_000
}

/// Why a file cannot be imported, and where in it.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
