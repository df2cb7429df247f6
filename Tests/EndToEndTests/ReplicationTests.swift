import Foundation
import Glibc
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

/// Three receivers (real systoled and systole-sim, each on its own private bus, ten straps each) replicating into
/// one real PostgreSQL (Debian's, started by the test in its own folder and port, not as root) through a team
/// session across them, while PostgreSQL is stopped for 20 s and one receiver is killed with SIGKILL and started
/// again. Afterwards PostgreSQL holds exactly the union of the three SQLite stores: the same workouts, and per
/// workout the same readings and the same checksum over (time, bpm) and (time, RR).
@Suite(.serialized) struct ReplicationTests {
    final class Receiver: @unchecked Sendable {
        let name: String
        let harness: DaemonHarness
        var daemon: DaemonProcess { harness.daemon }

        /// `prepare` is given systoled's folder before it starts (to put a store there).
        init(
            index: Int,
            postgres: PostgresServer,
            root: URL,
            prepare: (@Sendable (URL) async throws -> Void)? = nil
        ) async throws {
            name = "room-\(index + 1)"
            var options = DaemonHarness.Options()
            options.name = name
            options.parent = root
            options.simulator = ["--sensors", "10", "--rate", "2", "--seed", String(index + 11)]
            options.startsDaemon = false
            options.prepare = prepare
            harness = try await DaemonHarness.start(options)
            let addresses = harness.simulator.addresses
            let athletes = addresses.enumerated().map { "\"\($1)\" = \"Room \(index + 1) Athlete \($0 + 1)\"" }
            try await harness.startDaemon(
                configuration: """
                    sensors = [\(addresses.map { "\"\($0)\"" }.joined(separator: ", "))]

                    [athletes]
                    \(athletes.joined(separator: "\n"))

                    [replication]
                    postgres = "\(postgres.address)"
                    password = "\(postgres.password)"
                    receiver = "\(name)"
                    """
            )
        }

        func json(_ arguments: String...) async throws -> [String: Any] {
            let result = try await harness.systole(arguments + ["--json"])
            #expect(result.status == 0, "\(name) \(arguments): \(result.standardError)")
            return (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]) ?? [:]
        }

        /// `systole status`'s replication part.
        func replication() async throws -> [String: Any] {
            try await json("status")["replication"] as? [String: Any] ?? [:]
        }

        func connectedSensors() async throws -> Int {
            try await harness.sensors().filter { $0["connected"] as? Bool == true }.count
        }

        func stop() { harness.stop() }
    }

    /// A folder of the test's for PostgreSQL and the receivers, readable by PostgreSQL's user (which runs the server).
    static func scratchFolder() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("systole-replication-\(UUID())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        chmod(root.path, 0o755)
        return root
    }

    /// A reading or a beat as both sides can state it exactly: microseconds since 2000 as PostgreSQL keeps a
    /// timestamp (postgres-nio truncates the seconds since 2000 times a million), and the value.
    static func microseconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince(Date(timeIntervalSince1970: 946_684_800)) * 1_000_000)
    }

    /// FNV-1a over the sorted lines.
    static func checksum(_ lines: [String]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for line in lines.sorted() {
            for byte in line.utf8 + [10] {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
        }
        return hash
    }

    @Test func aTeamSessionOnThreeReceiversArrivesWholeThroughAnOutageAndACrash() async throws {
        let root = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: root) }
        let postgres = try await PostgresServer(folder: root.appendingPathComponent("postgres"))
        defer { postgres.stop() }
        var receivers: [Receiver] = []
        defer { for receiver in receivers { receiver.stop() } }
        for index in 0..<3 { receivers.append(try await Receiver(index: index, postgres: postgres, root: root)) }
        for receiver in receivers {
            _ = try await eventually(every: .milliseconds(100)) { try await receiver.connectedSensors() >= 10 }
            #expect(try await receiver.connectedSensors() == 10, "\(receiver.name)")
        }

        // One team session across the rooms: started on the first, joined by the others.
        let started = try await receivers[0].harness.systole("start", "--team", "--activity", "hiit")
        #expect(started.status == 0, "\(started.standardError)")
        let team = try #require(
            (try await receivers[0].json("status")["workouts"] as? [[String: Any]])?.first?["teamSession"] as? String
        )
        for receiver in receivers.dropFirst() {
            let joined = try await receiver.harness.systole(
                "start",
                "--team",
                "--team-session",
                team,
                "--activity",
                "hiit"
            )
            #expect(joined.status == 0, "\(receiver.name): \(joined.standardError)")
        }
        // Each receiver records its straps (forty readings: four a strap) and replicates.
        func recorded(_ receiver: Receiver) -> Int {
            receiver.daemon.liveLogLines().filter { $0.contains(" bpm=") && $0.contains("state=running") }.count
        }
        for receiver in receivers {
            try await receiver.daemon.waitForLiveLog(40)
            try await waitUntil("\(receiver.name) replicating") {
                try await receiver.replication()["connected"] as? Bool == true
            }
        }

        // PostgreSQL goes away until every receiver has noticed and recorded on; meanwhile the second receiver is
        // killed and started again.
        postgres.stop()
        var waiting: [String: Any] = [:]
        _ = try await eventually(every: .milliseconds(500)) {
            waiting = try await receivers[2].replication()
            return waiting["connected"] as? Bool == false
        }
        #expect(waiting["connected"] as? Bool == false && waiting["problem"] is String, "\(waiting)")
        let text = try await receivers[2].harness.systole("status")
        #expect(
            text.standardOutput.contains(
                "Replication: room-3 → \(postgres.address): not reached"
            ),
            "\(text.standardOutput)"
        )
        receivers[1].daemon.signal(SIGKILL)
        _ = try await receivers[1].daemon.waitForExit()
        try await receivers[1].harness.startDaemon()
        let recovered = try await receivers[1].json("status")["workouts"] as? [[String: Any]] ?? []
        #expect(recovered.count == 10 && recovered.allSatisfy { $0["teamSession"] as? String == team })
        for receiver in receivers {
            let before = recorded(receiver)
            try await receiver.daemon.waitForLiveLog(before + 40)
            try await waitUntil("\(receiver.name) noticing PostgreSQL is away") {
                try await receiver.replication()["connected"] as? Bool == false
            }
        }
        try await postgres.start()
        for receiver in receivers {
            try await waitUntil("\(receiver.name) replicating again", timeout: .seconds(120)) {
                try await receiver.replication()["connected"] as? Bool == true
            }
        }
        for receiver in receivers {
            let ended = try await receiver.json("end")
            #expect((ended["team"] as? [[String: Any]])?.count == 10, "\(receiver.name)")
        }

        // Each receiver catches up (its retries back off to at most 30 s).
        for receiver in receivers {
            var status: [String: Any] = [:]
            _ = try await eventually(timeout: .seconds(180), every: .seconds(1)) {
                status = try await receiver.replication()
                return status["caughtUp"] as? Bool == true
            }
            #expect(status["caughtUp"] as? Bool == true, "\(receiver.name): \(status)")
            #expect(status["droppedSamples"] as? Int == 0)
        }
        for receiver in receivers {
            receiver.daemon.signal(SIGTERM)
            #expect(try await receiver.daemon.waitForExit() == 0)
        }

        // What the three stores hold, read with the store's own API.
        var local: [UUID: (athlete: String?, team: String?, readings: [String], beats: [String])] = [:]
        for receiver in receivers {
            let store = try SQLiteHealthStore(path: receiver.daemon.storePath)
            let workouts = try await store.workouts()
            #expect(workouts.count == 10, "\(receiver.name)")
            for workout in workouts {
                var readings: [String] = []
                var beats: [String] = []
                for sample in try await store.samples(ofWorkout: workout.id) {
                    switch sample {
                    case .quantity(let quantity) where quantity.type == .heartRate:
                        readings.append("\(Self.microseconds(quantity.startDate)),\(quantity.quantity.value)")
                    case .heartbeatSeries(let series):
                        for beat in series.beats {
                            let time = series.startDate.addingTimeInterval(beat.timeSinceStart)
                            beats.append("\(Self.microseconds(time)),\(beat.rrTicks),\(beat.precededByGap)")
                        }
                    default:
                        continue
                    }
                }
                var athlete: String?
                var teamSession: String?
                if case .string(let name)? = workout.metadata["systole.athlete"] { athlete = name }
                if case .string(let id)? = workout.metadata["systole.teamSession"] { teamSession = id }
                local[workout.id] = (athlete, teamSession, readings, beats)
            }
        }
        #expect(local.count == 30)
        #expect(local.values.allSatisfy { $0.team == team && $0.athlete != nil })
        #expect(local.values.allSatisfy { $0.readings.count > 20 }, "every athlete recorded")

        // What PostgreSQL holds.
        let since2000 = "(extract(epoch from %@ - timestamptz '2000-01-01 00:00:00+00') * 1000000)::bigint"
        let workoutRows = try await postgres.query(
            "SELECT w.id, w.athlete, w.team_session, r.name FROM systole_workout w JOIN systole_receiver r USING (store_id)"
        ).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        #expect(workoutRows.count == 30)
        #expect(Set(workoutRows.map { $0[3] }) == ["room-1", "room-2", "room-3"])
        var central: [UUID: (readings: [String], beats: [String])] = [:]
        for row in try await postgres.query(
            "SELECT workout_id, \(since2000.replacingOccurrences(of: "%@", with: "start_time")), value "
                + "FROM systole_quantity WHERE type = 'heartRate'"
        ).split(separator: "\n") {
            let fields = row.split(separator: "|").map(String.init)
            guard fields.count == 3, let id = UUID(uuidString: fields[0]), let value = Double(fields[2]) else {
                Issue.record("a heart-rate row outside every workout, or unreadable: \(row)")
                continue
            }
            central[id, default: ([], [])].readings.append("\(fields[1]),\(value)")
        }
        for row in try await postgres.query(
            "SELECT workout_id, \(since2000.replacingOccurrences(of: "%@", with: "time")), rr_ticks, preceded_by_gap "
                + "FROM systole_rr_interval"
        ).split(separator: "\n") {
            let fields = row.split(separator: "|").map(String.init)
            guard fields.count == 4, let id = UUID(uuidString: fields[0]) else {
                Issue.record("an RR row outside every workout, or unreadable: \(row)")
                continue
            }
            central[id, default: ([], [])].beats.append("\(fields[1]),\(fields[2]),\(fields[3] == "t")")
        }
        #expect(Set(central.keys) == Set(local.keys), "the same workouts' samples, none more")
        for row in workoutRows {
            let id = try #require(UUID(uuidString: row[0]))
            let mine = try #require(local[id], "a workout PostgreSQL has and no store has")
            #expect(row[1] == mine.athlete && row[2].uppercased() == mine.team?.uppercased())
            let theirs = central[id] ?? ([], [])
            #expect(theirs.readings.count == mine.readings.count, "\(mine.athlete ?? ""): readings")
            #expect(
                Self.checksum(theirs.readings) == Self.checksum(mine.readings),
                "\(mine.athlete ?? ""): (time, bpm) \(Set(theirs.readings).subtracting(mine.readings).sorted().prefix(4)) \(Set(mine.readings).subtracting(theirs.readings).sorted().prefix(4))"
            )
            #expect(theirs.beats.count == mine.beats.count, "\(mine.athlete ?? ""): beats")
            #expect(Self.checksum(theirs.beats) == Self.checksum(mine.beats), "\(mine.athlete ?? ""): (time, RR)")
        }
        // `systole … --database` reads the whole: every receiver, every athlete.
        func fromDatabase(_ arguments: String...) async throws -> CommandRunner.Result {
            try await CommandRunner.run("systole", arguments + ["--database", postgres.addressWithPassword])
        }
        let listed = try await fromDatabase("workouts", "--json")
        #expect(listed.status == 0, "\(listed.standardError)")
        let all = (try? JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8))) as? [[String: Any]] ?? []
        #expect(all.count == 30 && Set(all.compactMap { $0["receiver"] as? String }).count == 3)
        let (someID, some) = try #require(local.first { $0.value.athlete == "Room 2 Athlete 3" })
        let one = try await fromDatabase("workouts", "--athlete", "Room 2 Athlete 3", "--json")
        let ones = (try? JSONSerialization.jsonObject(with: Data(one.standardOutput.utf8))) as? [[String: Any]] ?? []
        #expect(ones.map { $0["id"] as? String } == [someID.uuidString])
        let shown = try await fromDatabase("workouts", "show", String(someID.uuidString.prefix(8)), "--json")
        let details = (try? JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8))) as? [String: Any]
        #expect(details?["receiver"] as? String == "room-2" && details?["athlete"] as? String == "Room 2 Athlete 3")
        #expect((details?["heartRatePerMinute"] as? [Any])?.isEmpty == false && details?["zones"] != nil)
        let printed = try await fromDatabase("workouts", "show", someID.uuidString)
        #expect(
            printed.standardOutput.contains("Recorded by room-2"),
            "\(printed.standardOutput)\(printed.standardError)"
        )
        let stats = try await fromDatabase(
            "stats",
            "--athlete",
            "Room 2 Athlete 3",
            "--interval",
            "1d",
            "--from",
            "2000-01-01",
            "--json"
        )
        let buckets = (try? JSONSerialization.jsonObject(with: Data(stats.standardOutput.utf8))) as? [[String: Any]]
        #expect(buckets?.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == some.readings.count, "\(stats.standardError)")
        let csv = try await fromDatabase("export", someID.uuidString, "--format", "csv", "-o", "-")
        let rows = csv.standardOutput.split(separator: "\r\n").dropFirst()
        #expect(csv.status == 0 && rows.count >= some.readings.count, "\(csv.standardError)")
        #expect(rows.allSatisfy { $0.hasSuffix(",Room 2 Athlete 3") })
        let wrong = try await CommandRunner.run(
            "systole",
            [
                "workouts", "--database",
                postgres.addressWithPassword.replacingOccurrences(of: postgres.password, with: "nope"),
            ]
        )
        #expect(
            wrong.status == 1 && wrong.standardError.contains("cannot read the central database"),
            "\(wrong.standardError)"
        )
        #expect(!wrong.standardError.contains("nope"), "the password is not echoed")

        // The views people query answer for every athlete.
        let perMinute = try await postgres.query(
            "SELECT count(DISTINCT athlete), sum(readings) FROM systole_heart_rate_per_minute"
        ).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|")
        #expect(perMinute.first == "30")
        #expect(Int(perMinute.last ?? "") == local.values.reduce(0) { $0 + $1.readings.count })
    }
}
