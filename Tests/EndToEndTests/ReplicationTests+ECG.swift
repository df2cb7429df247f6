import Foundation
import SystoleTestSupport
import Testing

extension ReplicationTests {
    /// A Polar H10's ECG replicated into the real PostgreSQL: every value the receiver stored is there, in the
    /// receiver's order, and `systole export --database --format edf|csv --source ecg` takes it out of PostgreSQL
    /// as systoled does from its store; deleting the workout deletes its ECG there too.
    @Test func theECGOfAWorkoutReachesPostgreSQLValueForValue() async throws {
        let root = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let postgres = try await PostgresServer(folder: root.appendingPathComponent("postgres"))
        defer { postgres.stop() }
        var options = DaemonHarness.Options()
        options.name = "ecg-receiver"
        options.parent = root
        options.simulator = ["--model", "polar-h10", "--rate", "1", "--pmd", "--seed", "9"]
        options.configuration = """
            [ecg]
            enabled = true

            [replication]
            postgres = "\(postgres.address)"
            password = "\(postgres.password)"
            receiver = "ecg-room"
            """
        let s = try await DaemonHarness.start(options)
        defer { s.stop() }
        #expect(try await s.systole(["start", "--activity", "running"]).status == 0)
        try await waitUntil("20 ECG frames sent") { try s.ecgFramesSent().count >= 20 }
        try await s.waitForReadingLogged(after: try #require(try s.ecgFramesSent().last?.time))
        #expect(try await s.systole(["end"]).status == 0)
        try await waitUntil("the workout in PostgreSQL", timeout: .seconds(120)) {
            try await postgres.query("SELECT count(*) FROM systole_workout").trimmingCharacters(
                in: .whitespacesAndNewlines
            )
                == "1"
        }
        let local = try await s.exportedECG()
        #expect(local.values.count >= 20 * 73)
        let stored = try await postgres.query(
            "SELECT array_to_string(samples, ' ') FROM systole_waveform WHERE kind = 'electrocardiogram' "
                + "ORDER BY start_time"
        )
        let central = stored.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(central == local.values)

        // Out of PostgreSQL: the same values and R-peaks, and an EDF+ pyedflib reads.
        let database = ["--database", postgres.addressWithPassword]
        let csv = try await s.systole(["export", "--last", "--format", "csv", "--source", "ecg", "-o", "-"] + database)
        #expect(csv.status == 0, "\(csv.standardError)")
        let rows = csv.standardOutput.split(separator: "\r\n").dropFirst().map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        #expect(rows.compactMap { Int($0[2]) } == local.values)
        #expect(rows.enumerated().filter { $0.element[3] == "1" }.map(\.offset) == local.peaks)
        let edf = root.appendingPathComponent("central.edf").path
        let exported = try await s.systole(["export", "--last", "--format", "edf", "-o", edf] + database)
        #expect(exported.status == 0, "\(exported.standardError)")
        let readers = try await ECGRecordingTests.readEDF(edf)
        #expect(Array(readers.pyedflib.physical.prefix(local.values.count)) == local.values.map(Double.init))

        // Deleted on the receiver, deleted in PostgreSQL.
        #expect(
            try await s.systole([
                "workouts", "delete", "--yes", try #require(try await s.workoutShown().values["id"] as? String),
            ]).status == 0
        )
        try await waitUntil("the ECG deleted in PostgreSQL", timeout: .seconds(120)) {
            try await postgres.query("SELECT count(*) FROM systole_waveform").trimmingCharacters(
                in: .whitespacesAndNewlines
            )
                == "0"
        }
    }
}
