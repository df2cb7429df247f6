import Foundation

/// One run of beats without a gap after artifact correction: its normal-to-normal (NN) intervals, each with the
/// date of the beat it ends at, and the beats corrected.
struct CorrectedRun {
    /// Ticks of the sensors' clock a second: RR intervals are counted in 1/1024 s.
    static let ticksPerSecond = 1024

    /// When the run's first interval began (sample 0).
    let origin: Date
    /// The beats after correction, in ticks since ``origin``.
    let peaks: [Int]
    /// The corrected beats (``ArtifactCorrection/Result/correctedBeats``), in ticks since ``origin``.
    let correctedBeats: [Int]

    /// Corrects a run of beats whose positions are the running sums of their intervals, as NeuroKit is given them.
    init(_ beats: [ActivityRecording.Beat]) {
        var peaks = [0]
        peaks.reserveCapacity(beats.count + 1)
        for beat in beats { peaks.append(peaks[peaks.count - 1] + Int(beat.rrTicks)) }
        // The first beat's date less its interval: within a run the timeline dates each beat by its interval
        // from the one before, so every beat's date is the origin plus its position.
        origin = (beats.first?.date ?? Date(timeIntervalSince1970: 0)) - (beats.first?.seconds ?? 0)
        let result = ArtifactCorrection.correct(peaks: peaks, samplingRate: Self.ticksPerSecond)
        self.peaks = result.peaks
        correctedBeats = result.correctedBeats
    }

    /// The number of NN intervals.
    var count: Int { max(0, peaks.count - 1) }

    /// The `index`-th NN interval in milliseconds (computed as NeuroKit does, so that it rounds the same).
    func milliseconds(_ index: Int) -> Double {
        Double(peaks[index + 1] - peaks[index]) / Double(Self.ticksPerSecond) * 1000
    }

    /// The date of the beat the `index`-th interval ends at.
    func endDate(_ index: Int) -> Date { date(ofSample: peaks[index + 1]) }

    /// The date of a position in the run.
    func date(ofSample sample: Int) -> Date { origin + Double(sample) / Double(Self.ticksPerSecond) }
}
