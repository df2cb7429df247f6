import Foundation
import Glibc
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

extension ReplicationTests {
    /// The central database refuses batches for a while (full: a trigger raises SQLSTATE 53100, as PostgreSQL does
    /// when its disk is full): the receiver says so, keeps recording, retries as after an outage, and once the
    /// database takes batches again it sends everything; PostgreSQL then holds exactly what the store holds.
    @Test func aServerErrorIsRetriedAndNothingIsLost() async throws {
        let root = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let postgres = try await PostgresServer(folder: root.appendingPathComponent("postgres"))
        defer { postgres.stop() }
        let receiver = try await Receiver(index: 0, postgres: postgres, root: root)
        defer { receiver.stop() }
        try await waitUntil("ten straps connected") { try await receiver.connectedSensors() == 10 }
        func recorded() -> Int {
            receiver.daemon.liveLogLines().filter { $0.contains(" bpm=") && $0.contains("state=running") }.count
        }
        let started = try await receiver.harness.systole("start", "--activity", "running")
        #expect(started.status == 0, "\(started.standardError)")
        try await receiver.daemon.waitForLiveLog(20)
        try await waitUntil("replicating") { try await receiver.replication()["caughtUp"] as? Bool == true }

        _ = try await postgres.query(
            """
            CREATE FUNCTION refuse_rows() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$;
            CREATE TRIGGER refuse_rows BEFORE INSERT ON systole_quantity FOR EACH ROW EXECUTE FUNCTION refuse_rows();
            """
        )
        var refused: [String: Any] = [:]
        try await waitUntil("the refusal reported") {
            refused = try await receiver.replication()
            return (refused["problem"] as? String)?.contains("53100") == true
        }
        #expect(refused["connected"] as? Bool == false && refused["caughtUp"] as? Bool == false, "\(refused)")
        // Recording goes on, and the batches keep being refused (the retries reach the server: its error stays
        // the reason given, not a missing answer).
        let before = recorded()
        try await receiver.daemon.waitForLiveLog(before + 20)
        #expect((try await receiver.replication()["problem"] as? String)?.contains("53100") == true)

        _ = try await postgres.query("DROP TRIGGER refuse_rows ON systole_quantity")
        var recovered: [String: Any] = [:]
        _ = try await eventually(timeout: .seconds(120), every: .milliseconds(500)) {
            recovered = try await receiver.replication()
            return recovered["caughtUp"] as? Bool == true
        }
        #expect(recovered["caughtUp"] as? Bool == true && !(recovered["problem"] is String), "\(recovered)")
        let ended = try await receiver.harness.systole("end")
        #expect(ended.status == 0, "\(ended.standardError)")
        try await waitUntil("the workout in PostgreSQL", timeout: .seconds(120)) {
            let rows = try await postgres.query("SELECT count(*) FROM systole_workout")
            return rows.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        try await waitUntil("caught up after the end") { try await receiver.replication()["caughtUp"] as? Bool == true }
        receiver.daemon.signal(SIGTERM)
        #expect(try await receiver.daemon.waitForExit() == 0)

        let store = try SQLiteHealthStore(path: receiver.daemon.storePath)
        var local: [String] = []
        for workout in try await store.workouts() {
            for case .quantity(let quantity) in try await store.samples(ofWorkout: workout.id)
            where quantity.type == .heartRate {
                local.append("\(workout.id.uuidString.lowercased()),\(Self.microseconds(quantity.startDate))")
            }
        }
        let central = try await postgres.query(
            "SELECT workout_id, (extract(epoch from start_time - timestamptz '2000-01-01 00:00:00+00') * 1000000)"
                + "::bigint FROM systole_quantity WHERE type = 'heartRate'"
        ).split(separator: "\n").map { $0.replacingOccurrences(of: "|", with: ",") }
        #expect(local.count > 40)
        #expect(central.count == local.count, "PostgreSQL has \(central.count) readings, the store \(local.count)")
        #expect(Self.checksum(central) == Self.checksum(local), "the same readings")
    }
}
