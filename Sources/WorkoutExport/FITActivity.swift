import Foundation
import WorkoutAnalysis
import WorkoutKit

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
        static let userProfile: UInt16 = 3
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
        let collected = CollectedBytes()
        // A sink that keeps everything never throws.
        try? write(recording, to: collected.sink)
        return collected.bytes
    }

    /// Writes the file to `sink` a chunk at a time. The header holds the size of what follows, so the messages are
    /// made twice: counted first, then written.
    public static func write(_ recording: ActivityRecording, to sink: @escaping ExportSink) throws {
        var counter = FITWriter()
        messages(of: recording, into: &counter)
        var writer = FITWriter(dataSize: counter.dataSize, sink: sink)
        messages(of: recording, into: &writer)
        try writer.finish()
    }

    /// Every message of the file, in order.
    static func messages(of recording: ActivityRecording, into writer: inout FITWriter) {
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
        // user_profile: the athlete's name as friendly_name, when one is named.
        if let athlete = recording.athlete {
            writer.message(
                Message.userProfile,
                [(Field(number: 0, type: .string, count: 64), FITWriter.stringValues(athlete, count: 64))]
            )
        }
        for (index, sensor) in recording.sensors.enumerated() {
            let battery = sensor.batteryPercent.map { UInt64(max(0, min(100, $0))) } ?? 0xFF
            writer.message(
                Message.deviceInfo,
                [
                    (timestamp, [time(recording.start)]), (Field(number: 0, type: .uint8), [UInt64(index + 1)]),
                    (Field(number: 2, type: .uint16), [UInt64(sensor.fitManufacturer ?? 0xFFFF)]),
                    (Field(number: 27, type: .string, count: 32), FITWriter.stringValues(sensor.name ?? "", count: 32)),
                    (Field(number: 32, type: .uint8), [battery]),
                ]
            )
        }

        // Events in time order: the timer started, stopped at each pause and started at each resume, stopped at
        // the end; markers as user markers (FIT's event has no text: the marker's text goes into TCX and CSV).
        enum Event {
            case timer(start: Bool)
            case marker
        }
        var events: [(Date, Event)] = [(recording.start, .timer(start: true))]
        for pause in recording.pauses.sorted(by: { $0.start < $1.start }) {
            events += [(pause.start, .timer(start: false)), (pause.end, .timer(start: true))]
        }
        events += recording.markers.map { ($0.date, .marker) }
        events.sort { $0.0 < $1.0 }
        func write(_ event: Event, at date: Date) {
            let (kind, type): (UInt64, UInt64) =
                switch event {
                case .timer(let start): (0, start ? 0 : 4)
                case .marker: (32, 3)
                }
            writer.message(
                Message.event,
                [
                    (timestamp, [time(date)]), (Field(number: 0, type: .enumeration), [kind]),
                    (Field(number: 1, type: .enumeration), [type]),
                ]
            )
        }
        func record(_ reading: ActivityRecording.Reading) {
            writer.message(
                Message.record,
                [(timestamp, [time(reading.date)]), (Field(number: 3, type: .uint8), [bpm(reading.bpm)])]
            )
        }
        var readings = recording.readings[...]
        for (date, event) in events {
            while let reading = readings.first, reading.date < date {
                record(reading)
                readings = readings.dropFirst()
            }
            write(event, at: date)
        }
        readings.forEach(record)
        // hrv: RR intervals in seconds (scale 1000), five to a message as Garmin devices write them; each run
        // starts a message of its own, so no interval spans a gap.
        for run in recording.beatRuns {
            var rest = run[...]
            while !rest.isEmpty {
                let chunk = rest.prefix(5)
                rest = rest.dropFirst(chunk.count)
                writer.message(
                    Message.hrv,
                    [
                        (
                            Field(number: 0, type: .uint16, count: 5),
                            chunk.map { UInt64((min(65.534, $0.seconds) * 1000).rounded()) }
                        )
                    ]
                )
            }
        }
        write(.timer(start: false), at: recording.end)

        let whole = DateInterval(start: recording.start, end: max(recording.start, recording.end))
        let laps = recording.lapsOrWhole
        func statistics(_ interval: DateInterval) -> (average: UInt64, maximum: UInt64) {
            guard let heartRate = recording.heartRate(in: interval) else { return (0xFF, 0xFF) }
            return (bpm(heartRate.average), bpm(heartRate.maximum))
        }
        // Each lap's share of the energy, worked out as the TCX file does (LapEnergy.swift).
        func calories(_ kilocalories: Double?) -> UInt64 {
            guard let kilocalories else { return 0xFFFF }
            return UInt64(max(0, min(65_534, kilocalories.rounded())))
        }
        let lapCalories = recording.kilocalories(ofLaps: laps)
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
                    (Field(number: 11, type: .uint16), [calories(lapCalories[index])]),
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
                (Field(number: 11, type: .uint16), [calories(recording.kilocalories(in: whole))]),
                (Field(number: 16, type: .uint8), [average]),
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
    }
}
