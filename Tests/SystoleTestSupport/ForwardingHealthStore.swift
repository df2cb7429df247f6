import Foundation
import WorkoutKit

/// How a test double is a `HealthStore`: it keeps an `InMemoryHealthStore` as ``forwardee`` and implements only
/// what it watches or changes; every other requirement goes to that store.
public protocol ForwardingHealthStore: HealthStore {
    /// Where every requirement the double does not implement itself goes.
    var forwardee: InMemoryHealthStore { get }
}

extension ForwardingHealthStore {
    public func save(_ samples: [Sample], workoutID: UUID?) async throws {
        await forwardee.save(samples, workoutID: workoutID)
    }
    public func save(_ workout: Workout) async throws { await forwardee.save(workout) }
    public func saveFinished(_ workout: Workout) async throws { await forwardee.saveFinished(workout) }
    public func deleteSamples(ofWorkout id: UUID) async throws { await forwardee.deleteSamples(ofWorkout: id) }
    public func samples(ofWorkout id: UUID) async throws -> [Sample] { await forwardee.samples(ofWorkout: id) }
    public func saveJournal(_ journal: WorkoutJournal) async throws { await forwardee.saveJournal(journal) }
    public func loadJournals() async throws -> [WorkoutJournal] { await forwardee.loadJournals() }
    public func clearJournal(sessionID: UUID) async throws { await forwardee.clearJournal(sessionID: sessionID) }
}
