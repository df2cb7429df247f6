import Foundation
import GRDB
import WorkoutKit

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
        logsChanges: Bool = false,
        logSync: LogSync? = nil
    ) {
        self.logSync = logSync
        self.logsChanges = logsChanges
        self.commitsInPlace = commitsInPlace
        self.commitObserver = commitObserver
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
            logsChanges: logsChanges,
            inPlace: commitsInPlace(),
            observer: commitObserver,
            logSync: logSync
        )
        for waiter in waiting { waiter.resume(returning: result) }
        if case .success = result { unfolded += count }
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

    /// Commits `batch` in one transaction to the inbox (one row per workout), folded into the sample tables later. In place,
    /// the calling thread waits for it; otherwise the caller's task is suspended while GRDB's writer queue runs it.
    private static func commit(
        _ batch: [(samples: [Sample], workoutID: UUID?)],
        pool: DatabasePool,
        path: String,
        cache: InsertCache,
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
                    let packed = try Inbox.pack(samples)
                    try Inbox.append(packed: packed, workoutID: workoutID, db)
                    if logsChanges {
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
