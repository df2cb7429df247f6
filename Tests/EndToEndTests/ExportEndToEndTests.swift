import Foundation
import Glibc
import SQLiteStore
import SystoleTestSupport
import Testing
import WorkoutKit

/// A workout with laps, a marker and a pause, recorded by the real systoled from the simulator and taken out with
/// `systole export`: the decoders FIT's users rely on read back exactly the heart rates and RR intervals the store
/// holds; `workouts show` has laps, markers, zones, TRIMP and the energy estimate; `workouts delete` asks, deletes
/// and leaves the deletion visible to anchored queries; `systole profile` says where each value came from.
@Suite struct ExportEndToEndTests {
    /// systoled configured with `configuration`; by default the simulator plays a Polar H10 (RR intervals, no
    /// energy field, so the energy is estimated from heart rate) running intervals.
    func start(
        configuration: String,
        simulator: [String] = ["--model", "polar-h10", "--profile", "intervals"],
        scenario: String? = nil
    ) async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.name = "systole-export"
        options.configuration = configuration
        options.simulator = simulator
        options.scenario = scenario
        return try await DaemonHarness.start(options)
    }

    /// A strap at a steady 150 bpm whose every 20th beat is premature and every 29th is missed.
    static let ectopicScenario = """
        {"sensors": [{"model": "polar-h10", "profile": {"kind": "steady", "bpm": 150},
                      "faults": [{"kind": "ectopic", "at": 0, "every": 20},
                                 {"kind": "missed-beat", "at": 0, "every": 29}]}]}
        """

    static let profile = """
        [profile]
        age = 40
        sex = "female"
        weight_kg = 61.5
        resting_hr = 55
        """

    /// Records a workout: 4 readings, a lap, a marker, a pause for 2 readings, 4 readings, a lap, 3 readings, end
    /// (each phase lasts until the strap's readings of it are logged, however busy the machine). Returns its id,
    /// and how long the first lap can have lasted: at least from `start`'s answer to the `lap` command, at most from
    /// the `start` command to `lap`'s answer (starting a CLI process takes a while on a busy machine).
    static func record(_ s: DaemonHarness) async throws -> (id: String, firstLap: ClosedRange<Double>) {
        func readings(_ count: Int, _ state: String = "running") async throws {
            let before = s.daemon.liveLogLines().filter { $0.contains(" bpm=") && $0.contains("state=\(state)") }
            try await s.daemon.waitForLiveLog(before.count + count, "readings of a \(state) workout") {
                $0.contains(" bpm=") && $0.contains("state=\(state)")
            }
        }
        let startCalled = Date()
        let started = try await s.systole(["start", "--activity", "running"])
        try #require(started.status == 0, "\(started.standardError)")
        let startAnswered = Date()
        try await readings(4)
        let lapCalled = Date()
        #expect(try await s.systole(["lap"]).standardOutput == "Lap 1 done; lap 2 started\n")
        let lapAnswered = Date()
        let marked = try await s.systole(["marker", "gel, \"salt\" & water"])
        #expect(marked.status == 0, "\(marked.standardError)")
        #expect(try await s.systole(["pause"]).status == 0)
        try await readings(2, "paused")
        #expect(try await s.systole(["resume"]).status == 0)
        try await readings(4)
        #expect(try await s.systole(["lap"]).standardOutput == "Lap 2 done; lap 3 started\n")
        try await readings(3)
        let ended = try await s.systole(["end"])
        try #require(ended.status == 0, "\(ended.standardError)")
        let workouts = try await s.systole(["workouts", "--json"])
        let list = try JSONSerialization.jsonObject(with: Data(workouts.standardOutput.utf8)) as? [[String: Any]]
        let id = try #require(list?.last?["id"] as? String)
        // 50 ms either side for the rounding of the times shown.
        let shortest = lapCalled.timeIntervalSince(startAnswered) - 0.05
        return (id, shortest...lapAnswered.timeIntervalSince(startCalled) + 0.05)
    }

    @Test func anExportedWorkoutReadsBackAsTheStoreHoldsIt() async throws {
        let s = try await start(configuration: Self.profile)
        defer { s.stop() }
        let (id, firstLap) = try await Self.record(s)

        // workouts show: laps (the last closed at the end), the marker, zones, TRIMP, energy estimated.
        let shown = try await s.json("workouts", "show", String(id.prefix(8)))
        let laps = try #require(shown["laps"] as? [[String: Any]])
        #expect(laps.count == 3)
        #expect((laps.first?["duration"] as? Double).map { firstLap.contains($0) } == true, "\(firstLap): \(laps)")
        let markers = try #require(shown["markers"] as? [[String: Any]])
        #expect(markers.map { $0["text"] as? String } == ["gel, \"salt\" & water"])
        let zones = try #require(shown["zones"] as? [[String: Any]])
        #expect(zones.count == 5)
        // Zones by maximum: 208 − 0.7 × 40 = 180; zone 1 from 90.
        #expect(zones.first?["lower"] as? Double == 90)
        // Time with heart rate: the workout's time less the moment before its first reading (a reading a second).
        let inZones = zones.reduce(shown["secondsBelowZones"] as? Double ?? 0) { $0 + ($1["seconds"] as? Double ?? 0) }
        let duration = try #require(shown["duration"] as? Double)
        #expect(
            inZones <= duration + 0.01 && inZones >= duration - 2.5,
            "\(inZones) s with heart rate in \(duration) s"
        )
        #expect((shown["trimp"] as? Double ?? 0) > 0)
        let energy = try #require(shown["energy"] as? [String: Any])
        #expect(energy["estimated"] as? Bool == true)
        #expect((energy["kilojoules"] as? Double ?? 0) > 0)
        let text = try await s.systole(["workouts", "show", String(id.prefix(8))]).standardOutput
        #expect(text.contains("Time in zones (% of max heart rate):"))
        #expect(text.contains("estimated from heart rate"))
        #expect(text.contains("gel, \"salt\" & water"))

        // Export to a file and to standard output: the same bytes.
        let file = s.folder.appendingPathComponent("out.fit").path
        let exported = try await s.systole(["export", "--last", "-o", file])
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardError.hasPrefix("Wrote \(file) ("))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        var status = stat()
        #expect(stat(file, &status) == 0 && status.st_mode & 0o777 == 0o600)
        // FIT on standard output goes through when it is a pipe (a terminal is refused).
        let piped = try await s.systole(["export", String(id.prefix(6)), "--format", "fit", "-o", "-"])
        #expect(piped.status == 0, "\(piped.standardError)")

        for (format, name) in [("tcx", "out.tcx"), ("csv", "out.csv"), ("rr", "out.txt")] {
            let path = s.folder.appendingPathComponent(name).path
            let result = try await s.systole(["export", String(id.prefix(8)), "--format", format, "-o", path])
            #expect(result.status == 0, "\(format): \(result.standardError)")
            // Standard output gets the same text as the file.
            let stdout = try await s.systole(["export", String(id.prefix(8)), "--format", format, "-o", "-"])
            #expect(stdout.standardOutput == (try String(contentsOfFile: path, encoding: .utf8)), "\(format)")
        }

        // What the store holds, read after systoled stopped.
        s.daemon.signal(SIGTERM)
        _ = try await s.daemon.waitForExit()
        let store = try SQLiteHealthStore(path: s.daemon.storePath)
        let samples = try await store.samples(ofWorkout: try #require(UUID(uuidString: id)))
        let readings = samples.compactMap { sample -> Int? in
            guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return nil }
            return Int(quantity.quantity.value.rounded())
        }
        // The readings outside the pause, which TCX's track holds.
        let workout = try #require(try await store.workouts(idPrefix: id).first)
        let pauses = zip(
            workout.events.filter { $0.type == .pause }.map(\.startDate),
            workout.events.filter { $0.type == .resume }.map(\.startDate)
        ).map { $0..<$1 }
        let active = samples.filter { sample in
            guard case .quantity(let quantity) = sample, quantity.type == .heartRate else { return false }
            return !pauses.contains { $0.contains(quantity.startDate) }
        }.count
        let beats = samples.flatMap { sample -> [Double] in
            guard case .heartbeatSeries(let series) = sample else { return [] }
            return series.beats.map(\.interval)
        }
        try #require(readings.count >= 8 && beats.count >= 8, "\(readings.count) readings, \(beats.count) beats")

        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests/decode_fit.py").standardized.path
        let output = try await PythonTools.run(script, [file])
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(decoded["garmin_integrity"] as? Bool == true)
        #expect((decoded["garmin_errors"] as? [Any])?.isEmpty == true)
        #expect((decoded["fitdecode_errors"] as? [Any])?.isEmpty == true)
        #expect(decoded["garmin_heart_rates"] as? [Int] == readings)
        #expect(decoded["fitdecode_heart_rates"] as? [Int] == readings)
        let hrv = (decoded["garmin_hrv"] as? [[Double]] ?? []).flatMap { $0 }
        #expect(hrv.count == beats.count)
        #expect(zip(hrv, beats).allSatisfy { abs($0 - $1) <= 0.0006 }, "\(hrv.prefix(5)) vs \(beats.prefix(5))")
        #expect(decoded["garmin_laps"] as? Int == 3)
        let events = (decoded["garmin_events"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(events == ["timer start", "user_marker marker", "timer stop_all", "timer start", "timer stop_all"])
        let calories = (decoded["garmin_session"] as? [String: Any])?["total_calories"] as? Int
        #expect((calories ?? 0) > 0)
        #expect(bytes.count > 0)

        // TCX valid against Garmin's schema, with the same heart rates (those of the pause left out) and the marker
        // in a lap's notes; CSV a row per stored reading; RR the stored intervals.
        let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests").standardized
        let tcx =
            try #require(
                try JSONSerialization.jsonObject(
                    with: Data(
                        try await PythonTools.run(
                            scripts.appendingPathComponent("check_tcx.py").path,
                            [try await PythonTools.tcxSchema(), s.folder.appendingPathComponent("out.tcx").path]
                        ).utf8
                    )
                ) as? [[String: Any]]
            ).first ?? [:]
        #expect((tcx["errors"] as? [Any])?.isEmpty == true, "\(tcx["errors"] ?? "")")
        let tcxLaps = tcx["laps"] as? [[String: Any]] ?? []
        #expect(tcxLaps.count == 3)
        let trackpoints = tcxLaps.flatMap { ($0["tracks"] as? [[[Any]]] ?? []).flatMap { $0 } }
        #expect(
            abs(trackpoints.count - active) <= 1,
            "\(trackpoints.count) trackpoints, \(active) readings outside the pause"
        )
        #expect(tcxLaps.contains { ($0["notes"] as? String)?.contains("gel, \"salt\" & water") == true })
        let csv = try #require(
            try JSONSerialization.jsonObject(
                with: Data(
                    try await PythonTools.run(
                        scripts.appendingPathComponent("check_csv.py").path,
                        [s.folder.appendingPathComponent("out.csv").path]
                    ).utf8
                )
            ) as? [String: Any]
        )
        #expect(csv["rewritten_equal"] as? Bool == true)
        let rows = csv["rows"] as? [[String]] ?? []
        #expect(rows.map { Int(Double($0[2]) ?? -1) } == readings)
        let rr = try String(contentsOf: s.folder.appendingPathComponent("out.txt"), encoding: .ascii)
        let intervals = rr.split(separator: "\n").compactMap { Int($0) }
        #expect(intervals == beats.map { Int(($0 * 1000).rounded()) })
    }

    /// The simulator's ectopic and missed beats go through systoled into the store; the HRV systoled reports has
    /// corrected them, while the RR export keeps the intervals as recorded.
    @Test func ectopicAndMissedBeatsAreCorrectedInTheWorkoutsHRV() async throws {
        let s = try await start(configuration: Self.profile, simulator: [], scenario: Self.ectopicScenario)
        defer { s.stop() }
        try #require(try await s.systole(["start"]).status == 0)
        // Thirty readings: about 75 beats at 150 bpm, with several premature and missed ones.
        try await s.daemon.waitForLiveLog(30)
        try #require(try await s.systole(["end"]).status == 0)
        let list = try await s.systole(["workouts", "--json"]).standardOutput
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]])?.first?["id"] as? String
        )
        let shown = try await s.json("workouts", "show", String(id.prefix(8)))
        let hrv = try #require(shown["hrv"] as? [String: Any], "no HRV in \(shown.keys.sorted())")
        let beats = hrv["beats"] as? Int ?? 0
        let corrected = hrv["corrected"] as? Int ?? 0
        #expect(beats >= 30, "\(hrv)")
        // About one beat in twenty is premature and one in 29 missed: several corrected, each with a neighbour or two.
        #expect(corrected >= beats / 20, "\(hrv)")
        // At a steady 150 bpm (400 ms) with the missed beats put back, the mean is near 400 ms (each one left in
        // adds an 800 ms interval), and successive differences are small (an uncorrected premature beat makes two
        // of about 120 ms).
        #expect(abs((hrv["meanNN"] as? Double ?? 0) - 400) < 15, "\(hrv)")
        #expect((hrv["rmssd"] as? Double ?? .infinity) < 60, "\(hrv)")
        let text = try await s.systole(["workouts", "show", String(id.prefix(8))]).standardOutput
        #expect(text.contains("HRV: mean NN"))
        #expect(text.contains("corrected"))
    }

    /// A strap that loses skin contact for 4 s: the CSV says so in a row of its own (the readings are missing
    /// meanwhile), and its other rows say the strap reports contact.
    @Test func aLostContactIsARowOfTheCSV() async throws {
        let s = try await start(configuration: "", simulator: ["--model", "polar-h10"])
        defer { s.stop() }
        try #require(try await s.systole(["start"]).status == 0)
        try await s.daemon.waitForLiveLog(4)
        let address = try #require(s.simulator.addresses.first)
        try await s.simulator.play(#"{"kind": "contact-loss", "for": 4}"#, sensor: address, bus: s.bus)
        try await s.daemon.waitForLiveLog(1, "lines without skin contact") { $0.contains("contact=no") }
        let before = s.daemon.liveLogLines().count
        // Four readings with contact again after the loss.
        try await waitUntil("four readings with contact after the loss") {
            s.daemon.liveLogLines().dropFirst(before).filter { $0.contains(" bpm=") && $0.contains("contact=yes") }
                .count >= 4
        }
        try #require(try await s.systole(["end"]).status == 0)
        let csv = try await s.systole(["export", "--last", "--format", "csv", "-o", "-"]).standardOutput
        let rows = csv.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
            .map { $0.components(separatedBy: ",") }
        let lost = rows.filter { $0[3] == "no" }
        #expect(lost.count == 1, "\(csv)")
        #expect(lost.first?[2] == "")
        let readings = rows.filter { $0[3] != "no" }
        #expect(readings.count >= 4 && readings.allSatisfy { $0[3] == "yes" && !$0[2].isEmpty }, "\(csv)")
        // No reading during the loss: the next one comes at least 3 s after it.
        let lostAt = try #require(lost.first.flatMap { Double($0[1]) })
        let elapsed = readings.compactMap { Double($0[1]) }
        #expect(!elapsed.contains { $0 > lostAt && $0 < lostAt + 3 }, "\(elapsed) around \(lostAt)")
    }

    @Test func deletingAsksFirstAndTheDeletionIsVisibleToAnchoredQueries() async throws {
        let s = try await start(configuration: "")
        defer { s.stop() }
        let started = try await s.systole(["start"])
        try #require(started.status == 0)
        try await s.daemon.waitForLiveLog(3)
        try #require(try await s.systole(["end"]).status == 0)
        let list = try await s.systole(["workouts", "--json"]).standardOutput
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]])?.first?["id"] as? String
        )
        // No answer (standard input is empty): nothing deleted.
        let asked = try await s.systole(["workouts", "delete", String(id.prefix(8))])
        #expect(asked.status == 1)
        #expect(asked.standardOutput.contains("Not deleted"))
        #expect(try await s.systole(["workouts", "show", String(id.prefix(8))]).status == 0)
        let deleted = try await s.systole(["workouts", "delete", String(id.prefix(8)), "--yes"])
        #expect(deleted.status == 0, "\(deleted.standardError)")
        let gone = try await s.systole(["workouts", "show", String(id.prefix(8))])
        #expect(gone.status == 1)
        #expect(gone.standardError.contains("no workout"))
        #expect(try await s.systole(["export", String(id.prefix(8))]).status == 1)

        s.daemon.signal(SIGTERM)
        _ = try await s.daemon.waitForExit()
        let store = try SQLiteHealthStore(path: s.daemon.storePath)
        #expect(try await store.deletedWorkouts().deleted == [try #require(UUID(uuidString: id))])
        #expect(try await store.samples(ofWorkout: try #require(UUID(uuidString: id))).isEmpty)
        let heartRateChanges = try await store.changes(of: .heartRate)
        #expect(!heartRateChanges.deleted.isEmpty)
        #expect(try await store.workouts().isEmpty)
    }

    @Test func theProfileSaysWhereEachValueCameFrom() async throws {
        let s = try await start(configuration: Self.profile)
        defer { s.stop() }
        let profile = try await s.json("profile")
        #expect((profile["max_hr"] as? [String: Any])?["value"] as? Double == 180)
        #expect((profile["max_hr"] as? [String: Any])?["source"] as? String == "estimated: 208 − 0.7 × age")
        #expect((profile["resting_hr"] as? [String: Any])?["source"] as? String == "configured")
        let zonesSource = (profile["zones"] as? [String: Any])?["source"] as? String
        #expect(zonesSource?.hasPrefix("default") == true)
        let text = try await s.systole(["profile"]).standardOutput
        #expect(text.contains("Maximum heart rate: 180 bpm (estimated: 208 − 0.7 × age)"))
        #expect(text.contains("Weight: 61.5 kg (configured)"))
    }

    @Test func markersAndExportsRefuseWhatTheyCannotTake() async throws {
        let s = try await start(configuration: "")
        defer { s.stop() }
        #expect(try await s.systole(["marker", "x"]).standardError.contains("no workout is ongoing"))
        try #require(try await s.systole(["start"]).status == 0)
        let newline = try await s.systole(["marker", "a\nb"])
        #expect(newline.status == 1)
        #expect(newline.standardError.contains("control characters"))
        let long = try await s.systole(["marker", String(repeating: "é", count: 201)])
        #expect(long.standardError.contains("at most 200 characters"))
        #expect(try await s.systole(["marker", "  "]).standardError.contains("needs a text"))
        #expect(try await s.systole(["export", "--last", "--format", "gpx"]).status == 2)
        #expect(try await s.systole(["export"]).status == 2)
        #expect(try await s.systole(["export", "zz", "--last"]).status == 2)
        try #require(try await s.systole(["end"]).status == 0)
    }
}
