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
    public init(
        path: String,
        calendar: Calendar = .current,
        maximumSize: Int? = nil,
        commitsInPlace: @escaping @Sendable () -> Bool = { false },
        commitObserver: (@Sendable (Duration) -> Void)? = nil,
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
            // few tables, and the kernel caches the file anyway.
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
        try Self.checkWaveforms(samples)
        try await writer.write(samples, workoutID: workoutID)
    }

    /// Inserts samples into their tables at once, in one transaction, past the inbox (bulk imports and benchmarks).
    public func insertNow(_ samples: [Sample], workoutID: UUID?) throws(HealthStoreError) {
        try Self.checkWaveforms(samples)
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
        var waveforms = Waveforms.Appender()
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
            case .waveform(let w):
                try waveforms.add(w, deviceID: try deviceID(w.device), workoutID: workoutID, db)
            }
        }
        try series.write(anchors: &anchors, db)
        try waveforms.write(anchors: &anchors, db)
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
            + (try Row.fetchAll(db, sql: "SELECT uuid, kind FROM waveform WHERE workoutID = ?", arguments: [id]))
            .map { ($0["uuid"] as Data, $0["kind"] as String) }
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
        try db.execute(sql: "DELETE FROM waveform WHERE workoutID = ?", arguments: [id])
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
