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

            /// Adds an aggregate row (`readings`, `weighted`, `total`, `minimum`, `maximum`); NULLs add nothing.
            mutating func add(_ row: Row?) {
                guard let row, let count = row["readings"] as Int?, count > 0 else { return }
                readings += count
                weighted += row["weighted"] as Double
                total += row["total"] as Double
                minimum = min(minimum, row["minimum"] as Double)
                maximum = max(maximum, row["maximum"] as Double)
            }

            mutating func add(value: Double, count: Int) {
                readings += count
                total += value
                weighted += value * Double(count)
                minimum = min(minimum, value)
                maximum = max(maximum, value)
            }
        }
        var values: [Key: Value] = [:]

        /// The bucket being filled: readings arrive in time order, so most skip the dictionary.
        private var current: (key: Key, value: Value)?

        mutating func add(type: String, value: Double, count: Int, start: Date) {
            let key = Key(type: type, bucket: Rollup.bucket(start))
            if current?.key != key {
                if let current { values[current.key] = current.value }
                current = (key, values[key] ?? Value())
            }
            current!.value.add(value: value, count: count)
        }

        func write(_ db: Database) throws {
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO rollup (type, bucket, readings, total, weighted, minimum, maximum)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(type, bucket) DO UPDATE SET
                        readings = readings + excluded.readings,
                        total = total + excluded.total,
                        weighted = weighted + excluded.weighted,
                        minimum = MIN(minimum, excluded.minimum),
                        maximum = MAX(maximum, excluded.maximum)
                    """
            )
            var values = values
            if let current { values[current.key] = current.value }
            for (key, value) in values {
                try statement.execute(arguments: [
                    key.type, key.bucket, value.readings, value.total, value.weighted, value.minimum, value.maximum,
                ])
            }
        }
    }

    /// Recomputes one bucket's roll-up from the samples (after deletions).
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
