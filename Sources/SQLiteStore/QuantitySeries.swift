import Foundation
import GRDB
import WorkoutKit

/// One reading of a series sample (what HealthKit's quantity series sample query returns for each).
public struct SeriesQuantity: Hashable, Sendable {
    public var quantity: Quantity
    public var dateInterval: DateInterval

    public init(quantity: Quantity, dateInterval: DateInterval) {
        self.quantity = quantity
        self.dateInterval = dateInterval
    }
}

/// How discrete readings that arrive one at a time (heart rate at 1 Hz) are kept: as series samples, one per type,
/// device, workout and UTC minute, like HealthKit's quantity series. The sample row holds the count, mean,
/// minimum and maximum, so queries and roll-ups read one row per minute; the readings themselves are packed in
/// `quantitySeries` and read only by the series query and at the edges of unaligned ranges.
///
/// A growing series is not rewritten by each transaction that extends it: the readings a transaction adds go
/// into a row of their own in `quantitySeriesChunk` (rewriting the packed readings of every touched series wrote a
/// page per sensor each time). Once its minute is over, the writer folds a series' chunks back into its
/// `quantitySeries` row.
///
/// A series never crosses a minute boundary, so it never crosses a roll-up bucket either, and statistics over
/// any range can take whole series inside it and unpack only the minutes at its two ends.
enum QuantitySeries {
    static let seconds: Double = 60
    /// Bytes per packed reading: start (Float64 seconds after the minute), duration (Float32 s), value (Float64).
    static let stride = 20

    /// Types whose single readings are kept as series.
    static func keepsSeries(_ type: QuantityType) -> Bool { type == .heartRate }

    /// Whether `sample` joins a series rather than taking a row of its own: a single reading without metadata
    /// (metadata belongs to one sample and would be lost in a series).
    static func joins(_ sample: QuantitySample) -> Bool {
        sample.count == 1 && sample.metadata.isEmpty && keepsSeries(sample.type)
    }

    /// The columns `SQLiteHealthStore.readings(_:_:)` reads: a sample row with its packed readings, if any, in
    /// two parts: those of its `quantitySeries` row and those of its chunks not yet folded in (`group_concat`
    /// keeps a blob's bytes, zeros included; the order does not matter, `unpack` sorts).
    static let selectWithReadings = """
        SELECT s.uuid, s.type, s.value, s.startDate, s.endDate, s.count, s.deviceID, s.metadata, q.minute, q.readings,
               (SELECT CAST(group_concat(c.readings, '') AS BLOB) FROM quantitySeriesChunk c
                WHERE c.sampleID = s.id) AS moreReadings
        FROM quantitySample s LEFT JOIN quantitySeries q ON q.sampleID = s.id
        """

    /// Folds the chunks of series of minutes before `minute` (finished) into their `quantitySeries` rows,
    /// also those an earlier run of the writer left (a crash, a failed commit, an import).
    static func compact(before minute: Int64, _ db: Database) throws {
        let sampleIDs = try Int64.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT DISTINCT c.sampleID FROM quantitySeriesChunk c
                    JOIN quantitySeries q ON q.sampleID = c.sampleID WHERE q.minute < ?
                    """
            ),
            arguments: [minute]
        )
        let fold = try db.cachedStatement(
            sql: """
                UPDATE quantitySeries
                SET readings = CAST(readings || (SELECT group_concat(c.readings, '') FROM quantitySeriesChunk c
                                                 WHERE c.sampleID = ?1) AS BLOB)
                WHERE sampleID = ?1 AND EXISTS (SELECT 1 FROM quantitySeriesChunk c WHERE c.sampleID = ?1)
                """
        )
        let delete = try db.cachedStatement(sql: "DELETE FROM quantitySeriesChunk WHERE sampleID = ?")
        for id in sampleIDs {
            try fold.execute(arguments: [id])
            try delete.execute(arguments: [id])
        }
    }

    static func minute(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / seconds).rounded(.down)) }

    /// A reading, for packing and after unpacking.
    struct Reading {
        var start: Double
        var end: Double
        var value: Double
    }

    static func append(_ reading: Reading, minute: Int64, to data: inout Data) {
        let base = Double(minute) * seconds
        withUnsafeBytes(of: (reading.start - base).bitPattern.littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: Float(reading.end - reading.start).bitPattern.littleEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: reading.value.bitPattern.littleEndian) { data.append(contentsOf: $0) }
    }

    /// The readings of a series, in time order (a batch may have arrived out of order).
    static func unpack(_ data: Data, minute: Int64) -> [Reading] {
        let base = Double(minute) * seconds
        var readings: [Reading] = []
        readings.reserveCapacity(data.count / stride)
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset + stride <= raw.count {
                let start =
                    base
                    + Double(
                        bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                    )
                let duration = Float(
                    bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
                )
                let value = Double(
                    bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt64.self))
                )
                readings.append(Reading(start: start, end: start + Double(duration), value: value))
                offset += stride
            }
        }
        return readings.sorted { $0.start < $1.start }
    }

    /// Series rows being extended by one transaction.
    struct Appender {
        struct Key: Hashable {
            var type: String
            var deviceID: Int64?
            var workoutID: UUID?
            var minute: Int64
        }
        struct Open {
            var id: Int64?
            var count = 0
            var sum = 0.0
            var minimum = Double.infinity
            var maximum = -Double.infinity
            var start = Double.infinity
            var end = -Double.infinity
            /// The readings this transaction adds, packed.
            var fresh = Data()
            /// The start the stored row has: while it stays, an update leaves the start-date index alone.
            var storedStart: Double?
        }
        private var series: [Open] = []
        private var keys: [Key] = []
        private var index: [Key: Int] = [:]
        /// The last key used: readings of one sensor arrive in runs, so most need no hashing at all.
        private var last: (key: Key, at: Int)?
        /// Series earlier transactions left growing, so they need not be read back.
        private let known: [Key: Open]

        init(known: [Key: Open] = [:]) { self.known = known }

        /// Every series this transaction touched, as it will be after commit.
        var touched: [Key: Open] { Dictionary(uniqueKeysWithValues: zip(keys, series)) }

        mutating func add(
            _ sample: QuantitySample,
            value: Double,
            deviceID: Int64?,
            workoutID: UUID?,
            _ db: Database
        )
            throws
        {
            let key = Key(
                type: sample.type.identifier,
                deviceID: deviceID,
                workoutID: workoutID,
                minute: QuantitySeries.minute(sample.startDate)
            )
            let at: Int
            if let last, last.key == key {
                at = last.at
            } else if let known = index[key] {
                at = known
            } else {
                at = series.count
                series.append(try known[key] ?? Self.existing(key, db) ?? Open())
                keys.append(key)
                index[key] = at
            }
            last = (key, at)
            let start = sample.startDate.timeIntervalSince1970
            let end = sample.endDate.timeIntervalSince1970
            series[at].count += 1
            series[at].sum += value
            series[at].minimum = min(series[at].minimum, value)
            series[at].maximum = max(series[at].maximum, value)
            series[at].start = min(series[at].start, start)
            series[at].end = max(series[at].end, end)
            QuantitySeries.append(
                Reading(start: start, end: end, value: value),
                minute: key.minute,
                to: &series[at].fresh
            )
        }

        /// The series this key already has in the store (written by an earlier transaction), to extend.
        private static func existing(_ key: Key, _ db: Database) throws -> Open? {
            let statement = try db.cachedStatement(
                sql: """
                    SELECT s.id, s.count, s.value, s.minimum, s.maximum, s.startDate, s.endDate
                    FROM quantitySample s JOIN quantitySeries q ON q.sampleID = s.id
                    WHERE s.type = ? AND s.startDate >= ? AND s.startDate < ?
                      AND s.deviceID IS ? AND s.workoutID IS ?
                    ORDER BY s.id DESC LIMIT 1
                    """
            )
            let arguments: StatementArguments = [
                key.type, Double(key.minute) * seconds, Double(key.minute + 1) * seconds, key.deviceID, key.workoutID,
            ]
            guard let row = try Row.fetchOne(statement, arguments: arguments) else { return nil }
            let count: Int = row["count"]
            return Open(
                id: row["id"],
                count: count,
                sum: row["value"] * Double(count),
                minimum: row["minimum"],
                maximum: row["maximum"],
                start: row["startDate"],
                end: row["endDate"],
                storedStart: row["startDate"]
            )
        }

        /// Writes every extended or new series, each under a new anchor (a growing series is a changed sample):
        /// a new series as a sample row and its `quantitySeries` row, the readings added to an existing one as a
        /// chunk.
        mutating func write(anchors: inout AnchorAllocator, _ db: Database) throws {
            let insertSample = try db.cachedStatement(
                sql: """
                    INSERT INTO quantitySample
                        (uuid, type, value, startDate, endDate, count, deviceID, workoutID, minimum, maximum, anchor)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            )
            let insertSeries = try db.cachedStatement(
                sql: "INSERT INTO quantitySeries (sampleID, minute, readings) VALUES (?, ?, ?)"
            )
            // Two updates: SQLite rewrites the entries of every index whose columns are SET, changed or not, and
            // readings come in time order, so a series' start almost never moves.
            let updateSample = try db.cachedStatement(
                sql: """
                    UPDATE quantitySample
                    SET value = ?, count = ?, endDate = ?, minimum = ?, maximum = ?, anchor = ?
                    WHERE id = ?
                    """
            )
            let updateSampleAndStart = try db.cachedStatement(
                sql: """
                    UPDATE quantitySample
                    SET value = ?, count = ?, startDate = ?, endDate = ?, minimum = ?, maximum = ?, anchor = ?
                    WHERE id = ?
                    """
            )
            let insertChunk = try db.cachedStatement(
                sql: "INSERT INTO quantitySeriesChunk (sampleID, readings) VALUES (?, ?)"
            )
            for (at, key) in keys.enumerated() where series[at].count > 0 {
                let series = series[at]
                let mean = series.sum / Double(series.count)
                let anchor = anchors.next()
                if let id = series.id {
                    if series.storedStart == series.start {
                        try updateSample.execute(arguments: [
                            mean, series.count, series.end, series.minimum, series.maximum, anchor, id,
                        ])
                    } else {
                        try updateSampleAndStart.execute(arguments: [
                            mean, series.count, series.start, series.end, series.minimum, series.maximum, anchor, id,
                        ])
                    }
                    try insertChunk.execute(arguments: [id, series.fresh])
                } else {
                    try insertSample.execute(arguments: [
                        UUID.random(), key.type, mean, series.start, series.end, series.count, key.deviceID,
                        key.workoutID,
                        series.minimum, series.maximum, anchor,
                    ])
                    let id = db.lastInsertedRowID
                    try insertSeries.execute(arguments: [id, key.minute, series.fresh])
                    self.series[at].id = id
                }
                self.series[at].storedStart = series.start
                self.series[at].fresh = Data()
            }
        }
    }
}

/// Hands out anchors in a transaction, reading and writing the counter once.
struct AnchorAllocator {
    private var last: Int64
    private let first: Int64

    // Cached statements, here and in `save`: a commit reads and writes the counter once each, and preparing the
    // SQL again for each would be a large part of a small commit's work.
    init(_ db: Database) throws {
        last = try Int64.fetchOne(db.cachedStatement(sql: "SELECT value FROM anchorCounter WHERE id = 1")) ?? 0
        first = last
    }

    mutating func next() -> Int64 {
        last += 1
        return last
    }

    func save(_ db: Database) throws {
        guard last != first else { return }
        try db.cachedStatement(sql: "UPDATE anchorCounter SET value = ? WHERE id = 1").execute(arguments: [last])
    }
}
