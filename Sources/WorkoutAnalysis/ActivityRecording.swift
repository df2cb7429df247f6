import Foundation
import WorkoutKit

/// Everything an export holds of one workout: its times, pauses, laps, markers, heart-rate readings, beats, energy
/// and sensors. The daemon builds it from the store's workout and samples; the encoders know nothing of the store.
public struct ActivityRecording: Sendable, Equatable {
    /// One heart-rate reading.
    public struct Reading: Sendable, Equatable {
        public var date: Date
        public var bpm: Double

        public init(date: Date, bpm: Double) {
            self.date = date
            self.bpm = bpm
        }
    }

    /// One beat: its date and the RR interval that ends at it (as the sensor layer hands it to WorkoutKit).
    public typealias Beat = SensorMeasurement.Beat

    /// Energy a sensor measured over the interval ending at `date`.
    public struct EnergyReading: Sendable, Equatable {
        public var date: Date
        public var kilojoules: Double

        public init(date: Date, kilojoules: Double) {
            self.date = date
            self.kilojoules = kilojoules
        }
    }

    /// A marker set during the workout (`systole marker TEXT`).
    public struct Marker: Sendable, Equatable {
        public var date: Date
        public var text: String

        public init(date: Date, text: String) {
            self.date = date
            self.text = text
        }
    }

    /// The workout's active energy and whether a sensor measured it or systole estimated it from heart rate.
    public struct Energy: Sendable, Equatable {
        public var kilojoules: Double
        public var isEstimated: Bool

        public init(kilojoules: Double, isEstimated: Bool) {
            self.kilojoules = kilojoules
            self.isEstimated = isEstimated
        }

        public var kilocalories: Double { kilojoules / 4.184 }
    }

    /// A sensor, for FIT's device_info.
    public struct Sensor: Sendable, Equatable {
        /// FIT's manufacturer id where FIT has one (e.g. 123 for Polar), else nil.
        public var fitManufacturer: UInt16?
        public var name: String?
        /// The battery level at the end of the workout, in percent, when known.
        public var batteryPercent: Int?

        public init(fitManufacturer: UInt16? = nil, name: String? = nil, batteryPercent: Int? = nil) {
            self.fitManufacturer = fitManufacturer
            self.name = name
            self.batteryPercent = batteryPercent
        }

        /// FIT's manufacturer id for a sensor maker's name (its Bluetooth company name), where FIT has one.
        public static func fitManufacturer(forCompany name: String) -> UInt16? {
            let lowered = name.lowercased()
            let known: [(String, UInt16)] = [
                ("polar", 123), ("garmin", 1), ("wahoo", 32), ("suunto", 23), ("coros", 294), ("whoop", 305),
                ("scosche", 83), ("4iiii", 51), ("magene", 107), ("coospo", 135), ("decathlon", 310),
            ]
            return known.first { lowered.contains($0.0) }?.1
        }
    }

    public var id: UUID
    /// Who it records, when the sensor's athlete is named.
    public var athlete: String?
    public var activity: WorkoutActivityType
    public var start: Date
    public var end: Date
    /// Pauses, each from its pause to its resume.
    public var pauses: [DateInterval]
    /// Laps in order, covering the workout (empty: the workout is one lap).
    public var laps: [DateInterval]
    public var markers: [Marker]
    /// Heart-rate readings, oldest first.
    public var readings: [Reading]
    /// Beats, oldest first.
    public var beats: [Beat]
    /// Energy the sensors measured, oldest first.
    public var energyReadings: [EnergyReading]
    /// The workout's active energy, measured or estimated, when known.
    public var energy: Energy?
    public var sensors: [Sensor]
    /// Whether the sensor of the readings reports skin contact (nil: not known, a workout recorded before systole
    /// kept it). When it does, every reading was taken with contact: a reading without contact has no heart rate.
    public var reportsContact: Bool?
    /// When the sensor of the readings said it lost skin contact, each until it had contact again (or the end).
    public var contactLost: [DateInterval]
    /// The ECG, for the exports that write it (EDF+, the ECG's CSV and RR); empty unless read for one.
    public var electrocardiogram: [WaveformSample] = []
    /// The accelerometer, for the EDF+; empty unless read for it.
    public var acceleration: [WaveformSample] = []

    public init(
        id: UUID = UUID(),
        activity: WorkoutActivityType,
        start: Date,
        end: Date,
        pauses: [DateInterval] = [],
        laps: [DateInterval] = [],
        markers: [Marker] = [],
        readings: [Reading] = [],
        beats: [Beat] = [],
        energyReadings: [EnergyReading] = [],
        energy: Energy? = nil,
        sensors: [Sensor] = [],
        reportsContact: Bool? = nil,
        contactLost: [DateInterval] = [],
        athlete: String? = nil
    ) {
        self.id = id
        self.athlete = athlete
        self.activity = activity
        self.start = start
        self.end = end
        self.pauses = pauses
        self.laps = laps
        self.markers = markers
        self.readings = readings
        self.beats = beats
        self.energyReadings = energyReadings
        self.energy = energy
        self.sensors = sensors
        self.reportsContact = reportsContact
        self.contactLost = contactLost
    }

    /// The laps an export writes: the recorded ones, or the whole workout as one.
    public var lapsOrWhole: [DateInterval] {
        laps.isEmpty ? [DateInterval(start: start, end: max(start, end))] : laps
    }

    /// The beats in runs without a gap: a new run starts at every beat preceded by a gap, so no export invents a
    /// beat across one.
    public var beatRuns: [[Beat]] {
        var runs: [[Beat]] = []
        for beat in beats {
            if beat.precededByGap || runs.isEmpty { runs.append([]) }
            runs[runs.count - 1].append(beat)
        }
        return runs
    }

    /// Seconds of the interval that were not paused.
    public func timerTime(of interval: DateInterval) -> TimeInterval {
        let paused = pauses.compactMap { $0.intersection(with: interval)?.duration }.reduce(0, +)
        return max(0, interval.duration - paused)
    }

    /// Seconds from the start to `date` (at most the end), pauses excluded.
    public func elapsed(at date: Date) -> TimeInterval {
        let until = min(date, max(start, end))
        guard until > start else { return 0 }
        return timerTime(of: DateInterval(start: start, end: until))
    }

    /// Whether `date` falls in a pause (its start included, its end not: the resume counts again).
    public func isPaused(at date: Date) -> Bool {
        pauses.contains { date >= $0.start && date < $0.end }
    }

    /// Average and maximum heart rate of the readings from the interval's start up to its end (the end itself only
    /// when it is the workout's: a reading on the line between two laps is the later lap's), pauses excluded, as
    /// the workout's own statistics leave them out.
    public func heartRate(in interval: DateInterval) -> (average: Double, maximum: Double)? {
        var sum = 0.0
        var count = 0
        var maximum = -Double.infinity
        let includesEnd = interval.end >= end
        for reading in readings
        where reading.date >= interval.start
            && (reading.date < interval.end || includesEnd && reading.date == interval.end)
            && reading.bpm.isFinite && !isPaused(at: reading.date)
        {
            sum += reading.bpm
            count += 1
            maximum = max(maximum, reading.bpm)
        }
        guard count > 0 else { return nil }
        return (sum / Double(count), maximum)
    }
}

extension SensorMeasurement.Beat {
    /// The RR interval in milliseconds.
    public var milliseconds: Double { Double(rrTicks) * 1000 / 1024 }
    /// The RR interval in seconds.
    public var seconds: Double { Double(rrTicks) / 1024 }
}
