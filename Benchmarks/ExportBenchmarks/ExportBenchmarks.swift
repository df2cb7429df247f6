import Benchmark
import Foundation
import SQLiteStore
import WorkoutAnalysis
import WorkoutExport
import WorkoutKit

// Run: swift package --allow-writing-to-package-directory benchmark --target ExportBenchmarks
// A 3-hour run: 10 800 heart-rate readings at 1 Hz and 13 000 RR intervals (about 72 beats a minute), two pauses,
// laps every 20 minutes, an ectopic beat in a hundred. Issue 18's goals: FIT export under 200 ms, analysis under 100 ms.

let start = Date(timeIntervalSince1970: 1_795_000_000)
let strap = Device(name: "Polar H10 91948D23", address: "A0:9E:1A:91:94:8D", manufacturer: "Polar Electro Oy")

/// The workout's samples as the store returns them (series unpacked), heartbeats in one series a minute.
func threeHourSamples() -> [Sample] {
    var samples: [Sample] = (0..<10_800).map { second in
        let date = start + Double(second)
        return .quantity(
            QuantitySample(
                type: .heartRate,
                quantity: Quantity(120 + 30 * sin(Double(second) / 300), .countPerMinute),
                start: date,
                end: date,
                device: strap
            )
        )
    }
    var beatDate = 0.0
    var minute: [HeartbeatSeriesSample.Beat] = []
    var minuteStart = 0.0
    for index in 0..<13_000 {
        // Every 97th beat premature by 30 % and the next late by as much, as ectopic beats are: the artifact
        // correction has work to do.
        var ticks = UInt16(820 + (index * 37) % 140)
        if index % 97 == 0 { ticks = ticks * 7 / 10 } else if index % 97 == 1 { ticks = ticks * 13 / 10 }
        beatDate += Double(ticks) / 1024
        minute.append(.init(timeSinceStart: beatDate - minuteStart, rrTicks: ticks, precededByGap: index % 4_000 == 0))
        if beatDate - minuteStart >= 60 {
            samples.append(
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: start + minuteStart,
                        end: start + beatDate,
                        beats: minute,
                        device: strap
                    )
                )
            )
            minute = []
            minuteStart = beatDate
        }
    }
    return samples
}

func threeHourWorkout() -> Workout {
    var events = [
        WorkoutEvent(type: .pause, start: start + 3_600), WorkoutEvent(type: .resume, start: start + 3_660),
        WorkoutEvent(type: .pause, start: start + 7_200), WorkoutEvent(type: .resume, start: start + 7_320),
    ]
    events += (0..<9).map {
        WorkoutEvent(type: .lap, start: start + Double($0) * 1_200, end: start + Double($0 + 1) * 1_200)
    }
    return Workout(
        id: UUID(),
        configuration: WorkoutConfiguration(activityType: .running),
        startDate: start,
        endDate: start + 10_800,
        duration: 10_620,
        events: events,
        activities: [],
        metadata: [ActivityRecording.estimatedEnergyKey: .number(9_000)],
        statistics: [:],
        devices: [strap]
    )
}

let profile = AthleteProfile(age: 40, sex: .female, weightKilograms: 62, restingHeartRate: 52)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
        maxDuration: .seconds(10),
        maxIterations: 100
    )
    let workout = threeHourWorkout()
    let samples = threeHourSamples()
    let recording = ActivityRecording(workout: workout, samples: samples)

    // What ExportWorkout does after reading the store: the recording, then the file.
    Benchmark("FIT export of a 3-hour workout (recording + encode)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(FITActivityFile.encode(ActivityRecording(workout: workout, samples: samples)))
        }
    }

    Benchmark("Analysis of a 3-hour workout (HRV and its 5-minute windows, zones, TRIMP, energy estimate)") {
        benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(HeartRateVariability.workout(recording))
            blackHole(HeartRateVariability.windows(recording))
            blackHole(HeartRateZones(recording, profile: profile))
            blackHole(TrainingLoad.trimp(recording, profile: profile))
            blackHole(EnergyEstimate.kilojoules(recording, profile: profile))
        }
    }

    // The whole of ExportWorkout as systoled does it: the samples read from a SQLite store a chunk at a time into
    // the recording, and the FIT file written out 64 KiB at a time.
    Benchmark("ExportWorkout to FIT from the store, 3-hour workout") { benchmark in
        let (store, path) = try await storeWithTheWorkout()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let collector = try await store.reduceSamples(ofWorkout: workout.id, into: SampleCollector()) {
                (try? $0.add($1)) != nil
            }
            var written = 0
            try FITActivityFile.write(ActivityRecording(workout: workout, collected: collector)) { written += $0.count }
            blackHole(written)
        }
        benchmark.stopMeasurement()
    }

    // The same with every sample read at once and the file made whole, as systoled did before: beside the one
    // above, what reading in chunks and writing as it goes saves.
    Benchmark("ExportWorkout to FIT from the store, whole, 3-hour workout") { benchmark in
        let (store, path) = try await storeWithTheWorkout()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let stored = try await store.samples(ofWorkout: workout.id)
            blackHole(FITActivityFile.encode(ActivityRecording(workout: workout, samples: stored)))
        }
        benchmark.stopMeasurement()
    }

    /// A store in a temporary file holding the 3-hour workout, and the file's path.
    @Sendable func storeWithTheWorkout() async throws -> (SQLiteHealthStore, String) {
        let path = NSTemporaryDirectory() + "systole-bench-export-\(UUID()).sqlite"
        let store = try SQLiteHealthStore(path: path)
        try await store.save(samples, workoutID: workout.id)
        try await store.save(workout)
        try await store.flush()
        return (store, path)
    }
}
