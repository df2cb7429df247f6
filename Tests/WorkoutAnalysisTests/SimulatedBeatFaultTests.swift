import Foundation
import HeartRateProfile
import Testing
import WorkoutAnalysis

@testable import BlueZSimulator

/// The simulator's ectopic and missed beats, as a strap sends them, found and corrected by the HRV as NeuroKit finds
/// and corrects them.
@Suite struct SimulatedBeatFaultTests {
    /// The RR intervals (ticks) a simulated polar-h10 sends in ten minutes of intervals between 110 and 160 bpm.
    static func intervals(_ faults: [Scenario.FaultSpec]) throws -> [UInt16] {
        var spec = Scenario.SensorSpec(model: .polarH10)
        spec.profile = Scenario.ProfileSpec(kind: .ramp)
        spec.profile.from = 110
        spec.profile.to = 160
        spec.faults = faults
        var behaviour = SensorBehaviour(spec: spec, seed: 18)
        return try (1...600).flatMap { second in
            try HeartRateMeasurement(decoding: behaviour.notification(at: Double(second)).payload).rrIntervals
                .map(\.ticks)
        }
    }

    @Test func theSimulatorsEctopicAndMissedBeatsAreCorrected() async throws {
        let clean = try Self.intervals([])
        let ticks = try Self.intervals([
            Scenario.FaultSpec(.ectopic, at: 20, every: 45), Scenario.FaultSpec(.missedBeat, at: 40, every: 70),
        ])
        // About 1400 beats: some 30 premature beats and 19 missed.
        let injected = (clean.count - 20 * 2) / 45 + (clean.count - 40 * 2) / 70
        let recording = RRSeries.recording([ticks], origins: [0.3])
        let reference = try await NeuroKitReference.of([ticks], origins: [0.3])
        #expect(ArtifactCorrection.correct(peaks: RRSeries.peaks(ticks)).peaks == reference.runs.first?.peaks)

        let hrv = try #require(HeartRateVariability.workout(recording))
        NeuroKitReference.expectAgreement(hrv, reference.all, "simulated strap")
        let truth = try #require(HeartRateVariability.workout(RRSeries.recording([clean], origins: [0.3])))
        // Each artifact corrected, and some beats beside them moved too (about 2.5 beats an artifact).
        #expect(hrv.correctedBeats >= injected, "\(hrv.correctedBeats) corrected, about \(injected) injected")
        #expect(hrv.correctedBeats <= 3 * injected, "\(hrv.correctedBeats) corrected, about \(injected) injected")
        // Uncorrected, the RMSSD is several times the clean strap's; corrected, it has come nine tenths of the way
        // back. Not all the way, as NeuroKit corrects a premature beat: it takes the compensatory beat for the
        // ectopic one and moves it first, then the premature one, which leaves a pair of short intervals and a
        // pair of long ones (about −9 % and +8 % here) where the clean strap had two normal ones.
        let uncorrected = RRSeries.uncorrectedRMSSD([ticks])
        #expect(uncorrected > 5 * truth.rmssd, "\(uncorrected) against \(truth.rmssd)")
        #expect(hrv.rmssd - truth.rmssd < 0.2 * (uncorrected - truth.rmssd), "\(hrv.rmssd) against \(truth.rmssd)")
        #expect(abs(hrv.meanNN - truth.meanNN) < 2)
    }
}
