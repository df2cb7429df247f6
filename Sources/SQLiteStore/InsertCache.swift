import GRDB
import WorkoutKit

/// What the group-commit writer remembers from one transaction to the next: device rows by device, and the
/// series samples still growing (this minute's and the last). Without it every commit looked each device up by
/// its JSON key and read each growing series back from the file, which was most of a commit's work.
///
/// Only touched inside the writer's transactions, which GRDB runs one at a time on its writer queue (hence
/// `@unchecked Sendable`). It is trusted only while nothing else wrote in between: SQLite's count of changed
/// rows must be where our last commit left it, otherwise (an import, a deletion, a failed transaction) it starts
/// empty again.
final class InsertCache: @unchecked Sendable {
    private(set) var devices: [Device: Int64] = [:]
    private(set) var series: [QuantitySeries.Appender.Key: QuantitySeries.Appender.Open] = [:]
    private var changesAfterLastCommit: Int?
    private var newestMinute: Int64?
    /// How often `validate` found a write in between and started empty (for tests: the writer's own writes must
    /// not count).
    private(set) var invalidations = 0

    /// At the start of a transaction: forget everything if another write came in between.
    func validate(_ db: Database) {
        if let changes = changesAfterLastCommit, changes != db.totalChangesCount {
            invalidations += 1
            forget()
        }
    }

    /// At the end of a transaction that is about to commit: remember what it wrote (`devices` is every device
    /// known by then), and fold the chunks of series that are finished into their rows.
    func keep(
        devices: [Device: Int64],
        series: [QuantitySeries.Appender.Key: QuantitySeries.Appender.Open],
        _ db: Database
    ) throws {
        self.devices = devices
        self.series.merge(series) { _, new in new }
        // Readings arrive in time order: a series two minutes old will not grow again. Swept when a new minute
        // begins, not at every commit.
        if let newest = series.keys.lazy.map(\.minute).max(), newest > newestMinute ?? .min {
            newestMinute = newest
            self.series = self.series.filter { $0.key.minute >= newest - 1 }
            try QuantitySeries.compact(before: newest - 1, db)
        }
        changesAfterLastCommit = db.totalChangesCount
    }

    /// At the end of a transaction of ours that wrote elsewhere (the inbox): what is kept is still true.
    func noteOwnWrites(_ db: Database) {
        if changesAfterLastCommit != nil { changesAfterLastCommit = db.totalChangesCount }
    }

    /// After a failed transaction: what was kept may have been rolled back.
    func forget() {
        devices = [:]
        series = [:]
        changesAfterLastCommit = nil
        newestMinute = nil
    }
}
