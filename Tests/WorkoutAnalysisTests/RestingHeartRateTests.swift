import Foundation
import Testing

@testable import WorkoutAnalysis

/// The lowest sustained heart rate: the lowest five-minute mean, only over readings that run on without a silence.
@Suite struct RestingHeartRateTests {
    static func recording(_ stretches: [(seconds: Int, bpm: Double, silenceAfter: Double)]) -> ActivityRecording {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        var recording = ActivityRecording(id: UUID(), activity: .other, start: start, end: start)
        var time = 0.0
        for stretch in stretches {
            for _ in 0..<stretch.seconds {
                recording.readings.append(.init(date: start + time, bpm: stretch.bpm))
                time += 1
            }
            time += stretch.silenceAfter
        }
        recording.end = start + time
        return recording
    }

    @Test func theLowestFiveMinutesCountOnlyWhereTheReadingsRunOnForThem() {
        // Six minutes at 58 between stretches at 120: a whole window lies in the 58s.
        #expect(Self.recording([(600, 120, 0), (360, 58, 0), (600, 120, 0)]).lowestSustainedHeartRate == 58)
        // Four minutes at 50 twice, a 10 s silence between: no five minutes of 50s alone, so the low mixes in 120s.
        let lowest =
            Self.recording([(600, 120, 0), (240, 50, 10), (240, 50, 0), (600, 120, 0)])
            .lowestSustainedHeartRate ?? 0
        #expect(lowest > 60 && lowest < 70, "\(lowest)")
        // The readings must cover the five minutes: the last stands at most 5 s.
        #expect(Self.recording([(290, 60, 0)]).lowestSustainedHeartRate == nil)
        #expect(Self.recording([(296, 60, 0)]).lowestSustainedHeartRate == 60)
        // Readings that are not heart rates are left out, not taken as lows.
        var withZeros = Self.recording([(400, 70, 0)])
        withZeros.readings[100].bpm = 0
        withZeros.readings[200].bpm = .nan
        #expect(withZeros.lowestSustainedHeartRate == 70)
    }
}
