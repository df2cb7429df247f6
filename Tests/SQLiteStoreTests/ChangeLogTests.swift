import Foundation
import GRDB
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import SQLiteStore

/// The change log a replica reads: every sample as it was saved (with its own identifier), workouts saved and
/// deleted, in commit order, durable across reopening, acknowledged and trimmed.
@Suite struct ChangeLogTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func opened(_ folder: TemporaryStore) throws -> SQLiteHealthStore {
        try SQLiteHealthStore(path: folder.path, keepsChangeLog: true)
    }

    @Test func everyChangeIsLoggedInOrderWithItsSamplesIdentifiers() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try opened(folder)
        let workoutID = UUID()
        let first = (0..<5).map { heartRate(100 + Double($0), at: Double($0)) }
        let second = (5..<8).map { heartRate(100 + Double($0), at: Double($0)) }
        try await store.save(first, workoutID: workoutID)
        try await store.save(second, workoutID: workoutID)
        let workout = try await recordWorkout(in: store, activity: .running, start: t0, seconds: 60, samples: [])
        try await store.deleteSamples(ofWorkout: workoutID)
        #expect(try await store.deleteWorkout(workout.id))

        // A reopened store has them all: they were committed with the changes themselves.
        let reopened = try opened(folder)
        let changes = try await reopened.changes(after: 0)
        let sequences = changes.map(\.sequence)
        #expect(
            zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 + 1 },
            "one number per change: \(sequences)"
        )
        guard changes.count == 5, case .samples(let a, let idA) = changes[0].kind,
            case .samples(let b, let idB) = changes[1].kind,
            case .workoutSaved(let saved, let savedID) = changes[2].kind,
            case .samplesDeleted(let discarded) = changes[3].kind, case .workoutDeleted(let deleted) = changes[4].kind
        else {
            Issue.record("unexpected changes: \(changes.map(\.kind))")
            return
        }
        #expect(a.map(\.id) == first.map(\.id) && b.map(\.id) == second.map(\.id), "each sample as saved")
        #expect(idA == workoutID && idB == workoutID && discarded == workoutID)
        #expect(savedID == workout.id && deleted == workout.id)
        #expect(saved == nil, "the workout was deleted before its change was read")
        #expect(changes.allSatisfy { abs($0.committed.timeIntervalSinceNow) < 60 })

        let identity = try await reopened.storeIdentifier()
        #expect(try await store.storeIdentifier() == identity)
        let other = try TemporaryStore()
        defer { other.remove() }
        #expect(try await opened(other).storeIdentifier() != identity, "each file has an identity of its own")

        // Acknowledged changes are gone; the rest stay.
        let backlog = try await reopened.changeBacklog()
        #expect(backlog.changes == 5 && backlog.samples == 8 && backlog.droppedSamples == 0)
        try await reopened.acknowledgeChanges(through: changes[1].sequence)
        #expect(try await reopened.changes(after: 0).map(\.sequence) == changes.dropFirst(2).map(\.sequence))
        #expect(try await reopened.acknowledgedChange() == changes[1].sequence)
        #expect(try await reopened.changeBacklog().samples == 0)
    }

    @Test func aStoreWithoutTheLogLogsNothing() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        try await store.save([heartRate(120, at: 0)], workoutID: UUID())
        try await recordWorkout(in: store, activity: .running, start: t0, seconds: 60, samples: [])
        #expect(try await store.changes(after: 0).isEmpty)
    }

    @Test func readsAreCutBySamplesAndTheBacklogIsTrimmedOldestSamplesFirst() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try opened(folder)
        let workoutID = UUID()
        for batch in 0..<10 {
            try await store.save((0..<100).map { heartRate(120, at: Double(batch * 100 + $0)) }, workoutID: workoutID)
        }
        let workout = try await recordWorkout(in: store, activity: .cycling, start: t0, seconds: 60, samples: [])
        #expect(try await store.changes(after: 0, sampleLimit: 250).count == 2, "cut before the third batch")
        #expect(try await store.changes(after: 0, sampleLimit: 10).count == 1, "at least one")

        // Over the limit, the oldest sample batches go; the workout stays.
        #expect(try await store.trimChanges(keepingSamples: 450) == 600)
        let left = try await store.changes(after: 0)
        #expect(left.count == 5)
        if case .workoutSaved(let saved, _) = left.last?.kind {
            #expect(saved?.id == workout.id)
        } else {
            Issue.record("the workout's change was trimmed")
        }
        let backlog = try await store.changeBacklog()
        #expect(backlog.samples == 400 && backlog.droppedSamples == 600)
        #expect(try await store.trimChanges(keepingSamples: 450) == 0)
        // The samples themselves stay in the store: only the replica misses them.
        #expect(try await store.samples(ofWorkout: workoutID).count > 0)
    }
}
