import Benchmark
import Foundation
import SQLiteStore
import WorkoutKit

// Run: swift package --allow-writing-to-package-directory benchmark --target StoreBenchmarks
// The year store (31.5 M heart-rate readings at 1 Hz) is generated once into $SYSTOLE_BENCH_DIR (default /tmp).

let scratch = ProcessInfo.processInfo.environment["SYSTOLE_BENCH_DIR"] ?? NSTemporaryDirectory()
let t0 = Date(timeIntervalSince1970: 1_767_225_600)  // 2026-01-01T00:00:00Z

func heartRates(_ count: Int, from start: Date, step: Double = 1) -> [Sample] {
    (0..<count).map { index in
        let at = start.addingTimeInterval(Double(index) * step)
        return .quantity(
            QuantitySample(
                type: .heartRate,
                quantity: Quantity(Double(60 + index % 120), .countPerMinute),
                start: at,
                end: at
            )
        )
    }
}

/// Energy samples: each takes a row of its own (only heart rate is kept as series).
func energies(_ count: Int, from start: Date) -> [Sample] {
    (0..<count).map { index in
        let at = start.addingTimeInterval(Double(index) * 10)
        return .quantity(
            QuantitySample(
                type: .activeEnergyBurned,
                quantity: Quantity(Double(index % 7), .kilojoule),
                start: at,
                end: at.addingTimeInterval(10)
            )
        )
    }
}

/// Inserts `make(count, start)` batches of 1 000 samples, one transaction each, measuring only the inserts.
func insertBenchmark(_ benchmark: Benchmark, _ make: (Int, Date) -> [Sample]) throws {
    let path = (scratch as NSString).appendingPathComponent("systole-bench-insert-\(UUID()).sqlite")
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try SQLiteHealthStore(path: path)
    let batches = (0..<benchmark.scaledIterations.count).map {
        make(1_000, t0.addingTimeInterval(Double($0) * 10_000))
    }
    var index = 0
    for _ in benchmark.scaledIterations {
        benchmark.startMeasurement()
        try store.insertNow(batches[index], workoutID: nil)
        benchmark.stopMeasurement()
        index += 1
    }
}

/// The daemon's ticks at 100 sensors × 4 Hz: 75 ms of readings (30), each a heart rate and a one-beat series from
/// one of 100 straps.
func ticks(_ count: Int, from start: Date) -> [[Sample]] {
    let devices = (0..<100).map { Device(name: "Polar H10 \($0)", address: String(format: "A0:9E:1A:00:00:%02X", $0)) }
    var reading = 0
    return (0..<count).map { _ in
        (0..<30).flatMap { _ -> [Sample] in
            defer { reading += 1 }
            let at = start.addingTimeInterval(Double(reading) / 400)
            let device = devices[reading % devices.count]
            return [
                .quantity(
                    QuantitySample(
                        type: .heartRate,
                        quantity: Quantity(Double(60 + reading % 120), .countPerMinute),
                        start: at,
                        end: at,
                        device: device
                    )
                ),
                .heartbeatSeries(
                    HeartbeatSeriesSample(
                        start: at,
                        end: at,
                        beats: [.init(timeSinceStart: 0, rrTicks: UInt16(700 + reading % 300))],
                        device: device
                    )
                ),
            ]
        }
    }
}

/// Saves 400 ticks (30 s of the daemon at 100 × 4 Hz) one commit each, as the daemon does, then flushes: one
/// iteration is those 30 s of readings written and in their tables.
func tickBenchmark(_ benchmark: Benchmark) async throws {
    let path = (scratch as NSString).appendingPathComponent("systole-bench-ticks-\(UUID()).sqlite")
    defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    let store = try SQLiteHealthStore(path: path, calendar: .current, maximumSize: nil)
    let workoutID = UUID()
    var start = t0
    for _ in benchmark.scaledIterations {
        let batches = ticks(400, from: start)
        start = start.addingTimeInterval(30)
        benchmark.startMeasurement()
        for batch in batches { try await store.save(batch, workoutID: workoutID) }
        try await store.flush()
        benchmark.stopMeasurement()
    }
}

/// One year of 1 Hz heart rate, made once and kept between runs.
func yearStore() throws -> SQLiteHealthStore {
    let path = (scratch as NSString).appendingPathComponent("systole-bench-year.sqlite")
    let marker = path + ".complete"
    if !FileManager.default.fileExists(atPath: marker) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        let store = try SQLiteHealthStore(path: path, calendar: utc)
        let day = 86_400
        for dayIndex in 0..<365 {
            try store.insertNow(heartRates(day, from: t0.addingTimeInterval(Double(dayIndex * day))), workoutID: nil)
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
    }
    var utc = Calendar(identifier: .gregorian)
    utc.timeZone = TimeZone(identifier: "UTC")!
    return try SQLiteHealthStore(path: path, calendar: utc)
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(maxDuration: .seconds(10), maxIterations: 1_000)

    // One iteration = 1 000 samples committed in one transaction (samples/s = 1 000 × throughput).
    Benchmark(
        "Insert 1000 heart-rate samples per transaction",
        configuration: .init(metrics: [.wallClock, .throughput])
    ) { benchmark in
        try insertBenchmark(benchmark) { count, start in heartRates(count, from: start) }
    }

    Benchmark(
        "Insert 1000 energy samples per transaction",
        configuration: .init(metrics: [.wallClock, .throughput])
    ) { benchmark in
        try insertBenchmark(benchmark) { count, start in energies(count, from: start) }
    }

    Benchmark(
        "30 s of 100 sensors × 4 Hz, a commit per 75 ms tick",
        configuration: .init(metrics: [.wallClock, .cpuTotal, .cpuUser, .cpuSystem], maxIterations: 10)
    ) { benchmark in
        try await tickBenchmark(benchmark)
    }

    Benchmark(
        "Builder add + statistics per sample",
        configuration: .init(metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo)
    ) { benchmark in
        let session = await WorkoutSession(configuration: WorkoutConfiguration(activityType: .running))
        try await session.startActivity(at: t0)
        let builder = session.associatedWorkoutBuilder()
        try await builder.beginCollection(at: t0)
        let samples = heartRates(benchmark.scaledIterations.count, from: t0)
        benchmark.startMeasurement()
        for sample in samples {
            try await builder.add([sample])
            blackHole(await builder.statistics(for: .heartRate))
        }
        benchmark.stopMeasurement()
    }

    Benchmark(
        "Year of 1 Hz heart rate: daily statistics",
        configuration: .init(metrics: [.wallClock], maxIterations: 20, setup: { _ = try yearStore() })
    ) { benchmark in
        let store = try yearStore()
        for _ in benchmark.scaledIterations {
            let days = try await store.statisticsCollection(
                of: .heartRate,
                from: t0,
                to: t0.addingTimeInterval(365 * 86_400),
                anchor: t0,
                interval: .days(1)
            )
            precondition(days.count == 365)
            blackHole(days)
        }
    }
}
