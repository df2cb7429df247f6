import Foundation
import GRDB
import WorkoutKit

extension SQLiteHealthStore {
    /// The statistics of quarter-hour aligned buckets (in time order, not overlapping), from one read of the
    /// roll-ups that cover them: a year of daily statistics is a few tens of thousands of rows, not a query per day.
    /// A bucket's most recent value is its roll-ups' latest reading, or, where one of them does not know it (a row
    /// from before roll-ups kept it, or rebuilt after a deletion), found in the samples.
    static func rollupStatistics(
        of type: QuantityType,
        buckets: [(start: Date, end: Date)],
        _ db: Database
    ) throws -> [Statistics] {
        guard let first = buckets.first, let last = buckets.last else { return [] }
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT bucket, readings, total, weighted, minimum, maximum, latestStart, latestEnd, latestValue
                    FROM rollup WHERE type = ? AND bucket >= ? AND bucket < ? ORDER BY bucket
                    """
            ),
            arguments: [type.identifier, Rollup.bucket(first.start), Rollup.bucket(last.end)]
        )
        var result: [Statistics] = []
        var index = buckets.startIndex
        var parts = Rollup.Accumulator.Value()
        var latestKnown = true
        func finish() throws {
            defer {
                parts = Rollup.Accumulator.Value()
                latestKnown = true
            }
            guard parts.readings > 0 else { return }
            let bucket = buckets[index]
            if !latestKnown, type.aggregationStyle == .discrete {
                parts.latest = try mostRecentReading(of: type, from: bucket.start, to: bucket.end, db).map {
                    (
                        $0.startDate.timeIntervalSince1970, $0.endDate.timeIntervalSince1970,
                        try $0.quantity.doubleValue(for: type.canonicalUnit)
                    )
                }
            }
            result.append(statistics(of: type, from: bucket.start, to: bucket.end, parts))
        }
        // Columns by position: a year is some 35 000 rows, and looking each column up by name cost more than the rest.
        while let row = try rows.next() {
            let start = Double(row[0] as Int64) * Rollup.seconds
            // Rows come in time order: the buckets before this row's are done.
            while index < buckets.endIndex, start >= buckets[index].end.timeIntervalSince1970 {
                try finish()
                index += 1
            }
            guard index < buckets.endIndex else { break }
            guard start >= buckets[index].start.timeIntervalSince1970 else { continue }
            let readings = row[1] as Int
            guard readings > 0 else { continue }
            parts.readings += readings
            parts.total += row[2] as Double
            parts.weighted += row[3] as Double
            parts.minimum = min(parts.minimum, row[4] as Double)
            parts.maximum = max(parts.maximum, row[5] as Double)
            if let latestStart = row[6] as Double?, let latestEnd = row[7] as Double?,
                let latestValue = row[8] as Double?
            {
                if parts.latest.map({ latestStart >= $0.start }) ?? true {
                    parts.latest = (latestStart, latestEnd, latestValue)
                }
            } else {
                latestKnown = false
            }
        }
        while index < buckets.endIndex {
            try finish()
            index += 1
        }
        return result
    }

    /// A bucket's statistics from its summed parts, as ``statistics(of:from:to:_:)`` makes them: the total of a
    /// cumulative type; the average, minimum, maximum and most recent value of a discrete one.
    static func statistics(
        of type: QuantityType,
        from start: Date,
        to end: Date,
        _ parts: Rollup.Accumulator.Value
    ) -> Statistics {
        var statistics = Statistics(quantityType: type, startDate: start, endDate: end)
        switch type.aggregationStyle {
        case .cumulative:
            statistics.add(parts.total, count: parts.readings, start: start, end: end)
        case .discrete:
            statistics.add(
                parts.weighted / Double(parts.readings),
                count: parts.readings,
                start: start,
                end: start,
                minimum: parts.minimum,
                maximum: parts.maximum
            )
            // The most recent reading, after the aggregate, so it is the one reported.
            if let latest = parts.latest {
                var recent = Statistics(quantityType: type, startDate: start, endDate: end)
                recent.add(
                    latest.value,
                    count: 0,
                    start: Date(timeIntervalSince1970: latest.start),
                    end: Date(timeIntervalSince1970: latest.end)
                )
                statistics.mergeMostRecent(from: recent)
            }
        }
        return statistics
    }
}
