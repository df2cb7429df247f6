import Foundation
import Logging
import PostgresNIO
import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

/// Writes a receiver's changes into the central database, in one transaction per batch, exactly once: the
/// receiver's row keeps its position (the last sequence applied, and when that change was committed in the store),
/// every batch goes only where the database's position is the one the receiver left it at (so a store copied to a
/// second receiver, or restored from an older backup, is told apart instead of having its changes skipped as
/// applied), and every row has a stable identifier (the sample's, the series' and the beat's index, the workout's)
/// with `ON CONFLICT DO NOTHING` or an update.
struct ChangeWriter {
    let storeID: UUID
    let receiver: String
    let logger: Logger

    /// Where the database is for this store: its last change applied, and that change's commit time in seconds
    /// since 1970 (nil before there was one, or for a position written by an older systole).
    struct Position: Equatable, Sendable {
        var sequence: Int64
        var committed: Double?

        static let start = Position(sequence: 0, committed: nil)

        /// Whether two commit times are the same one (a microsecond apart at most: PostgreSQL and the store round
        /// alike, but not to the bit).
        static func same(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): abs(a - b) < 1e-6
            default: false
            }
        }
    }

    /// The database's position for this store is not the one the receiver left it at: another copy of the store
    /// (or an older one) has replicated under the same identity.
    struct PositionMismatch: Error, CustomStringConvertible {
        var expected: Position
        var found: Position
        var description: String {
            "PostgreSQL's position for this store (change \(found.sequence)) is not where this receiver left it "
                + "(change \(expected.sequence))"
        }
    }

    /// What one batch did.
    struct Applied {
        /// The database's position now.
        var through: Position
        /// Changes applied by this call.
        var changes: Int
        var samples: Int
    }

    /// The database's position for this store, or nil when it has none (a store it has not seen).
    func position(with connection: PostgresConnection) async throws -> Position? {
        for try await (sequence, committed) in try await connection.query(
            "SELECT applied_sequence, applied_committed FROM systole_receiver WHERE store_id = \(storeID)",
            logger: logger
        ).decode((Int64, Double?).self) {
            return Position(sequence: sequence, committed: committed)
        }
        return nil
    }

    /// Applies `changes` (in sequence order, all after `position`, which the database must be at) and returns the
    /// new position.
    func apply(
        _ changes: [StoreChange],
        after position: Position,
        with connection: PostgresConnection
    ) async throws -> Applied {
        let storeID = storeID
        let receiver = receiver
        let logger = logger
        guard let last = changes.last else { return Applied(through: position, changes: 0, samples: 0) }
        let through = Position(sequence: last.sequence, committed: last.committed.timeIntervalSince1970)
        // Samples alone (nearly every batch): one statement, one round trip.
        if changes.allSatisfy({ if case .samples = $0.kind { true } else { false } }) {
            var batch = SampleBatch()
            var samples = 0
            for change in changes {
                guard case .samples(let list, let workoutID) = change.kind else { continue }
                batch.add(list, workoutID: workoutID, committed: change.committed, sequence: change.sequence)
                samples += list.count
            }
            var found = Position.start
            var consistent = false
            for try await (sequence, committed, matches) in try await connection.query(
                batch.statement(storeID, registering: (receiver, position, through)),
                logger: logger
            ).decode((Int64, Double?, Bool).self) {
                found = Position(sequence: sequence, committed: committed)
                consistent = matches
            }
            guard consistent else { throw PositionMismatch(expected: position, found: found) }
            return Applied(through: through, changes: changes.count, samples: samples)
        }
        return try await inTransaction(connection, logger: logger) { connection in
            // Takes the receiver's row's lock: batches of one store never interleave.
            var found: Position?
            for try await (sequence, committed) in try await connection.query(
                """
                SELECT applied_sequence, applied_committed FROM systole_receiver WHERE store_id = \(storeID)
                FOR UPDATE
                """,
                logger: logger
            ).decode((Int64, Double?).self) {
                found = Position(sequence: sequence, committed: committed)
            }
            if let found {
                guard found.sequence == 0 || found.sequence == position.sequence,
                    found.sequence == 0 || Position.same(found.committed, position.committed)
                else { throw PositionMismatch(expected: position, found: found) }
                try await connection.query(
                    "UPDATE systole_receiver SET name = \(receiver), last_seen = now() WHERE store_id = \(storeID)",
                    logger: logger
                )
            } else {
                try await connection.query(
                    "INSERT INTO systole_receiver (store_id, name) VALUES (\(storeID), \(receiver))",
                    logger: logger
                )
            }
            var batch = SampleBatch()
            var samples = 0
            for change in changes {
                switch change.kind {
                case .samples(let list, let workoutID):
                    batch.add(list, workoutID: workoutID, committed: change.committed, sequence: change.sequence)
                    samples += list.count
                case .workoutSaved(let workout, _):
                    try await batch.write(storeID, connection, logger)
                    if let workout { try await Self.upsert(workout, storeID: storeID, connection, logger) }
                case .workoutDeleted(let id):
                    try await batch.write(storeID, connection, logger)
                    try await Self.deleteSamples(ofWorkout: id, storeID: storeID, connection, logger)
                    try await connection.query(
                        "DELETE FROM systole_workout WHERE id = \(id) AND store_id = \(storeID)",
                        logger: logger
                    )
                case .samplesDeleted(let id):
                    try await batch.write(storeID, connection, logger)
                    try await Self.deleteSamples(ofWorkout: id, storeID: storeID, connection, logger)
                }
            }
            try await batch.write(storeID, connection, logger)
            try await connection.query(
                """
                UPDATE systole_receiver SET applied_sequence = \(through.sequence),
                    applied_committed = \(through.committed) WHERE store_id = \(storeID)
                """,
                logger: logger
            )
            return Applied(through: through, changes: changes.count, samples: samples)
        }
    }

    private static func deleteSamples(
        ofWorkout id: UUID,
        storeID: UUID,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        try await connection.query(
            "DELETE FROM systole_quantity WHERE workout_id = \(id) AND store_id = \(storeID)",
            logger: logger
        )
        try await connection.query(
            "DELETE FROM systole_rr_interval WHERE workout_id = \(id) AND store_id = \(storeID)",
            logger: logger
        )
        try await connection.query(
            "DELETE FROM systole_waveform WHERE workout_id = \(id) AND store_id = \(storeID)",
            logger: logger
        )
    }

    /// The workout's row: its columns for queries, and the whole workout as JSON (`body`), as `systole` reads it
    /// back.
    static func upsert(
        _ workout: Workout,
        storeID: UUID,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        var athlete: String?
        var team: UUID?
        if case .string(let name)? = workout.metadata[ActivityRecording.athleteKey] { athlete = name }
        if case .string(let text)? = workout.metadata[ActivityRecording.teamSessionKey] {
            team = UUID(uuidString: text)
        }
        let body = try WorkoutJSON.encode(workout)
        try await connection.query(
            """
            INSERT INTO systole_workout (id, store_id, athlete, team_session, activity, location, start_time,
                end_time, duration_s, body)
            VALUES (\(workout.id), \(storeID), \(athlete), \(team), \(workout.activityType.name),
                \("\(workout.configuration.locationType)"), \(workout.startDate), \(workout.endDate),
                \(workout.duration), \(body)::jsonb)
            ON CONFLICT (id) DO UPDATE SET athlete = excluded.athlete, team_session = excluded.team_session,
                activity = excluded.activity, location = excluded.location, start_time = excluded.start_time,
                end_time = excluded.end_time, duration_s = excluded.duration_s, body = excluded.body
            """,
            logger: logger
        )
    }
}
