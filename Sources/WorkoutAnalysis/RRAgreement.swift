import Foundation

/// How the RR intervals from the ECG's R-peaks agree with the strap's own: the same beats paired, and how far
/// their intervals differ. What a lab checks before trusting either for HRV.
///
/// The two timelines are placed differently (the strap's beats from its notifications, the ECG's from its clock),
/// so beats are paired by their intervals, not their times: each run of ECG beats is laid against the strap's beats
/// within two seconds of it, at the offset where the first intervals differ least.
public struct RRAgreement: Sendable, Equatable {
    /// ECG beats paired with a strap beat.
    public var pairedBeats: Int
    /// ECG beats in all.
    public var ecgBeats: Int
    /// The mean absolute difference of the paired intervals, in ms.
    public var meanDifference: Double
    /// The share of paired intervals that differ by at most ``tolerance``.
    public var withinTolerance: Double
    /// One ECG sample (the ECG's resolution), in ms.
    public var tolerance: Double

    /// Compares the strap's beats with the ECG's (``ElectrocardiogramAnalysis/beats``) sampled at `rate`; nil when
    /// either has no beats or none could be paired.
    public init?(strap: [ActivityRecording.Beat], ecg: [ActivityRecording.Beat], rate: Double) {
        guard !strap.isEmpty, !ecg.isEmpty, rate > 0 else { return nil }
        let tolerance = 1000 / rate
        self.tolerance = tolerance
        ecgBeats = ecg.count
        var differences: [Double] = []
        for run in Self.runs(ecg) {
            guard let offset = Self.bestOffset(of: run, in: strap) else { continue }
            // Within the strap's run: its beat after a gap follows no beat the ECG's run has.
            let strapRun = strap[offset...].enumerated().prefix { $0.offset == 0 || !$0.element.precededByGap }
            for (ecgBeat, strapBeat) in zip(run, strapRun.map(\.element)) {
                differences.append(abs(ecgBeat.milliseconds - strapBeat.milliseconds))
            }
        }
        guard !differences.isEmpty else { return nil }
        pairedBeats = differences.count
        meanDifference = differences.reduce(0, +) / Double(differences.count)
        // Both sides' intervals are rounded to 1/1024 s: up to a millisecond between them on top of the sample.
        withinTolerance = Double(differences.filter { $0 <= tolerance + 1 }.count) / Double(differences.count)
    }

    private static func runs(_ beats: [ActivityRecording.Beat]) -> [[ActivityRecording.Beat]] {
        var runs: [[ActivityRecording.Beat]] = []
        for beat in beats {
            if beat.precededByGap || runs.isEmpty { runs.append([]) }
            runs[runs.count - 1].append(beat)
        }
        return runs
    }

    /// The strap beat the run's first beat is, among those within two seconds of it: where the run's first
    /// intervals (up to ten) differ least from the strap's, if they differ by less than 20 ms on average.
    private static func bestOffset(of run: [ActivityRecording.Beat], in strap: [ActivityRecording.Beat]) -> Int? {
        guard let first = run.first else { return nil }
        let probe = min(10, run.count)
        let window = first.date.addingTimeInterval(-2)...first.date.addingTimeInterval(2)
        // The strap's beats are in time order: the candidates are one stretch of them.
        let low = strap.partitioningIndex { $0.date >= window.lowerBound }
        var best: (offset: Int, cost: Double)?
        var offset = low
        while offset < strap.count, strap[offset].date <= window.upperBound, offset + probe <= strap.count {
            let cost =
                zip(run.prefix(probe), strap[offset..<offset + probe]).map { abs($0.milliseconds - $1.milliseconds) }
                .reduce(0, +) / Double(probe)
            if cost < best?.cost ?? .infinity { best = (offset, cost) }
            offset += 1
        }
        guard let best, best.cost < 20 else { return nil }
        return best.offset
    }
}

extension Array {
    /// The first index whose element satisfies `belongs` (the elements satisfying it come last).
    fileprivate func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
