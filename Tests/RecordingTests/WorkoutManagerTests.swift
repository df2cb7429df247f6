import BlueZ
import Foundation
import HeartRateProfile
import Logging
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import Recording

/// The workout manager in process: batches of readings in, an in-memory store out, a manual clock. Start, pause,
/// resume, end, and a workout recovered by the next manager on the same store.
@Suite struct WorkoutManagerTests {
    let clock = ManualWorkoutClock(Date(timeIntervalSince1970: 1_795_333_165))
    let store = InMemoryHealthStore()
    let readings = Broadcast<SensorReport>()

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

    func reading(_ bpm: UInt8) throws -> SensorReport { try strapReading(bpm, at: clock.now()) }

    /// Recovers whatever workout the store holds (as the recording pipeline does first), then lets `body` drive it.
    func running(_ manager: WorkoutManager, _ body: () async throws -> Void) async throws {
        try await manager.recover()
        try await body()
    }

    /// Records a batch, as the recording pipeline's workout stage does for a bus tick, and returns the state each
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
            try await waitUntil("the countdown listening for a heart rate") { readings.subscriberCount > 0 }
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
            let workout = try #require(try await manager.end().first)
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
            #expect(await store.journals.isEmpty)
        }
    }

    @Test func theNextManagerOnTheStoreCarriesOnTheWorkoutAndMarksTheTimeItWasDown() async throws {
        let first = manager()
        var id: UUID?
        try await running(first) {
            let starting = Task { try await first.start(WorkoutConfiguration(activityType: .cycling)) }
            try await waitUntil("the countdown listening for a heart rate") { readings.subscriberCount > 0 }
            readings.publish(try reading(95))
            id = try await starting.value.0
            clock.advance(by: 1)
            try await send([120], to: first)
        }
        // The process died here: nothing ended the workout. Thirty seconds later a new manager starts.
        clock.advance(by: 30)
        let second = manager()
        try await running(second) {
            try await waitUntil("the workout recovered") { second.currentSnapshot.workoutID != nil }
            #expect(second.currentSnapshot.workoutID == id)
            #expect(second.currentSnapshot.state == .running)
            clock.advance(by: 1)
            try await send([125], to: second)
            let workout = try #require(try await second.end().first)
            #expect(workout.id == id)
            let gaps = workout.events.filter { $0.metadata[WorkoutManager.gapKey] != nil }
            #expect(gaps.count == 1)
            #expect(gaps.first.map { abs($0.endDate.timeIntervalSince($0.startDate) - 30) < 0.001 } == true)
        }
    }

    // MARK: Team sessions

    static let ana = "A0:9E:1A:00:00:01"
    static let ben = "A0:9E:1A:00:00:02"
    static let stranger = "A0:9E:1A:00:00:03"

    /// A manager whose sensors are Ana's and Ben's (both connected) and a third nobody named.
    func teamManager(connected: Set<String> = [ana, ben, stranger]) -> WorkoutManager {
        let athletes = [Self.ana: "Ana", Self.ben: "Ben Lima"]
        return WorkoutManager(
            store: store,
            readings: readings,
            sensorStatuses: {
                [Self.ana, Self.ben, Self.stranger].map { address in
                    var status = SensorStatus(
                        address: address,
                        state: "streaming",
                        isConnected: connected.contains(address)
                    )
                    status.athlete = athletes[address]
                    return status
                }
            },
            sampleTypes: [.heartRate, .heartbeatSeries],
            clock: clock,
            logger: Logger(label: "test")
        )
    }

    func teamReading(_ bpm: UInt8, _ address: String) throws -> SensorReport {
        let athlete = [Self.ana: "Ana", Self.ben: "Ben Lima"][address]
        return try strapReading(bpm, at: clock.now(), address: address, athlete: athlete)
    }

    func heartRates(of id: UUID) async -> [Double] {
        await store.samples(ofWorkout: id).compactMap { sample -> Double? in
            guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return nil }
            return quantity.quantity.value
        }
    }

    @Test func aTeamSessionRecordsEachAthleteFromTheirOwnSensorAndMarksADropOut() async throws {
        let manager = teamManager()
        try await running(manager) {
            let starting = Task {
                try await manager.startTeam(WorkoutConfiguration(activityType: .running), teamSessionID: nil)
            }
            try await waitUntil("the countdown listening for a heart rate") { readings.subscriberCount > 0 }
            readings.publish(try teamReading(90, Self.ana))
            let (team, started) = try await starting.value
            #expect(started.map(\.athlete) == ["Ana", "Ben Lima"])
            let ids = Dictionary(uniqueKeysWithValues: started.map { ($0.athlete, $0.id) })
            #expect(manager.currentSnapshots.map(\.teamSessionID) == [team, team])
            #expect(manager.currentSnapshots.allSatisfy { $0.state == .running })

            clock.advance(by: 1)
            let recorded = await manager.record([
                try teamReading(120, Self.ana), try teamReading(130, Self.ben), try teamReading(99, Self.stranger),
            ])
            #expect(recorded.map(\.workout.athlete) == ["Ana", "Ben Lima", nil])
            #expect(recorded.map(\.workout.state) == [.running, .running, .notStarted])
            // Ben's strap drops out for 20 s; Ana's keeps sending.
            for _ in 0..<20 {
                clock.advance(by: 1)
                _ = await manager.record([try teamReading(121, Self.ana)])
            }
            _ = await manager.record([try teamReading(131, Self.ben)])
            try await manager.pause()
            #expect(manager.currentSnapshots.allSatisfy { $0.state == .paused })
            // A short pause (the sensors send nothing in this test, so a long one would read as a drop-out).
            clock.advance(by: 2)
            try await manager.resume()
            _ = try await manager.lap()
            clock.advance(by: 1)
            _ = await manager.record([try teamReading(122, Self.ana), try teamReading(132, Self.ben)])
            let saved = try await manager.end()
            #expect(saved.map(\.id) == [ids["Ana"], ids["Ben Lima"]])
            #expect(manager.currentSnapshots.isEmpty)
            #expect(await store.journals.isEmpty)

            let ana = try #require(saved.first)
            let ben = try #require(saved.last)
            #expect(await heartRates(of: ana.id).sorted() == [120] + Array(repeating: 121, count: 20) + [122])
            #expect(
                await heartRates(of: ben.id).sorted() == [130, 131, 132],
                "only Ben's sensor, never the stranger's"
            )
            #expect(ana.metadata["systole.athlete"] == .string("Ana"))
            #expect(ben.metadata["systole.athlete"] == .string("Ben Lima"))
            #expect(ana.metadata["systole.teamSession"] == .string(team.uuidString))
            #expect(ben.metadata["systole.teamSession"] == .string(team.uuidString))
            let gaps = ben.events.filter { $0.metadata[WorkoutManager.gapKey] != nil }
            #expect(gaps.count == 1)
            #expect(gaps.first.map { abs($0.endDate.timeIntervalSince($0.startDate) - 20) < 0.001 } == true)
            #expect(ana.events.filter { $0.metadata[WorkoutManager.gapKey] != nil }.isEmpty)
            #expect(
                ana.events.filter { $0.type == .lap }.count == 2 && ben.events.filter { $0.type == .lap }.count == 2
            )
            #expect(ana.startDate == ben.startDate && ana.endDate == ben.endDate)
        }
    }

    @Test func aTeamSessionStartsOnlyForConnectedAthletesAndIsRecoveredWhole() async throws {
        let first = teamManager(connected: [Self.ben])
        let team = UUID()
        var ids: [UUID] = []
        try await running(first) {
            let (joined, started) = try await first.startTeam(
                WorkoutConfiguration(activityType: .cycling),
                teamSessionID: team,
                prepareTimeout: .milliseconds(10)
            )
            #expect(joined == team, "a receiver joins the team session it is given")
            #expect(started.map(\.athlete) == ["Ben Lima"], "Ana's sensor is not connected")
            ids = started.map(\.id)
            await #expect(throws: WorkoutCommandError.self) { try await first.start(WorkoutConfiguration()) }
            do {
                try await first.addSample(type: .dietaryWater, quantity: Quantity(250, .milliliter))
                Issue.record("a team session took a sample of nobody's")
            } catch let error as WorkoutCommandError {
                #expect(error.kind == .invalidArguments)
            }
            clock.advance(by: 1)
            _ = await first.record([try teamReading(140, Self.ben)])
        }
        clock.advance(by: 30)
        let second = teamManager()
        try await running(second) {
            #expect(second.currentSnapshots.map(\.workoutID) == ids)
            #expect(second.currentSnapshots.map(\.athlete) == ["Ben Lima"])
            #expect(second.currentSnapshots.map(\.teamSessionID) == [team])
            clock.advance(by: 1)
            _ = await second.record([try teamReading(141, Self.ben), try teamReading(100, Self.ana)])
            let saved = try await second.end()
            #expect(saved.map(\.id) == ids)
            #expect(await heartRates(of: ids[0]) == [140, 141])
        }
    }

    /// A solo workout is an athlete's only when every connected sensor is hers, and then takes only her sensors'
    /// readings; with a sensor of nobody's beside hers it is nobody's and takes both.
    @Test func aSoloWorkoutIsAnAthletesOnlyWithHerSensorsAlone() async throws {
        func startSolo(_ manager: WorkoutManager, first address: String) async throws -> UUID {
            let starting = Task { try await manager.start(WorkoutConfiguration(activityType: .running)) }
            try await waitUntil("the countdown listening for a heart rate") { readings.subscriberCount > 0 }
            readings.publish(try teamReading(90, address))
            return try await starting.value.0
        }
        let mixed = teamManager(connected: [Self.ana, Self.stranger])
        try await running(mixed) {
            let id = try await startSolo(mixed, first: Self.ana)
            #expect(mixed.currentSnapshots.map(\.athlete) == [nil], "Ana's and nobody's sensors: nobody's workout")
            clock.advance(by: 1)
            let recorded = await mixed.record([try teamReading(120, Self.ana), try teamReading(99, Self.stranger)])
            #expect(recorded.map(\.workout.state) == [.running, .running])
            _ = try await mixed.end()
            #expect(await heartRates(of: id).sorted() == [99, 120])
            let saved = await store.workouts.first { $0.id == id }
            #expect(saved?.metadata["systole.athlete"] == nil)
        }
        let hers = teamManager(connected: [Self.ana])
        try await running(hers) {
            let id = try await startSolo(hers, first: Self.ana)
            #expect(hers.currentSnapshots.map(\.athlete) == ["Ana"])
            clock.advance(by: 1)
            // The stranger's strap connects during her workout: its readings are not filed under her.
            let recorded = await hers.record([try teamReading(121, Self.ana), try teamReading(98, Self.stranger)])
            #expect(recorded.map(\.workout.state) == [.running, .notStarted])
            _ = try await hers.end()
            #expect(await heartRates(of: id) == [121])
        }
    }

    @Test func aTeamSessionNeedsNamedAthletesWithConnectedSensors() async throws {
        let unnamed = manager()
        do {
            _ = try await unnamed.startTeam(WorkoutConfiguration(), teamSessionID: nil)
            Issue.record("a team session started without athletes")
        } catch {
            #expect(error.kind == .invalidArguments && error.message.contains("[athletes]"))
        }
        let nobody = teamManager(connected: [])
        do {
            _ = try await nobody.startTeam(WorkoutConfiguration(), teamSessionID: nil)
            Issue.record("a team session started without a connected sensor")
        } catch {
            #expect(error.kind == .invalidState)
        }
        #expect(nobody.currentSnapshots.isEmpty)
    }
}
