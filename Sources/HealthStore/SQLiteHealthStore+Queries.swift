import Foundation
import GRDB
import WorkoutKit

extension SQLiteHealthStore {
    /// Quantity samples of `type` starting in `[start, end)`, optionally of one workout or one device (by address),
    /// oldest first.
    public func samples(
        of type: QuantityType,
        from start: Date? = nil,
        to end: Date? = nil,
        workoutID: UUID? = nil,
        deviceAddress: String? = nil
    ) async throws -> [QuantitySample] {
        try await flush()
        var conditions = ["s.type = ?"]
        var arguments: StatementArguments = [type.identifier]
        if let start {
            conditions.append("s.startDate >= ?")
            arguments += [start.timeIntervalSince1970]
        }
        if let end {
            conditions.append("s.startDate < ?")
            arguments += [end.timeIntervalSince1970]
        }
        if let workoutID {
            conditions.append("s.workoutID = ?")
            arguments += [workoutID]
        }
        if let deviceAddress {
            conditions.append("d.address = ?")
            arguments += [deviceAddress]
        }
        let sql = """
            SELECT s.uuid, s.type, s.value, s.startDate, s.endDate, s.count, s.deviceID, s.metadata
            FROM quantitySample s LEFT JOIN device d ON d.id = s.deviceID
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY s.startDate, s.id
            """
        let bound = arguments
        return try await read("reading \(type) samples") { db in
            let devices = try Self.devices(db)
            return try Row.fetchAll(db, sql: sql, arguments: bound).compactMap { row in
                if case .quantity(let sample) = try Self.quantitySample(row, devices) { sample } else { nil }
            }
        }
    }

    /// Statistics of `type` over samples starting in `[start, end)`.
    public func statistics(of type: QuantityType, from start: Date, to end: Date) async throws -> Statistics? {
        try await flush()
        return try await read("computing \(type) statistics") { db in
            try Self.statistics(of: type, from: start, to: end, db)
        }
    }

    /// Statistics of `type` in consecutive calendar buckets of `interval`, aligned on `anchor`, covering
    /// `[start, end)`; buckets without samples are left out.
    public func statisticsCollection(
        of type: QuantityType,
        from start: Date,
        to end: Date,
        anchor: Date,
        interval: StatisticsInterval
    ) async throws -> [Statistics] {
        try await flush()
        let buckets = Self.buckets(from: start, to: end, anchor: anchor, interval: interval, calendar: calendar)
        return try await read("computing \(type) statistics by \(interval)") { db in
            try buckets.compactMap { bucket in
                try Self.statistics(of: type, from: bucket.start, to: bucket.end, db)
            }
        }
    }

    /// Bucket boundaries: steps of `interval` from `anchor`, forwards and backwards, counted in the calendar.
    static func buckets(
        from start: Date,
        to end: Date,
        anchor: Date,
        interval: StatisticsInterval,
        calendar: Calendar
    ) -> [(start: Date, end: Date)] {
        func boundary(_ n: Int) -> Date {
            var components = interval.components
            components.minute = components.minute.map { $0 * n }
            components.hour = components.hour.map { $0 * n }
            components.day = components.day.map { $0 * n }
            return calendar.date(byAdding: components, to: anchor) ?? anchor
        }
        // Find the bucket holding `start`, then walk to `end`.
        var n = 0
        while boundary(n) > start { n -= 1 }
        while boundary(n + 1) <= start { n += 1 }
        var result: [(Date, Date)] = []
        while boundary(n) < end {
            result.append((max(boundary(n), start), min(boundary(n + 1), end)))
            n += 1
        }
        return result
    }

    static func statistics(of type: QuantityType, from start: Date, to end: Date, _ db: Database) throws -> Statistics?
    {
        let range: StatementArguments = [type.identifier, start.timeIntervalSince1970, end.timeIntervalSince1970]
        let where_ = "type = ? AND startDate >= ? AND startDate < ?"
        // Quarter-hour aligned ranges (every calendar day, hour or week is) read the roll-ups.
        let aligned = Rollup.isAligned(start) && Rollup.isAligned(end)
        let aggregate =
            aligned
            ? """
            SELECT SUM(readings) AS readings, SUM(weighted) AS weighted, SUM(total) AS total,
                   MIN(minimum) AS minimum, MAX(maximum) AS maximum
            FROM rollup WHERE type = ? AND bucket >= ? AND bucket < ?
            """
            : """
            SELECT SUM(count) AS readings, SUM(value * count) AS weighted, SUM(value) AS total,
                   MIN(value) AS minimum, MAX(value) AS maximum
            FROM quantitySample WHERE \(where_)
            """
        let arguments: StatementArguments =
            aligned ? [type.identifier, Rollup.bucket(start), Rollup.bucket(end)] : range
        guard
            let row = try Row.fetchOne(db, sql: aggregate, arguments: arguments),
            let readings = row["readings"] as Int?, readings > 0
        else { return nil }
        var statistics = Statistics(quantityType: type, startDate: start, endDate: end)
        let latest = try Row.fetchOne(
            db,
            sql: """
                SELECT value, startDate, endDate FROM quantitySample WHERE \(where_)
                ORDER BY startDate DESC, id DESC LIMIT 1
                """,
            arguments: range
        )
        switch type.aggregationStyle {
        case .cumulative:
            statistics.add(row["total"], count: readings, start: start, end: end)
        case .discrete:
            let average = (row["weighted"] as Double) / Double(readings)
            statistics.add(
                average,
                count: readings,
                start: start,
                end: start,
                minimum: row["minimum"],
                maximum: row["maximum"]
            )
            // The most recent reading, after the aggregate, so it is the one reported.
            if let latest {
                var recent = Statistics(quantityType: type, startDate: start, endDate: end)
                recent.add(
                    latest["value"],
                    count: 0,
                    start: Date(timeIntervalSince1970: latest["startDate"]),
                    end: Date(timeIntervalSince1970: latest["endDate"])
                )
                statistics.mergeMostRecent(from: recent)
            }
        }
        return statistics
    }

    /// Activity summaries of the days from `start` to `end` (inclusive), in the store's calendar.
    public func activitySummaries(from start: Date, to end: Date) async throws -> [ActivitySummary] {
        let first = ActivitySummary.key(for: start, in: calendar)
        let last = ActivitySummary.key(for: end, in: calendar)
        return try await read("reading activity summaries") { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM activitySummary WHERE day BETWEEN ? AND ? ORDER BY day",
                arguments: [first, last]
            ).map { row in
                ActivitySummary(
                    day: row["day"],
                    activeEnergyBurned: Quantity(row["activeEnergy"], .kilojoule),
                    exerciseMinutes: row["exerciseMinutes"],
                    workoutCount: row["workouts"]
                )
            }
        }
    }
}

/// What changed since an anchor (HealthKit's anchored object query).
public struct AnchoredChanges: Sendable {
    /// Samples added after the anchor, in the order they were stored.
    public var added: [Sample]
    /// Identifiers of samples deleted after the anchor.
    public var deleted: [UUID]
    /// Pass this to the next query to get only later changes.
    public var anchor: Int64
}

extension SQLiteHealthStore {
    /// Samples of `type` added, and deleted, after `anchor` (nil: from the beginning), at most `limit` of each.
    public func changes(
        of type: SampleType,
        after anchor: Int64? = nil,
        limit: Int = 10_000
    ) async throws
        -> AnchoredChanges
    {
        try await flush()
        let since = anchor ?? 0
        return try await read("reading \(type) changes") { db in
            let devices = try Self.devices(db)
            var added: [(Int64, Sample)] = []
            switch type {
            case .quantity(let quantityType):
                added = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT uuid, type, value, startDate, endDate, count, deviceID, metadata, anchor
                        FROM quantitySample WHERE type = ? AND anchor > ? ORDER BY anchor LIMIT ?
                        """,
                    arguments: [quantityType.identifier, since, limit]
                ).compactMap { row in try Self.quantitySample(row, devices).map { (row["anchor"], $0) } }
            case .heartbeatSeries:
                added = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT uuid, startDate, endDate, deviceID, metadata, beats, anchor
                        FROM heartbeatSeries WHERE anchor > ? ORDER BY anchor LIMIT ?
                        """,
                    arguments: [since, limit]
                ).map { row in (row["anchor"], try Self.heartbeatSeries(row, devices)) }
            }
            let deleted = try Row.fetchAll(
                db,
                sql: "SELECT anchor, uuid FROM deletedSample WHERE type = ? AND anchor > ? ORDER BY anchor LIMIT ?",
                arguments: [type.identifier, since, limit]
            ).map { ($0["anchor"] as Int64, $0["uuid"] as UUID) }
            // Both lists are cut at `limit`; take changes in anchor order up to `limit` so none is skipped.
            enum Change {
                case added(Sample)
                case deleted(UUID)
            }
            let merged = (added.map { ($0.0, Change.added($0.1)) } + deleted.map { ($0.0, Change.deleted($0.1)) })
                .sorted { $0.0 < $1.0 }.prefix(limit)
            var result = AnchoredChanges(added: [], deleted: [], anchor: merged.last?.0 ?? since)
            for (_, change) in merged {
                switch change {
                case .added(let sample): result.added.append(sample)
                case .deleted(let id): result.deleted.append(id)
                }
            }
            return result
        }
    }
}
