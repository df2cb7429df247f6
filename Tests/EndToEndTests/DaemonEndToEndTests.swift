import ControlAPI
import DBus
import Foundation
import Glibc
import HeartRateProfile
import SQLiteStore
import SystoleTestSupport
import Testing

/// The real `systoled`, `systole` and `systole-sim` processes on a private bus: workouts through the CLI as a user
/// runs them, crashes and restarts of the daemon, faults of the radio, configuration mistakes and the bus policy.
@Suite struct DaemonEndToEndTests {
    typealias Setup = DaemonHarness

    func withSetup(
        simulator: [String] = ["--rate", "4"],
        busConfiguration: String = "",
        _ body: (DaemonHarness) async throws -> Void
    ) async throws {
        var options = DaemonHarness.Options()
        options.simulator = simulator
        options.busConfiguration = busConfiguration
        try await withDaemon(options, body)
    }

    /// When `body` ran, in seconds since 1970.
    func timed(_ body: () async throws -> Void) async throws -> ClosedRange<Double> {
        let before = Date().timeIntervalSince1970
        try await body()
        return before...Date().timeIntervalSince1970
    }

    /// systoled's `PropertiesChanged` signals, from now on.
    func propertyChanges(on connection: DBusConnection) async throws -> SignalStream {
        try await connection.signals(
            matching: DBusMatchRule(
                path: ControlAPI.objectPath,
                interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged"
            )
        )
    }

    /// Heart-rate readings the store holds (all of them: readings are stored only during workouts).
    func storedHeartRates(_ s: Setup) async throws -> Int {
        let result = try await CommandRunner.run(
            "systole",
            ["stats", "--interval", "1d", "--from", "2000-01-01", "--json", "--bus", s.bus.address]
        )
        try #require(result.status == 0, "systole stats failed: \(result.standardError)")
        let buckets = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]],
            "systole stats printed \(result.standardOutput)"
        )
        return buckets.reduce(0) { $0 + ($1["count"] as? Int ?? 0) }
    }

    static func statistics(_ workout: [String: Any], _ type: String) -> [String: Any] {
        ((workout["statistics"] as? [String: Any])?[type] as? [String: Any]) ?? [:]
    }

    @Test func aWholeWorkoutThroughTheCLIAgreesWithWhatTheSensorSent() async throws {
        try await withSetup { s in
            let start = try await s.systole("start", "--activity", "running", "--location", "outdoor")
            #expect(start.status == 0, "\(start.standardError)")
            #expect(start.standardOutput.contains("3… "))
            #expect(start.standardOutput.contains("Started running (outdoor)"))
            #expect(start.standardOutput.contains("Heart rate: available"))
            // Each phase lasts until the strap's readings of it are logged: a few of them, however busy the machine.
            try await s.daemon.waitForLiveLog(8)
            // Each command takes a moment (a process, a bus round trip); the workout changed somewhere inside.
            var paused = ""
            let pause = try await timed { paused = try await s.systole("pause").standardOutput }
            #expect(paused == "Paused\n")
            try await s.daemon.waitForLiveLog(8, "readings while paused") { $0.contains("state=paused") }
            #expect(try await s.json("status")["state"] as? String == "paused")
            var resumed: Int32 = -1
            let resume = try await timed { resumed = try await s.systole("resume").status }
            #expect(resumed == 0)
            let runningBefore = s.liveLog().filter { $0.contains(" bpm=") && $0.contains("state=running") }.count
            try await s.daemon.waitForLiveLog(runningBefore + 8)
            #expect(try await s.systole("add", "water", "250ml").standardOutput == "Added water: 250 mL\n")
            var workout: [String: Any] = [:]
            let end = try await timed { workout = try await s.json("end") }

            let startedAt = try #require(workout["start"] as? Double)
            // The pause is not workout time.
            let duration = try #require(workout["duration"] as? Double)
            let shortest = (pause.lowerBound - startedAt) + (end.lowerBound - resume.upperBound)
            let longest = (pause.upperBound - startedAt) + (end.upperBound - resume.lowerBound)
            #expect(duration >= shortest && duration <= longest, "\(shortest) ≤ \(duration) ≤ \(longest)")
            #expect(workout["pauses"] as? Int == 1)
            #expect(Self.statistics(workout, "dietaryWater")["sum"] as? Double == 250)
            // Heart rate: what the simulator sent while the workout ran, not while it was paused. Notifications
            // take a moment to arrive (a busy machine reads them up to a second late), so the count is between what
            // was sent well inside the running time and what was sent around it.
            let sent = try s.sent()
            let margin = 1.0
            let inside = sent.filter { item in
                (item.time > startedAt + margin && item.time < pause.lowerBound - margin)
                    || (item.time > resume.upperBound + margin && item.time < end.lowerBound - margin)
            }.map(\.bpm)
            let around = sent.filter { item in
                (item.time > startedAt - margin && item.time < pause.upperBound + margin)
                    || (item.time > resume.lowerBound - margin && item.time < end.upperBound + margin)
            }.map(\.bpm)
            let heartRate = Self.statistics(workout, "heartRate")
            let count = try #require(heartRate["count"] as? Int)
            #expect(count >= inside.count && count <= around.count, "\(inside.count) ≤ \(count) ≤ \(around.count)")
            #expect(
                count < sent.filter { $0.time > startedAt && $0.time < end.lowerBound }.count,
                "paused readings are left out"
            )
            let maximum = try #require(heartRate["maximum"] as? Double)
            let minimum = try #require(heartRate["minimum"] as? Double)
            #expect(maximum >= inside.max() ?? 0 && maximum <= around.max() ?? 0)
            #expect(minimum <= inside.min() ?? .infinity && minimum >= around.min() ?? 0)

            // The workout is listed and shown with its chart.
            let id = try #require(workout["id"] as? String)
            let list = try await s.systole("workouts")
            #expect(list.standardOutput.contains("running · \(formatElapsed(duration))"), "\(list.standardOutput)")
            let show = try await s.systole("workouts", "show", String(id.prefix(8)))
            #expect(show.status == 0, "\(show.standardError)")
            #expect(show.standardOutput.contains("Heart rate per minute:"))
            #expect(show.standardOutput.contains("   1 █"))
            // The live log has a line per reading, with the workout's state.
            let lines = s.liveLog()
            #expect(lines.contains { $0.contains(" bpm=") && $0.contains("state=running elapsed=00:00:") })
            #expect(lines.contains { $0.contains("state=paused") })
        }
    }

    @Test func commandsThatDoNotFitTheWorkoutAreRefusedWithTheReason() async throws {
        try await withSetup { s in
            let pause = try await s.systole("pause")
            #expect(pause.status == 1)
            #expect(pause.standardError == "systole: no workout is ongoing; start one with 'systole start'\n")
            #expect(try await s.systole("start", "--activity", "yoga").status == 0)
            #expect(try await s.systole("pause").status == 0)
            let twice = try await s.systole("pause")
            #expect(twice.standardError == "systole: the workout is already paused; resume it with 'systole resume'\n")
            #expect(try await s.systole("resume").status == 0)
            let again = try await s.systole("start", "--activity", "cycling")
            #expect(again.status == 1)
            #expect(again.standardError.contains("a workout is already ongoing (running)"))
            let badActivity = try await s.systole("start", "--activity", "jogging")
            #expect(badActivity.status == 2)
            #expect(badActivity.standardError.contains("unknown activity 'jogging'"))
            let badAmount = try await s.systole("add", "water", "lots")
            #expect(badAmount.status == 2)
            let cancel = try await s.systole("cancel")
            #expect(cancel.standardOutput == "Cancelled: the workout and its samples were dropped\n")
            #expect(try await s.systole("workouts").standardOutput == "No workouts yet\n")
        }
    }

    @Test func aKilledDaemonContinuesTheSameWorkoutWithEverythingItLogged() async throws {
        try await withSetup { s in
            #expect(try await s.systole("start", "--activity", "cycling").status == 0)
            let id = try #require((try await s.json("status")["workout"] as? [String: Any])?["id"] as? String)
            try await s.daemon.waitForLiveLog(6)
            s.daemon.signal(SIGKILL)
            #expect(try await s.daemon.waitForExit() == SIGKILL)
            let loggedBefore = s.liveLog().filter { $0.contains(" bpm=") && $0.contains("state=running") }.count
            #expect(loggedBefore >= 6)

            try await s.startDaemon()
            let status = try await s.json("status")
            let workout = try #require(status["workout"] as? [String: Any])
            #expect(workout["id"] as? String == id)
            #expect(status["state"] as? String == "running")
            try await s.daemon.waitForLiveLog(loggedBefore + 4)
            let ended = try await s.json("end")
            // Every reading the live log showed while the workout ran is in the store, at its time.
            let logged = s.liveLog().filter { $0.contains(" bpm=") && $0.contains("state=running") }
            let store = try SQLiteHealthStore(path: s.daemon.storePath)
            let workoutID = try #require(UUID(uuidString: id))
            let stored = try await store.samples(ofWorkout: workoutID).compactMap { sample -> Double? in
                guard case .quantity(let q) = sample, q.type == .heartRate else { return nil }
                return q.startDate.timeIntervalSince1970
            }
            let missing = logged.filter { line in
                guard let time = try? Date(String(line.prefix(24)), strategy: .iso8601) else { return true }
                // The log shows milliseconds.
                return !stored.contains { abs($0 - time.timeIntervalSince1970) < 0.002 }
            }
            #expect(missing.isEmpty, "logged but not stored: \(missing)")
            #expect(logged.count > loggedBefore, "collection continued after the restart")
            #expect(ended["gaps"] as? Int == 1, "the time the daemon was down is marked")
        }
    }

    @Test func sigtermStopsCleanlyAndTheWorkoutIsRecovered() async throws {
        try await withSetup { s in
            #expect(try await s.systole("start", "--activity", "walking").status == 0)
            // systemd hears the workout's status and the watchdog keep-alive (WATCHDOG_USEC is 2 s here).
            // Older messages (the countdown's) may still be queued: read on until the running status.
            let statuses = try await s.daemon.notify.waitFor { line in
                line.wholeMatch(of: /STATUS=running · 00:00:[0-9]{2}/) != nil
            }
            #expect(statuses != nil, "no running status")
            let keepAlive = try await s.daemon.notify.waitFor("WATCHDOG=1")
            #expect(keepAlive != nil, "no watchdog keep-alive")
            s.daemon.signal(SIGTERM)
            #expect(try await s.daemon.waitForExit() == 0)
            #expect(try await s.daemon.notify.waitFor("STOPPING=1") != nil)
            let down = try await s.systole("status")
            #expect(down.status == 1)
            #expect(down.standardError.contains("systoled is not running on the \(s.bus.address) bus"))
            try await s.startDaemon()
            #expect(try await s.json("status")["state"] as? String == "running")
            #expect(try await s.systole("end").status == 0)
        }
    }

    /// Found by scripts/torture.sh: a workout killed before any sample had arrived got no gap.
    @Test func downtimeIsMarkedEvenBeforeTheFirstSample() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: folder) }
        // The only sensor is out of range for the whole test.
        try """
        {"sensors": [{"model": "polar-h10", "rate": 4, "faults": [{"kind": "disconnect", "at": 0, "for": 600}]}]}
        """.write(to: folder, atomically: true, encoding: .utf8)
        try await withSetup(simulator: ["--scenario", folder.path]) { s in
            let start = try await s.systole("start", "--activity", "walking")
            #expect(start.status == 0, "\(start.standardError)")
            #expect(start.standardOutput.contains("Heart rate: not available"), "\(start.standardOutput)")
            s.daemon.signal(SIGKILL)
            _ = try await s.daemon.waitForExit()
            try await s.startDaemon()
            #expect(try await s.json("status")["state"] as? String == "running")
            let ended = try await s.json("end")
            #expect(ended["gaps"] as? Int == 1, "the time the daemon was down is marked")
        }
    }

    /// A running workout whose strap goes out of range still says so in the live log every few seconds: lines
    /// with its state and elapsed time and no sensor, never a made-up heart rate.
    @Test func aWorkoutWithoutReadingsLogsDurationOnlyLines() async throws {
        try await withSetup { s in
            #expect(try await s.systole("start", "--activity", "walking").status == 0)
            let address = try #require(s.simulator.addresses.first)
            try await s.daemon.waitForLiveLog(2)
            try await s.simulator.play(#"{"kind": "disconnect", "for": 30}"#, sensor: address, bus: s.bus)
            let quiet = { s.liveLog().filter { !$0.contains(address) && $0.contains("state=running elapsed=") } }
            try await waitUntil("two duration-only lines", every: .milliseconds(200)) { quiet().count >= 2 }
            #expect(quiet().allSatisfy { !$0.contains("bpm=") })
            let times = quiet().prefix(2).compactMap { line in
                (try? Date(String(line.prefix(24)), strategy: .iso8601))?.timeIntervalSince1970
            }
            try #require(times.count == 2)
            // Five seconds apart (the quiet interval), give or take a busy machine's lateness.
            #expect(times[1] - times[0] >= 4.9, "\(quiet())")
        }
    }

    /// A running workout with nothing arriving still ages: its elapsed time is announced about once a second by
    /// the check on the bus's loop thread, not by readings.
    @Test func aQuietWorkoutsElapsedTimeIsStillAnnounced() async throws {
        try await withSetup { s in
            let connection = try await DBusConnection.connect(to: .address(s.bus.address))
            defer { connection.close() }
            #expect(try await s.systole("start", "--activity", "walking").status == 0)
            let address = try #require(s.simulator.addresses.first)
            try await s.daemon.waitForLiveLog(2)
            try await s.simulator.play(#"{"kind": "disconnect", "for": 30}"#, sensor: address, bus: s.bus)
            // Quiet once the sensor is no longer streaming (its disconnection is announced at once).
            try await waitUntil("the sensor gone", every: .milliseconds(200)) {
                try await s.systole("sensors").standardOutput.contains("streaming") == false
            }
            let changes = try await propertyChanges(on: connection)
            // Only the timer's announcements: a change of the sensor's status (its reconnect attempts) is announced
            // with the sensors' value, and the timer's carry none.
            let elapsed = try await withTimeout(generousDeadline, "three elapsed times announced") {
                var values: [Double] = []
                for try await signal in changes {
                    let changed = signal.arguments[1].propertyMap ?? [:]
                    guard changed["Sensors"] == nil, let value = changed["ElapsedTime"]?.double else { continue }
                    values.append(value)
                    if values.count == 3 { break }
                }
                return values
            }
            #expect(elapsed.count == 3 && elapsed == elapsed.sorted() && Set(elapsed).count == 3, "\(elapsed)")
        }
    }

    @Test func collectionResumesAfterADropoutAndABluetoothdRestart() async throws {
        try await withSetup(simulator: ["--rate", "4", "--seed", "3"]) { s in
            #expect(try await s.systole("start", "--activity", "hiking").status == 0)
            let address = try #require(s.simulator.addresses.first)
            // Out of range for 2 s once the workout is recording, then bluetoothd restarts once it records again.
            try await s.daemon.waitForLiveLog(4)
            try await s.simulator.play(#"{"kind": "disconnect", "for": 2}"#, sensor: address, bus: s.bus)
            func loggedTimes() -> [Double] {
                s.liveLog().filter { $0.contains(" bpm=") && $0.contains("state=running") }.compactMap { line in
                    (try? Date(String(line.prefix(24)), strategy: .iso8601))?.timeIntervalSince1970
                }
            }
            // The simulator's own log shows when notifications stopped: gaps of over a second are the dropout
            // and the restart.
            func gaps() throws -> [ClosedRange<Double>] {
                let times = try s.sent().map(\.time)
                return zip(times, times.dropFirst()).filter { $1 - $0 > 1 }.map { $0...$1 }
            }
            try await waitUntil("readings logged after the dropout") {
                guard let dropout = try gaps().first else { return false }
                return loggedTimes().filter { $0 > dropout.upperBound }.count >= 4
            }
            try await s.simulator.restartBluetoothd(downtime: .milliseconds(500), bus: s.bus)
            try await waitUntil("readings logged after the restart") {
                guard let restart = try gaps().dropFirst().first else { return false }
                return loggedTimes().contains { $0 > restart.upperBound }
            }
            let found = try gaps()
            try #require(found.count == 2, "the dropout and the restart: \(found)")
            let times = loggedTimes()
            let resumed = try #require(found.last)
            #expect(times.contains { $0 > resumed.upperBound }, "collection resumed after bluetoothd came back")
            #expect(times.contains { $0 < found[0].lowerBound }, "and was collecting before the dropout")
            #expect(times.contains { $0 > found[0].upperBound && $0 < resumed.lowerBound }, "and between the faults")
            for gap in found {
                #expect(
                    !times.contains { $0 > gap.lowerBound + 0.5 && $0 < gap.upperBound - 0.5 },
                    "no readings in \(gap)"
                )
            }
            _ = try await s.json("end")
            let stored = try await storedHeartRates(s)
            if stored < times.count {
                // Say why: the daemon's own log (complete once it exited) and the live log.
                s.daemon.signal(SIGTERM)
                _ = try await s.daemon.waitForExit()
                Issue.record(
                    """
                    \(stored) readings stored, \(times.count) logged while running
                    systoled: \(await s.daemon.standardError())
                    live log: \(s.liveLog().joined(separator: "\n"))
                    """
                )
            }
        }
    }

    @Test func propertiesAnnounceTheirChanges() async throws {
        try await withSetup { s in
            let connection = try await DBusConnection.connect(to: .address(s.bus.address))
            defer { connection.close() }
            let changes = try await propertyChanges(on: connection)
            #expect(try await s.systole("start", "--activity", "rowing").status == 0)
            // Wait for State = running, with the current workout and a heart rate alongside.
            // Each signal carries only what changed; the latest value of each property is kept.
            let running = try await withTimeout(generousDeadline, "State running, with a heart rate") {
                var latest: [String: DBusValue] = [:]
                for try await signal in changes {
                    latest.merge(signal.arguments[1].propertyMap ?? [:]) { $1 }
                    if latest["State"] == .string("running"), latest["HeartRate"]?.propertyMap?["bpm"] != nil {
                        return latest
                    }
                }
                return latest
            }
            #expect(running["CurrentWorkout"]?.propertyMap?["activity"] == .string("rowing"))
            #expect(running["HeartRate"]?.propertyMap?["bpm"] != nil)
            // The elapsed time is announced as it grows.
            let elapsed = try await withTimeout(generousDeadline, "ElapsedTime growing") {
                for try await signal in changes {
                    if let value = signal.arguments[1].propertyMap?["ElapsedTime"]?.double, value > 0 { return value }
                }
                return 0
            }
            #expect(elapsed > 0 && elapsed < 10)
        }
    }

    /// A sensor's readings alone name `Sensors` as invalidated, once a second, and `Get` answers with the new
    /// values; a change of its status (skin contact lost) is announced with the value.
    @Test func sensorsAreAnnouncedWithTheirValueOnlyWhenTheirStatusChanges() async throws {
        try await withSetup { s in
            let address = try #require(s.simulator.addresses.first)
            let connection = try await DBusConnection.connect(to: .address(s.bus.address))
            defer { connection.close() }
            let changes = try await propertyChanges(on: connection)
            let sensor = { () async throws -> [String: DBusValue] in
                let reply = try await connection.call(
                    destination: ControlAPI.busName,
                    path: ControlAPI.objectPath,
                    interface: "org.freedesktop.DBus.Properties",
                    method: "Get",
                    arguments: [.string(ControlAPI.interface), .string("Sensors")]
                )
                return reply.first?.unwrapped.array?.first?.propertyMap ?? [:]
            }
            /// Waits for a signal naming `Sensors` among the invalidated properties; returns whether it carried a
            /// value of `Sensors` too (it must not).
            let invalidation = { () async throws -> Bool in
                try await withTimeout(generousDeadline, "Sensors named as invalidated") {
                    for try await signal in changes where signal.arguments[2].strings?.contains("Sensors") == true {
                        return signal.arguments[1].propertyMap?["Sensors"] != nil
                    }
                    return true
                }
            }
            try await waitUntil("the sensor streaming", every: .milliseconds(200)) { try await sensor()["bpm"] != nil }
            #expect(try await invalidation() == false)
            let first = try #require(try await sensor()["lastReading"]?.double)
            #expect(try await sensor()["address"] == .string(address))
            #expect(try await invalidation() == false)
            try await waitUntil("a later reading read with Get", every: .milliseconds(200)) {
                try await sensor()["lastReading"]?.double ?? 0 > first
            }
            try await s.simulator.play(#"{"kind": "contact-loss", "for": 4}"#, sensor: address, bus: s.bus)
            let lost = try await withTimeout(generousDeadline, "Sensors announced without skin contact") {
                for try await signal in changes {
                    guard let sensors = signal.arguments[1].propertyMap?["Sensors"]?.array else { continue }
                    if sensors.first?.propertyMap?["contact"] == .string("notDetected") { return true }
                }
                return false
            }
            #expect(lost)
        }
    }

    @Test func sensorsArePairedForgottenAndScannedThroughTheDaemon() async throws {
        // Earbuds that refuse notifications until paired.
        try await withSetup(simulator: ["--model", "powerbeats-pro-2", "--rate", "2"]) { s in
            let address = try #require(s.simulator.addresses.first)
            let connection = try await DBusConnection.connect(to: .address(s.bus.address))
            defer { connection.close() }
            let found = try await connection.call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: "Scan",
                arguments: [.double(1)]
            )
            let devices = (found.first?.array ?? []).compactMap(\.propertyMap)
            #expect(devices.contains { $0["address"] == .string(address) && $0["name"]?.string != nil })
            let pair = try await s.systole("pair", address)
            #expect(pair.standardOutput == "Paired with \(address)\n", "\(pair.standardError)")
            let forget = try await s.systole("forget", address)
            #expect(forget.standardOutput == "Forgot \(address)\n", "\(forget.standardError)")
            let unknown = try await s.systole("pair", "00:11:22:33:44:55")
            #expect(unknown.status == 1)
            #expect(unknown.standardError.contains("bluetoothd does not know 00:11:22:33:44:55"))
        }
    }

    @Test func aLostBusStopsTheDaemonSoSystemdRestartsIt() async throws {
        try await withSetup { s in
            s.bus.stop()
            let status = try await s.daemon.waitForExit()
            let errors = await s.daemon.standardError()
            #expect(status != nil, "systoled did not exit after losing the bus: \(errors)")
            #expect(status != 0)
            #expect(errors.contains("the D-Bus connection was lost"))
        }
    }

    @Test func aConfigurationMistakeNamesTheLineAndExits78() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systoled-config-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("systoled.toml").path
        try "bus = \"session\"\n\n[live_log]\nrotate = 5\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try await CommandRunner.run("systoled", ["--config", config])
        #expect(result.status == 78)
        #expect(
            result.standardError
                == "systoled: configuration error: \(config):4: unknown setting 'rotate' in [live_log]; known: path, format, max_size, keep, privacy\n"
        )
    }

    @Test func callersOutsideThePolicyAreDenied() async throws {
        // The bus is configured with the policy file systoled installs (after an allow-all default policy).
        let policyFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/org.systole.Daemon.conf")
        let text = try String(contentsOf: policyFile, encoding: .utf8)
        let body = try #require(
            text.range(of: "<busconfig>").flatMap { start in
                text.range(of: "</busconfig>").map { String(text[start.upperBound..<$0.lowerBound]) }
            }
        )
        try await withSetup(busConfiguration: body) { s in
            // Root (this test) may call.
            #expect(try await s.systole("status").status == 0)
            // Anyone else may not: run the CLI as nobody, from a copy it can read.
            let copy = s.folder.appendingPathComponent("systole").path
            try FileManager.default.copyItem(
                atPath: CommandRunner.productsDirectory.appendingPathComponent("systole").path,
                toPath: copy
            )
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: s.folder.path)
            let denied = try await CommandRunner.run(
                "/usr/bin/setpriv",
                ["--reuid=nobody", "--regid=nogroup", "--clear-groups", copy, "status", "--bus", s.bus.address]
            )
            #expect(denied.status == 1)
            #expect(
                denied.standardError
                    == "systole: not permitted to control systoled: add yourself to group 'systole' ('sudo usermod -aG systole $USER', then log in again), or run as root\n"
            )
        }
    }
}

extension DaemonHarness {
    /// Heart rates the simulator sent, with the time it sent each.
    fileprivate func sent() throws -> [(time: Double, bpm: Double)] {
        try emitted().compactMap { notification in
            notification.measurement.map { (notification.time, Double($0.heartRate)) }
        }
    }
}
