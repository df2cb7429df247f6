import Foundation
import GRDB

/// Quarter-hour roll-ups of quantity samples (see the v4 migration).
enum Rollup {
    /// Seconds per roll-up bucket.
    static let seconds: Double = 900

    static func bucket(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / seconds).rounded(.down)) }

    /// Roll-ups of a batch, written with one upsert per bucket.
    struct Accumulator {
        struct Key: Hashable {
            var type: String
            var bucket: Int64
        }
        struct Value {
            var readings = 0
            var total = 0.0
            var weighted = 0.0
            var minimum = Double.infinity
            var maximum = -Double.infinity
            /// The reading with the latest start (a later one of the same start wins): its start, end and value.
            var latest: (start: Double, end: Double, value: Double)?

            /// Adds an aggregate row (`readings`, `weighted`, `total`, `minimum`, `maximum`); NULLs add nothing.
            mutating func add(_ row: Row?) {
                guard let row, let count = row["readings"] as Int?, count > 0 else { return }
                readings += count
                weighted += row["weighted"] as Double
                total += row["total"] as Double
                minimum = min(minimum, row["minimum"] as Double)
                maximum = max(maximum, row["maximum"] as Double)
            }

            mutating func add(value: Double, count: Int, start: Double, end: Double) {
                readings += count
                total += value
                weighted += value * Double(count)
                minimum = min(minimum, value)
                maximum = max(maximum, value)
                if latest.map({ start >= $0.start }) ?? true { latest = (start, end, value) }
            }
        }
        var values: [Key: Value] = [:]

        /// The bucket being filled: readings arrive in time order, so most skip the dictionary.
        private var current: (key: Key, value: Value)?

        mutating func add(type: String, value: Double, count: Int, start: Date, end: Date) {
            let key = Key(type: type, bucket: Rollup.bucket(start))
            if current?.key != key {
                if let current { values[current.key] = current.value }
                current = (key, values[key] ?? Value())
            }
            current!.value.add(
                value: value,
                count: count,
                start: start.timeIntervalSince1970,
                end: end.timeIntervalSince1970
            )
        }

        func write(_ db: Database) throws {
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO rollup
                        (type, bucket, readings, total, weighted, minimum, maximum, latestStart, latestEnd, latestValue)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(type, bucket) DO UPDATE SET
                        readings = readings + excluded.readings,
                        total = total + excluded.total,
                        weighted = weighted + excluded.weighted,
                        minimum = MIN(minimum, excluded.minimum),
                        maximum = MAX(maximum, excluded.maximum),
                        -- An unknown latest reading (NULL) stays unknown: an older row may hold a later one.
                        latestEnd = CASE WHEN excluded.latestStart >= latestStart THEN excluded.latestEnd
                                         ELSE latestEnd END,
                        latestValue = CASE WHEN excluded.latestStart >= latestStart THEN excluded.latestValue
                                           ELSE latestValue END,
                        latestStart = MAX(latestStart, excluded.latestStart)
                    """
            )
            var values = values
            if let current { values[current.key] = current.value }
            for (key, value) in values {
                try statement.execute(arguments: [
                    key.type, key.bucket, value.readings, value.total, value.weighted, value.minimum, value.maximum,
                    value.latest?.start, value.latest?.end, value.latest?.value,
                ])
            }
        }
    }

    /// Recomputes one bucket's roll-up from the samples (after deletions); its latest reading is left unknown (the
    /// statistics find it in the samples).
    static func rebuild(_ db: Database, type: String, bucket: Int64) throws {
        try db.execute(sql: "DELETE FROM rollup WHERE type = ? AND bucket = ?", arguments: [type, bucket])
        try db.execute(
            sql: """
                INSERT INTO rollup (type, bucket, readings, total, weighted, minimum, maximum)
                SELECT type, ?, SUM(count), SUM(value), SUM(value * count),
                       MIN(IFNULL(minimum, value)), MAX(IFNULL(maximum, value))
                FROM quantitySample WHERE type = ? AND startDate >= ? AND startDate < ?
                GROUP BY type
                """,
            arguments: [bucket, type, Double(bucket) * seconds, Double(bucket + 1) * seconds]
        )
    }

    /// Whether `date` falls on a bucket boundary.
    static func isAligned(_ date: Date) -> Bool {
        date.timeIntervalSince1970.truncatingRemainder(dividingBy: seconds) == 0
    }
}
