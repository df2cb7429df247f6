import Foundation
import Testing

@testable import WorkoutAnalysis

/// HRV with artifact correction, checked against NeuroKit2 on the same beats (clean, with ectopic, missed and extra
/// beats, and in runs split by gaps, whole and per window), and by hand where the numbers are small enough.
@Suite struct HeartRateVariabilityTests {
    /// Compares systole and NeuroKit on `runs` recorded one after another with gaps between them: corrected
    /// positions run by run (exactly), beats changed, and the HRV of the workout and, with `window`, per window.
    @discardableResult
    func compareWithNeuroKit(
        _ runs: [[UInt16]],
        _ label: String,
        window: Double? = nil,
        leftOut: Set<Int> = []
    ) async throws -> HeartRateVariability {
        let origins = RRSeries.origins(runs)
        let recording = RRSeries.recording(runs, origins: origins)
        let duration = recording.end.timeIntervalSince(recording.start)
        let windowCount = window.map { Int((duration / $0).rounded(.up)) }
        let analysed = runs.indices.filter { !leftOut.contains($0) }
        let reference = try await NeuroKitReference.of(
            analysed.map { runs[$0] },
            origins: analysed.map { origins[$0] },
            window: window.map { ($0, windowCount!) }
        )
        for (index, theirs) in zip(analysed, reference.runs) {
            let ours = ArtifactCorrection.correct(peaks: RRSeries.peaks(runs[index]))
            #expect(ours.peaks == theirs.peaks, "\(label): run \(index) corrected as NeuroKit corrects it")
            #expect(ours.corrections.count == theirs.changes, "\(label): run \(index) corrections")
            #expect(ours.correctedBeats.count == theirs.corrected, "\(label): run \(index) corrected beats")
        }
        let workout = try #require(HeartRateVariability.workout(recording), "\(label)")
        NeuroKitReference.expectAgreement(workout, reference.all, label)
        #expect(workout.correctedBeats == reference.runs.map(\.corrected).reduce(0, +), "\(label)")
        #expect(workout.start == recording.start && workout.end == recording.end)

        if let window, let windowCount {
            let ours = HeartRateVariability.windows(recording, length: window)
            for (index, theirs) in reference.windows.enumerated() {
                let start = recording.start + Double(index) * window
                let mine = ours.first { $0.start == start }
                if let theirs, theirs.count >= HeartRateVariability.minimumIntervals {
                    NeuroKitReference.expectAgreement(mine, theirs, "\(label), window \(index)")
                    #expect(mine?.end == min(recording.end, start + window))
                } else {
                    #expect(mine == nil, "\(label): window \(index) has too few beats")
                }
            }
            #expect(ours.count <= windowCount)
        }
        return workout
    }

    @Test func aCleanSeriesAgreesWithNeuroKit() async throws {
        let ticks = RRSeries.clean(count: 1200, milliseconds: 760, seed: 11)
        let workout = try await compareWithNeuroKit([ticks], "clean")
        #expect(workout.beatCount == 1200)
        #expect(workout.correctedBeats <= 2, "a clean series needs (almost) no correction")
    }

    @Test(arguments: RRSeries.Artifact.allCases)
    func artifactsAreCorrectedAsNeuroKitCorrectsThem(_ kind: RRSeries.Artifact) async throws {
        let clean = RRSeries.clean(count: 1200, milliseconds: 700, seed: 21)
        let (ticks, injected) = RRSeries.withArtifacts(clean, [kind], every: 40, seed: 22)
        let workout = try await compareWithNeuroKit([ticks], "\(kind) beats")
        // Correction is really exercised: most artifacts are corrected, and they change the result by far more
        // than the tolerance.
        #expect(injected >= 25)
        #expect(workout.correctedBeats >= injected * 3 / 4, "\(kind): \(workout.correctedBeats) of \(injected)")
        let uncorrected = RRSeries.uncorrectedRMSSD([ticks])
        #expect(uncorrected - workout.rmssd > 20, "\(kind): RMSSD \(uncorrected) uncorrected, \(workout.rmssd)")
        let cleanWorkout = try #require(HeartRateVariability.workout(RRSeries.recording([clean], origins: [0.3])))
        #expect(abs(workout.rmssd - cleanWorkout.rmssd) < uncorrected - workout.rmssd)
    }

    @Test func runsSplitByGapsAgreeWithNeuroKitWholeAndPerWindow() async throws {
        // Three runs at different rates with all three kinds of artifact, and a run too short to analyse, which
        // NeuroKit is not given: systole must leave it out too.
        let kinds = RRSeries.Artifact.allCases
        let runs = [
            RRSeries.withArtifacts(RRSeries.clean(count: 500, milliseconds: 650, seed: 31), kinds, every: 30, seed: 1)
                .ticks,
            RRSeries.clean(count: 10, milliseconds: 1600, seed: 32),
            RRSeries.withArtifacts(RRSeries.clean(count: 400, milliseconds: 900, seed: 33), kinds, every: 45, seed: 2)
                .ticks,
            RRSeries.withArtifacts(RRSeries.clean(count: 700, milliseconds: 550, seed: 34), kinds, every: 35, seed: 3)
                .ticks,
        ]
        let workout = try await compareWithNeuroKit(runs, "runs with gaps", window: 300, leftOut: [1])
        #expect(workout.beatCount > 1500 && workout.correctedBeats > 30)
        #expect(HeartRateVariability.windows(RRSeries.recording(runs, origins: RRSeries.origins(runs))).count == 4)
    }

    /// Two runs of alternating intervals, small enough to check by hand: 40 intervals alternating 1000 and 1125 ms,
    /// a gap, then 40 alternating 875 and 1000 ms.
    /// Stored beats the radio's bounds would never let through (a store from elsewhere, an older systole): zero-length
    /// and longest intervals, and beats all at one instant. The analysis answers with finite numbers or none.
    @Test func intervalsNoStrapSendsGiveFiniteNumbersOrNone() {
        let start = RRSeries.start
        let cases: [[ActivityRecording.Beat]] = [
            (0..<200).map { .init(date: start + Double($0) * 0.4, rrTicks: $0 % 2 == 0 ? 0 : 410) },
            (0..<200).map { .init(date: start + Double($0) * 0.4, rrTicks: $0 % 3 == 0 ? 65_535 : 410) },
            (0..<200).map { _ in .init(date: start + 1, rrTicks: 410) },
            (0..<200).map { .init(date: start + Double($0) * 0.4, rrTicks: 0) },
        ]
        for beats in cases {
            let recording = ActivityRecording(activity: .running, start: start, end: start + 600, beats: beats)
            for hrv in [HeartRateVariability.workout(recording)].compactMap({ $0 })
                + HeartRateVariability.windows(recording)
            {
                let finite = [hrv.meanNN, hrv.sdnn, hrv.rmssd, hrv.pnn50].allSatisfy { $0.isFinite }
                #expect(finite, "\(hrv)")
            }
        }
    }

    @Test func aGapIsNeverBridgedCheckedByHand() throws {
        let first = (0..<40).map { UInt16($0 % 2 == 0 ? 1024 : 1152) }
        let second = (0..<40).map { UInt16($0 % 2 == 0 ? 896 : 1024) }
        let recording = RRSeries.recording([first, second], origins: RRSeries.origins([first, second]))
        let hrv = try #require(HeartRateVariability.workout(recording))
        #expect(hrv.correctedBeats == 0)
        #expect(hrv.beatCount == 80)
        // Mean: (40 × 1062.5 + 40 × 937.5) / 80.
        #expect(abs(hrv.meanNN - 1000) < 1e-9)
        // 40 intervals at the mean, 20 at +125 and 20 at −125 ms: √(40 × 125² / 79).
        #expect(abs(hrv.sdnn - (40 * 125.0 * 125 / 79).squareRoot()) < 1e-9)
        // Every difference within a run is 125 ms. Across the gap, 1125 → 875 would be 250 ms, and RMSSD
        // √((78 × 125² + 250²) / 79) ≈ 128.6: the gap bridged would show.
        #expect(abs(hrv.rmssd - 125) < 1e-9)
        // 78 differences over 50 ms of 80 intervals (79 bridged).
        #expect(abs(hrv.pnn50 - 97.5) < 1e-9)
    }

    /// Two runs at one rate with a gap of about one beat between them: corrected each on its own, nothing needs
    /// correcting; taken as one series, the interval across the gap would look like a missed beat and get one.
    @Test func correctionNeverBridgesAGap() throws {
        let first = RRSeries.clean(count: 300, milliseconds: 800, seed: 41)
        let second = RRSeries.clean(count: 300, milliseconds: 800, seed: 42)
        let origins = RRSeries.origins([first, second], gap: 0.8)
        let hrv = try #require(HeartRateVariability.workout(RRSeries.recording([first, second], origins: origins)))
        let separately = [first, second].map { ArtifactCorrection.correct(peaks: RRSeries.peaks($0)).correctedBeats }
        #expect(separately.allSatisfy { $0.isEmpty })
        #expect(hrv.correctedBeats == 0)
        // The same beats on one timeline, the gap included.
        let offset = Int(((origins[1] - origins[0]) * 1024).rounded())
        let bridged = RRSeries.peaks(first) + RRSeries.peaks(second).dropFirst().map { $0 + offset }
        #expect(ArtifactCorrection.correct(peaks: bridged).corrections.map(\.kind) == [.missed])
    }

    @Test func beatsInAPauseDoNotCountAndThePauseEndsTheRun() throws {
        let ticks = RRSeries.clean(count: 900, milliseconds: 800, seed: 51)
        let recording = RRSeries.recording([ticks], origins: [0.3])
        var paused = recording
        let pause = DateInterval(start: recording.start + 200, duration: 100)
        paused.pauses = [pause]
        // What the pause must amount to: its beats gone, and the first beat after it starting a run of its own.
        var expected = recording
        expected.beats = recording.beats.filter { !pause.contains($0.date) }
        let firstAfter = try #require(expected.beats.firstIndex { $0.date > pause.end })
        expected.beats[firstAfter].precededByGap = true
        let hrv = try #require(HeartRateVariability.workout(paused))
        #expect(hrv == HeartRateVariability.workout(expected))
        #expect(hrv.beatCount == recording.beats.count - recording.beats.filter { pause.contains($0.date) }.count)
        #expect(hrv != HeartRateVariability.workout(recording))
    }

    @Test func shortRunsAndThinWindowsAreLeftOut() throws {
        let short = RRSeries.clean(count: HeartRateVariability.minimumRunIntervals - 1, milliseconds: 800, seed: 61)
        let long = RRSeries.clean(count: 400, milliseconds: 800, seed: 62)
        let both = RRSeries.recording([short, long], origins: RRSeries.origins([short, long]))
        let alone = RRSeries.recording([long], origins: [RRSeries.origins([short, long])[1]])
        #expect(HeartRateVariability.workout(both)?.beatCount == 400)
        #expect(HeartRateVariability.workout(both)?.rmssd == HeartRateVariability.workout(alone)?.rmssd)

        let few = RRSeries.clean(count: HeartRateVariability.minimumIntervals - 1, milliseconds: 800, seed: 63)
        #expect(HeartRateVariability.workout(RRSeries.recording([few], origins: [0.3])) == nil)
        #expect(HeartRateVariability.workout(RRSeries.recording([], origins: [])) == nil)
        #expect(HeartRateVariability.windows(RRSeries.recording([few], origins: [0.3])).isEmpty)
    }

    @Test func windowsRunFromTheStartAndSplitTheirDifferences() throws {
        // 20 minutes at 800 ms and 100 s more: four full windows and a last one of 100 s.
        let ticks = RRSeries.clean(count: 1620, milliseconds: 800, seed: 71)
        let recording = RRSeries.recording([ticks], origins: [0.3])
        let windows = HeartRateVariability.windows(recording)
        #expect(windows.count == 5)
        #expect(windows.map { $0.start.timeIntervalSince(recording.start) } == [0, 300, 600, 900, 1200])
        #expect(windows.dropLast().allSatisfy { $0.end.timeIntervalSince($0.start) == 300 })
        #expect(windows.last?.end == recording.end)
        // Every interval is in exactly one window.
        let workout = try #require(HeartRateVariability.workout(recording))
        #expect(windows.map(\.beatCount).reduce(0, +) == workout.beatCount)
        #expect(HeartRateVariability.windows(recording, length: 0).isEmpty)
        #expect(HeartRateVariability.windows(recording, length: 7200).first?.rmssd == workout.rmssd)
    }

    /// A long workout's worth of beats: 13 000 intervals with artifacts, every one of them analysed and the artifacts
    /// corrected. (How fast is the benchmark's to say: Benchmarks/ExportBenchmarks.)
    @Test func thirteenThousandIntervalsWithArtifactsAreAllAnalysed() throws {
        let clean = RRSeries.clean(count: 13_000, milliseconds: 420, seed: 81)
        let ticks = RRSeries.withArtifacts(clean, RRSeries.Artifact.allCases, every: 50, seed: 82).ticks
        let recording = RRSeries.recording([ticks], origins: [0.3])
        let hrv = try #require(HeartRateVariability.workout(recording))
        #expect(abs(hrv.beatCount - 13_000) < 300, "\(hrv.beatCount)")
        #expect(hrv.correctedBeats >= 13_000 / 50, "\(hrv.correctedBeats)")
    }
}
