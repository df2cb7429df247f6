import Foundation
import SystoleTestSupport
import Testing
import WorkoutKit

@Suite struct LiveWorkoutDataSourceTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let strap = Device(name: "Polar H10 1A2B3C4D", address: "A0:9E:1A:1A:2B:3C", manufacturer: "Polar Electro OY")

    func collecting(
        _ activity: WorkoutActivityType = .running,
        enabled: Set<SampleType>? = nil
    ) async throws
        -> (LiveWorkoutDataSource, LiveWorkoutBuilder)
    {
        let configuration = WorkoutConfiguration(activityType: activity)
        let session = await WorkoutSession(configuration: configuration, clock: ManualWorkoutClock(t0))
        try await session.startActivity(at: t0)
        let builder = session.associatedWorkoutBuilder()
        try await builder.beginCollection(at: t0)
        let source =
            enabled.map { LiveWorkoutDataSource(configuration: configuration, enabledTypes: $0) }
            ?? LiveWorkoutDataSource(configuration: configuration)
        await source.attach(to: builder)
        return (source, builder)
    }

    @Test func typesToCollectDefaultByActivity() async {
        #expect(
            await LiveWorkoutDataSource(configuration: WorkoutConfiguration(activityType: .running)).typesToCollect
                == [.heartRate, .heartbeatSeries, .activeEnergyBurned]
        )
        #expect(
            await LiveWorkoutDataSource(configuration: WorkoutConfiguration(activityType: .swimming)).typesToCollect
                == [.heartRate, .activeEnergyBurned]
        )
    }

    @Test func sensorReadingsBecomeSamplesAndSayWhatIsGenerated() async throws {
        let (source, builder) = try await collecting()
        let beat = SensorMeasurement.Beat(date: t0.addingTimeInterval(0.9), rrTicks: 820)
        await source.receive(
            SensorMeasurement(date: t0.addingTimeInterval(1), heartRate: 75, beats: [beat]),
            from: strap
        )
        await source.receive(SensorMeasurement(date: t0.addingTimeInterval(2), heartRate: 77), from: strap)
        // A strap with RR but no energy field generates no energy.
        #expect(await source.generatedTypes == [.heartRate, .heartbeatSeries])
        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 2)
        #expect(await builder.statistics(for: .activeEnergyBurned) == nil)
    }

    @Test func energyIncrementsBecomeSamplesOverTheirIntervals() async throws {
        let (source, builder) = try await collecting()
        // The sensor layer's increments: 20 kJ over 10 s, nothing new, 15 kJ.
        for (second, kilojoules) in [(11.0, 20.0), (21, 0), (31, 15)] {
            await source.receive(
                SensorMeasurement(
                    date: t0.addingTimeInterval(second),
                    heartRate: 150,
                    activeEnergy: .init(kilojoules: kilojoules, since: t0.addingTimeInterval(second - 10))
                ),
                from: strap
            )
        }
        let energy = try #require(await builder.statistics(for: .activeEnergyBurned))
        #expect(energy.sumQuantity() == Quantity(35, .kilojoule))
        #expect(await source.generatedTypes.contains(.activeEnergyBurned))
    }

    @Test func onlyEnabledTypesAndWhatPredicatesAcceptAreCollected() async throws {
        let (source, builder) = try await collecting(enabled: [.heartRate, .dietaryWater])
        #expect(await source.typesToCollect == [.heartRate])
        await #expect(throws: LiveWorkoutDataSourceError.self) {
            try await source.enableCollection(for: .heartbeatSeries)
        }
        try await source.enableCollection(for: .heartRate) { sample in
            if case .quantity(let q) = sample { return q.quantity.value >= 40 }
            return false
        }
        await source.receive(SensorMeasurement(date: t0.addingTimeInterval(1), heartRate: 0), from: strap)
        await source.receive(SensorMeasurement(date: t0.addingTimeInterval(2), heartRate: 90), from: strap)
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 1)

        let water = QuantitySample(
            type: .dietaryWater,
            quantity: Quantity(250, .milliliter),
            start: t0.addingTimeInterval(3),
            end: t0.addingTimeInterval(3)
        )
        await #expect(throws: LiveWorkoutDataSourceError.notCollected(.dietaryWater)) {
            try await source.addUserSample(water)
        }
        try await source.enableCollection(for: .dietaryWater)
        try await source.addUserSample(water)
        #expect(await builder.statistics(for: .dietaryWater)?.sumQuantity() == Quantity(250, .milliliter))
        await source.disableCollection(for: .heartRate)
        await source.receive(SensorMeasurement(date: t0.addingTimeInterval(4), heartRate: 95), from: strap)
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 1)
    }

    @Test func receiveSaysWhetherTheReadingWasStored() async throws {
        let reading = SensorMeasurement(date: t0.addingTimeInterval(1), heartRate: 120)
        let unattached = LiveWorkoutDataSource(configuration: WorkoutConfiguration(activityType: .running))
        #expect(await unattached.receive(reading, from: strap) == false, "no builder collects yet")
        let (source, builder) = try await collecting()
        #expect(await source.receive(reading, from: strap) == true)
        try await builder.endCollection(at: t0.addingTimeInterval(2))
        #expect(await source.receive(reading, from: strap) == false, "the builder refuses it after the end")
        let noContact = SensorMeasurement(date: t0.addingTimeInterval(3), heartRate: nil)
        #expect(await source.receive(noContact, from: strap) == true, "nothing to store is not a failure")
    }
}

extension LiveWorkoutDataSourceTests {
    /// A full disk refuses samples for a while; the data source keeps them and saves them once the store takes
    /// them again, so nothing is lost.
    @Test func samplesAStoreRefusedAreSavedOnceItTakesThemAgain() async throws {
        let store = RefusingStore()
        let configuration = WorkoutConfiguration(activityType: .running)
        let session = await WorkoutSession(configuration: configuration, store: store, clock: ManualWorkoutClock(t0))
        try await session.startActivity(at: t0)
        let builder = session.associatedWorkoutBuilder()
        try await builder.beginCollection(at: t0)
        let source = LiveWorkoutDataSource(configuration: configuration)
        await source.attach(to: builder)
        func reading(_ second: Double) -> SensorMeasurement {
            SensorMeasurement(date: t0.addingTimeInterval(second), heartRate: 100 + second)
        }
        await store.refuse(true)
        for second in 0..<3 {
            #expect(await source.receive(reading(Double(second)), from: strap) == false)
        }
        #expect(await source.pending.count == 3)
        #expect(await source.lastDeliveryError is RefusingStore.Full)
        await store.refuse(false)
        #expect(await source.receive(reading(3), from: strap))
        #expect(await source.pending.isEmpty)
        let saved = try await store.samples(ofWorkout: builder.workoutID).compactMap { sample -> Double? in
            guard case .quantity(let q) = sample, q.type == .heartRate else { return nil }
            return try? q.quantity.doubleValue(for: .countPerMinute)
        }
        #expect(saved.sorted() == [100, 101, 102, 103])
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 4)
        // What is still refused when the workout ends is saved by savePending once there is room.
        await store.refuse(true)
        _ = await source.receive(reading(4), from: strap)
        await store.refuse(false)
        #expect(await source.savePending())
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 5)
    }
}

/// A store that refuses samples while told to, as a full disk does, and keeps them otherwise.
actor RefusingStore: ForwardingHealthStore {
    struct Full: Error {}
    nonisolated let forwardee = InMemoryHealthStore()
    private var refusing = false
    func refuse(_ value: Bool) { refusing = value }
    func save(_ samples: [Sample], workoutID: UUID?) async throws {
        if refusing { throw Full() }
        await forwardee.save(samples, workoutID: workoutID)
    }
}
