import Foundation
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

@Suite struct QueryTests {
    static var berlin: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }

    func date(_ text: String) -> Date {
        var calendar = Self.berlin
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let parts = text.split(whereSeparator: { "-T:".contains($0) }).map { Int($0)! }
        return calendar.date(
            from: DateComponents(year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4])
        )!
    }

    @Test func samplesAreFoundByTypeDateWorkoutAndDevice() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: Self.berlin)
        let strap = Device(name: "strap", address: "A0:9E:1A:00:00:01")
        let buds = Device(name: "buds", address: "5C:1B:F4:00:00:02")
        let workout = UUID()
        let t = date("2026-06-01T10:00")
        try await store.save(
            [heartRate(100, at: t, device: strap), heartRate(101, at: t.addingTimeInterval(60), device: buds)],
            workoutID: workout
        )
        try await store.save([heartRate(102, at: t.addingTimeInterval(120), device: strap)], workoutID: nil)
        #expect(try await store.samples(of: .heartRate).map(\.quantity.value) == [100, 101, 102])
        #expect(try await store.samples(of: .heartRate, workoutID: workout).count == 2)
        #expect(
            try await store.samples(of: .heartRate, deviceAddress: "A0:9E:1A:00:00:01").map(\.quantity.value) == [
                100, 102,
            ]
        )
        #expect(
            try await store.samples(of: .heartRate, from: t.addingTimeInterval(30), to: t.addingTimeInterval(90)).count
                == 1
        )
        #expect(try await store.samples(of: .activeEnergyBurned).isEmpty)

        let stats = try #require(try await store.statistics(of: .heartRate, from: t, to: t.addingTimeInterval(3600)))
        #expect(stats.averageQuantity() == Quantity(101, .countPerMinute))
        #expect(stats.minimumQuantity() == Quantity(100, .countPerMinute))
        #expect(stats.maximumQuantity() == Quantity(102, .countPerMinute))
        #expect(stats.mostRecentQuantity() == Quantity(102, .countPerMinute))
    }

    @Test func dayBucketsFollowTheCalendarAcrossDaylightSavingChanges() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: Self.berlin)
        // One energy sample of 1 kJ every real hour from 27 March to 31 March 2026 (Berlin springs forward on the 29th).
        let start = date("2026-03-27T00:00")
        let samples: [Sample] = (0..<(5 * 24)).map { hour in
            let at = start.addingTimeInterval(Double(hour) * 3600)
            return .quantity(
                QuantitySample(
                    type: .activeEnergyBurned,
                    quantity: Quantity(1, .kilojoule),
                    start: at,
                    end: at.addingTimeInterval(60)
                )
            )
        }
        try store.insertNow(samples, workoutID: nil)
        let days = try await store.statisticsCollection(
            of: .activeEnergyBurned,
            from: start,
            to: start.addingTimeInterval(5 * 24 * 3600),
            anchor: date("2026-01-01T00:00"),
            interval: .days(1)
        )
        let sums = days.map { $0.sumQuantity()?.value ?? 0 }
        // The 29th has 23 hours; what is left after the last whole day goes to the 1st of April.
        #expect(sums == [24, 24, 23, 24, 24, 1])
        #expect(
            days.map { ActivityDay(date: $0.startDate) }
                == ["27", "28", "29", "30", "31", "01"].map(ActivityDay.init(day:))
        )
    }

    @Test func aRangeOfDecadesGivesTheBucketsThatHoldSamples() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: Self.berlin)
        // Heart rate in three minutes of one afternoon, after Berlin sprang forward.
        let samples: [Sample] = [0, 30, 61, 150, 155].map { second in
            let at = date("2026-03-30T14:00").addingTimeInterval(second)
            return .quantity(
                QuantitySample(type: .heartRate, quantity: Quantity(100 + second, .countPerMinute), start: at, end: at)
            )
        }
        try store.insertNow(samples, workoutID: nil)
        let near = try await store.statisticsCollection(
            of: .heartRate,
            from: date("2026-03-30T13:58"),
            to: date("2026-03-30T14:05"),
            anchor: date("2026-03-30T13:58"),
            interval: .minutes(1)
        )
        // Minute buckets over 110 years, anchored far away: only the three that hold samples, the same ones.
        let decades = try await store.statisticsCollection(
            of: .heartRate,
            from: date("1990-01-01T00:00"),
            to: date("2100-01-01T00:00"),
            anchor: date("1990-01-01T00:00"),
            interval: .minutes(1)
        )
        let minutes = ["2026-03-30T14:00", "2026-03-30T14:01", "2026-03-30T14:02"].map(date)
        #expect(near.map(\.startDate) == minutes)
        #expect(decades.map(\.startDate) == minutes)
        #expect(decades.map(\.readingCount) == [2, 1, 2])
        #expect(decades.map { $0.averageQuantity() } == near.map { $0.averageQuantity() })
        // Day buckets anchored in 1990 still fall on Berlin's midnight (many daylight-saving changes later).
        let days = try await store.statisticsCollection(
            of: .heartRate,
            from: date("1990-01-01T00:00"),
            to: date("2100-01-01T00:00"),
            anchor: date("1990-01-01T00:00"),
            interval: .days(1)
        )
        #expect(days.map(\.startDate) == [date("2026-03-30T00:00")])
        #expect(days.first?.readingCount == 5)
    }

    @Test func theSummaryCountsOnlyWorkoutsTheBuilderFinished() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try SQLiteHealthStore(path: folder.path, calendar: Self.berlin)
        let start = date("2026-07-04T08:00")
        let finished = try await recordWorkout(
            in: store,
            activity: .running,
            start: start,
            seconds: 1800,
            samples: [
                .quantity(
                    QuantitySample(
                        type: .activeEnergyBurned,
                        quantity: Quantity(100, .kilocalorie),
                        start: start,
                        end: start.addingTimeInterval(1800)
                    )
                )
            ]
        )
        // The same workout imported again (another path) is stored but not summarised.
        var imported = finished
        imported.id = UUID()
        try await store.save(imported)

        let summaries = try await store.activitySummaries(from: start, to: start)
        #expect(summaries.count == 1)
        #expect(summaries.first?.day == "2026-07-04")
        #expect(summaries.first?.workoutCount == 1)
        #expect(summaries.first?.exerciseMinutes == 30)
        #expect(try summaries.first?.activeEnergyBurned.doubleValue(for: .kilocalorie) == 100)
        #expect(try await store.workouts().count == 2)
    }
}

/// A day of the month in Berlin, for readable expectations.
struct ActivityDay: Equatable {
    var day: String
    init(day: String) { self.day = day }
    init(date: Date) {
        day = String(format: "%02d", QueryTests.berlin.component(.day, from: date))
    }
}

@Suite struct AnchoredQueryTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func energy(_ kilojoules: Double, _ second: Double) -> Sample {
        let date = t0.addingTimeInterval(second)
        return .quantity(
            QuantitySample(
                type: .activeEnergyBurned,
                quantity: Quantity(kilojoules, .kilojoule),
                start: date,
                end: date
            )
        )
    }

    @Test func aConsumerSeesEachAdditionAndDeletionOnce() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let kept = UUID()
        let discarded = UUID()
        try await store.save([energy(10, 1), energy(11, 2)], workoutID: kept)
        try await store.save([energy(15, 3)], workoutID: discarded)

        let first = try await store.changes(of: .activeEnergyBurned)
        #expect(first.added.count == 3 && first.deleted.isEmpty)
        let nothing = try await store.changes(of: .activeEnergyBurned, after: first.anchor)
        #expect(nothing.added.isEmpty && nothing.deleted.isEmpty && nothing.anchor == first.anchor)

        try await store.deleteSamples(ofWorkout: discarded)
        try await store.save([energy(12, 4)], workoutID: kept)
        let second = try await store.changes(of: .activeEnergyBurned, after: first.anchor)
        #expect(second.deleted == [first.added[2].id])
        #expect(second.added.count == 1 && !first.added.map(\.id).contains(second.added[0].id))
        #expect(second.anchor > first.anchor)

        // Paging with a limit never skips a change.
        var anchor: Int64? = nil
        var seen = 0
        var deletions = 0
        while true {
            let page = try await store.changes(of: .activeEnergyBurned, after: anchor, limit: 2)
            if page.added.isEmpty && page.deleted.isEmpty { break }
            seen += page.added.count
            deletions += page.deleted.count
            anchor = page.anchor
        }
        #expect(seen == 3, "the deleted sample is gone from the additions")
        #expect(deletions == 1)
        #expect(try await store.changes(of: .heartbeatSeries).added.isEmpty)
    }

    @Test func aGrowingSeriesComesBackWithItsNewReadings() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        try await store.save([heartRate(100, at: 1), heartRate(102, at: 2)], workoutID: nil)
        let first = try await store.changes(of: .heartRate)
        guard case .quantity(let series) = try #require(first.added.first) else { throw Unexpected() }
        #expect(first.added.count == 1 && series.count == 2)

        try await store.save([heartRate(104, at: 3)], workoutID: nil)
        let second = try await store.changes(of: .heartRate, after: first.anchor)
        guard case .quantity(let grown) = try #require(second.added.first) else { throw Unexpected() }
        #expect(second.added.count == 1)
        #expect(grown.id == series.id, "the same sample, replaced by identifier")
        #expect(grown.count == 3 && grown.quantity == Quantity(102, .countPerMinute))
        #expect(try await store.changes(of: .heartRate, after: second.anchor).added.isEmpty)
    }
}

struct Unexpected: Error {}

@Suite struct RollupTests {
    @Test func rollupsAgreeWithTheSamplesAndFollowDeletions() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // a quarter-hour boundary
        var random = SystemRandomNumberGenerator()
        var kept: [Double] = []
        var keptSamples: [Sample] = []
        var droppedSamples: [Sample] = []
        let keptWorkout = UUID()
        let dropped = UUID()
        for second in stride(from: 0.0, to: 7200, by: 7) {
            let value = Double(Int.random(in: 50...190, using: &random))
            let at = start.addingTimeInterval(second)
            let sample = Sample.quantity(
                QuantitySample(type: .heartRate, quantity: Quantity(value, .countPerMinute), start: at, end: at)
            )
            if Bool.random(using: &random) {
                kept.append(value)
                keptSamples.append(sample)
            } else {
                droppedSamples.append(sample)
            }
        }
        // Several batches each, interleaved, so buckets are updated by more than one upsert.
        for index in stride(from: 0, to: max(keptSamples.count, droppedSamples.count), by: 100) {
            try await store.save(
                Array(keptSamples[min(index, keptSamples.count)..<min(index + 100, keptSamples.count)]),
                workoutID: keptWorkout
            )
            try await store.save(
                Array(droppedSamples[min(index, droppedSamples.count)..<min(index + 100, droppedSamples.count)]),
                workoutID: dropped
            )
        }
        try await store.deleteSamples(ofWorkout: dropped)
        let stats = try #require(
            try await store.statistics(of: .heartRate, from: start, to: start.addingTimeInterval(7200))
        )
        #expect(stats.readingCount == kept.count)
        #expect(stats.minimumQuantity()?.value == kept.min())
        #expect(stats.maximumQuantity()?.value == kept.max())
        let average = kept.reduce(0, +) / Double(kept.count)
        #expect(abs((stats.averageQuantity()?.value ?? 0) - average) < 1e-9)
        // An unaligned range reads the samples themselves and agrees.
        let raw = try #require(
            try await store.statistics(
                of: .heartRate,
                from: start.addingTimeInterval(-1),
                to: start.addingTimeInterval(7201)
            )
        )
        #expect(raw.readingCount == stats.readingCount)
        #expect(abs((raw.averageQuantity()?.value ?? 0) - average) < 1e-9)
    }
}
