import Foundation
import GRDB
import Testing
import WorkoutKit

@testable import SQLiteStore

/// Daily (and other quarter-hour aligned) statistics collections are summed from one read of the roll-ups, each
/// roll-up keeping its latest reading: they must be what a bucket-by-bucket reading of the samples gives.
@Suite struct RollupStatisticsTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z

    var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    /// Four days of heart rate, a reading every 7 s from two straps, the value moving so every bucket's most recent
    /// one differs; the second strap a few seconds behind the first.
    func readings() -> [Sample] {
        let straps = [Device(name: "A", address: "A0:9E:1A:00:00:01"), Device(name: "B", address: "A0:9E:1A:00:00:02")]
        return (0..<(4 * 86_400 / 7)).flatMap { index -> [Sample] in
            straps.enumerated().map { strap, device in
                let at = t0.addingTimeInterval(Double(index * 7 + strap * 3))
                let bpm = Double(60 + (index * 13 + strap * 5) % 120)
                return .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(bpm, .countPerMinute),
                        start: at,
                        end: at,
                        device: device
                    )
                )
            }
        }
    }

    /// Every bucket's statistics, read the slow way: one range at a time from the samples.
    func oneByOne(_ store: SQLiteHealthStore, _ days: [Statistics]) async throws -> [Statistics] {
        var expected: [Statistics] = []
        for day in days {
            if let statistics = try await store.statistics(of: .heartRate, from: day.startDate, to: day.endDate) {
                expected.append(statistics)
            }
        }
        return expected
    }

    func days(_ store: SQLiteHealthStore, hours: Int = 24) async throws -> [Statistics] {
        try await store.statisticsCollection(
            of: .heartRate,
            from: t0.addingTimeInterval(-86_400),
            to: t0.addingTimeInterval(6 * 86_400),
            anchor: t0,
            interval: hours == 24 ? .days(1) : .hours(hours)
        )
    }

    @Test func dailyStatisticsFromTheRollUpsAreTheSamplesOwn() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: utc)
        try store.insertNow(readings(), workoutID: nil)
        let days = try await days(store)
        #expect(days.count == 4)
        #expect(days == (try await oneByOne(store, days)))
        #expect(days.allSatisfy { $0.mostRecentQuantity() != nil })
        let hours = try await self.days(store, hours: 6)
        #expect(hours.count == 16)
        #expect(hours == (try await oneByOne(store, hours)))
    }

    @Test func rollUpsThatDoNotKnowTheirLatestReadingAreFilledInFromTheSamples() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: utc)
        try store.insertNow(readings(), workoutID: nil)
        let before = try await days(store)
        // As a store of an earlier version has them: every roll-up, or only some, without a latest reading.
        try await store.pool.write { db in
            try db.execute(
                sql: "UPDATE rollup SET latestStart = NULL, latestEnd = NULL, latestValue = NULL WHERE bucket % 3 = 0"
            )
        }
        #expect(try await days(store) == before)
        try await store.pool.write { db in
            try db.execute(sql: "UPDATE rollup SET latestStart = NULL, latestEnd = NULL, latestValue = NULL")
        }
        #expect(try await days(store) == before)
        // New readings in a bucket whose latest is unknown leave it unknown rather than guess.
        let late = t0.addingTimeInterval(4 * 86_400 - 0.5)
        try await store.save(
            [
                .quantity(
                    QuantitySample(type: .heartRate, quantity: Quantity(199, .countPerMinute), start: late, end: late)
                )
            ],
            workoutID: nil
        )
        let after = try await days(store)
        #expect(after == (try await oneByOne(store, after)))
        #expect(after.last?.mostRecentQuantity() == Quantity(199, .countPerMinute))
    }

    @Test func deletingAWorkoutsSamplesLeavesTheOthersMostRecent() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: utc)
        try store.insertNow(readings(), workoutID: nil)
        let workout = UUID()
        // After every other reading of the second day: its most recent until deleted.
        let late = t0.addingTimeInterval(2 * 86_400 - 0.5)
        try store.insertNow(
            [
                .quantity(
                    QuantitySample(type: .heartRate, quantity: Quantity(42, .countPerMinute), start: late, end: late)
                )
            ],
            workoutID: workout
        )
        #expect(try await days(store)[1].mostRecentQuantity() == Quantity(42, .countPerMinute))
        try await store.deleteSamples(ofWorkout: workout)
        let after = try await days(store)
        #expect(after == (try await oneByOne(store, after)))
        #expect(after.allSatisfy { $0.mostRecentQuantity() != Quantity(42, .countPerMinute) })
    }

    @Test func aStoreOfTheVersionBeforeLearnsNothingWrongFromItsRollUps() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        // A file as the store wrote it up to v10: three single readings a day written before roll-ups existed, then
        // the migrations up to v10 (v4 rolls them up, without a latest reading).
        do {
            let queue = try DatabaseQueue(path: folder.path)
            try Schema.migrator.migrate(queue, upTo: "v3-anchors")
            try await queue.write { db in
                for (offset, bpm) in [(3_600.0, 71.0), (7_200, 150), (5_400, 90), (90_000, 64), (95_000, 63)] {
                    let at = t0.timeIntervalSince1970 + offset
                    try db.execute(
                        sql: """
                            INSERT INTO quantitySample (uuid, type, value, startDate, endDate, count, anchor)
                            VALUES (?, 'heartRate', ?, ?, ?, 1, 0)
                            """,
                        arguments: [UUID(), bpm, at, at]
                    )
                }
            }
            try Schema.migrator.migrate(queue, upTo: "v10-acknowledged-commit-time")
        }
        let store = try SQLiteHealthStore(path: folder.path, calendar: utc)
        let days = try await days(store)
        #expect(
            days.map { $0.mostRecentQuantity() } == [Quantity(150, .countPerMinute), Quantity(63, .countPerMinute)]
        )
        #expect(days.map(\.readingCount) == [3, 2])
        #expect(days == (try await oneByOne(store, days)))
    }
}
