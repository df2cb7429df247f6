import Foundation
import Synchronization
import Testing

@testable import WorkoutKit

/// The builder keeps no readings: statistics grow as samples arrive and are recomputed from the store only when a
/// pause, resume or the end is set at or before a sample already collected.
@Suite struct StatisticsRecomputationTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func heartRate(_ bpm: Double, at seconds: Double) -> Sample {
        let date = t0.addingTimeInterval(seconds)
        return .quantity(
            QuantitySample(type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: date, end: date)
        )
    }

    func started(_ store: ReadWatchingStore) async throws -> (WorkoutSession, LiveWorkoutBuilder, ManualWorkoutClock) {
        let clock = ManualWorkoutClock(t0)
        let session = await WorkoutSession(
            configuration: WorkoutConfiguration(activityType: .running),
            store: store,
            clock: clock
        )
        let builder = session.associatedWorkoutBuilder()
        try await session.startActivity(at: t0)
        try await builder.beginCollection(at: t0)
        return (session, builder, clock)
    }

    @Test func pausingAndEndingNowReadNothingBack() async throws {
        let store = ReadWatchingStore()
        let (session, builder, clock) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(120, at: 2)])
        clock.advance(by: 5)
        try await session.pause()
        try await builder.add([heartRate(200, at: 6)])
        clock.advance(by: 5)
        try await session.resume()
        try await builder.add([heartRate(140, at: 11)])
        clock.advance(by: 5)
        try await session.stopActivity()
        try await builder.endCollection(at: clock.now())
        let workout = try await builder.finishWorkout()

        #expect(await store.reads == 0, "nothing collected was covered by a later pause or the end")
        let hr = try #require(workout.statistics(for: .heartRate))
        #expect(hr.readingCount == 3)
        #expect(hr.maximumQuantity() == Quantity(140, .countPerMinute))
    }

    @Test func aPauseSetBeforeCollectedSamplesRecomputesFromTheStore() async throws {
        let store = ReadWatchingStore()
        let (_, builder, _) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5), heartRate(110, at: 9)])
        try await builder.addWorkoutEvents([
            WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4)),
            WorkoutEvent(type: .resume, start: t0.addingTimeInterval(6)),
        ])
        #expect(await store.reads == 1)
        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 2)
        #expect(hr.maximumQuantity() == Quantity(110, .countPerMinute))
        #expect(hr.averageQuantity() == Quantity(105, .countPerMinute))

        // An end before the last sample leaves it out, also by reading back.
        try await builder.endCollection(at: t0.addingTimeInterval(9))
        #expect(await store.reads == 2)
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 1)
    }

    /// Whether the store's answer was read before or after the sample that arrives meanwhile was saved.
    @Test(arguments: [false, true])
    func samplesArrivingWhileTheStoreIsReadCountOnce(answerReadFirst: Bool) async throws {
        let store = ReadWatchingStore()
        let (_, builder, _) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5)])
        await store.holdReads(answeringFirst: answerReadFirst)
        let pausing = Task {
            try await builder.addWorkoutEvents([
                WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4)),
                WorkoutEvent(type: .resume, start: t0.addingTimeInterval(6)),
            ])
        }
        await store.waitForHeldRead()
        // Counted by the builder while the read is held; in the read's answer or not, depending on the argument.
        try await builder.add([heartRate(110, at: 9)])
        await store.releaseReads()
        try await pausing.value

        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 2, "100 and 110: the 180 is paused, the 110 counted once")
        #expect(hr.maximumQuantity() == Quantity(110, .countPerMinute))
        #expect(hr.mostRecentQuantity() == Quantity(110, .countPerMinute))
    }

    @Test func aFailedReadIsTriedAgainWhenTheWorkoutIsFinished() async throws {
        let store = ReadWatchingStore()
        let (_, builder, _) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5)])
        await store.failReads(true)
        try await builder.addWorkoutEvents([WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4))])
        try await builder.endCollection(at: t0.addingTimeInterval(10))
        await #expect(throws: ReadWatchingStore.Unreadable.self) { _ = try await builder.finishWorkout() }

        await store.failReads(false)
        let workout = try await builder.finishWorkout()
        #expect(workout.statistics(for: .heartRate)?.readingCount == 1, "the paused 180 is left out")
    }
}

/// An in-memory store that counts reads of a workout's samples, and can hold them or make them fail.
actor ReadWatchingStore: HealthStore {
    struct Unreadable: Error {}

    private let base = InMemoryHealthStore()
    private(set) var reads = 0
    private var holding = false
    private var answeringFirst = false
    private var failing = false
    private var held: [CheckedContinuation<Void, Never>] = []
    private var heldReadArrived: CheckedContinuation<Void, Never>?

    /// Holds reads until `releaseReads()`; `answeringFirst` takes their answer before holding them, so samples
    /// saved meanwhile are not in it.
    func holdReads(answeringFirst: Bool = false) {
        holding = true
        self.answeringFirst = answeringFirst
    }

    func failReads(_ failing: Bool) { self.failing = failing }

    /// Returns once a read is waiting.
    func waitForHeldRead() async {
        if !held.isEmpty { return }
        await withCheckedContinuation { heldReadArrived = $0 }
    }

    func releaseReads() {
        holding = false
        for reader in held { reader.resume() }
        held = []
    }

    func samples(ofWorkout id: UUID) async throws -> [Sample] {
        reads += 1
        let early = answeringFirst ? await base.samples(ofWorkout: id) : nil
        if holding {
            await withCheckedContinuation { continuation in
                held.append(continuation)
                heldReadArrived?.resume()
                heldReadArrived = nil
            }
        }
        if failing { throw Unreadable() }
        if let early { return early }
        return await base.samples(ofWorkout: id)
    }

    func save(_ samples: [Sample], workoutID: UUID?) async { await base.save(samples, workoutID: workoutID) }
    func save(_ workout: Workout) async { await base.save(workout) }
    func saveFinished(_ workout: Workout) async { await base.saveFinished(workout) }
    func deleteSamples(ofWorkout id: UUID) async { await base.deleteSamples(ofWorkout: id) }
    func saveJournal(_ journal: WorkoutJournal) async { await base.saveJournal(journal) }
    func loadJournal() async -> WorkoutJournal? { await base.loadJournal() }
    func clearJournal() async { await base.clearJournal() }
}
