import Foundation
import GRDB
import PropertyBased
import SQLiteStore
import Testing
import WorkoutKit

/// Heart rate kept as series samples: one per device, workout and minute, with the readings behind it.
@Suite struct QuantitySeriesTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)  // a minute (and quarter-hour) boundary
    let strap = Device(name: "strap", address: "A0:9E:1A:00:00:01")
    let buds = Device(name: "buds", address: "5C:1B:F4:00:00:02")

    func heartRate(
        _ bpm: Double,
        at second: Double,
        device: Device? = nil,
        metadata: [String: MetadataValue] = [:]
    ) -> QuantitySample {
        let date = t0.addingTimeInterval(second)
        return QuantitySample(
            type: .heartRate,
            quantity: Quantity(bpm, .countPerMinute),
            start: date,
            end: date,
            device: device,
            metadata: metadata
        )
    }

    @Test func readingsArrivingOneByOneBecomeOneSeriesPerMinute() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let readings = (0..<150).map { heartRate(Double(60 + $0 % 50), at: Double($0), device: strap) }
        // As a sensor delivers them: a few per commit.
        for start in stride(from: 0, to: readings.count, by: 3) {
            try store.insertNow(readings[start..<min(start + 3, readings.count)].map(Sample.quantity), workoutID: nil)
        }
        let series = try await store.samples(of: .heartRate)
        #expect(series.map(\.count) == [60, 60, 30])
        #expect(series.map(\.startDate) == [t0, t0.addingTimeInterval(60), t0.addingTimeInterval(120)])
        #expect(series[0].endDate == t0.addingTimeInterval(59))
        #expect(series.allSatisfy { $0.device == strap })
        for (index, sample) in series.enumerated() {
            let inMinute = readings[(index * 60)..<min(index * 60 + 60, readings.count)]
            let mean = inMinute.map(\.quantity.value).reduce(0, +) / Double(inMinute.count)
            #expect(abs(sample.quantity.value - mean) < 1e-9, "the series sample's quantity is its mean")
            let quantities = try await store.seriesQuantities(of: sample.id)
            #expect(quantities.map(\.quantity) == inMinute.map(\.quantity))
            #expect(quantities.map(\.dateInterval.start) == inMinute.map(\.startDate))
        }
    }

    @Test func seriesAreKeptApartByDeviceAndWorkoutAndReadingsWithMetadataStayAlone() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        var samples: [Sample] = []
        for second in 0..<10 {
            samples.append(.quantity(heartRate(100, at: Double(second), device: strap)))
            samples.append(.quantity(heartRate(120, at: Double(second) + 0.5, device: buds)))
        }
        try await store.save(samples, workoutID: nil)
        try await store.save([.quantity(heartRate(130, at: 20, device: strap))], workoutID: workout)
        let tagged = heartRate(140, at: 30, device: strap, metadata: ["note": .string("manual")])
        try await store.save([.quantity(tagged)], workoutID: nil)

        let all = try await store.samples(of: .heartRate)
        #expect(all.map(\.count) == [10, 10, 1, 1])
        #expect(try await store.samples(of: .heartRate, deviceAddress: buds.address).map(\.quantity.value) == [120])
        #expect(try await store.samples(of: .heartRate, workoutID: workout).map(\.quantity.value) == [130])
        let alone = try #require(all.last)
        #expect(alone.id == tagged.id && alone.metadata == tagged.metadata)
        #expect(try await store.seriesQuantities(of: alone.id).map(\.quantity.value) == [140])
    }

    @Test func aReopenedStoreExtendsTheSeriesOfTheCurrentMinute() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        do {
            let store = try folder.open()
            try await store.save(
                (0..<20).map { .quantity(heartRate(90, at: Double($0), device: strap)) },
                workoutID: nil
            )
        }
        let store = try folder.open()
        try await store.save((20..<40).map { .quantity(heartRate(110, at: Double($0), device: strap)) }, workoutID: nil)
        let series = try await store.samples(of: .heartRate)
        #expect(series.count == 1)
        #expect(series.first?.count == 40 && series.first?.quantity.value == 100)
        let quantities = try await store.seriesQuantities(of: try #require(series.first).id)
        #expect(quantities.count == 40)
    }

    @Test func savesKeepExtendingTheSeriesWhenOtherWritesChangeItInBetween() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let readings = (0..<12).map { Sample.quantity(heartRate(Double(100 + $0), at: Double($0), device: strap)) }
        // The writer remembers the growing series between the moves of its inbox (each save moved here by a
        // flush, as a query would); an import in between changes it behind its back.
        try await store.save(Array(readings[0..<3]), workoutID: nil)
        try await store.flush()
        try await store.save(Array(readings[3..<6]), workoutID: nil)
        try await store.flush()
        try store.insertNow(Array(readings[6..<9]), workoutID: nil)
        try await store.save(Array(readings[9..<12]), workoutID: nil)
        let series = try await store.samples(of: .heartRate)
        #expect(series.count == 1)
        #expect(series.first?.count == 12)
        let quantities = try await store.seriesQuantities(of: try #require(series.first).id)
        #expect(quantities.map(\.quantity.value) == (0..<12).map { Double(100 + $0) })

        // Deleted in between: the next save starts a new series instead of bringing the old one back.
        let workout = UUID()
        try await store.save([.quantity(heartRate(70, at: 30, device: buds))], workoutID: workout)
        try await store.deleteSamples(ofWorkout: workout)
        try await store.save([.quantity(heartRate(80, at: 31, device: buds))], workoutID: workout)
        let buds = try await store.samples(of: .heartRate).filter { $0.device?.name == "buds" }
        #expect(buds.map(\.count) == [1])
        #expect(buds.first?.quantity.value == 80)
    }

    @Test func readingsSavedOneCommitAtATimeAreChunkedThenFoldedOnceTheirMinuteIsOver() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // Every save its own commit and fold (as a reading followed by a query): minutes 0, 1 and 2.
        let readings = stride(from: 0.0, to: 150, by: 5).map { heartRate(60 + $0 / 5, at: $0, device: strap) }
        for reading in readings {
            try await store.save([.quantity(reading)], workoutID: nil)
            try await store.flush()
        }

        let file = try DatabaseQueue(path: folder.path)
        let firstMinute = Int(t0.timeIntervalSince1970 / 60)
        // A series is its first fold's row plus one chunk per later fold, until two minutes later.
        let chunked = try await file.read { db in
            try Int.fetchAll(
                db,
                sql: "SELECT DISTINCT q.minute - ? FROM quantitySeriesChunk c "
                    + "JOIN quantitySeries q ON q.sampleID = c.sampleID ORDER BY q.minute",
                arguments: [firstMinute]
            )
        }
        #expect(chunked == [1, 2], "the chunks of minute 0 were folded when minute 2 began")
        let minuteZero = try await file.read { db in
            try Data.fetchOne(db, sql: "SELECT readings FROM quantitySeries ORDER BY minute LIMIT 1")
        }
        #expect(minuteZero?.count == 12 * 20, "minute 0's row holds all its 12 readings, 20 bytes each")

        // Folded or not, every reading reads back, in order.
        let series = try await store.samples(of: .heartRate)
        #expect(series.map(\.count) == [12, 12, 6])
        var back: [Double] = []
        for sample in series { back += try await store.seriesQuantities(of: sample.id).map(\.quantity.value) }
        #expect(back == readings.map(\.quantity.value))
    }

    @Test func minuteBucketsFindReadingsOfSeriesThatStartBeforeThemOrBeforeTheirRange() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // One series (minute 0) with readings at 10, 20, …, 50 s, and one (minute 1) at 65 s.
        let readings = [10.0, 20, 30, 40, 50, 65].map { heartRate(60 + $0, at: $0, device: strap) }
        try await store.save(readings.map(Sample.quantity), workoutID: nil)

        // A range starting inside minute 0 (as a workout whose first reading came a moment before its start).
        let inside = try await store.statisticsCollection(
            of: .heartRate,
            from: t0.addingTimeInterval(15),
            to: t0.addingTimeInterval(45),
            anchor: t0.addingTimeInterval(15),
            interval: .minutes(1)
        )
        #expect(inside.map { $0.averageQuantity()?.value } == [(80.0 + 90 + 100) / 3])

        // Buckets anchored mid-minute: the second holds readings of a series that started in the first.
        let shifted = try await store.statisticsCollection(
            of: .heartRate,
            from: t0,
            to: t0.addingTimeInterval(60),
            anchor: t0.addingTimeInterval(25),
            interval: .minutes(1)
        )
        #expect(shifted.map(\.readingCount) == [2, 3])
    }

    @Test func statisticsOverAnyRangeAgreeWithTheReadings() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // A fixed seed, so a failing range can be reproduced.
        var random = Xoshiro(seed: (7, 11, 13, 17))
        // Two sensors, irregular intervals, an hour, and one ungrouped reading with metadata.
        var readings: [QuantitySample] = []
        var second = 0.0
        while second < 3600 {
            let device = Bool.random(using: &random) ? strap : buds
            readings.append(heartRate(Double(Int.random(in: 45...200, using: &random)), at: second, device: device))
            second += Double.random(in: 0.2...4, using: &random)
        }
        readings.append(heartRate(222, at: 1234.5, metadata: ["note": .string("spike")]))
        for start in stride(from: 0, to: readings.count, by: 37) {
            try store.insertNow(readings[start..<min(start + 37, readings.count)].map(Sample.quantity), workoutID: nil)
        }
        for _ in 0..<40 {
            let a = Double.random(in: -30...3630, using: &random)
            let b = a + Double.random(in: 0...1800, using: &random)
            let from = t0.addingTimeInterval(a)
            let to = t0.addingTimeInterval(b)
            let inside = readings.filter { $0.startDate >= from && $0.startDate < to }
            let stats = try await store.statistics(of: .heartRate, from: from, to: to)
            guard let latest = inside.max(by: { $0.startDate < $1.startDate }) else {
                #expect(stats == nil)
                continue
            }
            let values = inside.map(\.quantity.value)
            #expect(stats?.readingCount == inside.count, "range \(a)..<\(b)")
            #expect(stats?.minimumQuantity()?.value == values.min())
            #expect(stats?.maximumQuantity()?.value == values.max())
            #expect(abs((stats?.averageQuantity()?.value ?? 0) - values.reduce(0, +) / Double(values.count)) < 1e-9)
            #expect(stats?.mostRecentQuantity() == latest.quantity, "range \(a)..<\(b)")
        }
    }

    @Test func workoutSamplesComeBackAsSingleReadingsForRecovery() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let workout = UUID()
        let readings = (0..<90).map { heartRate(Double(100 + $0), at: Double($0), device: strap) }
        try await store.save(readings.map(Sample.quantity), workoutID: workout)
        let back = try await store.samples(ofWorkout: workout).compactMap { sample -> QuantitySample? in
            if case .quantity(let q) = sample { q } else { nil }
        }
        #expect(back.map(\.quantity) == readings.map(\.quantity))
        #expect(back.map(\.startDate) == readings.map(\.startDate))
        #expect(back.allSatisfy { $0.count == 1 && $0.device == strap })
    }

    @Test func aBuilderRecomputesItsStatisticsFromTheseReadingsWhenAPauseIsSetAfterTheFact() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let session = await WorkoutSession(
            configuration: WorkoutConfiguration(activityType: .running),
            store: store,
            clock: ManualWorkoutClock(t0)
        )
        let builder = session.associatedWorkoutBuilder()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        // 90 s of one reading a second, saved ten at a time: they span two minutes' series.
        let readings = (0..<90).map { heartRate(Double(100 + ($0 * 37) % 60), at: Double($0) + 0.25, device: strap) }
        for start in stride(from: 0, to: 90, by: 10) {
            try await builder.add(readings[start..<start + 10].map(Sample.quantity))
        }
        try await builder.addWorkoutEvents([
            WorkoutEvent(type: .pause, start: t0.addingTimeInterval(30)),
            WorkoutEvent(type: .resume, start: t0.addingTimeInterval(60)),
        ])
        let counted = readings.filter { !(30..<60).contains($0.startDate.timeIntervalSince(t0)) }
        let values = try counted.map { try $0.quantity.doubleValue(for: .countPerMinute) }
        let statistics = try #require(await builder.statistics(for: .heartRate))
        #expect(statistics.readingCount == 60)
        #expect(statistics.minimumQuantity() == Quantity(values.min()!, .countPerMinute))
        #expect(statistics.maximumQuantity() == Quantity(values.max()!, .countPerMinute))
        let average = try statistics.averageQuantity()?.doubleValue(for: .countPerMinute) ?? .nan
        #expect(abs(average - values.reduce(0, +) / 60) < 1e-9)
        #expect(statistics.mostRecentQuantity() == Quantity(values.last!, .countPerMinute))
    }

    @Test func anUnknownSampleIsNotFound() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let missing = UUID()
        let error = await #expect(throws: HealthStoreError.self) { try await store.seriesQuantities(of: missing) }
        #expect(error?.kind == .notFound)
        #expect(error?.message == "no quantity sample \(missing) in the store")
    }
}
