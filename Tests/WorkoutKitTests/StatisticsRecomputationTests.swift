import Foundation
import Synchronization
import SystoleTestSupport
import Testing

@testable import WorkoutKit

/// The builder keeps no readings: statistics grow as samples arrive and are recomputed from the store only when a
/// pause, resume or the end is set at or before a sample already collected.
@Suite struct StatisticsRecomputationTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

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

    @Test func aSampleArrivingWhileTheStoreIsReadIsSavedAfterItAndCountedOnce() async throws {
        let store = ReadWatchingStore()
        let (_, builder, _) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5)])
        await store.holdReads()
        let pausing = Task {
            try await builder.addWorkoutEvents([
                WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4)),
                WorkoutEvent(type: .resume, start: t0.addingTimeInterval(6)),
            ])
        }
        await store.waitForHeldRead()
        let adding = Task { try await builder.add([heartRate(110, at: 9)]) }
        for _ in 0..<100 { await Task.yield() }
        #expect(await store.savedCount == 2, "the save waits for the read")
        await store.releaseReads()
        try await pausing.value
        try await adding.value

        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 2, "100 and 110: the 180 is paused, the 110 counted once")
        #expect(hr.maximumQuantity() == Quantity(110, .countPerMinute))
        #expect(hr.mostRecentQuantity() == Quantity(110, .countPerMinute))
    }

    @Test func aSaveUnderWayWhenAPauseIsSetEndsBeforeTheStoreIsRead() async throws {
        let store = ReadWatchingStore()
        let (_, builder, _) = try await started(store)
        try await builder.add([heartRate(100, at: 1), heartRate(180, at: 5)])
        await store.holdSaves()
        let adding = Task { try await builder.add([heartRate(110, at: 9)]) }
        await store.waitForHeldSave()
        let pausing = Task {
            try await builder.addWorkoutEvents([
                WorkoutEvent(type: .pause, start: t0.addingTimeInterval(4)),
                WorkoutEvent(type: .resume, start: t0.addingTimeInterval(6)),
            ])
        }
        for _ in 0..<100 { await Task.yield() }
        #expect(await store.reads == 0, "the read waits for the save")
        await store.releaseSaves()
        try await adding.value
        try await pausing.value

        #expect(await store.reads == 1)
        let hr = try #require(await builder.statistics(for: .heartRate))
        #expect(hr.readingCount == 2, "100 and 110, each once: the read found the 110 the builder had counted")
        #expect(hr.maximumQuantity() == Quantity(110, .countPerMinute))
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

/// An in-memory store that counts reads of a workout's samples and saves, and can hold either or make reads fail.
actor ReadWatchingStore: ForwardingHealthStore {
    struct Unreadable: Error {}

    nonisolated let forwardee = InMemoryHealthStore()
    private(set) var reads = 0
    private(set) var savedCount = 0
    private var failing = false
    private var readGate = Gate()
    private var saveGate = Gate()

    /// Holds callers until opened; tells a watcher when the first arrives.
    struct Gate {
        var closed = false
        var held: [CheckedContinuation<Void, Never>] = []
        var watcher: CheckedContinuation<Void, Never>?
    }

    func holdReads() { readGate.closed = true }
    func releaseReads() { open(&readGate) }
    func waitForHeldRead() async {
        if readGate.held.isEmpty { await withCheckedContinuation { readGate.watcher = $0 } }
    }
    func holdSaves() { saveGate.closed = true }
    func releaseSaves() { open(&saveGate) }
    func waitForHeldSave() async {
        if saveGate.held.isEmpty { await withCheckedContinuation { saveGate.watcher = $0 } }
    }
    func failReads(_ failing: Bool) { self.failing = failing }

    private func open(_ gate: inout Gate) {
        gate.closed = false
        for caller in gate.held { caller.resume() }
        gate.held = []
    }

    func samples(ofWorkout id: UUID) async throws -> [Sample] {
        reads += 1
        if readGate.closed {
            await withCheckedContinuation { continuation in
                readGate.held.append(continuation)
                readGate.watcher?.resume()
                readGate.watcher = nil
            }
        }
        if failing { throw Unreadable() }
        return await forwardee.samples(ofWorkout: id)
    }

    func save(_ samples: [Sample], workoutID: UUID?) async {
        if saveGate.closed {
            await withCheckedContinuation { continuation in
                saveGate.held.append(continuation)
                saveGate.watcher?.resume()
                saveGate.watcher = nil
            }
        }
        await forwardee.save(samples, workoutID: workoutID)
        savedCount += samples.count
    }

}
