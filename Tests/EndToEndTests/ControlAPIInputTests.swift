import ControlAPI
import DBus
import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// Values a caller in group systole may send to the control API, tried as an attacker would: each one is answered
/// with a clear error naming the limit, and the daemon stays up, idle and able to end the workout.
@Suite struct ControlAPIInputTests {
    /// systoled and the simulator on a private bus, with a workout running and heart rate stored.
    func start() async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.name = "systoled-input"
        let harness = try await DaemonHarness.start(options)
        let start = try await harness.systole("start", "--activity", "running")
        guard start.status == 0 else {
            harness.stop()
            throw DaemonHarness.CommandFailed(description: start.standardError)
        }
        try await harness.daemon.waitForLiveLog(2)
        return harness
    }

    @Test func statisticsRefusesTimesAndIntervalsOutsideTheirRangesAndStaysIdle() async throws {
        let s = try await start()
        defer { s.stop() }
        let now = Date().timeIntervalSince1970
        let hostile: [(interval: String, from: Double, to: Double, says: String)] = [
            ("1317624576693539402w", 0, 2e9, "longer than a year"),
            ("9223372036854775807m", 0, now, "longer than a year"),
            ("1m", -1e300, 1e300, "from 1970-01-01 to 2100-01-01"),
            ("1m", -.infinity, .infinity, "from 1970-01-01 to 2100-01-01"),
            ("1m", .nan, now, "from 1970-01-01 to 2100-01-01"),
            ("1m", 0, now, "at most 20160"),
            ("0m", 0, now, "unknown interval"),
            ("-5d", 0, now, "unknown interval"),
            ("1y", 0, now, "unknown interval"),
            ("1d", now, now - 1, "'from' must be before 'to'"),
        ]
        for request in hostile {
            let error = await s.call(
                "Statistics",
                [.string("heartRate"), .string(request.interval), .double(request.from), .double(request.to)]
            )
            #expect(error?.name == ControlAPI.ErrorName.invalidArguments, "\(request): \(String(describing: error))")
            #expect(error?.message.contains(request.says) == true, "\(request): \(error?.message ?? "answered")")
        }
        // A sane request still answers, with the samples stored.
        #expect(
            await s.call("Statistics", [.string("heartRate"), .string("1h"), .double(now - 86_400), .double(now + 60)])
                == nil
        )
        // The daemon is idle again (the simulator's sensor at 4 Hz costs a few percent of a core).
        #expect(try await s.daemon.cpuSeconds(over: .seconds(2)) < 0.5, "systoled kept a core busy after the requests")
        #expect(try await s.systole("end").status == 0)
    }

    @Test func samplesAUserAddsAreBoundedAfterUnitConversionAndTheWorkoutStillEnds() async throws {
        let s = try await start()
        defer { s.stop() }
        func add(_ type: String, _ value: Double, _ unit: String) async -> DBusError? {
            await s.call("AddSample", [.string(type), .double(value), .string(unit)])
        }
        let refused: [(String, Double, String, String)] = [
            ("activeEnergyBurned", 1e308, "kcal", "at most 10000 kJ"),
            ("dietaryWater", 1e308, "mL", "at most 5000 mL"),
            ("dietaryWater", 6, "L", "at most 5000 mL"),
            ("dietaryWater", .infinity, "mL", "at most 5000 mL"),
            ("dietaryWater", .nan, "mL", "positive amount"),
            ("dietaryWater", -250, "mL", "positive amount"),
            ("dietaryWater", 0, "mL", "positive amount"),
            ("heartRate", 1e9, "count/min", "comes from sensors"),
            ("heartRate", 120, "count/min", "comes from sensors"),
            ("dietaryWater", 250, "kJ", "not measured in kJ"),
        ]
        for (type, value, unit, says) in refused {
            let error = await add(type, value, unit)
            #expect(error?.name == ControlAPI.ErrorName.invalidArguments, "\(type) \(value) \(unit)")
            #expect(error?.message.contains(says) == true, "\(type) \(value) \(unit): \(error?.message ?? "accepted")")
        }
        // Up to the workout's limit, and not past it.
        for _ in 0..<4 { #expect(await add("dietaryWater", 5, "L") == nil) }
        let over = await add("dietaryWater", 1, "mL")
        #expect(over?.message.contains("at most 20000 mL") == true, "\(over?.message ?? "accepted")")
        // The CLI refuses an amount too large for a number before asking.
        let cli = try await s.systole("add", "water", "1" + String(repeating: "0", count: 400) + "ml")
        #expect(cli.status != 0)
        #expect(cli.standardError.contains("is not an amount with a unit"), "\(cli.standardError)")

        let status = try await s.systole("status")
        #expect(status.status == 0, "\(status.standardError)")
        let end = try await s.systole("end")
        #expect(end.status == 0, "\(end.standardError)")
        #expect(end.standardOutput.contains("20000 mL water"), "\(end.standardOutput)")
        #expect(end.standardOutput.contains(" bpm"))
    }

    /// Laps, markers, exports and deletion as a caller who loops, sends huge or odd text, or guesses ids would use
    /// them: each bounded, each refusal says what to do, and the workout still ends with what was kept.
    @Test func lapsMarkersExportsAndDeletionsAreBounded() async throws {
        let s = try await start()
        // Where a refused export would have been written.
        let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer {
            close(devNull)
            s.stop()
        }
        let refusals: [(String, [DBusValue], String, String)] = [
            ("AddMarker", [.string("")], ControlAPI.ErrorName.invalidArguments, "needs a text"),
            ("AddMarker", [.string("a\u{1B}[2Jb")], ControlAPI.ErrorName.invalidArguments, "control characters"),
            (
                "AddMarker", [.string(String(repeating: "x", count: 1 << 20))], ControlAPI.ErrorName.invalidArguments,
                "at most 200 characters"
            ),
            // One character of 4 000 bytes: a letter and its combining marks.
            (
                "AddMarker", [.string("e" + String(repeating: "\u{301}", count: 2000))],
                ControlAPI.ErrorName.invalidArguments, "800 bytes"
            ),
            ("AddMarker", [.int32(1)], "org.freedesktop.DBus.Error.InvalidArgs", "takes 's'"),
            (
                "ExportWorkout", [.string("0"), .string("gpx"), .unixFD(devNull)],
                ControlAPI.ErrorName.invalidArguments,
                "known: fit, tcx, csv, rr"
            ),
            (
                "ExportWorkout", [.string(""), .string("fit"), .unixFD(devNull)], ControlAPI.ErrorName.invalidArguments,
                "give a workout id"
            ),
            (
                "ExportWorkout", [.string("\u{1B}]0;x\u{7}"), .string("fit"), .unixFD(devNull)],
                ControlAPI.ErrorName.notFound,
                "'\\u{1B}]0;x\\u{7}'"
            ),
            (
                "ExportWorkout", [.string("0"), .string("fit")], "org.freedesktop.DBus.Error.InvalidArgs",
                "takes 'ssh'"
            ),
            ("DeleteWorkout", [.string("ffff")], ControlAPI.ErrorName.notFound, "list them with 'systole workouts'"),
            ("DeleteWorkout", [.string("")], ControlAPI.ErrorName.invalidArguments, "give a workout id"),
        ]
        for (method, arguments, name, says) in refusals {
            let error = await s.call(method, arguments)
            #expect(error?.name == name, "\(method): \(error?.name ?? "accepted")")
            #expect(error?.message.contains(says) == true, "\(method): \(error?.message ?? "accepted")")
        }
        // A caller looping on AddLap gets a thousand laps, then a refusal that says what to do.
        var accepted = 0
        while await s.call("AddLap", []) == nil, accepted <= 1000 { accepted += 1 }
        #expect(accepted == 1000)
        let more = await s.call("AddLap", [])
        #expect(more?.message.contains("end it and start another") == true, "\(more?.message ?? "accepted")")
        let end = try await s.systole("end")
        #expect(end.status == 0, "\(end.standardError)")
        let workouts = try await s.systole("workouts", "--json")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(workouts.standardOutput.utf8)) as? [[String: Any]])?.first?[
                "id"
            ] as? String
        )
        let shown = try await s.systole("workouts", "show", String(id.prefix(8)), "--json")
        let laps = (try JSONSerialization.jsonObject(with: Data(shown.standardOutput.utf8)) as? [String: Any])?["laps"]
        #expect((laps as? [Any])?.count == 1001, "a thousand laps and the last, closed at the end")
    }

    @Test func errorRepliesCutWhatTheyEchoBack() async throws {
        let s = try await start()
        defer { s.stop() }
        let huge = String(repeating: "A", count: 1 << 20)
        let escape = "\u{1B}]0;owned\u{07}\u{1B}[2J"
        let calls: [(String, [DBusValue])] = [
            ("AddSample", [.string(huge), .double(1), .string("mL")]),
            ("AddSample", [.string("dietaryWater"), .double(1), .string(huge)]),
            ("StartWorkout", [.string(huge), .string("outdoor")]),
            ("StartWorkout", [.string("running"), .string(huge)]),
            ("Statistics", [.string(huge), .string("1d"), .double(0), .double(1)]),
            ("Statistics", [.string("heartRate"), .string(huge), .double(0), .double(1)]),
            ("GetWorkout", [.string(huge)]),
            ("Pair", [.string(huge)]),
            ("Forget", [.string(escape + huge)]),
            ("AddSample", [.string(escape), .double(1), .string("mL")]),
        ]
        for (method, arguments) in calls {
            let error = try #require(await s.call(method, arguments), "\(method) accepted it")
            #expect(error.message.utf8.count < 600, "\(method) echoed \(error.message.utf8.count) bytes")
            #expect(!error.message.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(method)")
        }
        let properties = try? await s.connection().call(
            destination: ControlAPI.busName,
            path: ControlAPI.objectPath,
            interface: "org.freedesktop.DBus.Properties",
            method: "Get",
            arguments: [.string(ControlAPI.interface), .string(huge)]
        )
        #expect(properties == nil)
        #expect(try await s.systole("end").status == 0)
    }

    @Test func aControlAPIFuzzRunLeavesTheDaemonUpIdleAndTheStoreIntact() async throws {
        let calls = Int(ProcessInfo.processInfo.environment["SYSTOLE_CONTROL_FUZZ_CALLS"] ?? "") ?? 3_000
        let s = try await start()
        defer { s.stop() }
        var fuzzer = ControlAPIFuzzer(
            seed: UInt64(ProcessInfo.processInfo.environment["SYSTOLE_FUZZ_SEED"] ?? "") ?? 17
        )
        let planned = (0..<calls).map { _ in fuzzer.nextCall() }
        let started = ContinuousClock.now
        // Sixteen calls in flight at once: systoled reads the bus once per tick, so one at a time would mostly wait
        // for ticks; many at once is also what a hostile caller would send.
        let outcomes = await withTaskGroup(of: (Duration, String?).self) { group -> [(Duration, String?)] in
            var outcomes: [(Duration, String?)] = []
            for (index, call) in planned.enumerated() {
                if index >= 16, let outcome = await group.next() { outcomes.append(outcome) }
                group.addTask {
                    let (interface, method, arguments) = call
                    let began = ContinuousClock.now
                    var problem: String?
                    do {
                        _ = try await s.connection().call(
                            destination: ControlAPI.busName,
                            path: ControlAPI.objectPath,
                            interface: interface,
                            method: method,
                            arguments: arguments,
                            timeout: .seconds(25)
                        )
                    } catch let error as DBusError {
                        let unanswered: [DBusError.Name] = [.timeout, .noReply, .disconnected]
                        if unanswered.map(\.rawValue).contains(error.name) {
                            problem = "\(interface ?? "").\(method): \(error)"
                        }
                    } catch {
                        problem = "\(interface ?? "").\(method): \(error)"
                    }
                    // A workout ended or cancelled by the fuzzer is started again, so later calls meet one.
                    if method == "EndWorkout" || method == "CancelWorkout" {
                        _ = await s.call("StartWorkout", [.string("running"), .string("outdoor")])
                    }
                    return (ContinuousClock.now - began, problem)
                }
            }
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let slowest = outcomes.map { $0.0 }.max() ?? .zero
        let problems = outcomes.compactMap { $0.1 }
        #expect(outcomes.count == calls)
        #expect(problems.isEmpty, "\(problems.count) calls were not answered: \(problems.prefix(5))")
        let elapsed = ContinuousClock.now - started
        let errors = s.daemon.process.isRunning ? "" : await s.daemon.standardError()
        #expect(s.daemon.process.isRunning, "systoled died: \(errors)")
        // Idle again, answering, the store intact, and the workout still ends.
        let busy = try await s.daemon.cpuSeconds(over: .seconds(2))
        #expect(busy < 0.5, "systoled used \(busy) s of CPU in 2 s after the fuzz run")
        #expect(try await s.integrityCheck() == "ok")
        let status = try await s.systole("status")
        #expect(status.status == 0, "\(status.standardError)")
        _ = await s.call("StartWorkout", [.string("running"), .string("outdoor")])
        let end = try await s.systole("end")
        #expect(end.status == 0, "\(end.standardError)")
        print(
            "control-API fuzz: \(calls) calls in \(elapsed), slowest answer \(slowest), CPU after \(busy) s in 2 s, "
                + "store \(try await s.integrityCheck())"
        )
    }
}

extension DaemonHarness {
    /// SQLite's own check of the store, read by another process while systoled runs.
    fileprivate func integrityCheck() async throws -> String {
        let result = try await CommandRunner.run(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
                daemon.storePath,
            ]
        )
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) + result.standardError
    }
}
