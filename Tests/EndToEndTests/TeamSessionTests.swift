import Foundation
import HeartRateProfile
import SystoleTestSupport
import Testing

/// A team session with the real `systoled`, `systole` and `systole-sim`: three straps, two of them named in
/// `[athletes]`; each athlete's workout holds their own strap's readings only, one strap drops out for a while and
/// its workout keeps going with the gap marked, and the live log, the status, the exports and the workout list carry
/// the athlete.
@Suite struct TeamSessionTests {
    static let ana = "A0:9E:1A:00:0A:01"
    static let ben = "A0:9E:1A:00:0A:02"
    static let stranger = "A0:9E:1A:00:0A:03"
    /// Each strap sends a steady rate of its own (the simulator adds a few bpm of noise), 40 apart, so a reading's
    /// rate says whose it is.
    static let rates = [ana: 101.0, ben: 141.0, stranger: 171.0]

    static let scenario = """
        {"sensors": [
          {"model": "polar-h10", "address": "\(ana)", "rate": 2, "profile": {"kind": "steady", "bpm": 101}},
          {"model": "garmin-hrm", "address": "\(ben)", "rate": 2, "profile": {"kind": "steady", "bpm": 141}},
          {"model": "wahoo-tickr", "address": "\(stranger)", "rate": 2, "profile": {"kind": "steady", "bpm": 171}}
        ]}
        """

    static let configuration = """
        sensors = ["\(ana)", "\(ben)", "\(stranger)"]

        [athletes]
        "\(ana)" = "Ana"
        "\(ben)" = "Ben Lima"
        """

    @Test func eachAthleteGetsAWorkoutOfTheirOwnStrapAndADropOutIsAMarkedGap() async throws {
        var options = DaemonHarness.Options()
        options.name = "systoled-team"
        options.simulator = []
        options.scenario = Self.scenario
        options.configuration = Self.configuration
        let harness = try await DaemonHarness.start(options)
        defer { harness.stop() }
        let daemon = harness.daemon
        let (bus, simulator, emitLog) = (harness.bus, harness.simulator, harness.emitLog)
        func json(_ arguments: String...) async throws -> Any? {
            let result = try await harness.systole(arguments + ["--json"])
            #expect(result.status == 0, "\(arguments): \(result.standardError)")
            return try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        }

        // All three straps stream before the session starts.
        try await waitUntil("the three straps connected") {
            let sensors = try await json("sensors") as? [[String: Any]] ?? []
            return sensors.filter { $0["connected"] as? Bool == true }.count == 3
        }
        let sensors = try #require(try await json("sensors") as? [[String: Any]])
        #expect(sensors.map { $0["athlete"] as? String } == ["Ana", "Ben Lima", nil])
        let listed = try await harness.systole("sensors")
        #expect(listed.standardOutput.contains("worn by Ana") && listed.standardOutput.contains("worn by Ben Lima"))

        let started = try await harness.systole("start", "--team", "--activity", "running")
        #expect(started.status == 0, "\(started.standardError)")
        #expect(started.standardOutput.contains("2 athletes"), "\(started.standardOutput)")
        #expect(
            started.standardOutput.contains("  Ana: workout ")
                && started.standardOutput.contains("  Ben Lima: workout ")
        )
        let again = try await harness.systole("start", "--team")
        #expect(again.status != 0 && again.standardError.contains("already ongoing"))
        let water = try await harness.systole("add", "water", "250ml")
        #expect(water.status != 0 && water.standardError.contains("team session"), "\(water.standardError)")

        let status = try #require(try await json("status") as? [String: Any])
        let workouts = try #require(status["workouts"] as? [[String: Any]])
        #expect(workouts.map { $0["athlete"] as? String } == ["Ana", "Ben Lima"])
        let team = try #require(workouts.first?["teamSession"] as? String)
        #expect(workouts.allSatisfy { $0["teamSession"] as? String == team && $0["state"] as? String == "running" })
        let statusText = try await harness.systole("status")
        #expect(statusText.standardOutput.contains("Team session \(team): 2 workouts"), "\(statusText.standardOutput)")
        #expect(statusText.standardOutput.contains("Workout: Ana · running"))
        #expect(statusText.standardOutput.contains("Workout: Ben Lima · running"))

        // Once both record, a lap; then Ben's strap goes out of range for 8 s, and the session runs on until it is
        // back and its readings are recorded again.
        func logged(_ address: String) -> [String] {
            daemon.liveLogLines().filter { $0.contains(address) && $0.contains("state=running") }
        }
        try await waitUntil("both athletes' readings recorded") {
            logged(Self.ana).count >= 4 && logged(Self.ben).count >= 4
        }
        #expect(try await harness.systole("lap").status == 0)
        try await simulator.play(#"{"kind": "disconnect", "for": 8}"#, sensor: Self.ben, bus: bus)
        let before = logged(Self.ben).count
        try await waitUntil("Ben's strap back, and four of its readings recorded") {
            let emitted = try Self.emitted(emitLog).filter { $0.sensor == Self.ben }.map(\.unix)
            let back = zip(emitted, emitted.dropFirst()).contains { $1 - $0 > 5 }
            return back && logged(Self.ben).count >= before + 4
        }

        let ended = try #require(try await json("end") as? [String: Any])
        let saved = try #require(ended["team"] as? [[String: Any]])
        #expect(saved.map { $0["athlete"] as? String } == ["Ana", "Ben Lima"])
        #expect(saved.allSatisfy { $0["teamSession"] as? String == team })
        #expect(Set(saved.compactMap { $0["start"] as? Double }).count == 1, "one start for the whole team")
        #expect(Set(saved.compactMap { $0["end"] as? Double }).count == 1, "one end for the whole team")

        // Each workout holds its athlete's strap's readings, all of them, and nobody else's.
        let emitted = try Self.emitted(emitLog)
        for workout in saved {
            let id = try #require(workout["id"] as? String)
            let address = workout["athlete"] as? String == "Ana" ? Self.ana : Self.ben
            let start = try #require(workout["start"] as? Double)
            let end = try #require(workout["end"] as? Double)
            let csv = try await harness.systole("export", id, "--format", "csv", "--output", "-")
            #expect(csv.status == 0, "\(csv.standardError)")
            let rows = csv.standardOutput.split(separator: "\r\n").dropFirst().map {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            #expect(rows.allSatisfy { $0.last.map(String.init) == workout["athlete"] as? String })
            let bpms = rows.compactMap { Double($0[2]) }
            let rate = Self.rates[address] ?? 0
            #expect(bpms.allSatisfy { abs($0 - rate) <= 10 }, "\(workout["athlete"] ?? ""): \(Set(bpms))")
            // What the strap sent while the workout ran: at least what it sent well inside it, at most what it sent
            // before the end and from a little before the start (a busy machine reads notifications late).
            let inside = emitted.filter { $0.sensor == address && $0.unix > start + 1 && $0.unix < end - 1 }.count
            let around = emitted.filter { $0.sensor == address && $0.unix > start - 3 && $0.unix < end }.count
            #expect(
                bpms.count >= inside && bpms.count <= around,
                "\(address): \(bpms.count) stored, \(inside) sent inside the workout, \(around) around it"
            )
            let shown = try #require(try await json("workouts", "show", id) as? [String: Any])
            let gaps = shown["gaps"] as? Int ?? -1
            #expect(gaps == (address == Self.ben ? 1 : 0), "\(workout["athlete"] ?? ""): \(gaps) gaps")
        }

        let anas = try #require(try await json("workouts", "--athlete", "Ana") as? [[String: Any]])
        #expect(anas.count == 1 && anas.first?["athlete"] as? String == "Ana")
        let list = try await harness.systole("workouts")
        #expect(list.standardOutput.contains("Ana · running") && list.standardOutput.contains("Ben Lima · running"))

        // The live log names each reading's athlete; the stranger's readings are logged, in no workout.
        let lines = ((try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines.contains { $0.contains(Self.ana) && $0.contains("athlete=Ana state=running") })
        #expect(lines.contains { $0.contains(Self.ben) && $0.contains("athlete=\"Ben Lima\" state=running") })
        #expect(lines.contains { $0.contains(Self.stranger) && $0.contains(" state=idle") && !$0.contains("athlete=") })
    }

    static func emitted(_ path: String) throws -> [(unix: Double, sensor: String)] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let unix = object?["unix"] as? Double, let sensor = object?["sensor"] as? String else { return nil }
            return (unix, sensor)
        }
    }
}
