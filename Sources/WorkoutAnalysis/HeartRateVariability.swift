import Foundation

/// Time-domain heart-rate variability of a workout or part of one, from its beats after artifact correction
/// (Lipponen & Tarvainen 2019, as Kubios and NeuroKit2 do it; see ``ArtifactCorrection``).
///
/// How the beats are taken:
/// - Runs: the beats split at every gap in the beat timeline (``ActivityRecording/beatRuns``) and at every pause
///   (beats dated inside a pause, or outside the workout, are left out, and the run ends there). Each run is
///   corrected on its own, and a successive difference is only ever taken within a run: nothing bridges a gap or
///   a pause.
/// - Runs of fewer than ``minimumRunIntervals`` intervals are left out: the correction judges a beat by the ones
///   around it, and in so short a run it finds almost nothing (NeuroKit corrected none of the missed beats put in
///   runs of up to 6 intervals, about half in runs of 8, four in five from 16 on), while a single uncorrected
///   missed beat can double the RMSSD of a run.
/// - Mean NN and SDNN are over the NN intervals of all runs together; RMSSD and pNN50 over the successive
///   differences within runs.
/// - A result needs at least ``minimumIntervals`` NN intervals and one successive difference; with fewer, SDNN and
///   RMSSD say more about chance than about the heart.
public struct HeartRateVariability: Sendable, Equatable {
    /// The start of what was analysed: the workout's, or the window's.
    public var start: Date
    /// The end of what was analysed: the workout's, or the window's (the last one ends with the workout).
    public var end: Date
    /// Mean NN interval, ms.
    public var meanNN: Double
    /// Standard deviation of the NN intervals (sample, n − 1), ms.
    public var sdnn: Double
    /// Root mean square of successive differences, ms.
    public var rmssd: Double
    /// Successive differences greater than 50 ms, in percent of the NN intervals (as NeuroKit2 and the Task Force
    /// of 1996 count it; with several runs, of all runs' intervals together).
    public var pnn50: Double
    /// The NN intervals analysed (after correction).
    public var beatCount: Int
    /// Beats corrected: beats analysed that are not as recorded (missed beats put back; ectopic and too long or too
    /// short beats moved, each once however many passes moved it) and extra beats removed
    /// (``ArtifactCorrection/Result/correctedBeats``), counted where the beat is after correction (or was, if
    /// removed). Moving a beat can make its neighbour look misplaced, so there are often more corrected beats than
    /// artifacts in the recording (about 2.5 a premature beat or missed one in the simulator's straps).
    public var correctedBeats: Int

    public init(
        start: Date,
        end: Date,
        meanNN: Double,
        sdnn: Double,
        rmssd: Double,
        pnn50: Double,
        beatCount: Int,
        correctedBeats: Int
    ) {
        self.start = start
        self.end = end
        self.meanNN = meanNN
        self.sdnn = sdnn
        self.rmssd = rmssd
        self.pnn50 = pnn50
        self.beatCount = beatCount
        self.correctedBeats = correctedBeats
    }

    /// Runs shorter than this many intervals are not analysed (see the type's description).
    public static let minimumRunIntervals = 16
    /// A result needs at least this many NN intervals.
    public static let minimumIntervals = 30

    /// The HRV of the whole workout, or nil when it has too few beats (see the type's description).
    public static func workout(_ recording: ActivityRecording) -> HeartRateVariability? {
        let whole = DateInterval(start: recording.start, end: max(recording.start, recording.end))
        return analyse(recording, in: [whole]).first ?? nil
    }

    /// The most windows one workout is divided into (a week of 5-minute windows is 2 016): a workout whose clock
    /// jumped (from 1970 to today) has no windows rather than millions.
    public static let mostWindows = 10_000

    /// The HRV of each window of `length` seconds from the workout's start (the last one ends with the workout),
    /// in order, leaving out windows with too few beats.
    ///
    /// Windows are of clock time, pauses included (a window with a pause has fewer beats). The runs are corrected
    /// whole, so a run crossing a window's edge is corrected with the beats on both sides of it; each NN interval
    /// then belongs to the window its ending beat is dated in, and a successive difference to a window only when
    /// both its intervals do (the one across the edge counts in neither). A corrected beat counts in the window it
    /// is in after correction (or was in, if removed).
    public static func windows(_ recording: ActivityRecording, length: TimeInterval = 300) -> [HeartRateVariability] {
        let span = (recording.end.timeIntervalSince(recording.start) / length).rounded(.up)
        guard length > 0, span.isFinite, span > 0, span <= Double(mostWindows) else { return [] }
        let count = Int(span)
        let windows = (0..<count).map { index in
            DateInterval(
                start: recording.start + Double(index) * length,
                end: min(recording.end, recording.start + Double(index + 1) * length)
            )
        }
        return analyse(recording, in: windows).compactMap { $0 }
    }

    /// The HRV of each of `windows` (consecutive, in order), nil for those with too few beats.
    static func analyse(_ recording: ActivityRecording, in windows: [DateInterval]) -> [HeartRateVariability?] {
        guard let first = windows.first else { return [] }
        let runs = recording.activeBeatRuns().filter { $0.count >= minimumRunIntervals }.map(CorrectedRun.init)
        var sums = [Accumulator](repeating: Accumulator(), count: windows.count)
        // Windows are of equal length from the first one's start but for the last, which may be shorter, so the
        // window of a date is a division; dates a correction moved just outside go to the nearest window.
        let length = windows.count > 1 ? windows[0].duration : .infinity
        func window(of date: Date) -> Int {
            let position = date.timeIntervalSince(first.start) / length
            guard position.isFinite, position > 0 else { return 0 }
            return min(windows.count - 1, Int(position))
        }
        for run in runs {
            var previous: (window: Int, milliseconds: Double)?
            for index in 0..<run.count {
                let milliseconds = run.milliseconds(index)
                let place = window(of: run.endDate(index))
                sums[place].intervals.append(milliseconds)
                if let previous, previous.window == place {
                    sums[place].add(difference: milliseconds - previous.milliseconds)
                }
                previous = (place, milliseconds)
            }
            for sample in run.correctedBeats { sums[window(of: run.date(ofSample: sample))].corrected += 1 }
        }
        return zip(windows, sums).map { window, sum in sum.result(window) }
    }
}

/// The sums one result is made of.
private struct Accumulator {
    var intervals: [Double] = []
    var squaredDifferences = 0.0
    var differences = 0
    var over50 = 0
    var corrected = 0

    mutating func add(difference: Double) {
        squaredDifferences += difference * difference
        differences += 1
        if abs(difference) > 50 { over50 += 1 }
    }

    func result(_ window: DateInterval) -> HeartRateVariability? {
        let count = intervals.count
        guard count >= HeartRateVariability.minimumIntervals, differences > 0 else { return nil }
        let mean = intervals.reduce(0, +) / Double(count)
        // Two passes (the mean first), as numpy's std does; one pass of sums of squares loses digits.
        let squares = intervals.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        return HeartRateVariability(
            start: window.start,
            end: window.end,
            meanNN: mean,
            sdnn: (squares / Double(count - 1)).squareRoot(),
            rmssd: (squaredDifferences / Double(differences)).squareRoot(),
            pnn50: Double(over50) / Double(count) * 100,
            beatCount: count,
            correctedBeats: corrected
        )
    }
}
