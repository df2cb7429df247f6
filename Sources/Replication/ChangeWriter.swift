import Foundation
import HealthStore
import Logging
import PostgresNIO
import WorkoutAnalysis
import WorkoutKit

/// Writes a receiver's changes into the central database, in one transaction per batch, exactly once: the
/// receiver's row keeps the last sequence applied (read and locked at the start of the transaction, so a batch
/// sent again after a crash or a lost answer skips what is there), and every row has a stable identifier (the
/// sample's, the series' and the beat's index, the workout's) with `ON CONFLICT DO NOTHING` or an update.
struct ChangeWriter {
    let storeID: UUID
    let receiver: String
    let logger: Logger

    /// What one batch did.
    struct Applied {
        /// The last sequence now in the database.
        var through: Int64
        /// Changes applied by this call (not those a previous attempt had applied).
        var changes: Int
        var samples: Int
    }

    /// Applies `changes` (in sequence order) and returns the last sequence the database holds.
    func apply(_ changes: [StoreChange], with client: PostgresClient) async throws -> Applied {
        let storeID = storeID
        let receiver = receiver
        let logger = logger
        return try await inTransaction(client, logger: logger) { connection in
            var applied: Int64 = 0
            // Registers the receiver, or takes its row's lock: batches of one receiver never interleave.
            for try await sequence in try await connection.query(
                """
                INSERT INTO systole_receiver (store_id, name) VALUES (\(storeID), \(receiver))
                ON CONFLICT (store_id) DO UPDATE SET name = excluded.name, last_seen = now()
                RETURNING applied_sequence
                """,
                logger: logger
            ).decode(Int64.self) {
                applied = sequence
            }
            let fresh = changes.filter { $0.sequence > applied }
            var batch = SampleBatch()
            var samples = 0
            for change in fresh {
                switch change.kind {
                case .samples(let list, let workoutID):
                    batch.add(list, workoutID: workoutID, committed: change.committed)
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
            let through = max(applied, changes.last?.sequence ?? applied)
            if through > applied {
                try await connection.query(
                    "UPDATE systole_receiver SET applied_sequence = \(through) WHERE store_id = \(storeID)",
                    logger: logger
                )
            }
            return Applied(through: through, changes: fresh.count, samples: samples)
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

/// Samples of several changes, as columns, written with one statement per table (`unnest` over arrays): a
/// hundred sensors' second of readings is a handful of statements, not hundreds.
struct SampleBatch {
    var ids: [UUID] = []
    var workouts: [String] = []
    var types: [String] = []
    var values: [Double] = []
    var units: [String] = []
    var readings: [Int] = []
    var starts: [Date] = []
    var ends: [Date] = []
    var addresses: [String] = []
    var names: [String] = []
    var committed: [Date] = []

    var beatSeries: [UUID] = []
    var beatIndexes: [Int] = []
    var beatWorkouts: [String] = []
    var beatTimes: [Date] = []
    var beatTicks: [Int] = []
    var beatGaps: [Bool] = []
    var beatAddresses: [String] = []

    mutating func add(_ samples: [Sample], workoutID: UUID?, committed date: Date) {
        let workout = workoutID?.uuidString ?? ""
        for sample in samples {
            switch sample {
            case .quantity(let quantity):
                guard let value = try? quantity.quantity.doubleValue(for: quantity.type.canonicalUnit),
                    value.isFinite
                else { continue }
                ids.append(quantity.id)
                workouts.append(workout)
                types.append(quantity.type.identifier)
                values.append(value)
                units.append(quantity.type.canonicalUnit.symbol)
                readings.append(quantity.count)
                starts.append(Self.asStored(quantity.startDate))
                ends.append(Self.asStored(quantity.endDate))
                addresses.append(quantity.device?.address ?? "")
                names.append(quantity.device?.name ?? "")
                committed.append(date)
            case .heartbeatSeries(let series):
                for (index, beat) in series.beats.enumerated() {
                    beatSeries.append(series.id)
                    beatIndexes.append(index)
                    beatWorkouts.append(workout)
                    beatTimes.append(Self.asStored(series.startDate).addingTimeInterval(beat.timeSinceStart))
                    beatTicks.append(Int(beat.rrTicks))
                    beatGaps.append(beat.precededByGap)
                    beatAddresses.append(series.device?.address ?? "")
                }
            }
        }
    }

    /// A date as the local store gives it back (it keeps seconds since 1970): the central database then holds
    /// the very times the store holds, not ones a fraction of a microsecond away.
    static func asStored(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970)
    }

    /// Writes what was added and empties the batch.
    mutating func write(_ storeID: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws {
        if !ids.isEmpty {
            try await connection.query(
                """
                INSERT INTO systole_quantity (id, store_id, workout_id, type, value, unit, readings, start_time,
                    end_time, device_address, device_name, committed_at)
                SELECT id, \(storeID), nullif(workout, '')::uuid, type, value, unit, readings, start_time, end_time,
                    nullif(address, ''), nullif(name, ''), committed_at
                FROM unnest(\(ids)::uuid[], \(workouts)::text[], \(types)::text[], \(values)::float8[],
                    \(units)::text[], \(readings)::int8[], \(starts)::timestamptz[], \(ends)::timestamptz[],
                    \(addresses)::text[], \(names)::text[], \(committed)::timestamptz[])
                    AS s(id, workout, type, value, unit, readings, start_time, end_time, address, name, committed_at)
                ON CONFLICT (id) DO NOTHING
                """,
                logger: logger
            )
        }
        if !beatSeries.isEmpty {
            try await connection.query(
                """
                INSERT INTO systole_rr_interval (series_id, index, store_id, workout_id, time, rr_ticks,
                    preceded_by_gap, device_address)
                SELECT series, index, \(storeID), nullif(workout, '')::uuid, time, ticks, gap, nullif(address, '')
                FROM unnest(\(beatSeries)::uuid[], \(beatIndexes)::int8[], \(beatWorkouts)::text[],
                    \(beatTimes)::timestamptz[], \(beatTicks)::int8[], \(beatGaps)::bool[], \(beatAddresses)::text[])
                    AS b(series, index, workout, time, ticks, gap, address)
                ON CONFLICT (series_id, index) DO NOTHING
                """,
                logger: logger
            )
        }
        self = SampleBatch()
    }
}

/// A workout as JSON: how the central database keeps it whole (`systole_workout.body`) and `systole --database`
/// reads it back. Dates are seconds since 1970; infinite or NaN statistics become strings, as in the local store.
public enum WorkoutJSON {
    public static func encode(_ workout: Workout) throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return String(decoding: try encoder.encode(workout), as: UTF8.self)
    }

    public static func decode(_ text: String) throws -> Workout {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf",
            negativeInfinity: "-inf",
            nan: "nan"
        )
        return try decoder.decode(Workout.self, from: Data(text.utf8))
    }
}
