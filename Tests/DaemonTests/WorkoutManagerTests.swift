import BlueZ
import Foundation
import HeartRateProfile
import Logging
import Testing
import WorkoutKit

@testable import Daemon

/// The workout manager in process: batches of readings in, an in-memory store out, a manual clock. Start, pause,
/// resume, end, and a workout recovered by the next manager on the same store.
@Suite struct WorkoutManagerTests {
    let clock = ManualWorkoutClock(Date(timeIntervalSince1970: 1_795_333_165))
    let store = InMemoryHealthStore()
    let readings = Broadcast<DaemonReading>()

    func manager() -> WorkoutManager {
        WorkoutManager(
            store: store,
            readings: readings,
            sensorStatuses: { [] },
            sampleTypes: [.heartRate, .heartbeatSeries],
            clock: clock,
            logger: Logger(label: "test")
        )
    }

    func reading(_ bpm: UInt8) throws -> DaemonReading { try strapReading(bpm, at: clock.now()) }

    /// Recovers whatever workout the store holds (as the ingest pipeline does first), then lets `body` drive it.
    func running(_ manager: WorkoutManager, _ body: () async throws -> Void) async throws {
        try await manager.recover()
        try await body()
    }

    /// Records a batch, as the ingest pipeline's workout stage does for a bus tick, and returns the state each
    /// reading was recorded in.
    @discardableResult
    func send(_ bpms: [UInt8], to manager: WorkoutManager) async throws -> [WorkoutSessionState] {
        let recorded = await manager.record(try bpms.map { try reading($0) })
        #expect(recorded.map(\.reading.reading.measurement.heartRate) == bpms.map(UInt16.init))
        return recorded.map(\.workout.state)
    }

    @Test func aWorkoutStartsPausesResumesAndEndsWithItsReadings() async throws {
        let manager = manager()
        try await running(manager) {
            // A heart rate arriving during the countdown starts the workout at once.
            let starting = Task { try await manager.start(WorkoutConfiguration(activityType: .running)) }
            try await Task.sleep(for: .milliseconds(50))
            readings.publish(try reading(90))
            let (id, available) = try await starting.value
            #expect(available)
            #expect(manager.currentSnapshot.state == .running && manager.currentSnapshot.workoutID == id)
            clock.advance(by: 1)
            #expect(try await send([100, 101], to: manager) == [.running, .running])
            clock.advance(by: 1)
            try await manager.pause()
            #expect(manager.currentSnapshot.state == .paused)
            clock.advance(by: 10)
            // Readings during a pause are kept but do not count in the statistics.
            #expect(try await send([150], to: manager) == [.paused])
            clock.advance(by: 1)
            try await manager.resume()
            clock.advance(by: 1)
            try await send([110], to: manager)
            clock.advance(by: 1)
            let workout = try await manager.end()
            #expect(workout.id == id)
            #expect(abs(workout.duration - 4) < 0.001, "11 s of pause are not worked out: \(workout.duration)")
            let rates = await store.samples(ofWorkout: id).compactMap { sample -> Double? in
                guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return nil }
                return quantity.quantity.value
            }
            #expect(rates.contains(100) && rates.contains(101) && rates.contains(110), "\(rates)")
            let statistics = workout.statistics(for: .heartRate)
            #expect(statistics?.maximumQuantity() == Quantity(110, .countPerMinute), "the paused 150 is left out")
            #expect(manager.currentSnapshot.workoutID == nil)
            #expect(await store.journal == nil)
        }
    }

    @Test func theNextManagerOnTheStoreCarriesOnTheWorkoutAndMarksTheTimeItWasDown() async throws {
        let first = manager()
        var id: UUID?
        try await running(first) {
            let starting = Task { try await first.start(WorkoutConfiguration(activityType: .cycling)) }
            try await Task.sleep(for: .milliseconds(50))
            readings.publish(try reading(95))
            id = try await starting.value.0
            clock.advance(by: 1)
            try await send([120], to: first)
        }
        // The process died here: nothing ended the workout. Thirty seconds later a new manager starts.
        clock.advance(by: 30)
        let second = manager()
        try await running(second) {
            for _ in 0..<200 where second.currentSnapshot.workoutID == nil {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(second.currentSnapshot.workoutID == id)
            #expect(second.currentSnapshot.state == .running)
            clock.advance(by: 1)
            try await send([125], to: second)
            let workout = try await second.end()
            #expect(workout.id == id)
            let gaps = workout.events.filter { $0.metadata[WorkoutManager.gapKey] != nil }
            #expect(gaps.count == 1)
            #expect(gaps.first.map { abs($0.endDate.timeIntervalSince($0.startDate) - 30) < 0.001 } == true)
        }
    }
}
