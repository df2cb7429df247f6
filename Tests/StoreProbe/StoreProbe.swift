import Foundation
import SQLiteStore
import WorkoutKit

/// `store-probe STORE`: collects one heart-rate sample every 5 ms into a running workout in STORE,
/// printing `committed N` after each save returns, until killed. The crash-recovery test SIGKILLs it.
/// `store-probe STORE recover`: recovers the session and prints its state and sample values as JSON.
/// `store-probe STORE readings`: prints the time of every heart-rate reading in STORE (seconds since 1970, one a
/// line, series unpacked), read through the store's public queries: the scripts' check that nothing was lost.
/// `store-probe STORE long-workout HOURS`: records a finished cycling workout of HOURS hours ending a minute
/// ago, a reading a second and a beat series a minute, then prints its id (the export tests' large workout).
@main
enum StoreProbe {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            let usage = "usage: store-probe STORE [recover | readings | long-workout HOURS]\n"
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
        let store = try SQLiteHealthStore(path: arguments[1])
        if arguments.count > 3, arguments[2] == "long-workout", let hours = Double(arguments[3]), hours > 0 {
            print(try await longWorkout(hours: hours, in: store).uuidString)
            return
        }
        if arguments.count > 2, arguments[2] == "readings" {
            for sample in try await store.samples(of: .heartRate) {
                for reading in try await store.seriesQuantities(of: sample.id) {
                    print(String(format: "%.6f", reading.dateInterval.start.timeIntervalSince1970))
                }
            }
            return
        }
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

    /// A workout of `hours` hours recorded through the builder as systoled records one, minute by minute: 60 heart
    /// rates between 100 and 160 bpm and a series of about 70 beats.
    static func longWorkout(hours: Double, in store: SQLiteHealthStore) async throws -> UUID {
        let end = Date().addingTimeInterval(-60)
        let start = end.addingTimeInterval(-hours * 3600)
        let strap = Device(name: "Polar H10 0A1B2C3D", address: "A0:9E:1A:0A:1B:2C", manufacturer: "Polar Electro Oy")
        let session = await WorkoutSession(configuration: WorkoutConfiguration(activityType: .cycling), store: store)
        try await session.startActivity(at: start)
        let builder = session.associatedWorkoutBuilder()
        try await builder.beginCollection(at: start)
        for minute in 0..<Int(hours * 60) {
            let minuteStart = start.addingTimeInterval(Double(minute) * 60)
            var samples: [Sample] = (0..<60).map { second in
                let date = minuteStart.addingTimeInterval(Double(second))
                let bpm = 130 + 30 * sin(Double(minute * 60 + second) / 300)
                return .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(bpm.rounded(), .countPerMinute),
                        start: date,
                        end: date,
                        device: strap
                    )
                )
            }
            var beats: [HeartbeatSeriesSample.Beat] = []
            var elapsed = 0.0
            while elapsed < 59 {
                let ticks = UInt16(840 + (beats.count * 37) % 120)
                elapsed += Double(ticks) / 1024
                beats.append(.init(timeSinceStart: elapsed, rrTicks: ticks))
            }
            samples.append(
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: minuteStart,
                        end: minuteStart.addingTimeInterval(elapsed),
                        beats: beats,
                        device: strap
                    )
                )
            )
            try await builder.add(samples)
        }
        try await session.stopActivity(at: end)
        try await builder.endCollection(at: end)
        let workout = try await builder.finishWorkout()
        try await session.end()
        try await store.flush()
        return workout.id
    }
}
