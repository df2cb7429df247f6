/// Artifact correction of one gap-free series of beats as Kubios and NeuroKit2 do it (Lipponen & Tarvainen 2019):
/// ectopic, missed, extra and too long or too short beats are found (``ArtifactDetection``), extra beats removed,
/// missed ones put back halfway, and misplaced ones moved halfway between their neighbours; then again on the
/// result for as long as each pass finds fewer artifacts than the one before.
///
/// It works on beats as whole sample positions and rounds the positions it makes down, as NeuroKit2 0.2.13's
/// `signal_fixpeaks(peaks, method="Kubios", iterative=True)` does, so that the same positions give the same result.
/// With the sensors' 1/1024 s ticks as samples, a run's positions are the running sums of its RR intervals.
public enum ArtifactCorrection {
    /// What kind of artifact a correction was.
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// A beat out of place (a premature beat and its compensatory pause): moved.
        case ectopic
        /// A beat the sensor did not see: put back.
        case missed
        /// A beat that was not one: removed.
        case extra
        /// An interval too long or too short that is none of the others: its beat moved.
        case longShort
    }

    /// One correction: a beat moved, put back or removed.
    public struct Correction: Sendable, Equatable {
        public var kind: Kind
        /// Where the beat is now (moved or put back), or where it was (removed), in samples.
        public var sample: Int
    }

    /// A corrected series.
    public struct Result: Sendable, Equatable {
        /// The beats after correction, ascending.
        public var peaks: [Int]
        /// Every correction made, pass by pass, in order: a beat moved in several passes is here each time.
        ///
        /// NeuroKit flags artifacts it cannot correct (a missed beat among the first two, a misplaced one among the
        /// first two or at the end, where it lacks a neighbour) and leaves them as they are; those are not here.
        public var corrections: [Correction]
        /// The corrected beats, in samples, ascending: each beat of ``peaks`` that is not a beat of the input (put
        /// back, or moved: once, however many passes moved it), and where each beat removed as extra was.
        ///
        /// This, not ``corrections``, is what "corrected beats" means in ``HeartRateVariability``: passes after the
        /// first often move again beats already moved (NeuroKit stops only when a pass finds no fewer artifacts
        /// than the one before), so the corrections of a recording with a few dozen artifacts can add up to
        /// hundreds while a hundred beats are changed.
        public var correctedBeats: [Int]
    }

    /// Corrects `peaks` (beat positions in samples, ascending, of one series without gaps) at `samplingRate`
    /// samples a second.
    public static func correct(peaks: [Int], samplingRate: Int = 1024) -> Result {
        let rate = Double(samplingRate)
        var artifacts = ArtifactDetection.find(peaks, samplingRate: rate)
        var corrections: [Correction] = []
        var clean = apply(artifacts, to: peaks, recording: &corrections)
        // Another pass while it finds fewer than the last one did; the first that does not is discarded.
        while true {
            let next = ArtifactDetection.find(clean, samplingRate: rate)
            guard next.count < artifacts.count else { break }
            artifacts = next
            clean = apply(artifacts, to: clean, recording: &corrections)
        }
        let input = Set(peaks)
        let changed = clean.filter { !input.contains($0) }
        let removed = corrections.filter { $0.kind == .extra }.map(\.sample)
        return Result(peaks: clean, corrections: corrections, correctedBeats: (changed + removed).sorted())
    }

    /// One pass of corrections: extra beats out, missed beats in, misplaced beats moved, each list's positions
    /// shifted for the beats removed and added before it the way NeuroKit shifts them.
    static func apply(
        _ artifacts: ArtifactDetection.Artifacts,
        to peaks: [Int],
        recording corrections: inout [Correction]
    ) -> [Int] {
        var peaks = peaks
        var missed = artifacts.missed
        var ectopic = artifacts.ectopic
        var longShort = artifacts.longShort
        if !artifacts.extra.isEmpty {
            let extra = artifacts.extra
            for index in extra { corrections.append(Correction(kind: .extra, sample: peaks[index])) }
            let removed = Set(extra)
            peaks = peaks.indices.filter { !removed.contains($0) }.map { peaks[$0] }
            missed = shifted(missed, by: extra, step: -1)
            ectopic = shifted(ectopic, by: extra, step: -1)
            longShort = shifted(longShort, by: extra, step: -1)
        }
        if !missed.isEmpty {
            peaks = insertMissed(missed, into: peaks, recording: &corrections)
            // Shifted by every missed position, also those too near the start to have been put back: NeuroKit
            // does so, and the same positions must give the same result.
            ectopic = shifted(ectopic, by: missed, step: 1)
            longShort = shifted(longShort, by: missed, step: 1)
        }
        if !ectopic.isEmpty { peaks = moveMisplaced(ectopic, .ectopic, in: peaks, recording: &corrections) }
        if !longShort.isEmpty { peaks = moveMisplaced(longShort, .longShort, in: peaks, recording: &corrections) }
        return peaks
    }

    /// NeuroKit's `_update_indices`: for each source position in turn, every position above it moves by `step`,
    /// comparing the positions as already moved; then sorted without repeats.
    ///
    /// Moving down, a position can fall to or below a later source position and then stops moving (removing beats
    /// 3 and 4 moves 5 only to 4): a quirk kept, because it decides which beats later corrections touch. The source
    /// positions ascend, so the number of moves is found by binary search rather than by the walk.
    static func shifted(_ positions: [Int], by sources: [Int], step: Int) -> [Int] {
        guard !positions.isEmpty else { return positions }
        // Position u moves at the k-th source (from 0) when it has moved at all k before it and
        // sources[k] < u + k · step; with ascending sources that holds for a prefix of them, and
        // sources[k] − k · step does not decrease in k, so the prefix is those below u.
        let keys = sources.enumerated().map { $0.element - $0.offset * step }
        let moved = positions.map { position -> Int in
            var low = 0
            var high = keys.count
            while low < high {
                let middle = (low + high) / 2
                if keys[middle] < position { low = middle + 1 } else { high = middle }
            }
            return position + low * step
        }
        return Array(Set(moved)).sorted()
    }

    /// Puts a beat back halfway between the beats around each missed position (those past the second beat only).
    private static func insertMissed(
        _ missed: [Int],
        into peaks: [Int],
        recording corrections: inout [Correction]
    ) -> [Int] {
        let valid = Set(missed.filter { $0 > 1 && $0 < peaks.count })
        var result: [Int] = []
        result.reserveCapacity(peaks.count + valid.count)
        for (index, peak) in peaks.enumerated() {
            if valid.contains(index) {
                let added = midpoint(peaks[index - 1], peak)
                corrections.append(Correction(kind: .missed, sample: added))
                result.append(added)
            }
            result.append(peak)
        }
        return result
    }

    /// Moves each misplaced beat halfway between its neighbours (as they were before this step), for beats with
    /// a neighbour on both sides past the second beat; then puts the beats back in order.
    private static func moveMisplaced(
        _ positions: [Int],
        _ kind: Kind,
        in peaks: [Int],
        recording corrections: inout [Correction]
    ) -> [Int] {
        var result = peaks
        for index in positions where index > 1 && index < peaks.count - 1 {
            let moved = midpoint(peaks[index - 1], peaks[index + 1])
            corrections.append(Correction(kind: kind, sample: moved))
            result[index] = moved
        }
        result.sort()
        return result
    }

    /// Halfway, rounded down: NeuroKit computes it in floating point and casts to an integer, which truncates, and
    /// positions are never negative.
    private static func midpoint(_ a: Int, _ b: Int) -> Int { a + (b - a) / 2 }
}
