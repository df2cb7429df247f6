import Foundation
import SystoleTestSupport
import Testing

@testable import WorkoutKit

@Suite struct LiveWorkoutBuilderTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func energy(_ kcal: Double, at seconds: Double) -> Sample {
        .quantity(
            QuantitySample(
                type: .activeEnergyBurned,
                quantity: Quantity(kcal, .kilocalorie),
                start: t0.addingTimeInterval(seconds - 1),
                end: t0.addingTimeInterval(seconds)
            )
        )
    }

    func session(_ store: InMemoryHealthStore? = nil) async -> (WorkoutSession, LiveWorkoutBuilder, ManualWorkoutClock)
    {
        let clock = ManualWorkoutClock(t0)
        let session = await WorkoutSession(
            configuration: WorkoutConfiguration(activityType: .running, locationType: .outdoor),
            store: store,
            clock: clock
        )
        return (session, session.associatedWorkoutBuilder(), clock)
    }

    @Test func statisticsLeaveOutSamplesDuringPauses() async throws {
        let (session, builder, clock) = await session()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        try await builder.add([heartRate(100, at: 1), heartRate(120, at: 2), energy(10, at: 2)])
        clock.advance(by: 10)
        try await session.pause()
        try await builder.add([heartRate(200, at: 11), energy(50, at: 12)])
        clock.advance(by: 10)
        try await session.resume()
        try await builder.add([heartRate(140, at: 21), heartRate(60, at: 22, count: 3)])

        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 6)
        #expect(hr.averageQuantity() == Quantity((100 + 120 + 140 + 60 * 3) / 6.0, .countPerMinute))
        #expect(hr.minimumQuantity() == Quantity(60, .countPerMinute))
        #expect(hr.maximumQuantity() == Quantity(140, .countPerMinute), "the 200 during the pause is left out")
        #expect(hr.mostRecentQuantity() == Quantity(60, .countPerMinute))
        #expect(hr.sumQuantity() == nil)
        let kcal = try #require(await builder.statistics(for: .activeEnergyBurned))
        #expect(try kcal.sumQuantity()?.doubleValue(for: .kilocalorie) == 10)
        #expect(kcal.averageQuantity() == nil)
        // Elapsed time leaves out the 10 s pause.
        #expect(await builder.elapsedTime(at: t0.addingTimeInterval(30)) == 20)
        #expect(await builder.elapsedTime(at: t0.addingTimeInterval(15)) == 10)
    }

    @Test func aPauseAddedLaterRemovesSamplesItCovers() async throws {
        let (session, builder, _) = await session()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5), heartRate(110, at: 9)])
        try await builder.addWorkoutEvents([
            WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4)),
            WorkoutEvent(type: .resume, start: t0.addingTimeInterval(6)),
        ])
        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.maximumQuantity() == Quantity(110, .countPerMinute))
        #expect(hr.readingCount == 2)
    }

    @Test func lapsNeverOverlapButSegmentsMay() async throws {
        let (_, builder, _) = await session()
        try await builder.beginCollection(at: t0)
        let lap1 = WorkoutEvent(type: .lap, start: t0, end: t0.addingTimeInterval(60))
        let lap2 = WorkoutEvent(type: .lap, start: t0.addingTimeInterval(60), end: t0.addingTimeInterval(120))
        try await builder.addWorkoutEvents([lap1, lap2])
        await #expect(throws: LiveWorkoutBuilderError.overlappingLap(start: t0.addingTimeInterval(90))) {
            try await builder.addWorkoutEvents([
                WorkoutEvent(type: .lap, start: t0.addingTimeInterval(90), end: t0.addingTimeInterval(150))
            ])
        }
        try await builder.addWorkoutEvents([
            WorkoutEvent(type: .segment, start: t0, end: t0.addingTimeInterval(100)),
            WorkoutEvent(type: .segment, start: t0.addingTimeInterval(50), end: t0.addingTimeInterval(150)),
            WorkoutEvent(type: .marker, start: t0.addingTimeInterval(70)),
        ])
        #expect(await builder.workoutEvents.count == 5)
        await #expect(throws: LiveWorkoutBuilderError.invalidInterval(start: t0.addingTimeInterval(5), end: t0)) {
            try await builder.addWorkoutEvents([WorkoutEvent(type: .segment, start: t0.addingTimeInterval(5), end: t0)])
        }
    }

    @Test func eventsTellAUIWhatWasCollected() async throws {
        let (session, builder, clock) = await session()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        try await builder.add([heartRate(100, at: 1), energy(1, at: 1)])
        clock.advance(by: 5)
        try await session.pause()
        var iterator = builder.events.makeAsyncIterator()
        #expect(await iterator.next() == .collectedData([.heartRate, .activeEnergyBurned]))
        #expect(await iterator.next() == .collectedEvent(WorkoutEvent(type: .pause, start: t0.addingTimeInterval(5))))
    }

    @Test func finishingSavesTheWorkoutWithItsStatistics() async throws {
        let store = InMemoryHealthStore()
        let (session, builder, clock) = await session(store)
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        await #expect(throws: LiveWorkoutBuilderError.collectionNotEnded) { _ = try await builder.finishWorkout() }
        try await builder.add([heartRate(130, at: 10)])
        try await builder.addMetadata(["note": .string("easy run")])
        clock.advance(by: 60)
        try await session.stopActivity()
        try await builder.endCollection(at: t0.addingTimeInterval(60))
        await #expect(throws: LiveWorkoutBuilderError.collectionEnded) { try await builder.add([heartRate(1, at: 61)]) }
        let workout = try await builder.finishWorkout()
        try await session.end()
        #expect(workout.duration == 60)
        #expect(workout.activityType == .running)
        #expect(workout.metadata["note"] == .string("easy run"))
        #expect(workout.statistics(for: .heartRate)?.averageQuantity() == Quantity(130, .countPerMinute))
        #expect(await store.workouts == [workout])
        #expect(await store.samples(ofWorkout: workout.id).count == 1)
        #expect(await store.journals.isEmpty, "a finished workout leaves nothing to recover")
        await #expect(throws: LiveWorkoutBuilderError.finished) { _ = try await builder.finishWorkout() }
    }

    @Test func discardingDropsTheSamples() async throws {
        let store = InMemoryHealthStore()
        let (session, builder, _) = await session(store)
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        try await builder.add([heartRate(130, at: 10)])
        try await builder.discardWorkout()
        #expect(await store.samples.isEmpty)
        #expect(await store.workouts.isEmpty)
        #expect(await store.journals.isEmpty)
    }

    @Test func aCrashedSessionIsRecoveredInItsStateWithItsStatistics() async throws {
        let store = InMemoryHealthStore()
        let (session, builder, clock) = await session(store)
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        try await builder.add([heartRate(100, at: 1), heartRate(120, at: 2)])
        clock.advance(by: 5)
        try await session.pause()
        try await builder.add([heartRate(190, at: 6)])
        try await session.beginNewActivity(configuration: WorkoutConfiguration(activityType: .cycling))

        // The process dies here; a new one finds the journal.
        let recovered = try #require(try await WorkoutSession.recoverActiveWorkoutSession(store: store, clock: clock))
        #expect(recovered.id == session.id)
        #expect(await recovered.state == .paused)
        #expect(await recovered.startDate == t0)
        #expect(await recovered.currentActivity?.configuration.activityType == .cycling)
        let restored = recovered.associatedWorkoutBuilder()
        #expect(restored.workoutID == builder.workoutID)
        let hr = try #require(await restored.statistics(for: .heartRate))
        #expect(hr.readingCount == 2)
        #expect(hr.maximumQuantity() == Quantity(120, .countPerMinute))
        // It carries on: resume, collect, finish.
        clock.advance(by: 5)
        try await recovered.resume()
        try await restored.add([heartRate(150, at: 11)])
        try await recovered.end()
        try await restored.endCollection(at: t0.addingTimeInterval(12))
        let workout = try await restored.finishWorkout()
        #expect(workout.duration == 7)
        #expect(workout.statistics(for: .heartRate)?.readingCount == 3)
        #expect(try await WorkoutSession.recoverActiveWorkoutSession(store: store) == nil)
    }

    @Test func aSensorIsOneDeviceWhateverNameItShows() async throws {
        let (session, builder, _) = await session()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        func reading(_ name: String, address: String, at seconds: Double) -> Sample {
            let date = t0.addingTimeInterval(seconds)
            return .quantity(
                QuantitySample(
                    type: .heartRate,
                    quantity: Quantity(100, .countPerMinute),
                    start: date,
                    end: date,
                    device: Device(name: name, address: address)
                )
            )
        }
        try await builder.add([reading("BZ-HRM", address: "00:AA:01:00:00:00", at: 1)])
        try await builder.add([reading("BlueZ 5.66", address: "00:AA:01:00:00:00", at: 2)])
        try await builder.add([reading("Strap", address: "A0:9E:1A:00:00:01", at: 3)])
        // Reconnected and advertising again: the latest name wins, even one the sensor showed before.
        try await builder.add([reading("Strap 2", address: "A0:9E:1A:00:00:01", at: 3.5)])
        try await builder.add([reading("Strap", address: "A0:9E:1A:00:00:01", at: 3.8)])
        try await builder.endCollection(at: t0.addingTimeInterval(4))
        let workout = try await builder.finishWorkout()
        #expect(workout.devices.map(\.name) == ["BlueZ 5.66", "Strap"])
    }

    @Test func aChangeThatCannotBeJournaledIsReportedNotHidden() async throws {
        let store = JournalFailingStore()
        let clock = ManualWorkoutClock(t0)
        let session = await WorkoutSession(
            configuration: WorkoutConfiguration(activityType: .rowing),
            store: store,
            clock: clock
        )
        var events = session.events.makeAsyncIterator()
        try await session.startActivity(at: t0)
        #expect(await session.state == .running, "the change itself takes effect")
        #expect(await events.next() == .stateChanged(to: .running, from: .notStarted, date: t0))
        let failure = await events.next()
        #expect(
            failure
                == .didFail(message: "recording the workout for crash recovery failed: the disk is full (test double)")
        )
    }
}

/// A store whose journal cannot be written, as on a full disk.
actor JournalFailingStore: ForwardingHealthStore {
    struct Full: Error, CustomStringConvertible {
        var description: String { "the disk is full (test double)" }
    }
    nonisolated let forwardee = InMemoryHealthStore()
    func saveJournal(_ journal: WorkoutJournal) throws { throw Full() }
    func clearJournal(sessionID: UUID) throws { throw Full() }
}
