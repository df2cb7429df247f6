import Foundation
import Testing
import WorkoutAnalysis
import WorkoutKit

/// The recording built from a stored workout: pauses from events, laps, markers, the main sensor's readings only,
/// and energy measured or the stored estimate, never both.
struct RecordingFromWorkoutTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    static let strap = Device(name: "Polar H10", address: "A0:9E:1A:00:00:01", manufacturer: "Polar Electro Oy")
    static let earbuds = Device(name: "Powerbeats", address: "A0:9E:1A:00:00:02", manufacturer: "Apple, Inc.")

    static func workout(
        events: [WorkoutEvent],
        metadata: [String: MetadataValue] = [:],
        energy: Double? = nil
    )
        -> Workout
    {
        var statistics: [String: Statistics] = [:]
        if let energy {
            var sum = Statistics(quantityType: .activeEnergyBurned, startDate: start, endDate: start + 600)
            sum.add(energy, start: start + 10, end: start + 20)
            statistics[QuantityType.activeEnergyBurned.identifier] = sum
        }
        return Workout(
            id: UUID(),
            configuration: WorkoutConfiguration(activityType: .cycling),
            startDate: start,
            endDate: start + 600,
            duration: 540,
            events: events,
            activities: [],
            metadata: metadata,
            statistics: statistics,
            devices: [strap, earbuds]
        )
    }

    static func reading(_ second: Double, _ bpm: Double, _ device: Device) -> Sample {
        .quantity(
            QuantitySample(
                type: .heartRate,
                quantity: Quantity(bpm, .countPerMinute),
                start: start + second,
                end: start + second,
                device: device
            )
        )
    }

    @Test func pausesLapsMarkersAndTheMainSensor() {
        let events = [
            WorkoutEvent(type: .pause, start: Self.start + 100), WorkoutEvent(type: .resume, start: Self.start + 160),
            WorkoutEvent(type: .lap, start: Self.start, end: Self.start + 300),
            WorkoutEvent(type: .lap, start: Self.start + 300, end: Self.start + 600),
            WorkoutEvent(
                type: .marker,
                start: Self.start + 50,
                metadata: [ActivityRecording.markerTextKey: .string("gel")]
            ),
            // A marker systoled itself wrote (a gap) is not a user's marker.
            WorkoutEvent(type: .marker, start: Self.start + 70, metadata: ["systole.gap": .string("not running")]),
            WorkoutEvent(type: .pause, start: Self.start + 590),
            // Contact lost by the strap, and by the earbuds (not the sensor of the readings).
            WorkoutEvent(
                type: .marker,
                start: Self.start + 20,
                end: Self.start + 25,
                metadata: [ActivityRecording.contactLostKey: .string(Self.strap.address!)]
            ),
            WorkoutEvent(
                type: .marker,
                start: Self.start + 30,
                end: Self.start + 31,
                metadata: [ActivityRecording.contactLostKey: .string(Self.earbuds.address!)]
            ),
        ]
        let samples =
            (0..<10).map { Self.reading(Double($0), 120, Self.strap) }
            + (0..<3).map { Self.reading(Double($0) + 0.5, 90, Self.earbuds) }
            + [
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: Self.start,
                        end: Self.start + 2,
                        beats: [.init(timeSinceStart: 0.5, rrTicks: 512), .init(timeSinceStart: 1, rrTicks: 512)],
                        device: Self.strap
                    )
                )
            ]
        let recording = ActivityRecording(
            workout: Self.workout(
                events: events,
                metadata: [
                    ActivityRecording.batteryKey(Self.strap.address!): .number(73),
                    ActivityRecording.reportsContactKey(Self.strap.address!): .bool(true),
                ]
            ),
            samples: samples
        )
        #expect(
            recording.pauses == [
                DateInterval(start: Self.start + 100, end: Self.start + 160),
                DateInterval(start: Self.start + 590, end: Self.start + 600),
            ]
        )
        #expect(recording.laps.count == 2)
        #expect(recording.markers == [.init(date: Self.start + 50, text: "gel")])
        #expect(recording.contactLost == [DateInterval(start: Self.start + 20, end: Self.start + 25)])
        #expect(recording.reportsContact == true)
        // The strap has more readings: its readings and beats, none of the earbuds'.
        #expect(recording.readings.count == 10 && recording.readings.allSatisfy { $0.bpm == 120 })
        #expect(recording.beats.map(\.date) == [Self.start + 0.5, Self.start + 1])
        #expect(recording.sensors.map(\.fitManufacturer) == [123, nil])
        #expect(recording.sensors.map(\.batteryPercent) == [73, nil])
        #expect(recording.energy == nil)
    }

    @Test func measuredEnergyWinsAndAnEstimateIsMarkedAsOne() {
        let estimate = [ActivityRecording.estimatedEnergyKey: MetadataValue.number(500)]
        let estimated = ActivityRecording(workout: Self.workout(events: [], metadata: estimate), samples: [])
        #expect(estimated.energy == .init(kilojoules: 500, isEstimated: true))
        let measured = ActivityRecording(workout: Self.workout(events: [], metadata: estimate, energy: 42), samples: [])
        #expect(measured.energy == .init(kilojoules: 42, isEstimated: false))
    }
}

/// A lap's heart rate: a reading on the line between two laps is the later lap's, readings while paused count in
/// neither (as the workout's statistics leave them out), and elapsed time stops at the end.
struct LapHeartRateTests {
    @Test func theLineBetweenLapsAndPauses() throws {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let recording = ActivityRecording(
            activity: .running,
            start: start,
            end: start + 10,
            pauses: [DateInterval(start: start + 2, end: start + 4)],
            readings: (0...10).map { .init(date: start + Double($0), bpm: 100 + Double($0)) }
        )
        let first = try #require(recording.heartRate(in: DateInterval(start: start, end: start + 5)))
        // 100, 101 and 104 (102 and 103 were paused; 105 is on the line and the second lap's).
        let expected: Double = 305.0 / 3
        #expect(first.average == expected)
        #expect(first.maximum == 104)
        let second = try #require(recording.heartRate(in: DateInterval(start: start + 5, end: start + 10)))
        #expect(second.maximum == 110)
        #expect(second.average == 107.5)
        #expect(recording.elapsed(at: start + 30) == 8)
    }
}
