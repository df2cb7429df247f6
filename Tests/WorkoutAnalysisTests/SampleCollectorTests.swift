import Foundation
import Testing
import WorkoutAnalysis
import WorkoutKit

/// A workout's samples gathered a chunk at a time, in any order, make the recording the whole array makes; past
/// the limit the collector refuses as soon as the count passes it.
struct SampleCollectorTests {
    typealias Fixture = RecordingFromWorkoutTests

    static func beats(_ second: Double, _ count: Int, _ device: Device) -> Sample {
        let beats = (1...count).map { HeartbeatSeriesSample.Beat(timeSinceStart: Double($0) * 0.8, rrTicks: 819) }
        return .heartbeatSeries(
            HeartbeatSeriesSample(
                start: Fixture.start + second,
                end: Fixture.start + second + Double(count) * 0.8,
                beats: beats,
                device: device
            )
        )
    }

    static func energy(_ second: Double, _ kilojoules: Double) -> Sample {
        .quantity(
            QuantitySample(
                type: .activeEnergyBurned,
                quantity: Quantity(kilojoules, .kilojoule),
                start: Fixture.start + second - 10,
                end: Fixture.start + second,
                device: Fixture.strap
            )
        )
    }

    @Test func chunksInAnyOrderMakeTheRecordingTheWholeArrayMakes() throws {
        var samples: [Sample] = (0..<300).map { Fixture.reading(Double($0), 120 + Double($0 % 7), Fixture.strap) }
        samples += (0..<100).map { Fixture.reading(Double($0) * 3 + 0.5, 90, Fixture.earbuds) }
        samples += (0..<5).map { Self.beats(Double($0) * 60, 70, Fixture.strap) }
        samples += (1...3).map { Self.energy(Double($0) * 100, 12.5) }
        let workout = Fixture.workout(events: [WorkoutEvent(type: .lap, start: Fixture.start, end: Fixture.start + 600)]
        )
        let whole = ActivityRecording(workout: workout, samples: samples)
        var random = SystemRandomNumberGenerator()
        let shuffled = samples.shuffled(using: &random)
        var collector = SampleCollector()
        for start in stride(from: 0, to: shuffled.count, by: 37) {
            try collector.add(shuffled[start..<min(start + 37, shuffled.count)])
        }
        // Readings of both sensors, beats and energy measurements all count toward the limit.
        #expect(collector.count == 300 + 100 + 5 * 70 + 3)
        let chunked = ActivityRecording(workout: workout, collected: collector)
        #expect(chunked.readings == whole.readings)
        #expect(chunked.readings.count == 300)
        #expect(chunked.beats == whole.beats)
        #expect(chunked.energyReadings == whole.energyReadings)
        #expect(chunked.readings.map(\.date) == chunked.readings.map(\.date).sorted())
    }

    @Test func aWorkoutPastTheLimitIsRefusedAsSoonAsTheCountPassesIt() throws {
        var collector = SampleCollector(limit: 100)
        try collector.add((0..<60).map { Fixture.reading(Double($0), 120, Fixture.strap) })
        #expect(throws: SampleCollector.TooLarge.self) {
            try collector.add([Self.beats(60, 30, Fixture.strap), Self.beats(90, 30, Fixture.strap)])
        }
        // The second series was not taken: the count stopped where it passed the limit.
        #expect(collector.count == 120)
        let refusal = SampleCollector.TooLarge(limit: 100)
        #expect("\(refusal)".contains("more than 100 heart-rate readings, beats and energy measurements"))
    }
}
