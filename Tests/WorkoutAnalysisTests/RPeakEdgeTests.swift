import Testing

@testable import BlueZSimulator
@testable import WorkoutAnalysis

/// Every dropout cuts the ECG somewhere in a beat: the R-peaks found near the cut are the beats', never a P or a T
/// wave standing in for an R wave that was not recorded.
@Suite struct RPeakEdgeTests {
    static let rate = 130.0

    /// 40 s of the simulated H10's ECG (noise 10 µV as it plays by default) and its beats' times.
    static func recording() -> (microvolts: [Double], beats: [Double]) {
        var behaviour = SensorBehaviour(spec: Scenario.SensorSpec(model: .polarH10), seed: 5)
        let synthesizer = ECGSynthesizer(noise: 10, seed: 9)
        var values: [Double] = []
        var beats: [Double] = []
        // Second by second, as the simulator draws it (the heart keeps only its last ten seconds of beats).
        for second in 1...40 {
            behaviour.advanceHeart(through: Double(second) + 1.5)
            beats += behaviour.rPeaks.filter { $0 > beats.last ?? -1 }
            values += (values.count..<Int(Double(second) * rate)).map {
                Double(synthesizer.microvolts(at: Double($0) / rate, index: $0, rPeaks: behaviour.rPeaks))
            }
        }
        return (values, beats)
    }

    /// The peaks of `range` of the recording that lie more than one sample from every beat.
    static func misplaced(_ range: Range<Int>, in recording: (microvolts: [Double], beats: [Double])) -> [Int] {
        let peaks = RPeakDetector.peaks(in: Array(recording.microvolts[range]), rate: rate)
        return peaks.map { $0 + range.lowerBound }.filter { peak in
            !recording.beats.contains { abs($0 * rate - Double(peak)) <= 1 }
        }
    }

    @Test func theWholeRecordingsPeaksAreItsBeats() {
        let recording = Self.recording()
        let peaks = RPeakDetector.peaks(in: recording.microvolts, rate: Self.rate)
        #expect(peaks.count == recording.beats.filter { $0 > 0.5 && $0 < 39.5 }.count)
        #expect(Self.misplaced(0..<recording.microvolts.count, in: recording).isEmpty)
    }

    @Test func aStreamCutAnywhereInABeatEndsWithRealBeatsOnly() {
        let recording = Self.recording()
        // Cut at every sample across two beats (both a P wave's and a T wave's sample included).
        let cuts = Int(20 * Self.rate)..<Int(21.7 * Self.rate)
        let wrong = cuts.filter { !Self.misplaced(0..<$0, in: recording).isEmpty }
        let first = wrong.first ?? 0
        #expect(wrong.isEmpty, "cut after sample \(first): \(Self.misplaced(0..<first, in: recording))")
    }

    @Test func aStreamStartingAnywhereInABeatStartsWithRealBeatsOnly() {
        let recording = Self.recording()
        let starts = Int(10 * Self.rate)..<Int(11.7 * Self.rate)
        let count = recording.microvolts.count
        let wrong = starts.filter { !Self.misplaced($0..<count, in: recording).isEmpty }
        let first = wrong.first ?? 0
        #expect(wrong.isEmpty, "start at sample \(first): \(Self.misplaced(first..<count, in: recording))")
    }
}
