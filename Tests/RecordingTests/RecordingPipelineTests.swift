import BlueZ
import Foundation
import HeartRateProfile
import Logging
import Synchronization
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import Recording

/// What happened, in order, from any thread.
private final class EventLog: Sendable {
    private let entries = Mutex<[String]>([])
    var all: [String] { entries.withLock { $0 } }
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    func clear() { entries.withLock { $0 = [] } }
}

/// A store that notes each commit of samples in a shared log, before it returns.
private actor LoggingStore: ForwardingHealthStore {
    nonisolated let forwardee = InMemoryHealthStore()
    let log: EventLog

    init(log: EventLog) { self.log = log }

    func save(_ samples: [Sample], workoutID: UUID?) async throws {
        await forwardee.save(samples, workoutID: workoutID)
        let rates = samples.compactMap { sample -> Int? in
            guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return nil }
            return Int(quantity.quantity.value)
        }
        log.append("commit \(rates)")
    }
}

/// An output that hands each recorded batch to a closure.
private struct Output: RecordingOutput {
    let recorded: @Sendable ([RecordedReading]) -> Void
    init(_ recorded: @escaping @Sendable ([RecordedReading]) -> Void) { self.recorded = recorded }
    func didRecord(_ batch: [RecordedReading]) { recorded(batch) }
}

/// The pipeline in process: batches published as the bus ticks publish them, a workout manager on a store that logs
/// its commits, and outputs that log what they were handed.
@Suite struct RecordingPipelineTests {
    let clock = ManualWorkoutClock(Date(timeIntervalSince1970: 1_795_333_165))

    func reading(_ bpm: UInt8) throws -> SensorReport { try strapReading(bpm, at: clock.now()) }

    @Test func eachBatchIsCommittedBeforeItsLinesAndAnnouncementAndTheOutputRunsOnTheWorkoutThread() async throws {
        let log = EventLog()
        let readings = Broadcast<SensorReport>()
        let workouts = WorkoutManager(
            store: LoggingStore(log: log),
            readings: readings,
            sensorStatuses: { [] },
            sampleTypes: [.heartRate],
            clock: clock,
            logger: Logger(label: "test")
        )
        let onWorkoutThread = Mutex<[Bool]>([])
        let liveLog = Output { batch in
            onWorkoutThread.withLock { $0.append(WorkoutThread.isCurrent) }
            let shown = batch.map { "\($0.reading.reading.measurement.heartRate) \($0.workout.stateName)" }
            log.append("lines \(shown)")
        }
        let pipeline = RecordingPipeline(
            readings: readings,
            workouts: workouts,
            liveLog: liveLog,
            outputs: [Output { _ in log.append("recorded") }],
            logger: Logger(label: "test")
        )
        let service = Task { try await pipeline.run() }
        defer { service.cancel() }
        try await waitUntil("the pipeline listening") { readings.subscriberCount > 0 }

        // No workout: the readings are shown as idle and nothing is stored.
        readings.publish(contentsOf: [try reading(70), try reading(71)])
        try await waitForEntries(2, in: log)
        #expect(log.all == ["lines [\"70 idle\", \"71 idle\"]", "recorded"])

        log.clear()
        let starting = Task { try await workouts.start(WorkoutConfiguration(activityType: .running)) }
        // The workout is claimed, and the countdown listens, before it is announced.
        try await waitUntil("the workout announced") { workouts.currentSnapshot.workoutID != nil }
        readings.publish(try reading(90))
        _ = try await starting.value
        // The reading of the countdown is shown (and stored, when the workout was running by then).
        _ = await eventually { log.all.contains("recorded") }
        try #require(log.all.last == "recorded", "\(log.all)")
        log.clear()
        clock.advance(by: 1)
        readings.publish(contentsOf: [try reading(100), try reading(101)])
        try await waitForEntries(3, in: log)
        clock.advance(by: 1)
        readings.publish(try reading(102))
        try await waitForEntries(6, in: log)
        #expect(
            log.all == [
                "commit [100, 101]", "lines [\"100 running\", \"101 running\"]", "recorded",
                "commit [102]", "lines [\"102 running\"]", "recorded",
            ]
        )
        #expect(!onWorkoutThread.withLock { $0 }.isEmpty && onWorkoutThread.withLock { $0 }.allSatisfy { $0 })
    }

    /// Waits until `log` holds at least `count` entries.
    fileprivate func waitForEntries(
        _ count: Int,
        in log: EventLog,
        location: SourceLocation = #_sourceLocation
    ) async throws {
        _ = await eventually { log.all.count >= count }
        try #require(log.all.count >= count, "\(log.all)", sourceLocation: location)
    }
}
