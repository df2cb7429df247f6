import Foundation
import GRDB
import WorkoutKit

/// What became of one workout handed to ``SQLiteHealthStore/importWorkouts(_:sameWhen:)``.
public enum WorkoutImportOutcome: Sendable, Equatable {
    /// Saved with its samples.
    case saved
    /// Not saved: the store already holds this workout, under this id.
    case alreadyStored(UUID)
}

/// A workout made elsewhere for ``SQLiteHealthStore/importWorkouts(_:sameWhen:)``, with its samples handed over a
/// batch at a time inside the import's transaction, so they never all exist at once.
public struct WorkoutToImport: Sendable {
    public var workout: Workout
    /// Calls its argument with each batch of the workout's samples.
    public var forEachSampleBatch: @Sendable (_ body: ([Sample]) throws -> Void) throws -> Void

    public init(
        workout: Workout,
        forEachSampleBatch: @escaping @Sendable (_ body: ([Sample]) throws -> Void) throws -> Void
    ) {
        self.workout = workout
        self.forEachSampleBatch = forEachSampleBatch
    }
}

extension SQLiteHealthStore {
    /// Saves workouts made elsewhere (an activity file's) with their samples, all in one transaction: all of them
    /// or, on an error, none. Each is added to its day's activity summary, as a recorded one is. A workout is not
    /// saved again when the store holds one with the same start and the same value for the metadata key
    /// `sameWhen` (an import of a file already imported); the outcomes are in the order given.
    public func importWorkouts(
        _ workouts: [WorkoutToImport],
        sameWhen key: String
    ) async throws -> [WorkoutImportOutcome] {
        try await flush()
        let bodies = try workouts.map { try Self.body(of: $0.workout) }
        let calendar = calendar
        let logs = keepsChangeLog
        return try await write("importing \(workouts.count) workouts") { db in
            var outcomes: [WorkoutImportOutcome] = []
            for (item, body) in zip(workouts, bodies) {
                let workout = item.workout
                if let stored = try Self.stored(like: workout, key: key, db) {
                    outcomes.append(.alreadyStored(stored))
                    continue
                }
                try item.forEachSampleBatch { samples in
                    try Self.checkWaveforms(samples)
                    try Self.insert(samples, workoutID: workout.id, db)
                    if logs { try Self.logImported(samples, workoutID: workout.id, db) }
                }
                let day = ActivitySummary.key(for: workout.startDate, in: calendar)
                try Self.insert(workout, body: body, summaryDay: day, logs: logs, db)
                outcomes.append(.saved)
            }
            return outcomes
        }
    }

    /// The id of a stored workout with `workout`'s start and value for `key`, if any.
    private static func stored(like workout: Workout, key: String, _ db: Database) throws -> UUID? {
        guard let value = workout.metadata[key] else { return nil }
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT uuid, body FROM workout WHERE startDate = ?",
            arguments: [workout.startDate.timeIntervalSince1970]
        )
        for row in rows where try Coding.decode(WorkoutBody.self, row["body"]).metadata[key] == value {
            return row["uuid"]
        }
        return nil
    }

    /// Logs an import's samples for a replica in pieces the size of a recording's commits, so a replica takes
    /// them in its usual batches.
    private static func logImported(_ samples: [Sample], workoutID: UUID, _ db: Database) throws {
        var start = samples.startIndex
        while start < samples.endIndex {
            let end = min(start + 5_000, samples.endIndex)
            let piece = Array(samples[start..<end])
            try ChangeLog.appendSamples(try Inbox.pack(piece), count: piece.count, workoutID: workoutID, db)
            start = end
        }
    }
}
