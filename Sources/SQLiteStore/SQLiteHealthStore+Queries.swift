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
        let calendar = calendar
        return try await read("computing \(type) statistics by \(interval)") { db in
            // Only the stretch that holds samples is walked, so a range of years costs what its samples cost. A
            // series holds readings up to a minute after its start: one that starts before `start` in the same
            // minute can reach into the range, and the last one's readings can reach past its start (both were
            // missed: a workout inside one minute whose first reading came a moment before its start had none).
            let seconds = QuantitySeries.seconds
            // Two queries: SQLite finds a lone MIN or MAX at the end of the index, but walks the whole range for both
            // in one (half a million rows for a year of heart rate).
            let arguments: StatementArguments = [
                type.identifier, (start.timeIntervalSince1970 / seconds).rounded(.down) * seconds,
                end.timeIntervalSince1970,
            ]
            let range = "FROM quantitySample WHERE type = ? AND startDate >= ? AND startDate < ?"
            guard
                let first = try Double.fetchOne(
                    db.cachedStatement(sql: "SELECT MIN(startDate) \(range)"),
                    arguments: arguments
                ),
                let last = try Double.fetchOne(
                    db.cachedStatement(sql: "SELECT MAX(startDate) \(range)"),
                    arguments: arguments
                ).map({ $0 + seconds })
            else { return [] }
            let buckets = Self.buckets(
                from: start,
                to: end,
                anchor: anchor,
                interval: interval,
                calendar: calendar,
                occupied: Date(timeIntervalSince1970: first)...Date(timeIntervalSince1970: last)
            )
            // Quarter-hour aligned buckets (every calendar day, hour or week) are summed from one read of the roll-ups.
            if buckets.allSatisfy({ Rollup.isAligned($0.start) && Rollup.isAligned($0.end) }) {
                return try Self.rollupStatistics(of: type, buckets: buckets, db)
            }
            return try buckets.compactMap { bucket in
                try Self.statistics(of: type, from: bucket.start, to: bucket.end, db)
            }
        }
    }

    /// Bucket boundaries: steps of `interval` from `anchor`, forwards and backwards, counted in the calendar,
    /// covering `[start, end)`, or only its buckets that overlap `occupied` when given.
    static func buckets(
        from start: Date,
        to end: Date,
        anchor: Date,
        interval: StatisticsInterval,
        calendar: Calendar,
        occupied: ClosedRange<Date>? = nil
    ) -> [(start: Date, end: Date)] {
        // Callers check their ranges; these guards keep arithmetic that would overflow, or a calendar that cannot
        // step, from trapping or looping: such a request has no buckets.
        // Only the stretch that holds samples is walked, so that is what must be countable.
        let walked = max(
            min(end, occupied?.upperBound ?? end).timeIntervalSince(max(start, occupied?.lowerBound ?? start)),
            0
        )
        let span = walked / interval.nominalLength
        let offset = (max(start, occupied?.lowerBound ?? start).timeIntervalSince(anchor) / interval.nominalLength)
        guard interval.nominalLength > 0, span.isFinite, offset.isFinite, span < maximumBuckets,
            abs(offset) < maximumBuckets * 1000
        else { return [] }
        func boundary(_ n: Int) -> Date? {
            var components = interval.components
            for keyPath in [\DateComponents.minute, \.hour, \.day] {
                guard let value = components[keyPath: keyPath] else { continue }
                let (product, overflow) = value.multipliedReportingOverflow(by: n)
                if overflow { return nil }
                components[keyPath: keyPath] = product
            }
            return calendar.date(byAdding: components, to: anchor)
        }
        let first = max(start, occupied?.lowerBound ?? start)
        // Jump close to the bucket holding `first` (a calendar day is 23 to 25 hours), then step onto it.
        var n = Int(offset.rounded(.down))
        var steps = 0
        while let date = boundary(n), date > first, steps < 1000 {
            n -= 1
            steps += 1
        }
        while let date = boundary(n + 1), date <= first, steps < 2000 {
            n += 1
            steps += 1
        }
        var result: [(Date, Date)] = []
        while let lower = boundary(n), let upper = boundary(n + 1), lower < end, upper > lower,
            occupied.map({ lower <= $0.upperBound }) ?? true, Double(result.count) < maximumBuckets
        {
            result.append((max(lower, start), min(upper, end)))
            n += 1
        }
        return result
    }

    /// The most buckets one collection computes, whatever the caller asked for.
    static let maximumBuckets: Double = 1_000_000

    static func statistics(of type: QuantityType, from start: Date, to end: Date, _ db: Database) throws -> Statistics?
    {
        var parts = Rollup.Accumulator.Value()
        let lower = start.timeIntervalSince1970
        let upper = end.timeIntervalSince1970
        if Rollup.isAligned(start) && Rollup.isAligned(end) {
            // Quarter-hour aligned ranges (every calendar day, hour or week is) read the roll-ups only.
            try parts.add(
                Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT SUM(readings) AS readings, SUM(weighted) AS weighted, SUM(total) AS total,
                                   MIN(minimum) AS minimum, MAX(maximum) AS maximum
                            FROM rollup WHERE type = ? AND bucket >= ? AND bucket < ?
                            """
                    ),
                    arguments: [type.identifier, Rollup.bucket(start), Rollup.bucket(end)]
                )
            )
        } else {
            // Whole minutes inside the range are summed from the rows (a series never crosses a minute); the
            // minutes at either end are unpacked and their readings filtered.
            let seconds = QuantitySeries.seconds
            let innerStart = (lower / seconds).rounded(.up) * seconds
            let innerEnd = max(innerStart, (upper / seconds).rounded(.down) * seconds)
            if innerStart < innerEnd {
                try parts.add(
                    Row.fetchOne(
                        db.cachedStatement(
                            sql: """
                                SELECT SUM(count) AS readings, SUM(value * count) AS weighted, SUM(value) AS total,
                                       MIN(IFNULL(minimum, value)) AS minimum, MAX(IFNULL(maximum, value)) AS maximum
                                FROM quantitySample WHERE type = ? AND startDate >= ? AND startDate < ?
                                """
                        ),
                        arguments: [type.identifier, innerStart, innerEnd]
                    )
                )
            }
            let edges = [((lower / seconds).rounded(.down) * seconds, innerStart), (innerEnd, upper)]
            for (from, to) in edges where from < to {
                for reading in try readings(of: type, startingFrom: from, to: to, db)
                where reading.startDate.timeIntervalSince1970 >= lower && reading.startDate < end {
                    parts.add(
                        value: try reading.quantity.doubleValue(for: type.canonicalUnit),
                        count: reading.count,
                        start: reading.startDate.timeIntervalSince1970,
                        end: reading.endDate.timeIntervalSince1970
                    )
                }
            }
        }
        guard parts.readings > 0 else { return nil }
        // The most recent reading from the samples themselves, whatever the parts above saw of it.
        parts.latest = nil
        if type.aggregationStyle == .discrete, let latest = try mostRecentReading(of: type, from: start, to: end, db) {
            parts.latest = (
                latest.startDate.timeIntervalSince1970, latest.endDate.timeIntervalSince1970,
                try latest.quantity.doubleValue(for: type.canonicalUnit)
            )
        }
        return statistics(of: type, from: start, to: end, parts)
    }

    /// The reading of `type` in `[start, end)` with the latest start. Rows are read newest first until no
    /// earlier row can hold a later reading (a series spans at most a minute from its start).
    static func mostRecentReading(
        of type: QuantityType,
        from start: Date,
        to end: Date,
        _ db: Database
    ) throws
        -> QuantitySample?
    {
        let devices = try Self.devices(db)
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    \(QuantitySeries.selectWithReadings)
                    WHERE s.type = ? AND s.startDate >= ? AND s.startDate < ?
                    ORDER BY s.startDate DESC, s.id DESC
                    """
            ),
            // A series that starts before `start` in the same minute may hold readings inside the range.
            arguments: [
                type.identifier,
                (start.timeIntervalSince1970 / QuantitySeries.seconds).rounded(.down) * QuantitySeries.seconds,
                end.timeIntervalSince1970,
            ]
        )
        var best: QuantitySample?
        while let row = try rows.next() {
            if let best, (row["startDate"] as Double) + QuantitySeries.seconds <= best.startDate.timeIntervalSince1970 {
                break
            }
            for reading in try readings(row, devices) where reading.startDate >= start && reading.startDate < end {
                if best.map({ reading.startDate > $0.startDate }) ?? true { best = reading }
            }
        }
        return best
    }

    /// The readings (series unpacked) of samples of `type` starting in `[start, end)`.
    static func readings(
        of type: QuantityType,
        startingFrom start: Double,
        to end: Double,
        _ db: Database
    ) throws -> [QuantitySample] {
        let devices = try Self.devices(db)
        return try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    \(QuantitySeries.selectWithReadings)
                    WHERE s.type = ? AND s.startDate >= ? AND s.startDate < ?
                    ORDER BY s.startDate, s.id
                    """
            ),
            arguments: [type.identifier, start, end]
        ).flatMap { row in try Self.readings(row, devices) }
    }

    /// The readings of one series sample, oldest first (HealthKit's quantity series sample query). A sample
    /// that is not a series has one reading: itself.
    public func seriesQuantities(of sampleID: UUID) async throws -> [SeriesQuantity] {
        try await flush()
        return try await read("reading the series of sample \(sampleID)") { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        \(QuantitySeries.selectWithReadings)
                        WHERE s.uuid = ?
                        """
                ),
                arguments: [sampleID]
            )
            guard let row else {
                throw HealthStoreError(.notFound, "no quantity sample \(sampleID) in the store")
            }
            return try Self.readings(row, [:]).map { reading in
                SeriesQuantity(
                    quantity: reading.quantity,
                    dateInterval: DateInterval(start: reading.startDate, end: reading.endDate)
                )
            }
        }
    }

    /// Activity summaries of the days from `start` to `end` (inclusive), in the store's calendar.
    public func activitySummaries(from start: Date, to end: Date) async throws -> [ActivitySummary] {
        let first = ActivitySummary.key(for: start, in: calendar)
        let last = ActivitySummary.key(for: end, in: calendar)
        return try await read("reading activity summaries") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM activitySummary WHERE day BETWEEN ? AND ? ORDER BY day"),
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
                    db.cachedStatement(
                        sql: """
                            SELECT uuid, type, value, startDate, endDate, count, deviceID, metadata, anchor
                            FROM quantitySample WHERE type = ? AND anchor > ? ORDER BY anchor LIMIT ?
                            """
                    ),
                    arguments: [quantityType.identifier, since, limit]
                ).compactMap { row in try Self.quantitySample(row, devices).map { (row["anchor"], $0) } }
            case .heartbeatSeries:
                added = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT uuid, startDate, endDate, deviceID, metadata, beats, anchor
                            FROM heartbeatSeries WHERE anchor > ? ORDER BY anchor LIMIT ?
                            """
                    ),
                    arguments: [since, limit]
                ).map { row in (row["anchor"], try Self.heartbeatSeries(row, devices)) }
            case .waveform(let kind):
                added = try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Waveforms.columns)
                            FROM waveform WHERE kind = ? AND anchor > ? ORDER BY anchor LIMIT ?
                            """
                    ),
                    arguments: [kind.rawValue, since, limit]
                ).map { row in (row["anchor"], Sample.waveform(try Waveforms.sample(row, devices))) }
            }
            let deleted = try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT anchor, uuid FROM deletedSample WHERE type = ? AND anchor > ? ORDER BY anchor LIMIT ?"
                ),
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
