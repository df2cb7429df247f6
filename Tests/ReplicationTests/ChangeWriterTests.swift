import Foundation
import Logging
import PostgresNIO
import SQLiteStore
import Synchronization
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import Replication

/// The writer against a real PostgreSQL: a batch sent twice (a receiver that crashed before it heard the commit)
/// is applied once, a batch that overlaps the last is applied from where the database is, deletions take the rows
/// away, and the schema migrates once and refuses to be written by an older systole.
@Suite(.serialized) struct ChangeWriterTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000.123456)
    let polar = Device(name: "Polar H10", address: "A0:9E:1A:00:00:01")
    let logger = Logger(label: "test")

    func beats(at second: Double) -> Sample {
        .heartbeatSeries(
            HeartbeatSeriesSample(
                start: t0.addingTimeInterval(second),
                end: t0.addingTimeInterval(second + 1.5),
                beats: [
                    .init(timeSinceStart: 0, rrTicks: 800, precededByGap: true),
                    .init(timeSinceStart: 0.78, rrTicks: 801),
                ]
            )
        )
    }

    func workout(_ id: UUID, athlete: String) -> Workout {
        Workout(
            id: id,
            configuration: WorkoutConfiguration(activityType: .running),
            startDate: t0,
            endDate: t0 + 60,
            duration: 60,
            events: [],
            activities: [],
            metadata: ["systole.athlete": .string(athlete), "systole.teamSession": .string(UUID().uuidString)],
            statistics: [:],
            devices: []
        )
    }

    func count(_ table: String, _ server: PostgresServer) async throws -> Int {
        Int(try await server.query("SELECT count(*) FROM \(table)").trimmingCharacters(in: .whitespacesAndNewlines))
            ?? -1
    }

    @Test func batchesApplyExactlyOnceInOrderAndDeletionsFollow() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-pg-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await PostgresServer(folder: folder)
        defer { server.stop() }
        let connection = try await server.receiverConnection()
        do {
            #expect(try await CentralSchema.migrate(connection, logger: logger) == [1, 2, 3])
            #expect(try await CentralSchema.migrate(connection, logger: logger) == [], "migrations run once")

            let storeID = UUID()
            let writer = ChangeWriter(storeID: storeID, receiver: "room-1", logger: logger)
            let workoutID = UUID()
            let first: [StoreChange] = [
                StoreChange(
                    sequence: 1,
                    committed: t0,
                    kind: .samples(
                        [
                            heartRate(120, at: 0, since: t0, device: polar),
                            heartRate(121, at: 1, since: t0, device: polar), beats(at: 0),
                        ],
                        workoutID: workoutID
                    )
                ),
                StoreChange(
                    sequence: 2,
                    committed: t0 + 1,
                    kind: .samples([heartRate(122, at: 2, since: t0, device: polar)], workoutID: workoutID)
                ),
            ]
            #expect(try await writer.position(with: connection) == nil, "a store the database has not seen")
            let applied = try await writer.apply(first, after: .start, with: connection)
            #expect(applied.through.sequence == 2 && applied.changes == 2 && applied.samples == 4)
            #expect(ChangeWriter.Position.same(applied.through.committed, (t0 + 1).timeIntervalSince1970))
            #expect(try await writer.position(with: connection) == applied.through)
            #expect(try await count("systole_quantity", server) == 3)
            #expect(try await count("systole_rr_interval", server) == 2)

            // The same changes from where the database no longer is (a copy of the store, or an older one, under
            // the same identity): refused whole, nothing written.
            let copy: [StoreChange] = [
                StoreChange(
                    sequence: 1,
                    committed: t0 + 5,
                    kind: .samples([heartRate(90, at: 5, since: t0, device: polar)], workoutID: nil)
                ),
                StoreChange(
                    sequence: 2,
                    committed: t0 + 6,
                    kind: .samples([heartRate(91, at: 6, since: t0, device: polar)], workoutID: nil)
                ),
                StoreChange(
                    sequence: 3,
                    committed: t0 + 7,
                    kind: .samples([heartRate(92, at: 7, since: t0, device: polar)], workoutID: nil)
                ),
            ]
            await #expect(throws: ChangeWriter.PositionMismatch.self) {
                try await writer.apply(copy, after: .start, with: connection)
            }
            await #expect(throws: ChangeWriter.PositionMismatch.self) {
                try await writer.apply(
                    Array(copy.suffix(1)),
                    after: .init(sequence: 2, committed: (t0 + 6).timeIntervalSince1970),
                    with: connection
                )
            }
            let workout = workout(workoutID, athlete: "Ana")
            let copiedWorkout = workout
            await #expect(throws: ChangeWriter.PositionMismatch.self) {
                try await writer.apply(
                    [StoreChange(sequence: 3, committed: t0 + 7, kind: .workoutSaved(copiedWorkout, id: workoutID))],
                    after: .start,
                    with: connection
                )
            }
            #expect(try await count("systole_quantity", server) == 3)
            #expect(try await count("systole_workout", server) == 0)

            // From where it is: applied.
            let next: [StoreChange] = [
                StoreChange(
                    sequence: 3,
                    committed: t0,
                    kind: .samples([heartRate(123, at: 3, since: t0, device: polar)], workoutID: workoutID)
                ),
                StoreChange(sequence: 4, committed: t0, kind: .workoutSaved(workout, id: workoutID)),
            ]
            let continued = try await writer.apply(next, after: applied.through, with: connection)
            #expect(continued.through.sequence == 4 && continued.changes == 2)
            #expect(try await count("systole_quantity", server) == 4)
            let row = try await server.query(
                "SELECT athlete, activity, body->>'id' FROM systole_workout"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(row == "Ana|running|\(workoutID.uuidString)")
            let stored = try await server.query("SELECT body FROM systole_workout")
            #expect(try WorkoutJSON.decode(stored.trimmingCharacters(in: .whitespacesAndNewlines)) == workout)
            let times = try await server.query(
                "SELECT extract(epoch from start_time) FROM systole_quantity ORDER BY start_time LIMIT 1"
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(times == "1800000000.123456", "microseconds kept")

            // Another receiver's changes do not touch this one's.
            let other = ChangeWriter(storeID: UUID(), receiver: "room-2", logger: logger)
            let theirs = try await other.apply(
                [
                    StoreChange(
                        sequence: 1,
                        committed: t0,
                        kind: .samples([heartRate(99, at: 0, since: t0, device: polar)], workoutID: nil)
                    )
                ],
                after: .start,
                with: connection
            )
            #expect(theirs.changes == 1)
            #expect(try await count("systole_receiver", server) == 2)

            // A deleted workout takes its samples along; a discarded one its samples.
            _ = try await writer.apply(
                [StoreChange(sequence: 5, committed: t0, kind: .workoutDeleted(workoutID))],
                after: continued.through,
                with: connection
            )
            #expect(try await count("systole_workout", server) == 0)
            #expect(try await count("systole_quantity", server) == 1, "the other receiver's sample stays")
            #expect(try await count("systole_rr_interval", server) == 0)
            #expect(
                try await server.query("SELECT applied_sequence FROM systole_receiver WHERE name = 'room-1'")
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "5"
            )

            // A newer systole migrated the database: this one refuses to write into it.
            _ = try await server.query("INSERT INTO systole_migration (version) VALUES (99)")
            await #expect(throws: CentralSchema.SchemaTooNew.self) {
                try await CentralSchema.migrate(connection, logger: logger)
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}

/// TLS to PostgreSQL as `sslmode` asks for it: verify-full against the CA that signed the server's certificate
/// works, over TLS; against another CA it fails with the reason.
@Suite(.serialized) struct PostgresTLSTests {
    @Test func verifyFullChecksTheServerAgainstTheCA() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-pg-tls-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try await PostgresServer(folder: folder, tls: true)
        defer { server.stop() }
        let base = "postgresql://\(server.user):\(server.password)@127.0.0.1:\(server.port)/\(server.database)"
        let verified = try PostgresAddress(parsing: base + "?sslmode=verify-full&sslrootcert=\(server.caFile)")
        // The connection is made, over TLS (asked of the server while it is open, leaving psql's own session out),
        // and a query runs: it finds no systole tables (no receiver replicated here).
        let tlsSessions = Mutex(-1)
        do {
            _ = try await CentralDatabase.with(verified, password: nil) { database in
                let count = try await server.query(
                    "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) "
                        + "WHERE s.ssl AND a.application_name <> 'psql' AND a.backend_type = 'client backend'"
                )
                tlsSessions.withLock { $0 = Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
                return try await database.workouts()
            }
            Issue.record("an empty database had systole's tables")
        } catch {
            #expect(Replicator.describe(error).contains("no systole tables"), "\(error)")
        }
        #expect(tlsSessions.withLock { $0 } == 1, "systole's connection is the one TLS session besides psql's")

        // Another CA: the certificate is not trusted.
        let other = folder.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try makeTestCertificates(in: other)
        let untrusted = try PostgresAddress(
            parsing: base + "?sslmode=verify-full&sslrootcert=\(other.appendingPathComponent("ca.pem").path)"
        )
        do {
            _ = try await CentralDatabase.with(untrusted, password: nil) { database in try await database.workouts() }
            Issue.record("a server whose certificate the CA did not sign was trusted")
        } catch {
            let reason = Replicator.describe(error)
            #expect(reason.lowercased().contains("certificate") || reason.contains("handshake"), "\(reason)")
        }
    }
}
