import Foundation
import Logging
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import Replication

/// Rows in the central database that a receiver with a broken clock, or a hostile one, wrote: `systole
/// --database` lists what it can read and says which rows it cannot, refuses to show or export those with the
/// reason (never traps), and bounds its work on a workout whose clock jumped from 1970 to today.
@Suite(.serialized) struct CentralRowsTests {
    func workout(_ id: UUID, from start: Date, to end: Date) -> Workout {
        Workout(
            id: id,
            configuration: WorkoutConfiguration(activityType: .running),
            startDate: start,
            endDate: end,
            duration: max(0, end.timeIntervalSince(start)),
            events: [],
            activities: [],
            metadata: [:],
            statistics: [:],
            devices: []
        )
    }

    @Test func brokenRowsAreToldAndNeverTrapTheCommandLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-pg-rows-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await PostgresServer(folder: folder)
        defer { server.stop() }
        let connection = try await server.receiverConnection()
        _ = try await CentralSchema.migrate(connection, logger: Logger(label: "test"))
        try await connection.close()

        let now = Date()
        let good = UUID()
        let absurd = UUID()
        let malformed = UUID()
        let jumped = UUID()
        let store = UUID()
        func row(_ id: UUID, _ body: String, start: String = "now()") -> String {
            "INSERT INTO systole_workout (id, store_id, activity, location, start_time, end_time, duration_s, body) "
                + "VALUES ('\(id)', '\(store)', 'running', 'unknown', \(start), now(), 60, $b$\(body)$b$::jsonb);"
        }
        let bodies = [
            row(good, try WorkoutJSON.encode(workout(good, from: now - 600, to: now))),
            row(
                absurd,
                try WorkoutJSON.encode(
                    workout(
                        absurd,
                        from: Date(timeIntervalSince1970: -1e300),
                        to: Date(timeIntervalSince1970: 1e300)
                    )
                )
            ),
            row(malformed, #"{"not": "a workout"}"#),
            row(
                jumped,
                try WorkoutJSON.encode(workout(jumped, from: Date(timeIntervalSince1970: 1), to: now)),
                start: "'1970-01-01T00:00:01Z'"
            ),
        ]
        var beats: [String] = []
        for index in 0..<200 {
            beats.append("('\(UUID())', 0, '\(store)', '\(jumped)', now() - interval '\(200 - index) s', 800, false)")
        }
        _ = try await server.query(
            "INSERT INTO systole_receiver (store_id, name) VALUES ('\(store)', 'room-1');"
                + bodies.joined()
                + "INSERT INTO systole_quantity (id, store_id, workout_id, type, value, unit, readings, start_time, "
                + "end_time, committed_at) VALUES ('\(UUID())', '\(store)', '\(good)', 'heartRate', 'Infinity', "
                + "'count/min', 1, now() - interval '1 min', now() - interval '1 min', now()), ('\(UUID())', "
                + "'\(store)', '\(good)', 'heartRate', 120, 'count/min', 1, now() - interval '2 min', "
                + "now() - interval '2 min', now()), ('\(UUID())', '\(store)', '\(jumped)', 'heartRate', 130, "
                + "'count/min', 1, now() - interval '1 min', now() - interval '1 min', now());"
                + "INSERT INTO systole_rr_interval (series_id, index, store_id, workout_id, time, rr_ticks, "
                + "preceded_by_gap) VALUES \(beats.joined(separator: ", "));"
        )

        func central(_ arguments: String...) async throws -> CommandRunner.Result {
            try await systole(arguments + ["--database", server.addressWithPassword])
        }
        let listed = try await central("workouts", "--json")
        #expect(listed.status == 0, "\(listed.standardError)")
        let ids = ((try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8))) as? [[String: Any]])?
            .compactMap { $0["id"] as? String }
        #expect(Set(ids ?? []) == [good.uuidString, jumped.uuidString], "\(listed.standardOutput)")
        #expect(listed.standardError.contains("2 workout(s) in the central database cannot be read"))
        #expect(listed.standardError.contains("a date before 1970 or after 2199"), "\(listed.standardError)")
        #expect(listed.standardError.contains("its body is not a workout"), "\(listed.standardError)")

        let shownAbsurd = try await central("workouts", "show", absurd.uuidString)
        let exportedAbsurd = try await central("export", absurd.uuidString, "--format", "fit", "-o", "-")
        for refused in [shownAbsurd, exportedAbsurd] {
            #expect(refused.status == 1, "exit \(refused.status): \(refused.standardError)")
            #expect(refused.standardError.contains("cannot be read"), "\(refused.standardError)")
        }
        // The workout with a value PostgreSQL keeps as Infinity, and the one whose clock jumped from 1970, show
        // and export.
        for id in [good, jumped] {
            let shown = try await central("workouts", "show", id.uuidString, "--json")
            #expect(shown.status == 0, "\(id): \(shown.standardError)")
            let exported = try await central("export", id.uuidString, "--format", "fit", "-o", "-")
            #expect(exported.status == 0 && !exported.standardOutput.isEmpty, "\(id): \(exported.standardError)")
        }
    }
}
