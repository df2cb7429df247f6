import Foundation
import SystoleTestSupport
import Testing
import WorkoutAnalysis

@testable import WorkoutExport

/// The TCX file, validated against Garmin's own schema (TrainingCenterDatabasev2.xsd, with xmlschema) and read back
/// with Python's ElementTree (check_tcx.py).
@Suite struct TCXActivityFileTests {
    struct Checked: Decodable {
        var errors: [String]
        var activities: Int
        var sport: String
        var id: Double
        var laps: [Lap]
        /// The activity's notes.
        var notes: String?
    }

    struct Lap: Decodable {
        var start: Double
        var totalTime: Double
        var distance: Double
        var calories: Int?
        var average: Int?
        var maximum: Int?
        var intensity: String
        var trigger: String
        /// Tracks of trackpoints, each [time, heart rate or nil].
        var tracks: [[[Double?]]]
        var notes: String?
    }

    static func check(_ recordings: [ActivityRecording]) async throws -> [Checked] {
        let schema = try await PythonTools.tcxSchema()
        return try await ExportFixture.check(
            "check_tcx.py",
            recordings.map(TCXActivityFile.encode),
            before: [schema],
            as: [Checked].self
        )
    }

    @Test func theSchemaAcceptsItAndElementTreeReadsBackLapsTracksAndMarkers() async throws {
        let recording = ExportFixture.recording()
        let checked = try #require(try await Self.check([recording]).first)
        #expect(checked.errors.isEmpty, "\(checked.errors)")
        #expect(checked.activities == 1)
        #expect(checked.sport == "Running")
        #expect(abs(checked.id - ExportFixture.start.timeIntervalSince1970) < 0.0005)
        try #require(checked.laps.count == 2)

        // Worked out by hand: the readings the timer ran for, a track from each resume, the three readings no
        // heart rate (450, 1000) or none at all (700–704) left out.
        let tracks: [[[Int]]] = [
            [Array(0..<300), Array(360..<580).filter { $0 != 450 }],
            [Array(640..<900).filter { !ExportFixture.missing.contains($0) }, Array(930..<1200).filter { $0 != 1000 }],
        ]
        let notes = [
            """
            00:00:00 start
            00:01:40 <b>&amp; "quoted" 'single'
            00:03:20 =cmd|' /C calc'!A0
            00:05:00 a,b line2 line3
            00:05:40 +SUM(1)
            00:05:41 @x
            00:05:41 -2
            """,
            """
            00:09:42 during dropout
            00:11:20 ctrl\u{FFFD} \u{FFFD}\u{FFFD}tab\there\u{FFFD}
            00:17:29 after the last reading
            """,
        ]
        let expected: [(start: Double, time: Double, calories: Int)] = [(0, 520, 29), (600, 530, 31)]
        for (index, lap) in checked.laps.enumerated() {
            #expect(abs(lap.start - ExportFixture.at(expected[index].start).timeIntervalSince1970) < 0.0005)
            #expect(lap.totalTime == expected[index].time)
            #expect(lap.distance == 0)
            #expect(lap.calories == expected[index].calories)
            #expect(lap.intensity == "Active")
            #expect(lap.trigger == "Manual")
            #expect(lap.notes == notes[index])
            let seconds = tracks[index]
            #expect(lap.tracks.map(\.count) == seconds.map(\.count), "lap \(index + 1)")
            for (track, expectedSeconds) in zip(lap.tracks, seconds) {
                for (point, second) in zip(track, expectedSeconds) {
                    let time = try #require(point[0])
                    #expect(abs(time - ExportFixture.at(Double(second)).timeIntervalSince1970) < 0.0005)
                    #expect(point[1].map(Int.init) == Int(ExportFixture.bpm(second).rounded()), "at \(second) s")
                }
            }
            let bpms = seconds.flatMap { $0 }.map { ExportFixture.bpm($0) }
            #expect(lap.average == Int((bpms.reduce(0, +) / Double(bpms.count)).rounded()))
            #expect(lap.maximum == Int(bpms.max() ?? 0))
        }
        // The half is rounded as Swift rounds (away from zero), not as Python would (to even).
        let half = checked.laps[0].tracks[1].first {
            abs(($0[0] ?? 0) - ExportFixture.at(451).timeIntervalSince1970) < 0.0005
        }
        #expect(half?[1] == 131)
    }

    @Test func theAthleteIsInTheActivitysNotesAndTheSchemaStillAcceptsIt() async throws {
        var recording = ExportFixture.recording()
        recording.athlete = "Zoë <O'Neil> & co"
        let checked = try #require(try await Self.check([recording]).first)
        #expect(checked.errors.isEmpty, "\(checked.errors)")
        #expect(checked.notes == "Athlete: Zoë <O'Neil> & co")
        #expect(checked.laps.count == 2)
        #expect(try #require(try await Self.check([ExportFixture.recording()]).first).notes == nil)
    }

    @Test func aRecordingWithNothingButItsTimesIsValidToo() async throws {
        let start = ExportFixture.start
        let bare = ActivityRecording(activity: .yoga, start: start, end: start + 60)
        let checked = try #require(try await Self.check([bare]).first)
        #expect(checked.errors.isEmpty, "\(checked.errors)")
        #expect(checked.sport == "Other")
        try #require(checked.laps.count == 1)
        let lap = checked.laps[0]
        #expect(lap.totalTime == 60)
        #expect(lap.calories == nil && lap.average == nil && lap.maximum == nil && lap.notes == nil)
        #expect(lap.tracks.isEmpty)
    }

    @Test func sportsAreTheSchemasThree() {
        #expect(TCXActivityFile.sport(.running) == "Running")
        #expect(TCXActivityFile.sport(.cycling) == "Biking")
        #expect(TCXActivityFile.sport(.walking) == "Other")
    }
}
