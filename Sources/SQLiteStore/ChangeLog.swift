import Foundation
import GRDB
import WorkoutKit

/// A change to the store, in the order it was committed, for a replica elsewhere (systoled's replication to
/// PostgreSQL). Kept only by a store opened with `keepsChangeLog`.
public struct StoreChange: Sendable {
    public enum Kind: Sendable {
        /// Samples saved, as they were saved (each with its own identifier: the series samples the store folds
        /// readings into are the store's own business).
        case samples([Sample], workoutID: UUID?)
        /// A workout saved; nil when it was deleted before the change was read.
        case workoutSaved(Workout?, id: UUID)
        /// A workout and its samples deleted.
        case workoutDeleted(UUID)
        /// The samples of a discarded workout deleted.
        case samplesDeleted(workoutID: UUID)
    }

    /// Increases with every change; never reused.
    public var sequence: Int64
    /// When the change was committed.
    public var committed: Date
    public var kind: Kind

    public init(sequence: Int64, committed: Date, kind: Kind) {
        self.sequence = sequence
        self.committed = committed
        self.kind = kind
    }
}

/// How much of the change log a replica has not taken yet.
public struct ChangeBacklog: Sendable, Equatable {
    /// Changes not yet acknowledged.
    public var changes: Int
    /// Samples in them.
    public var samples: Int
    /// When the oldest of them was committed.
    public var oldest: Date?
    /// Samples left out of the log since it was created, because the backlog was over its limit.
    public var droppedSamples: Int
}

/// The change log's rows: written in the transaction of the change itself, so a change is logged exactly when it
/// is committed, and a crash loses neither.
enum ChangeLog {
    enum Kind: Int {
        case samples = 0
        case workoutSaved = 1
        case workoutDeleted = 2
        case samplesDeleted = 3
    }

    /// Logs samples already packed (the inbox's format).
    static func appendSamples(_ packed: Data, count: Int, workoutID: UUID?, _ db: Database) throws {
        try db.cachedStatement(
            sql: "INSERT INTO changeLog (kind, workoutID, committed, sampleCount, samples) VALUES (0, ?, ?, ?, ?)"
        ).execute(arguments: [workoutID, Date().timeIntervalSince1970, count, packed])
    }

    static func append(_ kind: Kind, workoutID: UUID, _ db: Database) throws {
        try db.cachedStatement(
            sql: "INSERT INTO changeLog (kind, workoutID, committed, sampleCount) VALUES (?, ?, ?, 0)"
        ).execute(arguments: [kind.rawValue, workoutID, Date().timeIntervalSince1970])
    }
}

extension SQLiteHealthStore {
    /// This store file's identity (made when the file was created, and anew when it was found to be a copy): a
    /// replica tells stores apart by it, so a new file after a lost one is not taken for the old one.
    public func storeIdentifier() async throws -> UUID {
        try await read("reading the store's identity") { db in
            guard let id = try UUID.fetchOne(db, sql: "SELECT storeID FROM changeLogState WHERE id = 1") else {
                throw HealthStoreError(.corrupt, "the store has no identity: it was not made by systole")
            }
            return id
        }
    }

    /// The changes after `sequence`, oldest first, at most `limit` changes (fewer when they hold more than
    /// `sampleLimit` samples; always at least one).
    public func changes(
        after sequence: Int64,
        limit: Int = 1000,
        sampleLimit: Int = 20_000
    ) async throws
        -> [StoreChange]
    {
        struct Raw: Sendable {
            var sequence: Int64
            var kind: Int
            var workoutID: UUID?
            var committed: Double
            var samples: Data?
        }
        let rows = try await read("reading the change log") { db in
            var rows: [Raw] = []
            var samples = 0
            let cursor = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT sequence, kind, workoutID, committed, sampleCount, samples FROM changeLog
                        WHERE sequence > ? ORDER BY sequence LIMIT ?
                        """
                ),
                arguments: [sequence, limit]
            )
            while let row = try cursor.next() {
                let count: Int = row["sampleCount"]
                if !rows.isEmpty, samples + count > sampleLimit { break }
                samples += count
                rows.append(
                    Raw(
                        sequence: row["sequence"],
                        kind: row["kind"],
                        workoutID: row["workoutID"],
                        committed: row["committed"],
                        samples: row["samples"]
                    )
                )
            }
            return rows
        }
        var changes: [StoreChange] = []
        changes.reserveCapacity(rows.count)
        var names = PackedNames()
        for row in rows {
            let sequence = row.sequence
            let committed = Date(timeIntervalSince1970: row.committed)
            let workoutID = row.workoutID
            let kind: StoreChange.Kind
            switch ChangeLog.Kind(rawValue: row.kind) {
            case .samples?:
                do {
                    kind = .samples(try Inbox.unpack(row.samples ?? Data(), names: &names), workoutID: workoutID)
                } catch {
                    throw HealthStoreError(
                        .corrupt,
                        "change \(sequence) cannot be read (something other than systole changed the file)"
                    )
                }
            case .workoutSaved?:
                guard let id = workoutID else { continue }
                kind = .workoutSaved(try await workouts(idPrefix: id.uuidString).first, id: id)
            case .workoutDeleted?:
                guard let id = workoutID else { continue }
                kind = .workoutDeleted(id)
            case .samplesDeleted?:
                guard let id = workoutID else { continue }
                kind = .samplesDeleted(workoutID: id)
            case nil:
                continue
            }
            changes.append(StoreChange(sequence: sequence, committed: committed, kind: kind))
        }
        return changes
    }

    /// Forgets the changes up to `sequence`: a replica has committed them.
    public func acknowledgeChanges(through sequence: Int64) async throws {
        try await writeBesideCommits("acknowledging replicated changes") { db in
            try db.execute(
                sql: """
                    UPDATE changeLogState SET acknowledgedCommitted = (SELECT committed FROM changeLog WHERE sequence = ?1)
                    WHERE id = 1 AND ?1 > acknowledged
                    """,
                arguments: [sequence]
            )
            try db.execute(sql: "DELETE FROM changeLog WHERE sequence <= ?", arguments: [sequence])
            try db.execute(
                sql: "UPDATE changeLogState SET acknowledged = max(acknowledged, ?) WHERE id = 1",
                arguments: [sequence]
            )
        }
    }

    /// The last sequence acknowledged (0: none yet).
    public func acknowledgedChange() async throws -> Int64 {
        try await read("reading the change log") { db in
            try Int64.fetchOne(db, sql: "SELECT acknowledged FROM changeLogState WHERE id = 1") ?? 0
        }
    }

    /// What is waiting for a replica.
    public func changeBacklog() async throws -> ChangeBacklog {
        try await read("reading the change log") { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT count(*) AS changes, ifnull(sum(sampleCount), 0) AS samples, min(committed) AS oldest,
                        (SELECT droppedSamples FROM changeLogState WHERE id = 1) AS dropped
                    FROM changeLog
                    """
            )
            return ChangeBacklog(
                changes: row?["changes"] ?? 0,
                samples: row?["samples"] ?? 0,
                oldest: (row?["oldest"] as Double?).map(Date.init(timeIntervalSince1970:)),
                droppedSamples: row?["dropped"] ?? 0
            )
        }
    }

    /// Keeps the backlog's samples at most `limit`: the oldest sample changes go first (workouts and deletions
    /// stay, they are small). Returns how many samples were dropped.
    @discardableResult
    public func trimChanges(keepingSamples limit: Int) async throws -> Int {
        try await writeBesideCommits("trimming the change log") { db in
            let total = try Int.fetchOne(db, sql: "SELECT ifnull(sum(sampleCount), 0) FROM changeLog") ?? 0
            guard total > limit else { return 0 }
            var excess = total - limit
            var dropped = 0
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT sequence, sampleCount FROM changeLog WHERE kind = 0 ORDER BY sequence"
            )
            var last: Int64 = 0
            for row in rows where excess > 0 {
                let count: Int = row["sampleCount"]
                excess -= count
                dropped += count
                last = row["sequence"]
            }
            try db.execute(sql: "DELETE FROM changeLog WHERE kind = 0 AND sequence <= ?", arguments: [last])
            try db.execute(
                sql: "UPDATE changeLogState SET droppedSamples = droppedSamples + ? WHERE id = 1",
                arguments: [dropped]
            )
            return dropped
        }
    }
}
