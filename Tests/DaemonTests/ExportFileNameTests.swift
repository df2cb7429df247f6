import ControlAPI
import Foundation
import Testing
import WorkoutAnalysis

@Suite struct ExportFileNameTests {
    let start = Date(timeIntervalSince1970: 1_795_333_165)
    let utc = TimeZone(identifier: "UTC")!

    @Test func aNameHasTheStartTheActivityAndTheAthlete() {
        var recording = ActivityRecording(activity: .running, start: start, end: start + 60)
        #expect(ExportFormat.fit.fileName(for: recording, timeZone: utc) == "2026-11-22-0739-running.fit")
        recording.athlete = "Zoë O'Neil-Ávila"
        #expect(
            ExportFormat.rr.fileName(for: recording, timeZone: utc) == "2026-11-22-0739-running-Zoë-O-Neil-Ávila.txt"
        )
        // Whatever a name holds, it stays one component of a path.
        recording.athlete = "../../etc/passwd"
        let name = ExportFormat.csv.fileName(for: recording, timeZone: utc)
        #expect(!name.contains("/") && name.hasSuffix("-etc-passwd.csv"), "\(name)")
    }
}
