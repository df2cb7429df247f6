import Foundation
import HealthStore
import WorkoutKit

/// `health-store-probe STORE`: collects one heart-rate sample every 5 ms into a running workout in STORE,
/// printing `committed N` after each save returns, until killed. The crash-recovery test SIGKILLs it.
/// `health-store-probe STORE recover`: recovers the session and prints its state and sample values as JSON.
@main
enum HealthStoreProbe {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: health-store-probe STORE [recover]\n".utf8))
            exit(2)
        }
        let store = try SQLiteHealthStore(path: arguments[1])
        if arguments.count > 2, arguments[2] == "recover" {
            guard let session = try await WorkoutSession.recoverActiveWorkoutSession(store: store) else {
                print("{\"recovered\":false}")
                return
            }
            let builder = session.associatedWorkoutBuilder()
            let values = try await store.samples(ofWorkout: builder.workoutID).compactMap { sample -> Int? in
                if case .quantity(let q) = sample { return Int(q.quantity.value) }
                return nil
            }
            let count = await builder.statistics(for: .heartRate)?.readingCount ?? 0
            print(
                "{\"recovered\":true,\"state\":\"\(await session.state)\",\"statisticsCount\":\(count),"
                    + "\"values\":\(values)}"
            )
            return
        }
        let session = await WorkoutSession(configuration: WorkoutConfiguration(activityType: .cycling), store: store)
        try await session.startActivity()
        let builder = session.associatedWorkoutBuilder()
        try await builder.beginCollection(at: Date())
        var index = 0
        while true {
            index += 1
            let now = Date()
            let sample = QuantitySample(
                type: .heartRate,
                quantity: Quantity(Double(index), .countPerMinute),
                start: now,
                end: now
            )
            // Each sample is added from its own task, as sensors do, so several share a commit.
            let number = index
            Task {
                try await builder.add([.quantity(sample)])
                FileHandle.standardOutput.write(Data("committed \(number)\n".utf8))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
