import Foundation
import Testing
import WorkoutKit

@testable import SQLiteStore

/// The writer remembers devices and growing series between its transactions, and must trust that memory
/// across its own inbox moves while dropping it when someone else writes.
@Suite struct InsertCacheTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func batch(at second: Double) -> [Sample] {
        (0..<4).flatMap { sensor -> [Sample] in
            let device = Device(name: "strap \(sensor)", address: "A0:9E:1A:00:00:0\(sensor)")
            let date = t0.addingTimeInterval(second)
            return [
                .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(Double(120 + sensor), .countPerMinute),
                        start: date,
                        end: date,
                        device: device
                    )
                ),
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: date,
                        end: date.addingTimeInterval(0.5),
                        beats: [.init(timeSinceStart: 0, rrTicks: 512, precededByGap: false)],
                        device: device
                    )
                ),
            ]
        }
    }

    @Test func theWritersMemorySurvivesItsOwnInboxMovesButNotOtherWrites() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // Each save a commit into the inbox, each flush a move out of it (as the daemon's commits and folds).
        for second in 0..<6 {
            try await store.save(batch(at: Double(second)), workoutID: nil)
            try await store.flush()
        }
        #expect(await store.insertCacheInvalidations == 0)

        // An import is someone else's write: the next transaction starts afresh, and still extends the series.
        try store.insertNow(batch(at: 6), workoutID: nil)
        try await store.save(batch(at: 7), workoutID: nil)
        try await store.flush()
        #expect(await store.insertCacheInvalidations == 1)
        let series = try await store.samples(of: .heartRate)
        #expect(series.map(\.count).sorted() == [8, 8, 8, 8])
    }

    @Test func theLogIsCopiedIntoTheFileBesideTheWriterSoItStaysSmall() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // Twenty moves of the inbox (each a few hundred KiB of log), far below SQLite's own checkpoint at 64 MiB:
        // only the checkpointer keeps the log from holding all of them.
        for round in 0..<20 {
            let batches = (0..<25).map { batch(at: Double(round * 25 + $0)) }
            for samples in batches { try await store.save(samples, workoutID: nil) }
            try await store.flush()
            await store.checkpointSettled()
        }
        let log = try FileManager.default.attributesOfItem(atPath: folder.path + "-wal")[.size] as? Int ?? 0
        #expect(log < 1 << 20, "the write-ahead log grew to \(log) bytes")
        #expect(try await store.samples(of: .heartRate).map(\.count).reduce(0, +) == 20 * 25 * 4)
    }
}
