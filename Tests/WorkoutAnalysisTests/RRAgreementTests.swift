import Foundation
import Testing
import WorkoutAnalysis

/// The ECG's RR intervals paired with the strap's by their intervals, whatever the two timelines' offsets.
@Suite struct RRAgreementTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Beats at the intervals `milliseconds` (in 1/1024 s ticks, as a strap sends them) from `start`.
    func beats(_ milliseconds: [Double], from start: Date, gapAt gap: Int? = nil) -> [ActivityRecording.Beat] {
        var date = start
        return milliseconds.enumerated().map { index, interval in
            date = date.addingTimeInterval(interval / 1000)
            return ActivityRecording.Beat(
                date: date,
                rrTicks: UInt16((interval * 1.024).rounded()),
                precededByGap: index == gap
            )
        }
    }

    /// Intervals that vary as a heart's do (a breathing rhythm and a drift).
    func intervals(_ count: Int, seed: Double) -> [Double] {
        (0..<count).map { index -> Double in
            let breathing: Double = 40 * sin(Double(index) / 4 + seed)
            return 700 + breathing + Double(index % 7) * 3
        }
    }

    @Test func theSameBeatsPairAcrossAnOffsetAndAGapAndTheirDifferenceIsMeasured() throws {
        let rr = intervals(200, seed: 0)
        let strap = beats(rr, from: t0)
        // The ECG's beats: 0.4 s later on its timeline, each interval off by up to 4 ms (a 130 Hz sample's
        // rounding), starting at beat 20, with 30 beats lost after beat 100.
        let noisy = rr.enumerated().map { index, interval -> Double in interval + Double(index % 3 - 1) * 4 }
        let first = beats(Array(noisy[20..<100]), from: strap[19].date.addingTimeInterval(0.4))
        let second = beats(Array(noisy[130...]), from: strap[129].date.addingTimeInterval(0.4), gapAt: 0)
        let agreement = try #require(RRAgreement(strap: strap, ecg: first + second, rate: 130))
        #expect(agreement.ecgBeats == 150)
        #expect(agreement.pairedBeats == 150)
        #expect(agreement.withinTolerance == 1)
        #expect(abs(agreement.meanDifference - 8.0 / 3) < 0.6, "\(agreement.meanDifference)")
        #expect(abs(agreement.tolerance - 1000.0 / 130) < 1e-9)
    }

    @Test func beatsOfAnotherHeartDoNotPair() {
        let strap = beats(intervals(100, seed: 0), from: t0)
        let other = beats(intervals(100, seed: 2).map { $0 * 0.8 }, from: t0)
        #expect(RRAgreement(strap: strap, ecg: other, rate: 130) == nil)
        #expect(RRAgreement(strap: [], ecg: other, rate: 130) == nil)
    }

    @Test func aDisagreementIsCountedAsOne() throws {
        let rr = intervals(60, seed: 1)
        var ecgRR = rr
        // Three intervals split wrongly by the ECG (a missed R-peak's neighbours), 40 ms off each.
        for index in [10, 30, 50] { ecgRR[index] += 40 }
        let agreement = try #require(
            RRAgreement(strap: beats(rr, from: t0), ecg: beats(ecgRR, from: t0.addingTimeInterval(0.1)), rate: 130)
        )
        #expect(agreement.pairedBeats == 60)
        #expect(abs(agreement.withinTolerance - 57.0 / 60) < 1e-9)
    }
}
