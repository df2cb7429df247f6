import Foundation
import WorkoutKit

/// A workout's ECG as runs without a gap, with the R-peaks systole finds in it (``RPeakDetector``) and the beats
/// they make: each R-peak with the RR interval since the one before it in the same run, so that heart-rate
/// variability and RR exports can be taken from the ECG as from the strap's own RR intervals.
public struct ElectrocardiogramAnalysis: Sendable {
    /// Samples taken one after another at one rate, without a gap.
    public struct Run: Sendable, Hashable {
        public var start: Date
        /// Samples a second over the whole run: its pieces' rates (from the sensor's clock), weighted by their samples.
        public var rate: Double
        public var microvolts: [Int32]
        /// Indices into ``microvolts`` of the R-peaks.
        public var rPeaks: [Int]

        /// The time of sample `index`.
        public func date(ofSampleAt index: Int) -> Date { start.addingTimeInterval(Double(index) / rate) }
    }

    public var runs: [Run]

    /// Joins the ECG samples of a workout (``WaveformSample/Kind/electrocardiogram``, in time order) into runs,
    /// a new one at each sample that follows a gap, and finds each run's R-peaks.
    public init(_ samples: [WaveformSample]) {
        var pieces: [[WaveformSample]] = []
        for sample in samples where sample.kind == .electrocardiogram && sample.isValid {
            let follows =
                pieces.last?.last.map { previous in
                    abs(sample.startDate.timeIntervalSince(previous.endDate))
                        <= max(1.5 / previous.samplingFrequency, WaveformSample.placementTolerance)
                } ?? false
            if sample.precededByGap || !follows { pieces.append([]) }
            pieces[pieces.count - 1].append(sample)
        }
        runs = pieces.map { piece in
            let start = piece[0].startDate
            let values = piece.flatMap { $0.channels[0] }
            // Each piece's rate is measured from the strap's own clock; the host times of the pieces are only
            // placed to within the radio's delays, so their span is not used.
            let seconds = piece.reduce(0) { $0 + Double($1.count) / $1.samplingFrequency }
            let rate = seconds > 0 ? Double(values.count) / seconds : piece[0].samplingFrequency
            return Run(
                start: start,
                rate: rate,
                microvolts: values,
                rPeaks: RPeakDetector.peaks(in: values.map(Double.init), rate: rate)
            )
        }
    }

    /// The rate of the longest run (the ECG's resolution, for comparisons).
    public var rate: Double? { runs.max { $0.microvolts.count < $1.microvolts.count }?.rate }

    /// Every R-peak's time, in order.
    public var rPeakDates: [Date] {
        runs.flatMap { run in run.rPeaks.map(run.date(ofSampleAt:)) }
    }

    /// The beats of the R-peaks: each peak after the first of its run, with the interval since the one before
    /// (in the strap's 1/1024 s ticks, as ``ActivityRecording/Beat`` keeps them); the first beat of each run after
    /// the first follows a gap. Intervals beyond what a tick counter holds (64 s) are left out.
    public var beats: [ActivityRecording.Beat] {
        var beats: [ActivityRecording.Beat] = []
        for run in runs {
            var first = true
            for (previous, peak) in zip(run.rPeaks, run.rPeaks.dropFirst()) {
                let ticks = (Double(peak - previous) / run.rate * 1024).rounded()
                guard ticks >= 1, ticks <= Double(UInt16.max) else {
                    first = true
                    continue
                }
                beats.append(
                    ActivityRecording.Beat(
                        date: run.date(ofSampleAt: peak),
                        rrTicks: UInt16(ticks),
                        precededByGap: first && !beats.isEmpty
                    )
                )
                first = false
            }
        }
        return beats
    }
}

extension ActivityRecording {
    /// The recording with its beats taken from the ECG's R-peaks instead of the strap's RR intervals (for the RR
    /// export and the heart-rate variability of the ECG).
    public var withBeatsFromECG: ActivityRecording {
        var copy = self
        copy.beats = ElectrocardiogramAnalysis(electrocardiogram).beats
        return copy
    }
}
