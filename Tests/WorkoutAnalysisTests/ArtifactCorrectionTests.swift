import Foundation
import Testing

@testable import WorkoutAnalysis

/// The parts of the artifact correction, each against a plain reading of what NeuroKit and pandas do.
@Suite struct ArtifactCorrectionTests {
    /// 60 intervals of a heart at 800 ms (noise and breathing, so that the thresholds are not 0).
    static let normal = RRSeries.clean(count: 60, milliseconds: 800, seed: 3)

    @Test func aMissedBeatIsPutBackHalfwayRoundedDown() {
        let ticks = Array(Self.normal[..<30]) + [Self.normal[30] + Self.normal[31]] + Array(Self.normal[32...])
        let peaks = RRSeries.peaks(ticks)
        let result = ArtifactCorrection.correct(peaks: peaks)
        // Beat 31 ends the long interval: a beat goes back between beats 30 and 31.
        let added = peaks[30] + (peaks[31] - peaks[30]) / 2
        #expect(result.corrections == [.init(kind: .missed, sample: added)])
        #expect(result.correctedBeats == [added])
        #expect(result.peaks == Array(peaks[...30]) + [added] + Array(peaks[31...]))
    }

    /// The classification takes the compensatory beat for the ectopic one and the premature beat for a short one
    /// (NeuroKit 0.2.13 finds and moves the same, to the same samples): the ectopic beat is moved first, halfway
    /// between its neighbours, then the short one halfway between the beat before it and where the next one is now.
    @Test func aPrematureBeatAndItsCompensatoryPauseAreMovedHalfway() {
        var ticks = Self.normal
        // Beat 31 early by 35 % of its interval, so the next interval is longer by as much.
        let early = UInt16(Double(ticks[30]) * 0.35)
        ticks[30] -= early
        ticks[31] += early
        let peaks = RRSeries.peaks(ticks)
        let result = ArtifactCorrection.correct(peaks: peaks)
        let compensatory = peaks[31] + (peaks[33] - peaks[31]) / 2
        let premature = peaks[30] + (compensatory - peaks[30]) / 2
        #expect(
            result.corrections == [
                .init(kind: .ectopic, sample: compensatory), .init(kind: .longShort, sample: premature),
            ]
        )
        #expect(result.peaks == Array(peaks[...30]) + [premature, compensatory] + Array(peaks[33...]))
        #expect(result.correctedBeats == [premature, compensatory])
    }

    /// An extra beat splitting an interval 2 : 3 is removed, and the beat after it, now short of its neighbour on
    /// the other side, moved halfway between its neighbours (NeuroKit 0.2.13 does the same).
    @Test func anExtraBeatIsRemoved() {
        var ticks = Self.normal
        ticks.insert(ticks[30] * 2 / 5, at: 30)
        ticks[31] -= ticks[30]
        let peaks = RRSeries.peaks(ticks)
        let result = ArtifactCorrection.correct(peaks: peaks)
        let moved = peaks[30] + (peaks[33] - peaks[30]) / 2
        #expect(result.corrections == [.init(kind: .extra, sample: peaks[31]), .init(kind: .longShort, sample: moved)])
        #expect(result.peaks == Array(peaks[...30]) + [moved] + Array(peaks[33...]))
        // Two corrected beats: the one removed, and the one moved.
        #expect(result.correctedBeats == [peaks[31], moved])
    }

    @Test func aPerfectlyRegularSeriesHasNoThresholdAndNoArtifacts() {
        // Every difference 0: the quartiles, and so the thresholds, are 0, and NeuroKit then judges nothing.
        let peaks = RRSeries.peaks([UInt16](repeating: 1024, count: 40) + [2048] + [UInt16](repeating: 1024, count: 40))
        #expect(ArtifactCorrection.correct(peaks: peaks) == .init(peaks: peaks, corrections: [], correctedBeats: []))
        #expect(ArtifactCorrection.correct(peaks: []).peaks.isEmpty)
        #expect(ArtifactCorrection.correct(peaks: [0]).peaks == [0])
        #expect(ArtifactCorrection.correct(peaks: [0, 1024]).peaks == [0, 1024])
    }

    /// Runs of every size from a single interval to 1500, at rates from 46 to 180 bpm, with no artifacts or with
    /// one to three kinds of them, sparse or dense: corrected to exactly NeuroKit's positions, with as many
    /// corrections and corrected beats. (During development the same held for 800 such runs: 27 393 corrections,
    /// 20 793 corrected beats.)
    @Test func runsOfEverySizeAreCorrectedExactlyAsNeuroKitCorrectsThem() async throws {
        var random = RRSeries.Random(seed: 99)
        var runs: [[UInt16]] = []
        for number in 0..<60 {
            let count =
                number % 3 == 0 ? Int.random(in: 1...25, using: &random) : Int.random(in: 30...1500, using: &random)
            let clean = RRSeries.clean(
                count: count,
                milliseconds: Double.random(in: 330...1300, using: &random),
                seed: UInt64(number) + 1000
            )
            let kinds = RRSeries.Artifact.allCases.shuffled(using: &random).prefix(
                Int.random(in: 0...3, using: &random)
            )
            let every = Int.random(in: 5...80, using: &random)
            runs.append(count < 30 ? clean : RRSeries.withArtifacts(clean, Array(kinds), every: every, seed: 7).ticks)
        }
        let reference = try await NeuroKitReference.of(runs, origins: RRSeries.origins(runs))
        var changed = 0
        for (index, (ticks, theirs)) in zip(runs, reference.runs).enumerated() {
            let ours = ArtifactCorrection.correct(peaks: RRSeries.peaks(ticks))
            #expect(ours.peaks == theirs.peaks, "run \(index) of \(ticks.count) intervals")
            #expect(ours.corrections.count == theirs.changes, "run \(index) of \(ticks.count) intervals")
            #expect(ours.correctedBeats.count == theirs.corrected, "run \(index) of \(ticks.count) intervals")
            changed += ours.correctedBeats.count
        }
        #expect(changed > 500, "the runs exercise the correction")
    }

    @Test func reflectionIsNumpys() {
        // np.pad(np.arange(n), 2, "reflect") for n = 1…5.
        let numpy: [[Int]] = [
            [0, 0, 0, 0, 0], [0, 1, 0, 1, 0, 1], [2, 1, 0, 1, 2, 1, 0], [2, 1, 0, 1, 2, 3, 2, 1],
            [2, 1, 0, 1, 2, 3, 4, 3, 2],
        ]
        for (offset, expected) in numpy.enumerated() {
            let count = offset + 1
            #expect((-2..<count + 2).map { ArtifactDetection.reflected($0, count: count) } == expected)
        }
    }

    @Test func rollingStatisticsArePandas() {
        // pandas: rolling(5, center=True, min_periods=1).quantile(0.25) and .median() of these values.
        let values = [5.0, 1, 4, 2, 8, 3, 9, 7, 6, 0.5, 11]
        let window = CenteredRollingWindow(width: 5)
        #expect(window.quartiles(values).lower == [2.5, 1.75, 2, 2, 3, 3, 6, 3, 6, 4.625, 3.25])
        #expect(window.medians(values) == [4, 3, 4, 3, 4, 7, 7, 6, 7, 6.5, 6])

        // Against sorting each window, on a longer series with repeated values.
        var random = RRSeries.Random(seed: 5)
        let long = (0..<500).map { _ in Double(Int.random(in: 0..<40, using: &random)) }
        let wide = CenteredRollingWindow(width: 91)
        let (lower, upper) = wide.quartiles(long)
        for index in long.indices {
            let sorted = long[max(0, index - 45)...min(long.count - 1, index + 45)].sorted()
            func quantile(_ p: Double) -> Double {
                let position = p * Double(sorted.count - 1)
                let low = Int(position.rounded(.down))
                return low + 1 < sorted.count
                    ? sorted[low] + (sorted[low + 1] - sorted[low]) * (position - Double(low)) : sorted[low]
            }
            #expect(lower[index] == quantile(0.25) && upper[index] == quantile(0.75))
        }
    }

    /// NeuroKit's `_update_indices` walks the sources one by one, comparing each position as already moved; the
    /// binary search must give the same for both directions.
    @Test func shiftingPositionsIsNeuroKitsWalk() {
        func walk(_ positions: [Int], _ sources: [Int], _ step: Int) -> [Int] {
            var positions = positions
            for source in sources { positions = positions.map { $0 > source ? $0 + step : $0 } }
            return Array(Set(positions)).sorted()
        }
        // Removing beats 3 and 4 moves 5 only to 4, as NeuroKit does.
        #expect(ArtifactCorrection.shifted([5], by: [3, 4], step: -1) == [4])
        var random = RRSeries.Random(seed: 9)
        for _ in 0..<500 {
            let all = Array(0..<60).shuffled(using: &random)
            let sources = all[..<Int.random(in: 1...8, using: &random)].sorted()
            let positions = all[20..<Int.random(in: 21...30, using: &random)].sorted()
            for step in [-1, 1] {
                #expect(
                    ArtifactCorrection.shifted(positions, by: sources, step: step) == walk(positions, sources, step)
                )
            }
        }
    }
}
