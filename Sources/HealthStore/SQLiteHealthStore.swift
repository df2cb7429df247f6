import Foundation
import GRDB
import WorkoutKit

/// The durable ``HealthStore``: one SQLite file in WAL mode, written through GRDB.
///
/// Durability: `save(_:workoutID:)` returns once its samples are committed, so a returned save survives a crash of
/// the process; whether it also survives a power cut at once or within a set time is the store's
/// ``Synchronization``. Every other write (workouts, the journal, deletions) is synced before it returns. Samples
/// arriving together are committed together (group commit): a save commits at once unless a commit is under way,
/// and then shares the next one, so what is in flight (not yet returned) is at most two commits' worth.
public final class SQLiteHealthStore: HealthStore {
    public let path: String
    let pool: DatabasePool
    private let writer: GroupCommitWriter
    /// Syncs the log when commits are not synced (``Synchronization/periodically(interval:)``); nil when every
    /// commit is.
    private let logSync: LogSync?
    /// Whether changes are logged for a replica (see ChangeLog).
    public let keepsChangeLog: Bool

    /// The calendar that decides which day a workout belongs to (the system's, unless told otherwise).
    public let calendar: Calendar

    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// - Parameter maximumSize: a cap on the file's size in bytes. A save that would pass it fails with
    ///   ``HealthStoreError/Kind/diskFull`` exactly as on a full disk, and stores nothing of its batch.
    /// - Parameter commitsInPlace: whether the thread that calls `save` may wait for its commit, asked at each
    ///   commit. Waiting in place spares two thread switches a commit (to GRDB's writer queue and back); answer
    ///   true only on a thread of your own (systoled's workout thread), never on the concurrency pool's, whose
    ///   threads other tasks need while a commit waits for the disk.
    /// - Parameter commitObserver: told how long each commit of saved samples took (fsync included), on the
    ///   thread that ran it; systoled's /metrics shows them as a histogram.
    /// - Parameter keepsChangeLog: whether every change (samples saved, workouts saved and deleted) is also logged,
    ///   in its own transaction, for a replica to take (``changes(after:limit:sampleLimit:)``).
    /// - Parameter synchronization: when samples' commits reach the disk (every other write is synced at once).
    public convenience init(
        path: String,
        calendar: Calendar = .current,
        maximumSize: Int? = nil,
        commitsInPlace: @escaping @Sendable () -> Bool = { false },
        commitObserver: (@Sendable (Duration) -> Void)? = nil,
        keepsChangeLog: Bool = false,
        synchronization: Synchronization = .everyCommit
    ) throws(HealthStoreError) {
        try self.init(
            path: path,
            calendar: calendar,
            maximumSize: maximumSize,
            commitsInPlace: commitsInPlace,
            commitObserver: commitObserver,
            throughInbox: true,
            keepsChangeLog: keepsChangeLog,
            synchronization: synchronization
        )
    }

    /// As the public initializer; `throughInbox: false` inserts every commit's samples straight into their tables
    /// (the benchmark that compares both ways of writing).
    @_spi(Benchmarks)
    public init(
        path: String,
        calendar: Calendar,
        maximumSize: Int?,
        commitsInPlace: @escaping @Sendable () -> Bool = { false },
        commitObserver: (@Sendable (Duration) -> Void)? = nil,
        throughInbox: Bool,
        keepsChangeLog: Bool = false,
        synchronization: Synchronization = .everyCommit
    ) throws(HealthStoreError) {
        self.keepsChangeLog = keepsChangeLog
        self.path = path
        self.calendar = calendar
        let synchronous: String
        switch synchronization {
        case .everyCommit:
            synchronous = "FULL"
            logSync = nil
        case .periodically(let interval):
            // NORMAL in WAL mode syncs the log only at checkpoints; LogSync syncs it in between.
            synchronous = "NORMAL"
            logSync = LogSync(storePath: path, interval: interval)
        }
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            // 512 KiB of page cache per connection instead of SQLite's 2 MiB: the writer appends at the end of a
            // few tables, and the kernel caches the file anyway. It was about 2 MiB of the daemon's memory with a
            // hundred sensors, and made no difference to its CPU time that a benchmark could show.
            try db.execute(sql: "PRAGMA cache_size = -512")
            // Checkpoints run beside the writer (see Checkpointer). They cannot restart the log while commits keep
            // coming, so SQLite's own, in the commit that passes this many pages (16 MiB), still runs now and then:
            // by then the checkpointer has copied all but the last seconds, and it is short.
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 4096")
            if let maximumSize {
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                try db.execute(sql: "PRAGMA max_page_count = \(max(1, maximumSize / pageSize))")
            }
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // Again on the writer: a pool sets `synchronous = NORMAL` on it after `prepareDatabase` when it turns
            // WAL on, and NORMAL syncs the log only at checkpoints, so a power loss could take commits that had
            // returned (and whose readings the live log had shown). Readers never commit.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
            try Schema.migrator.migrate(pool)
            try GroupCommitWriter.foldLeftovers(pool)
            try logSync?.syncNow()
        } catch {
            throw HealthStoreError(error, path: path, doing: "opening the store")
        }
        do {
            writer = GroupCommitWriter(
                pool: pool,
                path: path,
                checkpointer: try Checkpointer(path: path),
                commitsInPlace: commitsInPlace,
                commitObserver: commitObserver,
                throughInbox: throughInbox,
                logsChanges: keepsChangeLog,
                logSync: logSync
            )
        } catch {
            throw HealthStoreError(error, path: path, doing: "opening the store")
        }
    }

    // MARK: Samples

    public func save(_ samples: [Sample], workoutID: UUID?) async throws {
        guard !samples.isEmpty else { return }
        try await writer.write(samples, workoutID: workoutID)
    }

    /// Inserts samples into their tables at once, in one transaction, past the inbox (bulk imports and benchmarks).
    public func insertNow(_ samples: [Sample], workoutID: UUID?) throws(HealthStoreError) {
        do {
            try pool.write { db in try Self.insert(samples, workoutID: workoutID, db) }
            try logSync?.syncNow()
        } catch {
            throw HealthStoreError(error, path: path, doing: "saving \(samples.count) samples")
        }
    }

    /// Inserts `samples` in the current transaction. With a `cache`, devices and growing series an earlier
    /// transaction wrote are taken from it, and what this one writes is left in it.
    static func insert(_ samples: [Sample], workoutID: UUID?, cache: InsertCache? = nil, _ db: Database) throws {
        let quantity = try db.cachedStatement(
            sql: """
                INSERT INTO quantitySample
                    (uuid, type, value, startDate, endDate, count, deviceID, workoutID, metadata, anchor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        let heartbeats = try db.cachedStatement(
            sql: """
                INSERT INTO heartbeatSeries (uuid, startDate, endDate, deviceID, workoutID, metadata, beats, anchor)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        cache?.validate(db)
        var devices = cache?.devices ?? [:]
        func deviceID(_ device: Device?) throws -> Int64? {
            guard let device else { return nil }
            if let id = devices[device] { return id }
            let id = try Self.deviceID(device, db)
            devices[device] = id
            return id
        }
        var anchors = try AnchorAllocator(db)
        var rollups = Rollup.Accumulator()
        var series = QuantitySeries.Appender(known: cache?.series ?? [:])
        for sample in samples {
            switch sample {
            case .quantity(let q):
                let value = try q.quantity.doubleValue(for: q.type.canonicalUnit)
                rollups.add(type: q.type.identifier, value: value, count: q.count, start: q.startDate, end: q.endDate)
                if QuantitySeries.joins(q) {
                    try series.add(q, value: value, deviceID: try deviceID(q.device), workoutID: workoutID, db)
                    continue
                }
                try quantity.execute(arguments: [
                    q.id, q.type.identifier, value, q.startDate.timeIntervalSince1970,
                    q.endDate.timeIntervalSince1970, q.count, try deviceID(q.device), workoutID,
                    q.metadata.isEmpty ? nil : try Coding.encode(q.metadata), anchors.next(),
                ])
            case .heartbeatSeries(let h):
                try heartbeats.execute(arguments: [
                    h.id, h.startDate.timeIntervalSince1970, h.endDate.timeIntervalSince1970,
                    try deviceID(h.device), workoutID, h.metadata.isEmpty ? nil : try Coding.encode(h.metadata),
                    Coding.pack(h.beats), anchors.next(),
                ])
            }
        }
        try series.write(anchors: &anchors, db)
        try anchors.save(db)
        try rollups.write(db)
        try cache?.keep(devices: devices, series: series.touched, db)
    }

    static func deviceID(_ device: Device, _ db: Database) throws -> Int64 {
        let key = try Coding.encode(device)
        // Cached statements: every commit looks its devices up, and parsing the SQL each time showed in profiles.
        if let id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM device WHERE key = ?"),
            arguments: [key]
        ) {
            return id
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO device (key, name, address, manufacturer, bodyLocation, firmwareVersion)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            key, device.name, device.address, device.manufacturer, device.bodyLocation, device.firmwareVersion,
        ])
        return db.lastInsertedRowID
    }

    public func deleteSamples(ofWorkout id: UUID) async throws {
        try await writer.flush()
        let logs = keepsChangeLog
        try await write("deleting the samples of workout \(id)") { db in
            try Self.deleteSamples(ofWorkout: id, db)
            if logs { try ChangeLog.append(.samplesDeleted, workoutID: id, db) }
        }
    }

    /// Deletes a finished workout and its samples in one transaction, takes it out of its day's activity summary,
    /// and remembers the deletion (type `workout`) and each sample's for anchored queries, as HealthKit does.
    /// Returns false when there is no such workout.
    @discardableResult
    public func deleteWorkout(_ id: UUID) async throws -> Bool {
        try await writer.flush()
        let calendar = calendar
        let logs = keepsChangeLog
        return try await write("deleting workout \(id)") { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT startDate, duration, body FROM workout WHERE uuid = ?",
                    arguments: [id]
                )
            else { return false }
            try Self.deleteSamples(ofWorkout: id, db)
            let body = try Coding.decode(WorkoutBody.self, row["body"])
            let energy =
                try body.statistics[QuantityType.activeEnergyBurned.identifier]?.sumQuantity()?.doubleValue(
                    for: .kilojoule
                ) ?? 0
            let day = ActivitySummary.key(for: Date(timeIntervalSince1970: row["startDate"]), in: calendar)
            try db.execute(
                sql: """
                    UPDATE activitySummary SET activeEnergy = max(0, activeEnergy - ?),
                        exerciseMinutes = max(0, exerciseMinutes - ?), workouts = max(0, workouts - 1)
                    WHERE day = ?
                    """,
                arguments: [energy, (row["duration"] as Double) / 60, day]
            )
            var anchors = try AnchorAllocator(db)
            try db.execute(
                sql: "INSERT INTO deletedSample (anchor, uuid, type) VALUES (?, ?, 'workout')",
                arguments: [anchors.next(), id]
            )
            try anchors.save(db)
            try db.execute(sql: "DELETE FROM workout WHERE uuid = ?", arguments: [id])
            if logs { try ChangeLog.append(.workoutDeleted, workoutID: id, db) }
            return true
        }
    }

    /// Workouts deleted after `anchor` (nil: from the beginning), at most `limit`: their identifiers and the anchor
    /// to pass next time (HealthKit's anchored object query on the workout type, for deletions).
    public func deletedWorkouts(
        after anchor: Int64? = nil,
        limit: Int = 10_000
    ) async throws -> (
        deleted: [UUID], anchor: Int64
    ) {
        let since = anchor ?? 0
        return try await read("reading deleted workouts") { db in
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT anchor, uuid FROM deletedSample WHERE type = 'workout' AND anchor > ? ORDER BY anchor LIMIT ?",
                arguments: [since, limit]
            )
            return (rows.map { $0["uuid"] as UUID }, rows.last.map { $0["anchor"] as Int64 } ?? since)
        }
    }

    private static func deleteSamples(ofWorkout id: UUID, _ db: Database) throws {
        // Deletions are remembered with anchors of their own, for anchored queries.
        let doomed =
            try Row.fetchAll(db, sql: "SELECT uuid, type FROM quantitySample WHERE workoutID = ?", arguments: [id])
            .map { ($0["uuid"] as Data, $0["type"] as String) }
            + (try Data.fetchAll(db, sql: "SELECT uuid FROM heartbeatSeries WHERE workoutID = ?", arguments: [id]))
            .map { ($0, "heartbeatSeries") }
        var anchors = try AnchorAllocator(db)
        for (uuid, type) in doomed {
            try db.execute(
                sql: "INSERT INTO deletedSample (anchor, uuid, type) VALUES (?, ?, ?)",
                arguments: [anchors.next(), uuid, type]
            )
        }
        try anchors.save(db)
        let touched = try Row.fetchAll(
            db.cachedStatement(
                sql:
                    "SELECT DISTINCT type, CAST(startDate / 900 AS INTEGER) AS bucket FROM quantitySample WHERE workoutID = ?"
            ),
            arguments: [id]
        ).map { ($0["type"] as String, $0["bucket"] as Int64) }
        for table in ["quantitySeries", "quantitySeriesChunk"] {
            try db.execute(
                sql: "DELETE FROM \(table) WHERE sampleID IN (SELECT id FROM quantitySample WHERE workoutID = ?)",
                arguments: [id]
            )
        }
        try db.execute(sql: "DELETE FROM quantitySample WHERE workoutID = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM heartbeatSeries WHERE workoutID = ?", arguments: [id])
        for (type, bucket) in touched {
            try Rollup.rebuild(db, type: type, bucket: bucket)
        }
    }

    /// The samples of a workout with series samples unpacked into their readings, so statistics recomputed from
    /// them (crash recovery) see every reading at its own time, on either side of a pause.
    public func samples(ofWorkout id: UUID) async throws -> [Sample] {
        try await writer.flush()
        return try await read("reading the samples of workout \(id)") { db in
            let devices = try Self.devices(db)
            var samples: [Sample] = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        \(QuantitySeries.selectWithReadings)
                        WHERE s.workoutID = ? ORDER BY s.startDate, s.id
                        """
                ),
                arguments: [id]
            ).flatMap { row in try Self.readings(row, devices).map(Sample.quantity) }
            samples += try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT uuid, startDate, endDate, deviceID, metadata, beats
                        FROM heartbeatSeries WHERE workoutID = ? ORDER BY startDate, id
                        """
                ),
                arguments: [id]
            ).map { row in try Self.heartbeatSeries(row, devices) }
            return samples.sorted { $0.startDate < $1.startDate }
        }
    }

    static func devices(_ db: Database) throws -> [Int64: Device] {
        var devices: [Int64: Device] = [:]
        for row in try Row.fetchAll(
            db.cachedStatement(sql: "SELECT id, name, address, manufacturer, bodyLocation, firmwareVersion FROM device")
        ) {
            devices[row["id"]] = Device(
                name: row["name"],
                address: row["address"],
                manufacturer: row["manufacturer"],
                bodyLocation: row["bodyLocation"],
                firmwareVersion: row["firmwareVersion"]
            )
        }
        return devices
    }

    static func quantitySample(_ row: Row, _ devices: [Int64: Device]) throws -> Sample? {
        guard let type = QuantityType(identifier: row["type"]) else { return nil }
        let metadata: String? = row["metadata"]
        let deviceID: Int64? = row["deviceID"]
        return .quantity(
            QuantitySample(
                id: row["uuid"],
                type: type,
                quantity: Quantity(row["value"], type.canonicalUnit),
                start: Date(timeIntervalSince1970: row["startDate"]),
                end: Date(timeIntervalSince1970: row["endDate"]),
                count: row["count"],
                device: deviceID.flatMap { devices[$0] },
                metadata: try metadata.map { try Coding.decode([String: MetadataValue].self, $0) } ?? [:]
            )
        )
    }

    /// A row's readings: the readings of a series sample (a row with `minute` and `readings` columns), else
    /// the sample itself. Rows of types this build does not know are skipped.
    static func readings(_ row: Row, _ devices: [Int64: Device]) throws -> [QuantitySample] {
        guard case .quantity(let sample) = try quantitySample(row, devices) else { return [] }
        guard var packed = row["readings"] as Data?, let minute = row["minute"] as Int64? else { return [sample] }
        if let more = row["moreReadings"] as Data? { packed += more }
        return QuantitySeries.unpack(packed, minute: minute).map { reading in
            QuantitySample(
                type: sample.type,
                quantity: Quantity(reading.value, sample.type.canonicalUnit),
                start: Date(timeIntervalSince1970: reading.start),
                end: Date(timeIntervalSince1970: reading.end),
                device: sample.device
            )
        }
    }

    static func heartbeatSeries(_ row: Row, _ devices: [Int64: Device]) throws -> Sample {
        let metadata: String? = row["metadata"]
        let deviceID: Int64? = row["deviceID"]
        return .heartbeatSeries(
            HeartbeatSeriesSample(
                id: row["uuid"],
                start: Date(timeIntervalSince1970: row["startDate"]),
                end: Date(timeIntervalSince1970: row["endDate"]),
                beats: Coding.unpack(row["beats"]),
                device: deviceID.flatMap { devices[$0] },
                metadata: try metadata.map { try Coding.decode([String: MetadataValue].self, $0) } ?? [:]
            )
        )
    }

    // MARK: Workouts

    public func save(_ workout: Workout) async throws {
        try await save(workout, summarize: false)
    }

    public func saveFinished(_ workout: Workout) async throws {
        try await save(workout, summarize: true)
    }

    private func save(_ workout: Workout, summarize: Bool) async throws {
        try await writer.flush()
        let day = ActivitySummary.key(for: workout.startDate, in: calendar)
        let body = WorkoutBody(
            configuration: workout.configuration,
            events: workout.events,
            activities: workout.activities,
            metadata: workout.metadata,
            statistics: workout.statistics,
            devices: workout.devices
        )
        let text = try Coding.encode(body)
        let logs = keepsChangeLog
        try await write("saving workout \(workout.id)") { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO workout (uuid, activityType, locationType, startDate, endDate, duration, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    workout.id, workout.configuration.activityType.rawValue,
                    workout.configuration.locationType.rawValue, workout.startDate.timeIntervalSince1970,
                    workout.endDate.timeIntervalSince1970, workout.duration, text,
                ]
            )
            if summarize { try Self.summary(adding: workout, day: day, db) }
            if logs { try ChangeLog.append(.workoutSaved, workoutID: workout.id, db) }
        }
    }

    /// Adds a finished workout to the summary of the day it started on.
    private static func summary(adding workout: Workout, day: String, _ db: Database) throws {
        let energy = try workout.statistics(for: .activeEnergyBurned)?.sumQuantity()?.doubleValue(for: .kilojoule) ?? 0
        try db.execute(
            sql: """
                INSERT INTO activitySummary (day, activeEnergy, exerciseMinutes, workouts) VALUES (?, ?, ?, 1)
                ON CONFLICT(day) DO UPDATE SET
                    activeEnergy = activeEnergy + excluded.activeEnergy,
                    exerciseMinutes = exerciseMinutes + excluded.exerciseMinutes,
                    workouts = workouts + 1
                """,
            arguments: [day, energy, workout.duration / 60]
        )
    }

    /// Finished workouts, oldest first, optionally of one activity, starting in a date range, and with an id that
    /// begins with `idPrefix` (hex digits, dashes ignored, as `systole workouts show 2783E8B6` takes it).
    public func workouts(
        activity: WorkoutActivityType? = nil,
        from start: Date? = nil,
        to end: Date? = nil,
        idPrefix: String? = nil
    ) async throws -> [Workout] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let idPrefix {
            // Matched on the stored bytes, so only the matching workouts' bodies are decoded.
            let hex = idPrefix.replacingOccurrences(of: "-", with: "").uppercased()
            guard hex.count <= 32, hex.allSatisfy(\.isHexDigit) else { return [] }
            conditions.append("hex(uuid) LIKE ?")
            arguments += [hex + "%"]
        }
        if let activity {
            conditions.append("activityType = ?")
            arguments += [activity.rawValue]
        }
        if let start {
            conditions.append("startDate >= ?")
            arguments += [start.timeIntervalSince1970]
        }
        if let end {
            conditions.append("startDate < ?")
            arguments += [end.timeIntervalSince1970]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let bound = arguments
        return try await read("reading workouts") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT uuid, startDate, endDate, duration, body FROM workout \(filter) ORDER BY startDate"
                ),
                arguments: bound
            ).map { row in
                let body = try Coding.decode(WorkoutBody.self, row["body"])
                return Workout(
                    id: row["uuid"],
                    configuration: body.configuration,
                    startDate: Date(timeIntervalSince1970: row["startDate"]),
                    endDate: Date(timeIntervalSince1970: row["endDate"]),
                    duration: row["duration"],
                    events: body.events,
                    activities: body.activities,
                    metadata: body.metadata,
                    statistics: body.statistics,
                    devices: body.devices
                )
            }
        }
    }

    // MARK: Journal

    public func saveJournal(_ journal: WorkoutJournal) async throws {
        let text = try Coding.encode(journal)
        try await write("recording the workout in progress") { db in
            // An upsert keeps the row's id, so sessions load in the order they were first recorded.
            try db.execute(
                sql: """
                    INSERT INTO sessionJournal (sessionID, body) VALUES (?, ?)
                    ON CONFLICT (sessionID) DO UPDATE SET body = excluded.body
                    """,
                arguments: [journal.sessionID.uuidString, text]
            )
        }
    }

    public func loadJournals() async throws -> [WorkoutJournal] {
        let texts = try await read("reading the workouts in progress") { db in
            try String.fetchAll(db, sql: "SELECT body FROM sessionJournal ORDER BY id")
        }
        return try texts.map { try Coding.decode(WorkoutJournal.self, $0) }
    }

    public func clearJournal(sessionID: UUID) async throws {
        try await write("clearing the workout in progress") { db in
            try db.execute(sql: "DELETE FROM sessionJournal WHERE sessionID = ?", arguments: [sessionID.uuidString])
        }
    }

    /// Waits until every save so far is committed.
    public func flush() async throws { try await writer.flush() }

    /// How often the writer found someone else's write between its transactions and forgot what it remembered.
    var insertCacheInvalidations: Int { get async { await writer.cacheInvalidations } }

    /// How many times the log was synced apart from the commits (tests); nil when every commit is synced.
    var logSyncCount: Int? { logSync?.syncCount }

    /// Waits for the checkpoint under way, if any (for tests).
    func checkpointSettled() async { await writer.checkpointer.settled() }
    /// Waits for a fold the writer started on its own (tests only).
    func foldSettled() async { await writer.foldSettled() }

    // MARK: Access

    /// Runs `body` in one transaction on the writer and returns once it is committed and, whatever the store's
    /// ``Synchronization``, synced: these are the writes a power cut must not take (a workout's state, deletions).
    @discardableResult
    func write<T: Sendable>(
        _ doing: String,
        _ body: @Sendable @escaping (Database) throws -> T
    ) async throws(HealthStoreError) -> T {
        do {
            let result = try await pool.write(body)
            // On the writer's queue: a thread of the concurrency pool never waits for the disk.
            if let logSync { try await pool.writeWithoutTransaction { _ in try logSync.syncNow() } }
            return result
        } catch {
            throw HealthStoreError(error, path: path, doing: doing)
        }
    }

    /// A write beside the group commits that the writer's cache may take for its own (the change log's
    /// bookkeeping touches no table the cache remembers).
    func writeBesideCommits<T: Sendable>(
        _ doing: String,
        _ body: @Sendable @escaping (Database) throws -> T
    ) async throws(HealthStoreError) -> T {
        let cache = writer.cache
        return try await write(doing) { db in
            let result = try body(db)
            cache.noteOwnWrites(db)
            return result
        }
    }

    func read<T: Sendable>(
        _ doing: String,
        _ body: @Sendable @escaping (Database) throws -> T
    ) async throws(HealthStoreError) -> T {
        do {
            return try await pool.read(body)
        } catch {
            throw HealthStoreError(error, path: path, doing: doing)
        }
    }
}

/// Commits samples that arrive close together in one transaction, and answers each caller once its samples are
/// committed. A save commits at once when no commit is under way; saves that arrive during one wait for it, and
/// the first of them then commits for all (its own and theirs). So a lone save waits for nothing, and under load
/// each commit takes everything that came in while the last one ran. Commits run in the caller's task (no task of
/// their own, so no thread is woken for one): on the caller's thread where it may wait (`commitsInPlace`), on GRDB's
/// writer queue otherwise, so a thread of the Swift concurrency pool never waits for the disk.
actor GroupCommitWriter {
    private let pool: DatabasePool
    private let path: String
    private var pending: [(samples: [Sample], workoutID: UUID?)] = []
    /// Callers waiting for the commit under way to end: each is answered with its commit's result, or told to
    /// commit (`nil`) when it is the first of them.
    private var waiters: [CheckedContinuation<Result<Void, any Error>?, Never>] = []
    private var committing = false
    /// Also told of the writes the store makes beside the commits (the change log's acknowledgements), which are
    /// its own too.
    let cache = InsertCache()
    var cacheInvalidations: Int { cache.invalidations }
    let checkpointer: Checkpointer
    /// Samples committed to the inbox and not yet folded.
    private var unfolded = 0
    /// The fold under way, if any.
    private var folding: Task<Void, any Error>?

    /// Whether commits go to the inbox (folded later) or straight into the sample tables.
    private let throughInbox: Bool
    /// Whether each commit's samples also go to the change log.
    private let logsChanges: Bool
    /// Whether the current thread may wait for a commit (see ``SQLiteHealthStore/init(path:calendar:maximumSize:commitsInPlace:)``).
    private let commitsInPlace: @Sendable () -> Bool
    /// Told each commit's duration.
    private let commitObserver: (@Sendable (Duration) -> Void)?
    /// Told of each commit when commits are not synced.
    private let logSync: LogSync?

    init(
        pool: DatabasePool,
        path: String,
        checkpointer: Checkpointer,
        commitsInPlace: @escaping @Sendable () -> Bool,
        commitObserver: (@Sendable (Duration) -> Void)? = nil,
        throughInbox: Bool,
        logsChanges: Bool = false,
        logSync: LogSync? = nil
    ) {
        self.logSync = logSync
        self.logsChanges = logsChanges
        self.commitsInPlace = commitsInPlace
        self.commitObserver = commitObserver
        self.throughInbox = throughInbox
        self.pool = pool
        self.path = path
        self.checkpointer = checkpointer
    }

    func write(_ samples: [Sample], workoutID: UUID?) async throws {
        pending.append((samples, workoutID))
        try await commitPending().get()
    }

    /// Waits until everything saved so far is committed and in its table.
    func flush() async throws {
        try await commitPending().get()
        try await fold()
    }

    /// Commits everything pending now, together with whatever else is pending when the commit under way (if any)
    /// ends, and returns that commit's result.
    private func commitPending() async -> Result<Void, any Error> {
        if committing {
            let answer = await withCheckedContinuation { waiters.append($0) }
            if let answer { return answer }
            // The commit under way ended and this caller is the first waiting: it commits for everyone waiting.
        }
        committing = true
        let batch = pending
        let waiting = waiters
        pending = []
        waiters = []
        let count = batch.reduce(0) { $0 + $1.samples.count }
        let result = await Self.commit(
            batch,
            pool: pool,
            path: path,
            cache: cache,
            throughInbox: throughInbox,
            logsChanges: logsChanges,
            inPlace: commitsInPlace(),
            observer: commitObserver,
            logSync: logSync
        )
        for waiter in waiting { waiter.resume(returning: result) }
        if case .success = result, throughInbox { unfolded += count }
        // A fold takes a few milliseconds per thousand samples: now and then, beside the commits, not in one.
        if unfolded >= Self.foldThreshold, folding == nil { Task { try? await self.fold() } }
        if waiters.isEmpty {
            committing = false
        } else {
            // Saves arrived during this commit: the first of them commits next, for all of them.
            waiters.removeFirst().resume(returning: nil)
        }
        return result
    }

    /// Commits `batch` in one transaction: to the inbox (one row per workout), or into the sample tables. In place,
    /// the calling thread waits for it; otherwise the caller's task is suspended while GRDB's writer queue runs it.
    private static func commit(
        _ batch: [(samples: [Sample], workoutID: UUID?)],
        pool: DatabasePool,
        path: String,
        cache: InsertCache,
        throughInbox: Bool,
        logsChanges: Bool,
        inPlace: Bool,
        observer: (@Sendable (Duration) -> Void)?,
        logSync: LogSync?
    ) async -> Result<Void, any Error> {
        guard batch.contains(where: { !$0.samples.isEmpty }) else { return .success(()) }
        // A timed sync that failed fails the next save, before it commits: the caller keeps its readings and
        // hears why, as for a full disk.
        do {
            try logSync?.takeFailure()
        } catch {
            return .failure(error)
        }
        let write: @Sendable (Database) throws -> Void = { db in
            try transaction(db) {
                cache.validate(db)
                var index = batch.startIndex
                while index < batch.endIndex {
                    let workoutID = batch[index].workoutID
                    var samples: [Sample] = []
                    while index < batch.endIndex, batch[index].workoutID == workoutID {
                        samples += batch[index].samples
                        index += 1
                    }
                    // Packed once for the inbox and the change log alike.
                    let packed = throughInbox || logsChanges ? try Inbox.pack(samples) : nil
                    if let packed, throughInbox {
                        try Inbox.append(packed: packed, workoutID: workoutID, db)
                    } else {
                        try SQLiteHealthStore.insert(samples, workoutID: workoutID, cache: cache, db)
                    }
                    if let packed, logsChanges {
                        try ChangeLog.appendSamples(packed, count: samples.count, workoutID: workoutID, db)
                    }
                }
                cache.noteOwnWrites(db)
            }
        }
        let started = ContinuousClock.now
        do {
            if inPlace {
                try writeNow(pool, write)
            } else {
                try await pool.writeWithoutTransaction(write)
            }
            observer?(ContinuousClock.now - started)
            logSync?.committed(mayWait: inPlace)
            return .success(())
        } catch {
            cache.forget()
            let count = batch.reduce(0) { $0 + $1.samples.count }
            return .failure(HealthStoreError(error, path: path, doing: "saving \(count) samples"))
        }
    }

    /// GRDB's blocking write: in an async function Swift would pick the one that suspends.
    private static func writeNow(_ pool: DatabasePool, _ write: (Database) throws -> Void) throws {
        try pool.writeWithoutTransaction(write)
    }

    /// Waits for the fold under way, if any (tests only).
    func foldSettled() async {
        while let folding { _ = try? await folding.value }
    }

    /// Folds the inbox into the sample tables (see ``Inbox``).
    private func fold() async throws {
        // A fold under way (another query's, or the writer's own) must end first: returning while it runs would
        // let a query read before those samples are in their tables.
        if let folding { _ = try? await folding.value }
        guard unfolded > 0 else { return }
        let count = unfolded
        unfolded = 0
        let pool = pool
        let cache = cache
        let task = Task {
            try await pool.writeWithoutTransaction { db in
                try Self.transaction(db) { try Inbox.fold(cache: cache, db) }
            }
        }
        folding = task
        defer { if folding == task { folding = nil } }
        do {
            try await task.value
            // A move writes a few thousand samples' pages: the time to copy the log into the file.
            checkpointer.checkpointSoon()
        } catch {
            cache.forget()
            unfolded += count
            throw HealthStoreError(error, path: path, doing: "moving saved samples into their tables")
        }
    }

    /// Folds leftovers of an earlier run (a crash between a commit and its fold).
    static func foldLeftovers(_ pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in try transaction(db) { try Inbox.fold(cache: nil, db) } }
    }

    /// Runs `body` in one immediate transaction, begun and committed through cached statements: GRDB's
    /// `write` prepares `BEGIN` and `COMMIT` anew each time, a tenth of a small commit's work in profiles.
    private static func transaction(_ db: Database, _ body: () throws -> Void) throws {
        try db.cachedStatement(sql: "BEGIN IMMEDIATE TRANSACTION").execute()
        do {
            try body()
            try db.cachedStatement(sql: "COMMIT TRANSACTION").execute()
        } catch {
            // A failed COMMIT (a full disk) can leave the transaction open: nothing of the batch may stay.
            if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK TRANSACTION") }
            throw error
        }
    }

    /// Samples the inbox may hold before they are folded: about five seconds of a hundred sensors at 4 Hz.
    static let foldThreshold = 2000
}
