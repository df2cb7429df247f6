import Foundation

extension ActivityRecording {
    /// The beats of the workout's active time in runs without a gap: like ``beatRuns``, but a beat dated inside a
    /// pause (its ends included) or outside the workout is left out, and the run it was in ends there, so the next
    /// beat kept starts a new run. Its interval then counts on its own, never as the successor of a beat before the
    /// pause: whatever the heart did in between is not the workout's.
    func activeBeatRuns() -> [[Beat]] {
        let paused = Self.merged(pauses)
        var nextPause = 0
        var runs: [[Beat]] = []
        var continuing = false
        for beat in beats {
            while nextPause < paused.count, paused[nextPause].end < beat.date { nextPause += 1 }
            let inPause = nextPause < paused.count && paused[nextPause].start <= beat.date
            guard !inPause, beat.date >= start, beat.date <= end else {
                continuing = false
                continue
            }
            if beat.precededByGap || !continuing { runs.append([]) }
            runs[runs.count - 1].append(beat)
            continuing = true
        }
        return runs
    }

    /// The pauses in order with overlapping ones joined, so one pointer can walk them beside the beats.
    private static func merged(_ pauses: [DateInterval]) -> [DateInterval] {
        var result: [DateInterval] = []
        for pause in pauses.sorted(by: { $0.start < $1.start }) {
            if let last = result.last, pause.start <= last.end {
                result[result.count - 1] = DateInterval(start: last.start, end: max(last.end, pause.end))
            } else {
                result.append(pause)
            }
        }
        return result
    }
}
