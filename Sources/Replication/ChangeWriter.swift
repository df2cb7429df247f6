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
        guard let last = changes.last?.sequence else { return Applied(through: 0, changes: 0, samples: 0) }
        // Samples alone (nearly every batch): one statement, one round trip.
        if changes.allSatisfy({ if case .samples = $0.kind { true } else { false } }) {
            var batch = SampleBatch()
            for change in changes {
                guard case .samples(let list, let workoutID) = change.kind else { continue }
                batch.add(list, workoutID: workoutID, committed: change.committed, sequence: change.sequence)
            }
            var applied: Int64 = 0
            for try await sequence in try await client.query(
                batch.statement(storeID, registering: (receiver, last)),
                logger: logger
            ).decode(Int64.self) {
                applied = sequence
            }
            let fresh = changes.filter { $0.sequence > applied }
            let freshSamples = fresh.reduce(0) { total, change in
                if case .samples(let list, _) = change.kind { total + list.count } else { total }
            }
            return Applied(through: max(applied, last), changes: fresh.count, samples: freshSamples)
        }
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
/// hundred sensors' second of readings is a handful of statements, not hundreds. What repeats from sample to sample
/// (the workout, the type and unit, the device, the commit time) is sent once, and each sample carries its index
/// into those lists: most of a batch's bytes and encoding were those repeated strings.
struct SampleBatch {
    var ids: [UUID] = []
    var values: [Double] = []
    var readings: [Int32] = []
    var starts: [Date] = []
    var ends: [Date] = []
    var sampleKeys = Keys()

    var beatSeries: [UUID] = []
    var beatIndexes: [Int32] = []
    var beatTimes: [Date] = []
    var beatTicks: [Int32] = []
    var beatGaps: [Bool] = []
    var beatKeys = Keys()

    /// Per sample (or beat): indexes, from 1 as PostgreSQL's arrays count, into the lists of distinct values.
    struct Keys {
        var workout: [Int32] = []
        var type: [Int32] = []
        var device: [Int32] = []
        var committed: [Int32] = []
        var sequence: [Int64] = []
    }

    /// The distinct values the keys point into.
    var workouts: [String: Int32] = [:]
    var types: [String: Int32] = [:]
    var units: [String] = []
    var devices: [Pair: Int32] = [:]
    var committedDates: [Date: Int32] = [:]

    struct Pair: Hashable {
        var address: String
        var name: String
    }

    var isEmpty: Bool { ids.isEmpty && beatSeries.isEmpty }

    private static func key<K: Hashable>(_ value: K, in table: inout [K: Int32]) -> Int32 {
        if let key = table[value] { return key }
        let key = Int32(table.count + 1)
        table[value] = key
        return key
    }

    mutating func add(_ samples: [Sample], workoutID: UUID?, committed date: Date, sequence: Int64) {
        let workout = Self.key(workoutID?.uuidString ?? "", in: &workouts)
        let committed = Self.key(date, in: &committedDates)
        for sample in samples {
            switch sample {
            case .quantity(let quantity):
                guard let value = try? quantity.quantity.doubleValue(for: quantity.type.canonicalUnit),
                    value.isFinite
                else { continue }
                let type: Int32
                if let known = types[quantity.type.identifier] {
                    type = known
                } else {
                    type = Self.key(quantity.type.identifier, in: &types)
                    units.append(quantity.type.canonicalUnit.symbol)
                }
                ids.append(quantity.id)
                values.append(value)
                readings.append(Int32(clamping: quantity.count))
                starts.append(Self.asStored(quantity.startDate))
                ends.append(Self.asStored(quantity.endDate))
                sampleKeys.workout.append(workout)
                sampleKeys.type.append(type)
                sampleKeys.device.append(
                    Self.key(
                        Pair(address: quantity.device?.address ?? "", name: quantity.device?.name ?? ""),
                        in: &devices
                    )
                )
                sampleKeys.committed.append(committed)
                sampleKeys.sequence.append(sequence)
            case .heartbeatSeries(let series):
                let device = Self.key(
                    Pair(address: series.device?.address ?? "", name: series.device?.name ?? ""),
                    in: &devices
                )
                let start = Self.asStored(series.startDate)
                for (index, beat) in series.beats.enumerated() {
                    beatSeries.append(series.id)
                    beatIndexes.append(Int32(index))
                    beatTimes.append(start.addingTimeInterval(beat.timeSinceStart))
                    beatTicks.append(Int32(beat.rrTicks))
                    beatGaps.append(beat.precededByGap)
                    beatKeys.workout.append(workout)
                    beatKeys.device.append(device)
                    beatKeys.sequence.append(sequence)
                }
            }
        }
    }

    /// A date as the local store gives it back (it keeps seconds since 1970): the central database then holds
    /// the very times the store holds, not ones a fraction of a microsecond away.
    static func asStored(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970)
    }

    /// The lists, in key order.
    private func ordered<K>(_ table: [K: Int32]) -> [K] {
        table.sorted { $0.value < $1.value }.map(\.key)
    }

    /// Writes what was added (of the changes after the last one applied) and empties the batch.
    mutating func write(_ storeID: UUID, _ connection: PostgresConnection, _ logger: Logger) async throws {
        guard !isEmpty else { return }
        try await connection.query(statement(storeID), logger: logger)
        self = SampleBatch()
    }

    /// One statement that inserts the samples and beats of the changes after the receiver's last applied one,
    /// and with `registering` also registers the receiver and moves that to `through`; it returns the sequence it
    /// found. A single statement is a transaction of its own: a batch of samples alone takes one round trip.
    func statement(_ storeID: UUID, registering: (receiver: String, through: Int64)? = nil) -> PostgresQuery {
        let workoutList = ordered(workouts)
        let typeList = ordered(types)
        let deviceList = ordered(devices)
        let addresses = deviceList.map(\.address)
        let names = deviceList.map(\.name)
        let committedList = ordered(committedDates)
        let units = units
        let registers = registering != nil
        let receiver = registering?.receiver ?? ""
        let through = registering?.through ?? 0
        // Every CTE sees the rows as they were when the statement began: `before` is the last change applied
        // before this batch, whatever `registration` sets.
        return """
            WITH before AS (
                SELECT coalesce((SELECT applied_sequence FROM systole_receiver WHERE store_id = \(storeID)), 0) AS applied
            ), registration AS (
                INSERT INTO systole_receiver (store_id, name, applied_sequence)
                SELECT \(storeID), \(receiver), \(through) WHERE \(registers)
                ON CONFLICT (store_id) DO UPDATE SET name = excluded.name, last_seen = now(),
                    applied_sequence = greatest(systole_receiver.applied_sequence, \(through))
            ), quantities AS (
                INSERT INTO systole_quantity (id, store_id, workout_id, type, value, unit, readings, start_time,
                    end_time, device_address, device_name, committed_at)
                SELECT s.id, \(storeID), nullif((\(workoutList)::text[])[s.w], '')::uuid, (\(typeList)::text[])[s.t],
                    s.value, (\(units)::text[])[s.t], s.readings, s.start_time, s.end_time,
                    nullif((\(addresses)::text[])[s.d], ''), nullif((\(names)::text[])[s.d], ''),
                    (\(committedList)::timestamptz[])[s.c]
                FROM unnest(\(ids)::uuid[], \(values)::float8[], \(readings)::int4[], \(starts)::timestamptz[],
                    \(ends)::timestamptz[], \(sampleKeys.workout)::int4[], \(sampleKeys.type)::int4[],
                    \(sampleKeys.device)::int4[], \(sampleKeys.committed)::int4[], \(sampleKeys.sequence)::int8[])
                    AS s(id, value, readings, start_time, end_time, w, t, d, c, sequence), before
                WHERE s.sequence > before.applied
                ON CONFLICT (id) DO NOTHING
            ), beats AS (
                INSERT INTO systole_rr_interval (series_id, index, store_id, workout_id, time, rr_ticks,
                    preceded_by_gap, device_address)
                SELECT b.series, b.index, \(storeID), nullif((\(workoutList)::text[])[b.w], '')::uuid, b.time, b.ticks,
                    b.gap, nullif((\(addresses)::text[])[b.d], '')
                FROM unnest(\(beatSeries)::uuid[], \(beatIndexes)::int4[], \(beatTimes)::timestamptz[],
                    \(beatTicks)::int4[], \(beatGaps)::bool[], \(beatKeys.workout)::int4[], \(beatKeys.device)::int4[],
                    \(beatKeys.sequence)::int8[])
                    AS b(series, index, time, ticks, gap, w, d, sequence), before
                WHERE b.sequence > before.applied
                ON CONFLICT (series_id, index) DO NOTHING
            )
            SELECT applied FROM before
            """
    }
}
