import Foundation
import HeartRateProfile
import SystoleTestSupport
import Testing

/// A hostile device in radio range beside an honest strap, both configured sensors of the real daemon, on a private
/// bus where `systole-sim` plays bluetoothd: what the attacker sends is left out and counted, the honest strap loses
/// no reading, `systole status` keeps answering, and no output carries a control character from the air.
@Suite(.serialized) struct RadioAttackTests {
    static let honest = "A0:9E:1A:00:AA:AA"
    static let attacker = "A0:9E:1A:66:66:66"

    /// One attack: the simulator, the daemon with a workout running through it, and what came out.
    final class Attack: @unchecked Sendable {
        let harness: DaemonHarness
        var daemon: DaemonProcess { harness.daemon }
        var workout: [String: Any] = [:]
        /// The slowest `systole status` during the attack, in seconds.
        var slowestStatus = 0.0
        var started = 0.0
        var ended = 0.0

        /// Plays the honest strap (1 Hz) beside `attacker` (a sensor spec as JSON, 4 Hz unless it says otherwise)
        /// and runs a workout for `seconds` while the attack goes on.
        /// `notify`: how systoled takes the notifications (`[bluetooth] notify`).
        init(attacker: String, seconds: Double, notify: String = "signal") async throws {
            var options = DaemonHarness.Options()
            options.name = "systoled-radio"
            options.simulator = []
            options.scenario = """
                {"seed": 7, "sensors": [
                  {"model": "polar-h10", "address": "\(RadioAttackTests.honest)", "name": "Polar H10 0000AAAA", "rate": 1,
                   "profile": {"kind": "steady", "bpm": 132}},
                  \(attacker)]}
                """
            options.configuration = "[bluetooth]\nnotify = \"\(notify)\"\n"
            options.daemonArguments = ["--sensor", RadioAttackTests.honest, "--sensor", RadioAttackTests.attacker]
            harness = try await DaemonHarness.start(options)
            _ = try await eventually(every: .milliseconds(200)) {
                try await harness.sensors().filter { $0["state"] as? String == "streaming" }.count == 2
            }
            let start = try await harness.systole("start", "--activity", "running")
            try #require(start.status == 0, "\(start.standardError)")
            started = Date().timeIntervalSince1970
            // While the attack goes on, systoled answers: a status after each honest reading it records.
            while Date().timeIntervalSince1970 < started + seconds {
                let before = Date().timeIntervalSince1970
                let status = try await harness.systole("status")
                slowestStatus = max(slowestStatus, Date().timeIntervalSince1970 - before)
                #expect(status.status == 0, "\(status.standardError)")
                let recorded = liveLog(of: RadioAttackTests.honest).filter { $0.contains("state=running") }.count
                try await waitUntil("the honest strap's next reading recorded") {
                    liveLog(of: RadioAttackTests.honest).filter { $0.contains("state=running") }.count > recorded
                }
            }
            ended = Date().timeIntervalSince1970
            let end = try await harness.systole("end", "--json")
            #expect(end.status == 0, "\(end.standardError)")
            workout = (try? JSONSerialization.jsonObject(with: Data(end.standardOutput.utf8)) as? [String: Any]) ?? [:]
        }

        func sensor(_ address: String) async throws -> [String: Any] {
            try await harness.sensors().first { $0["address"] as? String == address } ?? [:]
        }

        /// The live log's lines of one sensor.
        func liveLog(of address: String) -> [String] {
            ((try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.contains(" \(address) ") }.map(String.init)
        }

        /// Heart rates the simulator sent for `address`, with when.
        func sent(by address: String) throws -> [(time: Double, bpm: UInt16)] {
            try harness.emitted().compactMap { notification in
                guard notification.sensor == address, let measurement = notification.measurement else { return nil }
                return (notification.time, measurement.heartRate)
            }
        }

        /// Every honest heart rate sent while the workout ran (away from its edges) has its own live-log line,
        /// which is written once the reading is committed to the store. The line carries the receive time, a bus tick
        /// or a busy moment later than the emit time: matched in order, each line to the next reading sent before it
        /// (at most 5 s before, which a busy machine stays well within), so no line can stand for two readings.
        func expectEveryHonestReadingStored() throws {
            let lines = liveLog(of: RadioAttackTests.honest).filter { $0.contains("state=running") }
            var logged = lines.compactMap { line -> (time: Double, bpm: UInt16)? in
                guard let time = line.split(separator: " ").first.flatMap({ Self.date(String($0)) }),
                    let bpm = line.split(separator: " ").first(where: { $0.hasPrefix("bpm=") }).flatMap({
                        UInt16($0.dropFirst(4))
                    })
                else { return nil }
                return (time.timeIntervalSince1970, bpm)
            }
            let sent = try sent(by: RadioAttackTests.honest).filter { $0.time > started + 1 && $0.time < ended - 3 }
            #expect(sent.count >= 3, "the honest strap sent \(sent.count) readings in the workout")
            logged.removeAll { $0.time < started + 1 - 0.05 }
            for reading in sent {
                let match = logged.firstIndex { $0.time >= reading.time - 0.05 && $0.time < reading.time + 5 }
                #expect(
                    match.map { logged[$0].bpm == reading.bpm } == true,
                    "the honest reading of \(reading.time) (\(reading.bpm) bpm) was not stored"
                )
                if let match { logged.removeSubrange(...match) }
            }
        }

        static func date(_ text: String) -> Date? {
            try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }

        /// Everything a user reads: no control character (escape sequences, BEL, CR) came through from the air.
        func expectNoControlCharactersInAnyOutput() async throws {
            var outputs: [(String, String)] = []
            for command in [
                ["scan", "--seconds", "1"], ["scan", "--seconds", "1", "--json"], ["sensors"], ["sensors", "--json"],
                ["status"], ["status", "--json"], ["workouts"], ["workouts", "--json"],
                ["tail", "-n", "100000", "--file", daemon.liveLogPath],
            ] {
                let result = try await harness.systole(command)
                outputs.append((command.joined(separator: " "), result.standardOutput + result.standardError))
            }
            if let id = workout["id"] as? String {
                let show = try await harness.systole("workouts", "show", String(id.prefix(8)))
                outputs.append(("workouts show", show.standardOutput))
            }
            outputs.append(("live log", (try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? ""))
            daemon.signal(SIGTERM)
            _ = try await daemon.waitForExit()
            outputs.append(("systoled's log", await daemon.standardError()))
            for (name, text) in outputs {
                let controls = text.unicodeScalars.filter { scalar in
                    (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
                }
                #expect(controls.isEmpty, "\(name) holds \(controls.map { String($0.value, radix: 16) })")
                // JSON keeps them as escapes: those must not be there either.
                #expect(!text.contains("\\u001b") && !text.contains("\\u0007"), "\(name) holds an escaped control")
            }
        }

        func stop() { harness.stop() }
    }

    static func statistics(_ workout: [String: Any], _ type: String) -> [String: Any] {
        ((workout["statistics"] as? [String: Any])?[type] as? [String: Any]) ?? [:]
    }

    @Test(arguments: ["signal", "acquire"])
    func impossibleHeartRatesAreNotReadings(notify: String) async throws {
        let attack = try await Attack(
            attacker: """
                {"model": "polar-h10", "address": "\(Self.attacker)", "rate": 4, "faults": [
                  {"kind": "impossible-heart-rate", "at": 0, "for": 60, "bpm": 65535},
                  {"kind": "malformed", "at": 0, "every": 5}]}
                """,
            seconds: 8,
            notify: notify
        )
        defer { attack.stop() }
        let counts = try await attack.sensor(Self.attacker)
        #expect(counts["notify"] as? String == notify, "\(counts)")
        #expect(counts["malformed"] as? Int ?? 0 >= 4, "\(counts)")
        let heartRate = Self.statistics(attack.workout, "heartRate")
        #expect((heartRate["maximum"] as? Double ?? 999) <= 250, "\(heartRate)")
        #expect((heartRate["minimum"] as? Double ?? 0) >= 25)
        #expect(attack.liveLog(of: Self.attacker).allSatisfy { !$0.contains("bpm=") }, "an impossible rate was logged")
        let counted = try await attack.sensor(Self.attacker)["outOfRange"] as? Int ?? 0
        #expect(counted >= 20, "only \(counted) rejected")
        try attack.expectEveryHonestReadingStored()
        #expect(attack.slowestStatus < 20, "status took \(attack.slowestStatus) s")
    }

    @Test func energyJumpsAreNotStored() async throws {
        let attack = try await Attack(
            attacker: """
                {"model": "polar-h10", "address": "\(Self.attacker)", "rate": 4, "faults": [
                  {"kind": "energy-jump", "at": 0, "for": 60, "value": 65534, "every": 12}]}
                """,
            seconds: 10
        )
        defer { attack.stop() }
        let energy = Self.statistics(attack.workout, "activeEnergyBurned")["sum"] as? Double ?? 0
        let duration = attack.workout["duration"] as? Double ?? 0
        // 2.5 kJ a second is the most a person can expend; the counter's slack is 10 kJ a report.
        #expect(energy <= 2.5 * duration + 100, "\(energy) kJ stored in \(duration) s")
        #expect(try await attack.sensor(Self.attacker)["outOfRange"] as? Int ?? 0 >= 2)
        try attack.expectEveryHonestReadingStored()
        #expect(attack.slowestStatus < 20, "status took \(attack.slowestStatus) s")
    }

    /// On either path: over the socket of AcquireNotify a storm arrives with no bus to slow it.
    @Test(arguments: ["signal", "acquire"])
    func aNotificationStormIsThrottledAndItsBeatsBounded(notify: String) async throws {
        let attack = try await Attack(
            attacker: """
                {"model": "polar-h10", "address": "\(Self.attacker)", "rate": 4, "faults": [
                  {"kind": "storm", "at": 0, "for": 60, "rate": 1000, "rr": 255}]}
                """,
            seconds: 8,
            notify: notify
        )
        defer { attack.stop() }
        let counts = try await attack.sensor(Self.attacker)
        #expect(counts["notify"] as? String == notify, "\(counts)")
        #expect(counts["throttled"] as? Int ?? 0 >= 3_000, "\(counts)")
        #expect(counts["excessBeats"] as? Int ?? 0 >= 10_000, "\(counts)")
        // At most 12 readings a second and a burst of 24 reach the live log (and the store).
        let seconds = attack.ended - attack.started + 3
        let lines = attack.liveLog(of: Self.attacker).count
        #expect(Double(lines) <= 12 * seconds + 24, "\(lines) lines in \(seconds) s")
        // Its beats: no more than time passed (a beat each 200 ms at the most).
        let longest =
            attack.liveLog(of: Self.attacker).map { line in
                line.split(separator: " ").first { $0.hasPrefix("rr=") }.map { $0.split(separator: ",").count } ?? 0
            }.max() ?? 0
        #expect(longest <= 16, "a line held \(longest) beats")
        try attack.expectEveryHonestReadingStored()
        #expect(attack.slowestStatus < 20, "status took \(attack.slowestStatus) s")
        let stored = [attack.daemon.storePath, attack.daemon.storePath + "-wal"].compactMap {
            try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int
        }.reduce(0, +)
        #expect(stored < 8 << 20, "the store grew to \(stored) bytes")
    }

    @Test func hostileNamesReachNoTerminalAndNoLog() async throws {
        let attack = try await Attack(
            attacker: #"""
                {"model": "polar-h10", "address": "\#(Self.attacker)", "rate": 4,
                 "name": "\u001b[2J\u001b[H\u001b]0;systole: all good\u0007\rPolar H10 0000AAAA\n2026-11-24T06:00:00.000Z \#(Self.honest) bpm=250 state=running",
                 "gapName": "\u001b[31m\#(String(repeating: "A", count: 10_000))"}
                """#,
            seconds: 4
        )
        defer { attack.stop() }
        let name = try await attack.sensor(Self.attacker)["name"] as? String ?? ""
        #expect(!name.isEmpty && name.count <= 64, "\(name.count) characters")
        // No forged line: every live-log line of the honest strap is one the daemon wrote for a real reading.
        #expect(!attack.liveLog(of: Self.honest).contains { $0.contains("bpm=250") })
        try await attack.expectNoControlCharactersInAnyOutput()
    }
}
