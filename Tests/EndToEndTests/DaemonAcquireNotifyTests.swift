import DBus
import Foundation
import HeartRateProfile
import SystoleTestSupport
import Testing

/// systoled taking notifications over AcquireNotify's sockets, against `systole-sim` playing bluetoothd 5.66: the
/// same recording as over signals, through a dropout and a bluetoothd restart; the fallback to StartNotify on each
/// way the path fails, logged once and remembered; and `systole monitor --notify acquire` beside a client that
/// wants the same sensor.
///
/// One test at a time: each runs systoled and a simulator with several straps, and side by side at the start of the
/// run they loaded two cores enough to upset the tests that time a sensor's silence.
@Suite(.serialized) struct DaemonAcquireNotifyTests {
    /// A scenario and a daemon configured with `config`.
    func start(scenario: String, config: String) async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.simulator = []
        options.scenario = scenario
        options.configuration = config
        options.name = "systoled-acquire"
        return try await DaemonHarness.start(options)
    }

    static let straps = ["A0:9E:1A:00:00:01", "A0:9E:1A:00:00:02", "A0:9E:1A:00:00:03"]

    /// Every notification the straps sent while the workout ran is in the live log, in order, with its heart rate
    /// and RR intervals, on either path; a strap out of range for 2 s and a bluetoothd restart are survived, and the
    /// sockets are acquired again after each.
    @Test(arguments: ["signal", "acquire"])
    func everyNotificationIsRecordedThroughADropoutAndARestart(notify: String) async throws {
        let s = try await start(
            scenario: """
                {"seed": 11, "restarts": [{"at": 16, "for": 0.5}], "sensors": [
                  {"model": "polar-h10", "address": "\(Self.straps[0])", "rate": 4},
                  {"model": "polar-h10", "address": "\(Self.straps[1])", "rate": 4,
                   "faults": [{"kind": "disconnect", "at": 10, "for": 2}]},
                  {"model": "garmin-hrm", "address": "\(Self.straps[2])", "rate": 4}]}
                """,
            config: """
                sensors = ["\(Self.straps.joined(separator: "\", \""))"]
                [live_log]
                format = "json"
                [bluetooth]
                notify = "\(notify)"

                """
        )
        defer { s.stop() }
        _ = try await eventually(every: .milliseconds(200)) {
            try await s.sensors().filter { $0["state"] as? String == "streaming" }.count == 3
        }
        #expect(try await s.systole(["start", "--activity", "running"]).status == 0)
        // Past the dropout (10–12 s) and the restart (16 s) of the simulator's clock, and streaming again after.
        _ = try await eventually(every: .milliseconds(250)) {
            let streaming = try await s.sensors().filter { $0["state"] as? String == "streaming" }.count
            let times = Self.straps.compactMap { try? s.sent(by: $0).last?.time }
            guard let first = try s.sent(by: Self.straps[0]).first?.time else { return false }
            return streaming == 3 && times.allSatisfy { $0 > first + 20 }
        }
        for strap in Self.straps {
            let status = try await s.sensor(strap)
            #expect(status["notify"] as? String == notify, "\(status)")
            #expect(status["notifyFallback"] == nil, "\(status)")
        }
        // What was sent before `ended` is compared: the last of it logged (or given up on) before the end.
        let ended = Date().timeIntervalSince1970
        for strap in Self.straps {
            let last = try s.sent(by: strap).last { $0.time < ended }
            _ = await eventually { s.logged(by: strap).contains { $0.time >= (last?.time ?? 0) - 0.05 } }
        }
        #expect(try await s.systole(["end"]).status == 0)
        for strap in Self.straps {
            let logged = s.logged(by: strap)
            let sent = try s.sent(by: strap)
            let first = try #require(logged.first, "\(strap) logged nothing")
            // Where the workout's readings begin among those sent: the latest one sent before it was received (the
            // simulator notes the time just after handing the signal to its bus, which may be a moment later).
            let start = try #require(
                sent.lastIndex { $0.time <= first.time + 0.1 && $0.bpm == first.bpm && Self.same($0.rr, first.rr) },
                "\(strap)'s first logged reading was never sent"
            )
            let (missed, received, extra) = Self.lineUp(
                sent: Array(sent[start...].filter { $0.time < ended }),
                logged: logged,
                ended: ended
            )
            #expect(extra.isEmpty, "\(strap): readings logged at \(extra) were never sent")
            if notify == "acquire" {
                #expect(missed.isEmpty, "\(strap) missed readings sent at \(missed)")
            } else {
                // Today's signal path: bluetoothd resumes a session's signals as soon as the link is back, before
                // systoled has subscribed again, so the readings sent after a reconnect until the first one received
                // may be missed (how many depends on how busy the machine is); none after it.
                let resumes = Self.resumptions(sent.map(\.time))
                let unexplained = missed.filter { time in
                    guard let resumed = resumes.last(where: { $0 <= time }) else { return true }
                    return received.contains { $0 >= resumed && $0 < time }
                }
                #expect(unexplained.isEmpty, "\(strap) missed readings sent at \(unexplained), resumptions \(resumes)")
                for resumed in resumes {
                    #expect(received.contains { $0 >= resumed }, "\(strap): nothing received after \(resumed)")
                }
            }
        }
        // The dropout and the restart were lived through (no notification sent in them).
        let gaps = try s.sent(by: Self.straps[1]).map(\.time)
        #expect(zip(gaps, gaps.dropFirst()).filter { $1 - $0 > 1 }.count == 2)
    }

    /// When sending resumed after a silence of over a second (a dropout, a restart).
    static func resumptions(_ times: [Double]) -> [Double] {
        zip(times, times.dropFirst()).filter { $1 - $0 > 1 }.map(\.1)
    }

    typealias Reading = (time: Double, bpm: Int, rr: [Double])

    /// Lines up what was sent with what was logged, in order (a longest common subsequence): a reading sent and not
    /// logged is missed, one logged and not sent is an error unless it was logged at or after `ended` (sent after
    /// what is compared). Notifications without RR intervals often repeat their neighbours; where that leaves a
    /// choice, the later reading is the one logged, so misses after a reconnect are placed where they happen, first.
    /// Returns the send times of the missed and of the logged readings, and the times of the logged never sent.
    static func lineUp(
        sent: [Reading],
        logged: [Reading],
        ended: Double
    ) -> (missed: [Double], received: [Double], extra: [Double]) {
        let n = sent.count
        let m = logged.count
        // Never received before it was sent (the simulator notes the time a moment after sending).
        func equal(_ i: Int, _ j: Int) -> Bool {
            sent[i].time <= logged[j].time + 0.1 && sent[i].bpm == logged[j].bpm && same(sent[i].rr, logged[j].rr)
        }
        // common[i][j]: how many of the first i sent and first j logged readings line up.
        var common = Array(repeating: Array(repeating: 0, count: m + 1), count: n + 1)
        for i in 0..<n {
            for j in 0..<m {
                common[i + 1][j + 1] = equal(i, j) ? common[i][j] + 1 : max(common[i][j + 1], common[i + 1][j])
            }
        }
        var missed: [Double] = []
        var received: [Double] = []
        var extra: [Double] = []
        var (i, j) = (n, m)
        while i > 0 || j > 0 {
            if j > 0, logged[j - 1].time >= ended, common[i][j - 1] == common[i][j] {
                j -= 1
            } else if i > 0, j > 0, equal(i - 1, j - 1), common[i][j] == common[i - 1][j - 1] + 1 {
                received.append(sent[i - 1].time)
                (i, j) = (i - 1, j - 1)
            } else if i > 0, common[i - 1][j] == common[i][j] {
                missed.append(sent[i - 1].time)
                i -= 1
            } else {
                extra.append(logged[j - 1].time)
                j -= 1
            }
        }
        return (missed.reversed(), received.reversed(), extra.reversed())
    }

    static func same(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) < 0.01 }
    }

    /// Each way the acquired path fails makes that sensor use StartNotify, says why in `systole sensors` and once in
    /// the journal, and is remembered through a reconnect; a sensor set to "signal" on its own never tries.
    @Test func theFallbackIsAutomaticLoggedOnceAndRemembered() async throws {
        let unsupported = "A0:9E:1A:00:00:11"
        let silent = "A0:9E:1A:00:00:12"
        let breaking = "A0:9E:1A:00:00:13"
        let configured = "A0:9E:1A:00:00:14"
        let all = [unsupported, silent, breaking, configured]
        // After the silent sensor's fallback (10 s after its socket was acquired).
        let dropout = #"[{"kind": "disconnect", "at": 16, "for": 2}]"#
        let s = try await start(
            scenario: """
                {"seed": 12, "sensors": [
                  {"address": "\(unsupported)", "rate": 2, "acquire": {"offered": false}, "faults": \(dropout)},
                  {"address": "\(silent)", "rate": 2, "acquire": {"dropFirst": 1000000}, "faults": \(dropout)},
                  {"address": "\(breaking)", "rate": 2, "acquire": {"breakAfter": 3}, "faults": \(dropout)},
                  {"address": "\(configured)", "rate": 2, "faults": \(dropout)}]}
                """,
            config: """
                sensors = ["\(all.joined(separator: "\", \""))"]
                [bluetooth]
                notify = "acquire"
                "\(configured)" = "signal"

                """
        )
        defer { s.stop() }
        // Past the dropout (16–18 s), streaming again.
        _ = try await eventually(every: .milliseconds(250)) {
            let sensors = try await s.sensors()
            let times = all.compactMap { try? s.sent(by: $0).last?.time }
            guard let first = try s.sent(by: configured).first?.time else { return false }
            return sensors.filter { $0["state"] as? String == "streaming" }.count == 4
                && times.allSatisfy { $0 > first + 21 }
        }
        let reasons = [
            unsupported: "does not offer AcquireNotify", silent: "no notification arrived over AcquireNotify",
            breaking: "hung up while the sensor stayed connected",
        ]
        let reference = try #require(try s.sent(by: configured).first?.time)
        for address in all {
            let status = try await s.sensor(address)
            #expect(status["notify"] as? String == "signal", "\(status)")
            #expect(status["state"] as? String == "streaming", "\(status)")
            if let reason = reasons[address] {
                #expect((status["notifyFallback"] as? String)?.contains(reason) == true, "\(status)")
            } else {
                #expect(status["notifyFallback"] == nil, "\(status)")
            }
            // systoled kept taking readings after the fallback and after the reconnect.
            #expect((status["lastReading"] as? Double ?? 0) > reference + 19, "\(address) stopped: \(status)")
        }
        let text = try await s.systole(["sensors"]).standardOutput
        #expect(text.contains("notifications over signals (bluetoothd does not offer AcquireNotify)"), "\(text)")
        s.daemon.signal(SIGTERM)
        _ = try await s.daemon.waitForExit()
        let journal = await s.daemon.standardError()
        for address in all {
            let lines = journal.split(separator: "\n").filter {
                $0.contains("sensor \(address): notifications over D-Bus signals")
            }
            #expect(lines.count == (reasons[address] == nil ? 0 : 1), "\(address): \(lines)")
        }
    }

    /// Earbuds that refuse an unpaired host are paired and then acquired; nothing falls back and no StopNotify is
    /// sent after the refused acquire (bluetoothd 5.66 may touch freed memory then).
    @Test func aSensorThatNeedsPairingIsPairedAndThenAcquired() async throws {
        let earbuds = "5C:F7:00:00:00:31"
        let s = try await start(
            scenario: #"{"seed": 14, "sensors": [{"model": "powerbeats-pro-2", "address": "\#(earbuds)", "rate": 2}]}"#,
            config: """
                sensors = ["\(earbuds)"]
                [bluetooth]
                notify = "acquire"

                """
        )
        defer { s.stop() }
        var status: [String: Any] = [:]
        _ = try await eventually(every: .milliseconds(200)) {
            status = try await s.sensor(earbuds)
            return status["state"] as? String == "streaming" && status["notify"] != nil
        }
        #expect(status["notify"] as? String == "acquire", "\(status)")
        #expect(status["notifyFallback"] == nil, "\(status)")
        _ = await eventually(every: .milliseconds(200)) { ((try? s.sent(by: earbuds))?.count ?? 0) >= 4 }
        let sent = try s.sent(by: earbuds)
        #expect(sent.count >= 4, "the earbuds' notifications reach the socket once paired")
        // And systoled took them (the simulator logs a notification as it writes it, before systoled reads it).
        var last = 0.0
        _ = await eventually(every: .milliseconds(200)) {
            last = (try? await s.sensor(earbuds)["lastReading"] as? Double) ?? 0
            return sent.count >= 4 && last >= sent[3].time
        }
        #expect(sent.count >= 4 && last >= sent[3].time, "systoled's last reading at \(last)")
    }

    /// `systole monitor --notify acquire` prints what the strap sent; while it holds the sensor, a client that
    /// wants signals is told that another program holds it (and is not paired for it), and so is a second acquirer,
    /// after its fallback to StartNotify is refused too.
    @Test func monitorAcquiresAndAnotherClientIsToldWhy() async throws {
        let strap = "A0:9E:1A:00:00:21"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("monitor-acquire-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let scenario = folder.appendingPathComponent("scenario.json").path
        try #"{"seed": 13, "sensors": [{"address": "\#(strap)", "rate": 4}]}"#
            .write(toFile: scenario, atomically: true, encoding: .utf8)
        let emitLog = folder.appendingPathComponent("emitted.jsonl").path
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--scenario", scenario, "--emit-log", emitLog])
        defer { simulator.stop() }
        // The holder prints 120 measurements (30 s at 4 Hz), long enough for the two that are refused meanwhile.
        async let holder = CommandRunner.run(
            "systole",
            [
                "monitor", strap, "--notify", "acquire", "--json", "--count", "120", "--seconds", "120", "--bus",
                bus.address,
            ]
        )
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        defer { connection.close() }
        let measurement =
            "/org/bluez/hci0/dev_" + strap.replacingOccurrences(of: ":", with: "_") + "/service000a/char000b"
        try await waitUntil("the monitor holding the socket") {
            let reply = try? await connection.call(
                destination: "org.bluez",
                path: measurement,
                interface: "org.freedesktop.DBus.Properties",
                method: "Get",
                arguments: [.string("org.bluez.GattCharacteristic1"), .string("NotifyAcquired")]
            )
            return reply?.first?.unwrapped == .boolean(true)
        }
        let refused = try await CommandRunner.run(
            "systole",
            ["monitor", strap, "--count", "1", "--seconds", "5", "--bus", bus.address]
        )
        #expect(refused.status == 1)
        #expect(
            refused.standardError.contains("another program holds this sensor's notifications through AcquireNotify"),
            "\(refused.standardError)"
        )
        #expect(!refused.standardError.contains("pairing"), "\(refused.standardError)")
        let second = try await CommandRunner.run(
            "systole",
            ["monitor", strap, "--notify", "acquire", "--count", "1", "--seconds", "5", "--bus", bus.address]
        )
        #expect(second.status == 1)
        #expect(second.standardError.contains("another program holds"), "\(second.standardError)")
        let result = try await holder
        #expect(result.standardError.contains("notifications over AcquireNotify"), "\(result.standardError)")
        let printed = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(printed.count == 120, "\(printed.count) measurements")
        // In order and none missing: the heart rates printed are a run of those the strap sent.
        let sent = try wholeLines(of: emitLog).compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["payload"] as? String)
                .flatMap { try? Hex.decode($0) }.flatMap { try? HeartRateMeasurement(decoding: $0) }
                .map { Int($0.heartRate) }
        }
        let printedRates = printed.compactMap { $0["heartRate"] as? Int }
        #expect(printedRates.count == printed.count)
        let run = (0..<max(0, sent.count - printedRates.count + 1)).contains {
            Array(sent[$0..<$0 + printedRates.count]) == printedRates
        }
        #expect(run, "printed \(printedRates), sent \(sent)")
    }
}

extension DaemonHarness {
    fileprivate func sensor(_ address: String) async throws -> [String: Any] {
        try await sensors().first { $0["address"] as? String == address } ?? [:]
    }

    /// What a sensor sent, in order: when, and the measurement's heart rate and RR intervals (ms).
    fileprivate func sent(by address: String) throws -> [(time: Double, bpm: Int, rr: [Double])] {
        try emitted().compactMap { notification in
            guard notification.sensor == address, let measurement = notification.measurement else { return nil }
            return (notification.time, Int(measurement.heartRate), measurement.rrIntervals.map(\.milliseconds))
        }
    }

    /// The live log's readings of a sensor while the workout ran (JSON lines): when received, heart rate, RR.
    fileprivate func logged(by address: String) -> [(time: Double, bpm: Int, rr: [Double])] {
        ((try? String(contentsOfFile: daemon.liveLogPath, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { line in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["sensor"] as? String == address, object["state"] as? String == "running",
                    let text = object["time"] as? String, let date = try? Date(text, strategy: .iso8601),
                    let bpm = object["bpm"] as? Int
                else { return nil }
                return (date.timeIntervalSince1970, bpm, object["rr"] as? [Double] ?? [])
            }
    }
}
