import Foundation
import Glibc
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

extension ReplicationTests {
    /// A second receiver started on a copy of the first one's store (an SD-card image): the copy is told apart
    /// (its status and log say so) and replicates as a store of its own, so PostgreSQL ends with every workout and
    /// reading of both stores; the original goes on as itself.
    @Test func aCopiedStoreIsToldApartAndNothingIsLost() async throws {
        let root = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let postgres = try await PostgresServer(folder: root.appendingPathComponent("postgres"))
        defer { postgres.stop() }
        let original = try await Receiver(index: 0, postgres: postgres, root: root)
        defer { original.stop() }
        var workouts = 0
        /// Records a workout of the ten straps; waits until PostgreSQL has it (a workout goes after its readings).
        func recordAWorkout(_ receiver: Receiver) async throws {
            try await waitUntil("\(receiver.name): ten straps") { try await receiver.connectedSensors() == 10 }
            let before = receiver.daemon.liveLogLines().filter { $0.contains(" bpm=") }.count
            let started = try await receiver.harness.systole("start", "--activity", "running")
            #expect(started.status == 0, "\(started.standardError)")
            try await receiver.daemon.waitForLiveLog(before + 20)
            let ended = try await receiver.harness.systole("end")
            #expect(ended.status == 0, "\(ended.standardError)")
            workouts += 1
            let expected = workouts
            try await waitUntil("\(receiver.name): \(expected) workouts in PostgreSQL", timeout: .seconds(120)) {
                let count = try await postgres.query("SELECT count(*) FROM systole_workout")
                return Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) == expected
            }
        }
        try await recordAWorkout(original)
        original.daemon.signal(SIGTERM)
        #expect(try await original.daemon.waitForExit() == 0)

        // The SD-card image: the store, copied while systoled is stopped.
        let image = root.appendingPathComponent("sd-card-image")
        try FileManager.default.createDirectory(at: image, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-shm"]
        where FileManager.default.fileExists(atPath: original.daemon.storePath + suffix) {
            try FileManager.default.copyItem(
                atPath: original.daemon.storePath + suffix,
                toPath: image.appendingPathComponent("health.sqlite\(suffix)").path
            )
        }
        try await original.harness.startDaemon()
        try await recordAWorkout(original)
        let copy = try await Receiver(index: 1, postgres: postgres, root: root) { folder in
            for file in try FileManager.default.contentsOfDirectory(atPath: image.path) {
                try FileManager.default.copyItem(
                    at: image.appendingPathComponent(file),
                    to: folder.appendingPathComponent(file)
                )
            }
        }
        defer { copy.stop() }
        try await recordAWorkout(copy)
        try await recordAWorkout(original)

        let told = try await copy.replication()
        #expect(told["storeCopied"] is Double, "the copy's status says it was found to be a copy: \(told)")
        #expect(!(try await original.replication()["storeCopied"] is Double), "the original goes on as itself")
        let text = try await copy.harness.systole("status")
        #expect(text.standardOutput.contains("found to be a copy"), "\(text.standardOutput)")

        // PostgreSQL holds every workout of both stores, each with every reading.
        var local: [UUID: Int] = [:]
        for receiver in [original, copy] {
            receiver.daemon.signal(SIGTERM)
            #expect(try await receiver.daemon.waitForExit() == 0)
            let store = try SQLiteHealthStore(path: receiver.daemon.storePath)
            for workout in try await store.workouts() {
                let readings = try await store.samples(ofWorkout: workout.id).filter {
                    if case .quantity(let quantity) = $0 { quantity.type == .heartRate } else { false }
                }
                local[workout.id] = readings.count
            }
        }
        #expect(local.count == 4, "one workout shared, two more on the original, one on the copy")
        var central: [UUID: Int] = [:]
        for row in try await postgres.query(
            "SELECT w.id, count(q.id) FROM systole_workout w LEFT JOIN systole_quantity q "
                + "ON q.workout_id = w.id AND q.type = 'heartRate' GROUP BY w.id"
        ).split(separator: "\n") {
            let fields = row.split(separator: "|")
            guard fields.count == 2, let id = UUID(uuidString: String(fields[0])), let count = Int(fields[1]) else {
                continue
            }
            central[id] = count
        }
        #expect(central == local, "PostgreSQL has \(central.count) workouts, the stores \(local.count)")
        let receivers = try await postgres.query("SELECT name FROM systole_receiver ORDER BY name")
        #expect(receivers.split(separator: "\n") == ["room-1", "room-2"], "\(receivers)")
    }
}
