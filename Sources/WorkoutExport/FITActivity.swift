import Foundation
import WorkoutKit

/// What an activity file holds of a workout: its times, pauses, heart rate, beats, laps, energy and sensors. Built from
/// the store's workout and samples by the caller; the encoders here know nothing of the store.
public struct ActivityRecording: Sendable, Equatable {
    /// A sensor, for FIT's device_info.
    public struct Sensor: Sendable, Equatable {
        /// FIT's manufacturer id where FIT has one (e.g. 123 for Polar), else nil.
        public var fitManufacturer: UInt16?
        public var name: String?

        public init(fitManufacturer: UInt16? = nil, name: String? = nil) {
            self.fitManufacturer = fitManufacturer
            self.name = name
        }
    }

    public var activity: WorkoutActivityType
    public var start: Date
    public var end: Date
    /// Pauses, each from its pause to its resume (the timer stops and starts again).
    public var pauses: [DateInterval]
    /// Heart rate readings, oldest first.
    public var heartRates: [(date: Date, bpm: Double)]
    /// RR intervals in seconds, in runs without a gap: a gap between runs is never bridged by an invented beat.
    public var beatRuns: [[Double]]
    /// Laps (the whole workout when empty).
    public var laps: [DateInterval]
    /// Active energy in kcal, when known.
    public var kilocalories: Double?
    public var sensors: [Sensor]

    public init(
        activity: WorkoutActivityType,
        start: Date,
        end: Date,
        pauses: [DateInterval] = [],
        heartRates: [(date: Date, bpm: Double)] = [],
        beatRuns: [[Double]] = [],
        laps: [DateInterval] = [],
        kilocalories: Double? = nil,
        sensors: [Sensor] = []
    ) {
        self.activity = activity
        self.start = start
        self.end = end
        self.pauses = pauses
        self.heartRates = heartRates
        self.beatRuns = beatRuns
        self.laps = laps
        self.kilocalories = kilocalories
        self.sensors = sensors
    }

    public static func == (lhs: ActivityRecording, rhs: ActivityRecording) -> Bool {
        lhs.activity == rhs.activity && lhs.start == rhs.start && lhs.end == rhs.end && lhs.pauses == rhs.pauses
            && lhs.heartRates.map(\.date) == rhs.heartRates.map(\.date)
            && lhs.heartRates.map(\.bpm) == rhs.heartRates.map(\.bpm) && lhs.beatRuns == rhs.beatRuns
            && lhs.laps == rhs.laps && lhs.kilocalories == rhs.kilocalories && lhs.sensors == rhs.sensors
    }

    /// Seconds of the interval that were not paused.
    func timerTime(of interval: DateInterval) -> TimeInterval {
        let paused = pauses.compactMap { $0.intersection(with: interval)?.duration }.reduce(0, +)
        return max(0, interval.duration - paused)
    }
}

/// The FIT activity file of a recording, as the FIT SDK profile defines it.
public enum FITActivityFile {
    /// FIT's sport and sub-sport for an activity.
    static func sport(_ activity: WorkoutActivityType) -> (sport: UInt64, subSport: UInt64) {
        switch activity {
        case .running: (1, 0)
        case .cycling: (2, 0)
        case .walking: (11, 0)
        case .hiking: (17, 0)
        case .rowing: (15, 0)
        case .swimming: (5, 0)
        case .elliptical: (4, 15)
        case .stairClimbing: (4, 16)
        case .highIntensityIntervalTraining: (10, 26)
        case .functionalStrengthTraining, .traditionalStrengthTraining: (10, 20)
        case .yoga: (10, 43)
        default: (0, 0)
        }
    }

    // Message numbers, field numbers and enum values from the FIT SDK profile (21.218).
    private enum Message {
        static let fileID: UInt16 = 0
        static let session: UInt16 = 18
        static let lap: UInt16 = 19
        static let record: UInt16 = 20
        static let event: UInt16 = 21
        static let deviceInfo: UInt16 = 23
        static let activity: UInt16 = 34
        static let hrv: UInt16 = 78
    }

    private typealias Field = FITWriter.Field

    /// The file's bytes.
    public static func encode(_ recording: ActivityRecording) -> [UInt8] {
        var writer = FITWriter()
        let timestamp = Field(number: 253, type: .uint32)
        func time(_ date: Date) -> UInt64 { FITWriter.timestamp(date) }
        func milliseconds(_ seconds: TimeInterval) -> UInt64 { UInt64(max(0, (seconds * 1000).rounded())) }
        func bpm(_ value: Double?) -> UInt64 {
            guard let value, value.isFinite, value >= 0, value < 255 else { return 0xFF }
            return UInt64(value.rounded())
        }
        let (sport, subSport) = sport(recording.activity)

        // file_id: an activity file, from a development manufacturer.
        writer.message(
            Message.fileID,
            [
                (Field(number: 0, type: .enumeration), [4]), (Field(number: 1, type: .uint16), [255]),
                (Field(number: 2, type: .uint16), [1]), (Field(number: 4, type: .uint32), [time(recording.start)]),
                (Field(number: 8, type: .string, count: 8), FITWriter.stringValues("systole", count: 8)),
            ]
        )
        for (index, sensor) in recording.sensors.enumerated() {
            writer.message(
                Message.deviceInfo,
                [
                    (timestamp, [time(recording.start)]), (Field(number: 0, type: .uint8), [UInt64(index + 1)]),
                    (Field(number: 2, type: .uint16), [UInt64(sensor.fitManufacturer ?? 255)]),
                    (Field(number: 27, type: .string, count: 32), FITWriter.stringValues(sensor.name ?? "", count: 32)),
                ]
            )
        }

        // The timer: started, stopped at each pause and started at each resume, stopped at the end.
        func timer(_ date: Date, start: Bool) {
            writer.message(
                Message.event,
                [
                    (timestamp, [time(date)]), (Field(number: 0, type: .enumeration), [0]),
                    (Field(number: 1, type: .enumeration), [start ? 0 : 4]),
                ]
            )
        }
        var events: [(Date, Bool)] = [(recording.start, true)]
        for pause in recording.pauses.sorted(by: { $0.start < $1.start }) {
            events += [(pause.start, false), (pause.end, true)]
        }
        var readings = recording.heartRates.sorted { $0.date < $1.date }[...]
        var runs = recording.beatRuns[...]
        for (date, start) in events {
            while let reading = readings.first, reading.date < date {
                writer.message(
                    Message.record,
                    [(timestamp, [time(reading.date)]), (Field(number: 3, type: .uint8), [bpm(reading.bpm)])]
                )
                readings = readings.dropFirst()
            }
            timer(date, start: start)
        }
        for reading in readings {
            writer.message(
                Message.record,
                [(timestamp, [time(reading.date)]), (Field(number: 3, type: .uint8), [bpm(reading.bpm)])]
            )
        }
        // hrv: RR intervals in seconds (scale 1000), five to a message as Garmin devices write them; each run
        // starts a message of its own, so no interval spans a gap.
        while let run = runs.first {
            runs = runs.dropFirst()
            var rest = run[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(5)
                rest = rest.dropFirst(chunk.count)
                writer.message(
                    Message.hrv,
                    [(Field(number: 0, type: .uint16, count: 5), chunk.map { UInt64(min(65.534, max(0, $0)) * 1000) })]
                )
            }
        }
        timer(recording.end, start: false)

        let whole = DateInterval(start: recording.start, end: max(recording.start, recording.end))
        let laps = recording.laps.isEmpty ? [whole] : recording.laps
        let heartRates = recording.heartRates
        func statistics(_ interval: DateInterval) -> (average: UInt64, maximum: UInt64) {
            let inside = heartRates.filter { interval.contains($0.date) }.map(\.bpm)
            guard !inside.isEmpty else { return (0xFF, 0xFF) }
            return (bpm(inside.reduce(0, +) / Double(inside.count)), bpm(inside.max()))
        }
        let calories = recording.kilocalories.map { UInt64(max(0, min(65_534, $0.rounded()))) } ?? 0xFFFF
        for (index, lap) in laps.enumerated() {
            let (average, maximum) = statistics(lap)
            writer.message(
                Message.lap,
                [
                    (Field(number: 254, type: .uint16), [UInt64(index)]), (timestamp, [time(lap.end)]),
                    (Field(number: 0, type: .enumeration), [9]), (Field(number: 1, type: .enumeration), [1]),
                    (Field(number: 2, type: .uint32), [time(lap.start)]),
                    (Field(number: 7, type: .uint32), [milliseconds(lap.duration)]),
                    (Field(number: 8, type: .uint32), [milliseconds(recording.timerTime(of: lap))]),
                    (Field(number: 11, type: .uint16), [laps.count == 1 ? calories : 0xFFFF]),
                    (Field(number: 15, type: .uint8), [average]), (Field(number: 16, type: .uint8), [maximum]),
                    (Field(number: 25, type: .enumeration), [sport]),
                ]
            )
        }
        let (average, maximum) = statistics(whole)
        writer.message(
            Message.session,
            [
                (Field(number: 254, type: .uint16), [0]), (timestamp, [time(recording.end)]),
                (Field(number: 0, type: .enumeration), [8]), (Field(number: 1, type: .enumeration), [1]),
                (Field(number: 2, type: .uint32), [time(recording.start)]),
                (Field(number: 5, type: .enumeration), [sport]), (Field(number: 6, type: .enumeration), [subSport]),
                (Field(number: 7, type: .uint32), [milliseconds(whole.duration)]),
                (Field(number: 8, type: .uint32), [milliseconds(recording.timerTime(of: whole))]),
                (Field(number: 11, type: .uint16), [calories]), (Field(number: 16, type: .uint8), [average]),
                (Field(number: 17, type: .uint8), [maximum]), (Field(number: 25, type: .uint16), [0]),
                (Field(number: 26, type: .uint16), [UInt64(laps.count)]),
            ]
        )
        writer.message(
            Message.activity,
            [
                (timestamp, [time(recording.end)]),
                (Field(number: 0, type: .uint32), [milliseconds(recording.timerTime(of: whole))]),
                (Field(number: 1, type: .uint16), [1]), (Field(number: 2, type: .enumeration), [0]),
                (Field(number: 3, type: .enumeration), [26]), (Field(number: 4, type: .enumeration), [1]),
            ]
        )
        return writer.bytes()
    }
}
