import Foundation
import WorkoutAnalysis

/// Where the moments of a recording fall: in which lap, and whether the timer was running. The text exports share
/// it, so a reading is in the same lap in the TCX and the CSV file.
struct RecordingLayout {
    /// The laps an export writes (``ActivityRecording/lapsOrWhole``), in order of their starts.
    let laps: [DateInterval]
    let pauses: [DateInterval]

    init(_ recording: ActivityRecording) {
        laps = recording.lapsOrWhole.sorted { $0.start < $1.start }
        pauses = recording.pauses.sorted { $0.start < $1.start }
    }

    /// The index of the lap `date` is in, nil outside every lap. A lap runs from its start up to the next lap's
    /// start, so a moment on the line between two laps is in the later one, and only the last lap holds its end.
    func lap(at date: Date) -> Int? {
        guard let index = laps.lastIndex(where: { $0.start <= date }) else { return nil }
        return date <= laps[index].end ? index : nil
    }

    /// The lap `date` is in or, outside every lap, the one nearest before it (the first before the first lap): for
    /// what must be written into some lap, such as a marker set a moment after the workout ended.
    func nearestLap(to date: Date) -> Int {
        laps.lastIndex { $0.start <= date } ?? 0
    }

    /// Whether the timer was stopped at `date`: from a pause up to (not including) its resume.
    func isPaused(at date: Date) -> Bool {
        pauses.contains { $0.start <= date && date < $0.end }
    }

    /// Whether a pause began after `earlier` and no later than `later`.
    func pauseBegins(after earlier: Date, upTo later: Date) -> Bool {
        pauses.contains { earlier < $0.start && $0.start <= later }
    }
}
