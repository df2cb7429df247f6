import Foundation
import GRDB
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import SQLiteStore

/// A real SQLite file in a temporary folder.
struct TemporaryStore {
    let folder: URL
    var path: String { folder.appendingPathComponent("health.sqlite").path }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func open() throws -> SQLiteHealthStore { try SQLiteHealthStore(path: path) }
    func remove() { try? FileManager.default.removeItem(at: folder) }
}

/// The journal of a session of `activity` running since `start`, with nothing collected yet.
func runningJournal(_ activity: WorkoutActivityType, startedAt start: Date) -> WorkoutJournal {
    WorkoutJournal(
        sessionID: UUID(),
        workoutID: UUID(),
        configuration: WorkoutConfiguration(activityType: activity),
        state: .running,
        startDate: start,
        endDate: nil,
        lastDate: nil,
        currentActivity: nil,
        activities: [],
        collectionStartDate: start,
        collectionEndDate: nil,
        events: [],
        metadata: [:]
    )
}

/// Runs a whole workout through a session and its builder (start, collect `samples`, stop, finish, end).
@discardableResult
func recordWorkout(
    in store: SQLiteHealthStore,
    activity: WorkoutActivityType,
    start: Date,
    seconds: Double,
    samples: [Sample]
) async throws -> Workout {
    let end = start.addingTimeInterval(seconds)
    let session = await WorkoutSession(
        configuration: WorkoutConfiguration(activityType: activity),
        store: store,
        clock: ManualWorkoutClock(end)
    )
    try await session.startActivity(at: start)
    let builder = session.associatedWorkoutBuilder()
    try await builder.beginCollection(at: start)
    try await builder.add(samples)
    try await session.stopActivity(at: end)
    try await builder.endCollection(at: end)
    let workout = try await builder.finishWorkout()
    try await session.end()
    return workout
}

@Suite struct SQLiteHealthStoreTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let strap = Device(
        name: "Polar H10 1A2B3C4D",
        address: "A0:9E:1A:1A:2B:3C",
        manufacturer: "Polar Electro OY",
        bodyLocation: "chest"
    )

    @Test func samplesComeBackAsTheyWereSaved() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let workoutID = UUID()
        let samples: [Sample] = [
            .quantity(
                QuantitySample(
                    type: .heartRate,
                    quantity: Quantity(72, .countPerMinute),
                    start: t0,
                    end: t0,
                    device: strap,
                    metadata: ["contact": .bool(true)]
                )
            ),
            .quantity(
                QuantitySample(
                    type: .activeEnergyBurned,
                    quantity: Quantity(1, .kilocalorie),
                    start: t0.addingTimeInterval(1),
                    end: t0.addingTimeInterval(10),
                    device: strap
                )
            ),
            .heartbeatSeries(
                HeartbeatSeriesSample(
                    start: t0.addingTimeInterval(2),
                    end: t0.addingTimeInterval(3.5),
                    beats: [
                        .init(timeSinceStart: 0, rrTicks: 800, precededByGap: true),
                        .init(timeSinceStart: 0.78125, rrTicks: 800),
                    ],
                    device: strap
                )
            ),
        ]
        do {
            let store = try folder.open()
            try await store.save(samples, workoutID: workoutID)
            try await store.save(samples.map(\.otherWorkoutCopy), workoutID: UUID())
        }
        // A new connection to the same file sees exactly what was saved (energy in its canonical unit, kJ).
        let reopened = try folder.open()
        let loaded = try await reopened.samples(ofWorkout: workoutID)
        #expect(loaded.count == 3)
        #expect(loaded[0] == samples[0])
        guard case .quantity(let energy) = loaded[1] else {
            Issue.record("expected energy")
            return
        }
        #expect(energy.quantity == Quantity(4.184, .kilojoule))
        #expect(energy.device == strap)
        #expect(loaded[2] == samples[2])
    }

    @Test func workoutsAreSavedAndFoundByActivityAndDate() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        for (index, activity) in [WorkoutActivityType.running, .cycling, .running].enumerated() {
            let start = t0.addingTimeInterval(Double(index) * 86_400)
            let reading = start.addingTimeInterval(5)
            try await recordWorkout(
                in: store,
                activity: activity,
                start: start,
                seconds: 600,
                samples: [
                    .quantity(
                        QuantitySample(
                            type: .heartRate,
                            quantity: Quantity(Double(120 + index), .countPerMinute),
                            start: reading,
                            end: reading
                        )
                    )
                ]
            )
        }
        let all = try await store.workouts()
        #expect(all.map(\.activityType) == [.running, .cycling, .running])
        #expect(all[1].statistics(for: .heartRate)?.averageQuantity() == Quantity(121, .countPerMinute))
        #expect(try await store.workouts(activity: .running).count == 2)
        #expect(try await store.workouts(from: t0.addingTimeInterval(3600)).count == 2)
        // By the start of the id, as `systole workouts show` takes it: dashes and case do not matter.
        let id = all[1].id.uuidString
        #expect(try await store.workouts(idPrefix: String(id.prefix(8)).lowercased()).map(\.id) == [all[1].id])
        #expect(try await store.workouts(idPrefix: String(id.prefix(13))).map(\.id) == [all[1].id])
        #expect(try await store.workouts(idPrefix: id).map(\.id) == [all[1].id])
        #expect(try await store.workouts(idPrefix: "%").isEmpty)
        #expect(try await store.workouts(idPrefix: "").count == 3)
        #expect(try await store.loadJournal() == nil)
    }

    @Test func severalSessionsInProgressAreJournaledApartAndAnOldSingleJournalIsKept() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        func journal(_ activity: WorkoutActivityType) -> WorkoutJournal { runningJournal(activity, startedAt: t0) }
        // A file as the store wrote it before sessions were journaled apart: one journal row.
        let old = journal(.rowing)
        do {
            let queue = try DatabaseQueue(path: folder.path)
            try Schema.migrator.migrate(queue, upTo: "v7-inbox")
            try await queue.write { db in
                try db.execute(
                    sql: "INSERT INTO journal (id, body) VALUES (1, ?)",
                    arguments: [try Coding.encode(old)]
                )
            }
        }
        let store = try folder.open()
        #expect(try await store.loadJournals() == [old])
        var ana = journal(.running)
        let ben = journal(.running)
        try await store.saveJournal(ana)
        try await store.saveJournal(ben)
        ana.state = .paused
        try await store.saveJournal(ana)
        #expect(try await store.loadJournals() == [old, ana, ben], "in the order first recorded, each replaced")
        try await store.clearJournal(sessionID: old.sessionID)
        #expect(try await folder.open().loadJournals() == [ana, ben])
        let sessions = try await WorkoutSession.recoverActiveWorkoutSessions(store: try folder.open())
        #expect(sessions.map(\.id) == [ana.sessionID, ben.sessionID])
        #expect(await sessions.first?.state == .paused)
    }

    @Test func aWorkoutInProgressSurvivesReopeningTheStore() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let clock = ManualWorkoutClock(t0)
        var sessionID: UUID
        do {
            let store = try folder.open()
            let session = await WorkoutSession(
                configuration: WorkoutConfiguration(activityType: .rowing),
                store: store,
                clock: clock
            )
            sessionID = session.id
            try await session.startActivity(at: t0)
            let builder = session.associatedWorkoutBuilder()
            try await builder.beginCollection(at: t0)
            for second in 1...20 {
                let date = t0.addingTimeInterval(Double(second))
                try await builder.add([
                    .quantity(
                        QuantitySample(
                            type: .heartRate,
                            quantity: Quantity(100, .countPerMinute),
                            start: date,
                            end: date
                        )
                    )
                ])
            }
            clock.advance(by: 30)
            try await session.pause()
            try await builder.addMetadata(["coach": .string("none")])
        }
        let recovered = try #require(
            try await WorkoutSession.recoverActiveWorkoutSession(store: try folder.open(), clock: clock)
        )
        #expect(recovered.id == sessionID)
        #expect(await recovered.state == .paused)
        let builder = recovered.associatedWorkoutBuilder()
        #expect(await builder.statistics(for: .heartRate)?.readingCount == 20)
        #expect(await builder.metadata["coach"] == .string("none"))
        #expect(await builder.workoutEvents.map(\.type) == [.pause])
    }

    @Test func aKilledProcessLosesNoCommittedSample() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let probe = CommandRunner.productsDirectory.appendingPathComponent("store-probe")
        let path = folder.path
        let text = try await offThePool {
            let process = ChildProcess()
            process.executableURL = probe
            process.arguments = [path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Let it commit a few hundred samples, then kill it without warning.
            var text = ""
            while text.components(separatedBy: "committed").count < 300 {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return text + String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        let committed = Set(text.split(separator: "\n").compactMap { Int($0.split(separator: " ").last ?? "") })
        #expect(committed.count >= 299)

        let result = try await CommandRunner.run("store-probe", [folder.path, "recover"])
        #expect(result.status == 0)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        #expect(json["recovered"] as? Bool == true)
        #expect(json["state"] as? String == "running")
        let stored = Set((json["values"] as? [Int]) ?? [])
        let missing = committed.subtracting(stored)
        #expect(missing.isEmpty, "committed before the kill but not in the store: \(missing.sorted().prefix(10))")
        #expect(json["statisticsCount"] as? Int == stored.count, "statistics recomputed from the stored samples")
    }

    @Test func theWriterConnectionCommitsWithSynchronousFull() async throws {
        // A kill keeps even unsynced commits (the kernel has them); a power loss does not. What survives one is
        // decided by the writer connection's setting, which a WAL pool quietly lowers to NORMAL when it opens.
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let setting = try await store.pool.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        #expect(setting == 2, "synchronous is \(setting.map(String.init) ?? "unknown") on the writer, not FULL (2)")
    }

    @Test func samplesLeftInTheInboxByADeadProcessAreInTheirTablesWhenTheStoreOpens() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let workout = UUID()
        let strap = Device(name: "H10", address: "A0:9E:1A:00:00:01", manufacturer: "Polar", bodyLocation: "chest")
        let samples: [Sample] = [
            .quantity(
                QuantitySample(
                    type: .activeEnergyBurned,
                    quantity: Quantity(1.5, .kilojoule),
                    start: t0.addingTimeInterval(0.123_456_789),
                    end: t0.addingTimeInterval(7.5),
                    count: 3,
                    device: strap,
                    metadata: ["note": .string("ünïcode"), "n": .number(2)]
                )
            ),
            .quantity(QuantitySample(type: .dietaryWater, quantity: Quantity(0.25, .liter), start: t0, end: t0)),
            .heartbeatSeries(
                HeartbeatSeriesSample(
                    start: t0.addingTimeInterval(1),
                    end: t0.addingTimeInterval(2.7),
                    beats: [
                        .init(timeSinceStart: 0, rrTicks: 800),
                        .init(timeSinceStart: 0.85, rrTicks: 870, precededByGap: true),
                    ],
                    device: strap
                )
            ),
        ]
        // What the store keeps of them (canonical units, dates as stored) when inserted directly.
        let other = try TemporaryStore()
        defer { other.remove() }
        let direct = try other.open()
        try direct.insertNow(samples, workoutID: workout)
        let expected = try await direct.samples(ofWorkout: workout)
        #expect(expected.count == samples.count)

        let first = try folder.open()
        try await first.save(samples, workoutID: workout)
        // As if the process died now: committed to the inbox, never moved. Another store on the file moves them.
        let second = try folder.open()
        #expect(try await second.samples(ofWorkout: workout) == expected)
        #expect(try await first.samples(ofWorkout: workout) == expected, "and the first sees no duplicates")
    }

    /// Saves `batches` saves of 100 energy samples, one a second from `t0`.
    func saveEnergy(batches: Int, to store: SQLiteHealthStore) async throws {
        for batch in 0..<batches {
            let samples = (0..<100).map { index in
                Sample.quantity(
                    QuantitySample(
                        type: .activeEnergyBurned,
                        quantity: Quantity(1, .kilojoule),
                        start: t0.addingTimeInterval(Double(batch * 100 + index)),
                        end: t0.addingTimeInterval(Double(batch * 100 + index + 1))
                    )
                )
            }
            try await store.save(samples, workoutID: nil)
        }
    }

    @Test func theInboxIsMovedIntoTheTablesEveryFewThousandSamplesWithoutAnyQuery() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        // 25 saves of 100: the commit that brings the inbox to 2 000 samples starts moving it, beside the commits
        // after it (which it may take along), and nothing moves the rest.
        try await saveEnergy(batches: 25, to: store)
        await store.foldSettled()
        let file = try DatabaseQueue(path: folder.path)
        let (inbox, inTables) = try await file.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inbox") ?? -1,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM quantitySample") ?? -1
            )
        }
        #expect(inTables >= 2000 && inTables < 2500 && inTables % 100 == 0)
        #expect(inbox == 25 - inTables / 100, "each save is one inbox row until it moves")
        #expect(try await store.samples(of: .activeEnergyBurned).count == 2500, "a query moves the rest")
    }

    @Test(.timeLimit(.minutes(1)))
    func savesArrivingDuringACommitShareTheNextAndEachIsAnswered() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        let saves = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<saves {
                group.addTask {
                    let date = t0.addingTimeInterval(Double(index))
                    let sample = QuantitySample(
                        type: .activeEnergyBurned,
                        quantity: Quantity(Double(index), .kilojoule),
                        start: date,
                        end: date.addingTimeInterval(1)
                    )
                    try await store.save([.quantity(sample)], workoutID: nil)
                }
            }
            try await group.waitForAll()
        }
        // Every save returned once committed; one commit is one inbox row, and they were fewer than the saves.
        let rows = try await DatabaseQueue(path: folder.path).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inbox") ?? -1
        }
        #expect(rows > 0 && rows < saves / 2, "\(rows) commits for \(saves) saves")
        let stored = try await store.samples(of: .activeEnergyBurned)
        #expect(stored.count == saves)
        #expect(Set(stored.map { $0.startDate }).count == saves, "each saved once")
    }

    @Test func queriesAtTheSameTimeBothWaitForTheInboxToMove() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let store = try folder.open()
        try await saveEnergy(batches: 19, to: store)
        // The first query moves the inbox; the second, arriving meanwhile, must not read before that is done.
        async let first = store.samples(of: .activeEnergyBurned)
        async let second = store.samples(of: .activeEnergyBurned)
        #expect(try await [first.count, second.count] == [1900, 1900])
    }

    @Test func anUnreadableInboxRowIsNamedWithHowToGetRidOfIt() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        let kept = QuantitySample(type: .activeEnergyBurned, quantity: Quantity(2, .kilojoule), start: t0, end: t0)
        try await folder.open().save([.quantity(kept)], workoutID: nil)
        // Something else writes rows systole cannot read: one whose metadata claims Int64.max bytes (a kind, an
        // identifier, two dates, no device, then the length), and a truncated one.
        let file = try DatabaseQueue(path: folder.path)
        let bad = try await file.write { db in
            try db.execute(
                sql: "INSERT INTO inbox (id, samples) VALUES "
                    + "(1000, X'00\(String(repeating: "00", count: 32))00FFFFFFFFFFFFFF7F'), (1001, X'00FFFF')"
            )
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM inbox")
        }
        #expect(bad == 3)
        let error = #expect(throws: HealthStoreError.self) { try folder.open() }
        #expect(error?.message.contains("inbox row 1000 cannot be read") == true, "\(String(describing: error))")
        #expect(error?.message.contains("'DELETE FROM inbox WHERE id = 1000'") == true)
        // Doing what it says loses only that row.
        try await file.write { db in try db.execute(sql: "DELETE FROM inbox WHERE id IN (1000, 1001)") }
        let store = try folder.open()
        #expect(try await store.samples(of: .activeEnergyBurned).map(\.id) == [kept.id])
    }

    @Test func aFullStoreRefusesTheBatchClearlyAndKeepsEverythingBefore() async throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        // SQLite reports a file at its size cap exactly as a full disk (SQLITE_FULL).
        let store = try SQLiteHealthStore(path: folder.path, maximumSize: 256 * 1024)
        var saved: [QuantitySample] = []
        var failure: HealthStoreError?
        var second = 0.0
        while failure == nil, second < 100_000 {
            // Energy samples each take a row of their own, so the file grows with every batch.
            let batch = (0..<50).map { index in
                QuantitySample(
                    type: .activeEnergyBurned,
                    quantity: Quantity(Double(index), .kilojoule),
                    start: t0.addingTimeInterval(second + Double(index)),
                    end: t0.addingTimeInterval(second + Double(index) + 1),
                    metadata: ["batch": .number(second)]
                )
            }
            second += 50
            do {
                try await store.save(batch.map(Sample.quantity), workoutID: nil)
                saved += batch
            } catch let error as HealthStoreError {
                failure = error
            }
        }
        let error = try #require(failure)
        #expect(error.kind == .diskFull)
        #expect(error.message.contains("is full. Free some space; what was stored before is intact"))
        #expect(error.message.contains(folder.path))
        // Everything whose save returned is there, and nothing of the refused batch. While full, a query may
        // instead say so: samples still in the inbox cannot move into their tables (see Inbox).
        do {
            let stored = try await store.samples(of: .activeEnergyBurned)
            #expect(stored.map(\.id) == saved.map(\.id))
        } catch let error as HealthStoreError {
            #expect(error.kind == .diskFull)
            #expect(error.message.contains("is full. Free some space; what was stored before is intact"))
        }
        // With room again (no cap), the same store takes samples, and has every one whose save returned.
        let roomy = try folder.open()
        let more = QuantitySample(type: .activeEnergyBurned, quantity: Quantity(1, .kilojoule), start: t0, end: t0)
        try await roomy.save([.quantity(more)], workoutID: nil)
        let all = try await roomy.samples(of: .activeEnergyBurned).map(\.id)
        #expect(all.count == saved.count + 1 && Set(all) == Set(saved.map(\.id) + [more.id]))
    }

    @Test func aFileThatIsNotAStoreIsRefusedClearly() throws {
        let folder = try TemporaryStore()
        defer { folder.remove() }
        try Data("this is not sqlite, just text that is long enough to look like a header".utf8)
            .write(to: URL(fileURLWithPath: folder.path))
        let error = #expect(throws: HealthStoreError.self) { try folder.open() }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("is not a systole store or is damaged") == true)
        let missing = #expect(throws: HealthStoreError.self) {
            try SQLiteHealthStore(path: "/nonexistent-folder/health.sqlite")
        }
        #expect(missing?.kind == .cannotOpen)
    }
}

extension Sample {
    /// The same sample under a new identifier (to fill another workout).
    var otherWorkoutCopy: Sample {
        switch self {
        case .quantity(var q):
            q.id = UUID()
            return .quantity(q)
        case .heartbeatSeries(var h):
            h.id = UUID()
            return .heartbeatSeries(h)
        case .waveform(var w):
            w.id = UUID()
            return .waveform(w)
        }
    }
}
