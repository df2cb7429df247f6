import Foundation
import GRDB
import WorkoutKit

/// Workouts, their daily summaries and the journal of workouts under way.
extension SQLiteHealthStore {

    public func save(_ workout: Workout) async throws {
        try await save(workout, summarize: false)
    }

    public func saveFinished(_ workout: Workout) async throws {
        try await save(workout, summarize: true)
    }

    private func save(_ workout: Workout, summarize: Bool) async throws {
        try await flush()
        let text = try Self.body(of: workout)
        let day = ActivitySummary.key(for: workout.startDate, in: calendar)
        let logs = keepsChangeLog
        try await write("saving workout \(workout.id)") { db in
            try Self.insert(workout, body: text, summaryDay: summarize ? day : nil, logs: logs, db)
        }
    }

    static func body(of workout: Workout) throws -> String {
        try Coding.encode(
            WorkoutBody(
                configuration: workout.configuration,
                events: workout.events,
                activities: workout.activities,
                metadata: workout.metadata,
                statistics: workout.statistics,
                devices: workout.devices
            )
        )
    }

    /// Inserts (or replaces) a workout's row in the current transaction; with a `summaryDay`, adds it to that day's
    /// activity summary.
    static func insert(_ workout: Workout, body: String, summaryDay: String?, logs: Bool, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO workout (uuid, activityType, locationType, startDate, endDate, duration, body)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                workout.id, workout.configuration.activityType.rawValue,
                workout.configuration.locationType.rawValue, workout.startDate.timeIntervalSince1970,
                workout.endDate.timeIntervalSince1970, workout.duration, body,
            ]
        )
        if let summaryDay { try Self.summary(adding: workout, day: summaryDay, db) }
        if logs { try ChangeLog.append(.workoutSaved, workoutID: workout.id, db) }
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
}
