import CMalloc
import ControlAPI
import DBus
import Foundation
import SQLiteStore
import Synchronization
import WorkoutImport
import WorkoutKit

/// `ImportWorkouts`: the activities `systole import` read from one file, saved as workouts with their samples in one
/// transaction. The file itself never reaches systoled (the command reads it); what arrives is checked again here,
/// since anyone allowed to call the method may send values of their own.
struct ImportControl: ControlMethods {
    let store: SQLiteHealthStore
    let clock: any WorkoutClock
    /// One import at a time, so callers cannot pile up copies of their readings here.
    private let gate = Gate()

    init(store: SQLiteHealthStore, clock: any WorkoutClock) {
        self.store = store
        self.clock = clock
    }

    func addMethods(to methods: inout [DBusMethod]) {
        methods.append(
            DBusMethod(
                "ImportWorkouts",
                inputs: [("activities", ImportValues.type)],
                outputs: [("workouts", ImportValues.outcomeType)]
            ) { call throws(DBusError) in try await self.importWorkouts(call) }
        )
    }

    private func importWorkouts(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let activities: [ImportedActivity]
        do throws(ImportError) {
            activities = try ImportValues.activities(from: try argument(call))
            try ImportedActivity.check(activities, now: clock.now())
        } catch {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "nothing imported: \(error)")
        }
        guard gate.busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            throw DBusError(
                name: ControlAPI.ErrorName.busy,
                message: "another import is under way; try again when it has finished"
            )
        }
        defer { gate.busy.store(false, ordering: .releasing) }
        let workouts = activities.map { activity in
            WorkoutToImport(workout: activity.workout()) { body in try activity.forEachSampleBatch(body) }
        }
        let outcomes = try await ControlCall.storeCall {
            try await self.store.importWorkouts(workouts, sameWhen: ImportedActivity.sourceKey)
        }
        // The import's buffers are freed: glibc keeps freed memory in its arena unless asked to give it back.
        _ = malloc_trim(0)
        return [
            .array(
                ImportValues.outcomeElement,
                zip(workouts, outcomes).map { made, outcome in
                    switch outcome {
                    case .saved: .structure([.string(made.workout.id.uuidString), .boolean(true)])
                    case .alreadyStored(let id): .structure([.string(id.uuidString), .boolean(false)])
                    }
                }
            )
        ]
    }

    final class Gate: Sendable {
        let busy = Atomic(false)
    }

    private func argument(_ call: DBusMethodCall) throws(ImportError) -> DBusValue {
        guard call.arguments.count == 1 else {
            throw ImportError("ImportWorkouts expects one argument of type \(ImportValues.type.signature)")
        }
        return call.arguments[0]
    }
}
