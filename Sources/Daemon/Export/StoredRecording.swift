import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

extension ActivityRecording {
    /// The recording of a stored workout, read from `store` a chunk at a time: a few bytes a reading are kept, and a
    /// workout with more readings, beats and energy measurements than `limit` is refused
    /// (``SampleCollector/TooLarge``) before more is read. Exports, analyses and the workout page all read workouts
    /// this way.
    static func read(
        _ workout: Workout,
        from store: SQLiteHealthStore,
        limit: Int? = SampleCollector.defaultLimit
    ) async throws -> ActivityRecording {
        struct Gathered: Sendable {
            var collector: SampleCollector
            var refusal: SampleCollector.TooLarge?
        }
        let gathered = try await store.reduceSamples(
            ofWorkout: workout.id,
            into: Gathered(collector: SampleCollector(limit: limit))
        ) { gathered, chunk in
            do throws(SampleCollector.TooLarge) {
                try gathered.collector.add(chunk)
                return true
            } catch {
                gathered.refusal = error
                return false
            }
        }
        if let refusal = gathered.refusal { throw refusal }
        return ActivityRecording(workout: workout, collected: gathered.collector)
    }
}
