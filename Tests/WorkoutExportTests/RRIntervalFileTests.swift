import Foundation
import SystoleTestSupport
import Testing
import WorkoutAnalysis

@testable import WorkoutExport

/// The RR interval file, read back by check_rr.py: the runs between empty lines, and what numpy's loadtxt (a
/// one-column reader that skips empty lines, as many do) makes of it.
@Suite struct RRIntervalFileTests {
    struct Checked: Decodable {
        var runs: [[Int]]
        var loadtxt: [Double]
        var endsWithNewline: Bool
    }

    /// Each run's intervals in whole milliseconds, worked out from the ticks.
    static func expectedRuns(_ recording: ActivityRecording) -> [[Int]] {
        var runs: [[Int]] = []
        for beat in recording.beats {
            if beat.precededByGap || runs.isEmpty { runs.append([]) }
            runs[runs.count - 1].append(Int((Double(beat.rrTicks) * 1000 / 1024).rounded()))
        }
        return runs
    }

    @Test func theRunsComeBackBetweenEmptyLinesAndEveryLineIsANumber() async throws {
        let recording = ExportFixture.recording()
        let checked = try await ExportFixture.check(
            "check_rr.py",
            [RRIntervalFile.encode(recording)],
            as: Checked.self
        )
        let expected = Self.expectedRuns(recording)
        #expect(expected.map(\.count) == [400, 300, 80])
        #expect(checked.runs == expected)
        #expect(checked.loadtxt == expected.flatMap { $0 }.map(Double.init))
        #expect(checked.endsWithNewline)
    }

    @Test func noBeatsIsAnEmptyFile() {
        let start = ExportFixture.start
        #expect(RRIntervalFile.encode(ActivityRecording(activity: .running, start: start, end: start + 60)).isEmpty)
    }

    @Test func intervalsAreRoundedToTheNearestMillisecond() {
        let start = ExportFixture.start
        // 1023 ticks = 999.02 ms, 1 tick = 0.98 ms, 513 ticks = 500.98 ms.
        let recording = ActivityRecording(
            activity: .running,
            start: start,
            end: start + 60,
            beats: [
                .init(date: start + 1, rrTicks: 1023), .init(date: start + 2, rrTicks: 1),
                .init(date: start + 3, rrTicks: 513, precededByGap: true),
            ]
        )
        #expect(String(decoding: RRIntervalFile.encode(recording), as: UTF8.self) == "999\n1\n\n501\n")
    }
}
