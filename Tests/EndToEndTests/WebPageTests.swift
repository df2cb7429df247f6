import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// systoled's web server (`[http]`) as its users and an attacker meet it: the real systoled and simulator on a private
/// bus, requests from Python's http.client, /metrics read by the Prometheus project's parser, and the page and the
/// overlay in Debian's headless Chromium (Playwright), all from the scripts in Web/.
@Suite(.serialized) struct WebPageTests {
    static let token = "test-token-0123456789abcdef"
    static let webFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Web")

    /// systoled with `configuration` (which may use `$PORT`) beside the simulator (a Polar H10 at 1 Hz, or
    /// `scenario`); with `[http]` in it, the server is waited for unless `portTaken`. `prepare` is given the
    /// daemon's folder before systoled starts (to put a store there).
    static func start(
        configuration: String,
        scenario: String? = nil,
        portTaken: Bool = false,
        prepare: (@Sendable (URL) async throws -> Void)? = nil
    ) async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.name = "systole-web"
        options.configuration = configuration
        options.scenario = scenario
        options.simulator = scenario == nil ? ["--model", "polar-h10", "--rate", "1"] : []
        options.prepare = prepare
        let harness = try await DaemonHarness.start(options)
        // The server binds beside the other services, a moment after READY=1.
        if configuration.contains("[http]"), !portTaken {
            let pid = harness.daemon.process.processIdentifier
            _ = await eventually { !listeningTCPPorts(of: pid).isEmpty }
        }
        return harness
    }

    static let http = """
        [http]
        listen = "0.0.0.0:$PORT"
        token = "\(token)"
        """

    @Test func nothingListensWithoutHTTPAndAnOpenListenerNeedsAToken() async throws {
        let s = try await Self.start(configuration: "")
        defer { s.stop() }
        #expect(listeningTCPPorts(of: s.daemon.process.processIdentifier).isEmpty)
        let web = try await s.systole("web")
        #expect(web.status != 0)
        #expect(web.standardError.contains("[http]"), "\(web.standardError)")

        // A listener other machines reach, without a token: systoled refuses to start, naming the line.
        let folder = s.folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "[http]\nlisten = \"0.0.0.0:\(freeTCPPort())\"\n".write(
            to: folder.appendingPathComponent("systoled.toml"),
            atomically: true,
            encoding: .utf8
        )
        let refused = try await CommandRunner.run(
            "systoled",
            ["--config", folder.appendingPathComponent("systoled.toml").path, "--bus", s.bus.address]
        )
        #expect(refused.status == 78)
        #expect(refused.standardError.contains("systoled.toml:2: [http]"), "\(refused.standardError)")
        #expect(refused.standardError.contains("needs a token"), "\(refused.standardError)")

        // A token in a file every local user can read gives the page away: refused, saying how to fix it.
        let readable = folder.appendingPathComponent("readable.toml").path
        try "[http]\ntoken = \"\(Self.token)\"\n".write(toFile: readable, atomically: true, encoding: .utf8)
        chmod(readable, 0o644)
        let exposed = try await CommandRunner.run("systoled", ["--config", readable, "--bus", s.bus.address])
        #expect(exposed.status == 78)
        #expect(exposed.standardError.contains("every local user can read it"), "\(exposed.standardError)")
        #expect(exposed.standardError.contains("chmod 640"), "\(exposed.standardError)")
    }

    @Test func aTakenPortIsLoggedAndRecordingGoesOn() async throws {
        // Another program holds the port: systoled says so, keeps recording, and keeps trying every 30 s (one line
        // in these seconds: no retry storm).
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        let port = freeTCPPort()
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        var one: Int32 = 1
        setsockopt(holder, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(holder, 1) == 0)
        let began = ContinuousClock.now
        let s = try await Self.start(configuration: "[http]\nlisten = \"127.0.0.1:\(port)\"\n", portTaken: true)
        defer { s.stop() }
        try await s.startWorkout()
        try await s.daemon.waitForLiveLog(2)
        let status = try await s.json("status")
        #expect(status["state"] as? String == "running")
        #expect((status["heartRate"] as? [String: Any])?["bpm"] is Int)
        s.daemon.signal(SIGTERM)
        #expect(try await s.daemon.waitForExit() == 0)
        let log = await s.daemon.standardError()
        let lines = log.split(separator: "\n").filter { $0.contains("the web page cannot listen") }
        // Once, and once more for each 30 s it kept trying (a busy machine may have taken that long).
        let tries = 1 + Int((ContinuousClock.now - began).components.seconds / 30)
        #expect(!lines.isEmpty && lines.count <= tries, "\(log)")
        #expect(lines.first?.contains("127.0.0.1 port \(port)") == true)
        #expect(lines.first?.contains("[http] listen") == true)
    }

    @Test func everyPathWantsTheTokenOnAnOpenListener() async throws {
        let s = try await Self.start(configuration: Self.http)
        defer { s.stop() }
        #expect(listeningTCPPorts(of: s.daemon.process.processIdentifier) == [s.port])
        let paths = [
            "/api/status", "/api/history", "/api/events", "/api/workouts", "/metrics",
            "/api/workouts/00000000-0000-0000-0000-000000000000/export/fit", "/nothing",
        ]
        let wrong = String(Self.token.reversed())
        for path in paths {
            // A cookie is no way in, not even with the right token: the server sets none (a browser would send it
            // to every port of the host).
            for options in [
                [], ["--bearer", wrong], ["--cookie", "systole_token=\(Self.token)"], ["--bearer", ""],
            ] {
                let response = try await s.request(path, options)
                #expect(response["status"] as? Int == 401, "\(path) \(options): \(response["status"] ?? "?")")
                #expect(
                    (response["body"] as? String)?.contains("heart") != true
                        && (response["body"] as? String)?.contains("bpm") != true,
                    "\(path) told something without the token"
                )
                #expect((response["headers"] as? [String: String])?["connection"] == "close", "\(path)")
            }
            let query = try await s.request(path + "?token=" + wrong)
            #expect(query["status"] as? Int == 401, "\(path)?token=wrong")
        }
        // The pages and their script and style hold no health value: the same bytes for anyone, no cookie.
        for path in [
            "/", "/overlay", "/workouts", "/workouts/00000000-0000-0000-0000-000000000000", "/assets/systole.js",
            "/assets/systole.css",
        ] {
            let stranger = try await s.request(path)
            let holder = try await s.authorized(path)
            #expect(stranger["status"] as? Int == 200, "\(path)")
            #expect(stranger["body"] as? String == holder["body"] as? String, "\(path) is the same for anyone")
            #expect((stranger["headers"] as? [String: String])?["set-cookie"] == nil, "\(path)")
        }
        // With the token, what is not a workout is not looked for, and nothing sent is echoed back.
        for path in [
            "/api/workouts/not-a-uuid", "/api/workouts/..%2F..%2Fetc%2Fpasswd", "/api/workouts/%00%1B%5B31m",
            "/api/workouts/" + String(repeating: "A", count: 8000),
            "/api/workouts/00000000-0000-0000-0000-000000000000",
            "/api/workouts/00000000-0000-0000-0000-000000000000/export/fit",
            "/api/workouts/00000000-0000-0000-0000-000000000000/export/..%2Fexe",
        ] {
            let response = try await s.authorized(path)
            #expect(response["status"] as? Int == 404, "\(path.prefix(60)): \(response["status"] ?? "?")")
            let body = response["body"] as? String ?? ""
            #expect(!body.contains("etc") && !body.contains("AAAA") && !body.contains("31m"), "\(path.prefix(60))")
        }
        // The right token, each way it may come.
        let bearer = try await s.authorized("/api/status")
        #expect(bearer["status"] as? Int == 200)
        let query = try await s.request("/api/status?token=\(Self.token)")
        #expect(query["status"] as? Int == 200)
        // In a page's address: the same address with the token after `#` (never sent to a server), no cookie.
        let page = try await s.request("/overlay?zone&token=\(Self.token)")
        #expect(page["status"] as? Int == 303)
        let headers = page["headers"] as? [String: String] ?? [:]
        #expect(headers["location"] == "/overlay?zone#token=\(Self.token)")
        #expect(headers["set-cookie"] == nil)
        // Text that cannot be a token is not put into the address.
        let odd = try await s.request("/?token=%0D%0ASet-Cookie:x")
        #expect((odd["headers"] as? [String: String])?["location"] == "/")
        // `systole web` hands the address out (to the group the bus policy lets call systoled).
        let web = try await s.systole("web")
        #expect(web.standardOutput == "http://127.0.0.1:\(s.port)/#token=\(Self.token)\n")
        let overlay = try await s.systole("web", "--overlay")
        #expect(overlay.standardOutput == "http://127.0.0.1:\(s.port)/overlay#token=\(Self.token)\n")
    }

    @Test func aFloodOfEventStreamsIsCappedAndRecordingGoesOn() async throws {
        let s = try await Self.start(configuration: Self.http)
        defer { s.stop() }
        try await s.startWorkout()
        // From four addresses: one address may open only so many connections.
        let flood = try await s.authorized("/api/events", ["--streams", "40", "--sources", "4"])
        let statuses = flood["statuses"] as? [Int] ?? []
        #expect(statuses.filter { $0 == 200 }.count == 32, "\(statuses)")
        #expect(statuses.filter { $0 == 503 }.count == 8, "\(statuses)")
        // The streams closed with the prober; systoled notices at their next write (a reading, or the keep-alive
        // within 5 s) and lets new ones in again, and the workout kept recording.
        var events: [String: Any] = [:]
        let reopen = ContinuousClock.now + generousDeadline
        repeat {
            events = try await s.authorized("/api/events", ["--events", "2"])
        } while events["status"] as? Int == 503 && ContinuousClock.now < reopen
        #expect(events["status"] as? Int == 200)
        let received = events["events"] as? [[String: Any]] ?? []
        #expect(received.count == 2)
        #expect(received.last?["state"] as? String == "running")
        #expect((received.last?["heartRate"] as? [String: Any])?["bpm"] is Int)
        // A graceful stop with a stream open ends the stream and exits at once.
        let ready = s.folder.appendingPathComponent("stream-open").path
        async let open = s.authorized("/api/events", ["--events", "1000", "--ready", ready])
        try await waitUntil("the event stream open") { FileManager.default.fileExists(atPath: ready) }
        s.daemon.signal(SIGTERM)
        let status = try await s.daemon.waitForExit()
        #expect(status == 0)
        _ = try await open
    }

    @Test func metricsAgreeWithSystoleStatus() async throws {
        let steady = """
            {"seed": 7, "sensors": [{"model": "polar-h10", "rate": 1, "profile": {"kind": "steady", "bpm": 131}}]}
            """
        let s = try await Self.start(configuration: Self.http, scenario: steady)
        defer { s.stop() }
        try await s.startWorkout()
        try await s.daemon.waitForLiveLog(3)
        let before = try await s.json("status")
        let scrapeStarted = Date().timeIntervalSince1970
        let output = try await PythonTools.run(
            Self.webFolder.appendingPathComponent("parse_metrics.py").path,
            [s.base + "/metrics", Self.token]
        )
        let status = try await s.json("status")
        let scrapeEnded = Date().timeIntervalSince1970
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]])
        func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
            samples.first { sample in
                sample["name"] as? String == name
                    && labels.allSatisfy { (sample["labels"] as? [String: String])?[$0.key] == $0.value }
            }?["value"] as? Double
        }
        let sensor = try #require((status["sensors"] as? [[String: Any]])?.first)
        let address = try #require(sensor["address"] as? String)
        let labels = ["sensor": address]
        #expect(value("systole_workout_state", ["state": "running"]) == 1)
        #expect(value("systole_workout_state", ["state": "idle"]) == 0)
        #expect(value("systole_sensor_connected", labels) == 1)
        #expect(value("systole_sensor_battery_percent", labels) == (sensor["battery"] as? Double))
        // The heart rate at the scrape: what status said just before or just after, or a reading logged between
        // (a busy machine may take seconds over the scrape).
        let bpmBefore = ((before["sensors"] as? [[String: Any]])?.first?["bpm"] as? Double)
        let bpm = try #require(value("systole_heart_rate_bpm", labels))
        let loggedMeanwhile = s.daemon.liveLogLines().compactMap { line -> Double? in
            guard let time = try? Date(String(line.prefix(24)), strategy: .iso8601).timeIntervalSince1970,
                time > scrapeStarted - 1, time < scrapeEnded + 1,
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("bpm=") })
            else { return nil }
            return Double(field.dropFirst(4))
        }
        #expect(
            bpm == bpmBefore || bpm == sensor["bpm"] as? Double || loggedMeanwhile.contains(bpm),
            "\(bpm), status \(bpmBefore ?? 0) then \(sensor["bpm"] ?? 0), logged \(loggedMeanwhile)"
        )
        #expect(abs(bpm - 131) <= 10)
        #expect(value("systole_notifications_rejected_total", labels.merging(["reason": "malformed"]) { $1 }) == 0)
        let elapsedBefore = try #require((before["workout"] as? [String: Any])?["elapsed"] as? Double)
        let elapsed = try #require((status["workout"] as? [String: Any])?["elapsed"] as? Double)
        let scraped = try #require(value("systole_workout_elapsed_seconds"))
        #expect(
            scraped > 0 && scraped >= elapsedBefore - 1 && scraped <= elapsed + 1,
            "metrics \(scraped) s, status \(elapsedBefore) s before and \(elapsed) s after"
        )
        let readings = try #require(value("systole_readings_total", labels))
        #expect(readings >= 3)
        let commits = try #require(value("systole_store_commit_duration_seconds_count"))
        #expect(commits >= 1)
        #expect(value("systole_readings_dropped_total") == 0)
    }

    /// A Polar H10 with PMD, streaming ECG once a workout runs (`[ecg]` on).
    static let ecgStrap = """
        {"seed": 7, "sensors": [{"model": "polar-h10", "rate": 1, "pmd": {}}]}
        """

    /// The live ECG: `/api/ecg`'s events carry the strap's values as it sent them, and the page's strip draws a
    /// moving trace in Chromium.
    @Test func theLiveECGIsTheStrapsAndThePageDrawsIt() async throws {
        let s = try await Self.start(configuration: Self.http + "\n[ecg]\nenabled = true\n", scenario: Self.ecgStrap)
        defer { s.stop() }
        try await s.startWorkout()
        let response = try await s.authorized("/api/ecg", ["--events", "8"])
        #expect(response["status"] as? Int == 200)
        let pieces = try #require(response["events"] as? [[String: Any]])
        #expect(pieces.count == 8)
        let shown = pieces.flatMap { ($0["uv"] as? [Int]) ?? [] }
        let sent = try s.ecgFramesSent().flatMap(\.values)
        #expect(shown.count >= 8 * 73)
        #expect(ECGRecordingTests.offset(of: shown, in: sent).map { Array(sent[$0..<$0 + shown.count]) } == shown)
        #expect(pieces.allSatisfy { abs(($0["rate"] as? Double ?? 0) - 130) < 2 })
        let script = Self.webFolder.appendingPathComponent("check_live_page.py").path
        let shots = ProcessInfo.processInfo.environment["SYSTOLE_SCREENSHOTS"] ?? s.folder.path
        let page = try await PythonTools.run(script, ["ecg", s.base, Self.token, shots])
        #expect(page.contains("\"ink\""), "\(page)")
    }

    @Test func durationOnlyShowsNoHeartRateAnywhere() async throws {
        let s = try await Self.start(
            configuration: "privacy = \"duration-only\"\n" + Self.http + "\n[ecg]\nenabled = true\n",
            scenario: Self.ecgStrap
        )
        defer { s.stop() }
        try await s.startWorkout()
        try await waitUntil("a second of the workout") {
            ((try await s.json("status")["workout"] as? [String: Any])?["elapsed"] as? Double ?? 0) >= 1
        }
        // The ECG streams (the strap is asked for it) but is not shown.
        try await waitUntil("ECG frames sent") { try s.ecgFramesSent().count >= 2 }
        #expect(try await s.authorized("/api/ecg")["status"] as? Int == 404)
        for path in ["/api/status", "/api/history", "/metrics"] {
            let response = try await s.authorized(path)
            #expect(response["status"] as? Int == 200, "\(path)")
            let body = response["body"] as? String ?? ""
            #expect(!body.contains("bpm") && !body.contains("heartRate") && !body.contains("heart_rate"), "\(path)")
        }
        let history = try await s.authorized("/api/history")
        #expect(history["body"] as? String == "[]")
        let events = try await s.authorized("/api/events", ["--events", "2"])
        let event = try #require((events["events"] as? [[String: Any]])?.last)
        #expect(event["showsHeartRate"] as? Bool == false)
        #expect(event["heartRate"] == nil && event["average"] == nil)
        #expect((event["elapsed"] as? Double ?? 0) > 0)
        let end = try await s.systole("end")
        try #require(end.status == 0)
        let list = try await s.authorized("/api/workouts")
        let workouts = try #require(
            try JSONSerialization.jsonObject(with: Data((list["body"] as? String ?? "").utf8)) as? [[String: Any]]
        )
        let id = try #require(workouts.first?["id"] as? String)
        #expect(workouts.first?["averageHeartRate"] == nil && workouts.first?["maximumHeartRate"] == nil)
        #expect((workouts.first?["duration"] as? Double ?? 0) > 0)
        let detail = try await s.authorized("/api/workouts/\(id)")
        let page = try #require(
            try JSONSerialization.jsonObject(with: Data((detail["body"] as? String ?? "").utf8)) as? [String: Any]
        )
        #expect((page["heartRatePerMinute"] as? [Any])?.isEmpty == true)
        #expect((page["zones"] as? [Any])?.isEmpty == true && page["hrv"] == nil)
        #expect((page["exports"] as? [Any])?.isEmpty == true)
        for format in ["fit", "tcx", "csv", "rr", "edf", "csv-ecg", "rr-ecg"] {
            let export = try await s.authorized("/api/workouts/\(id)/export/\(format)")
            #expect(export["status"] as? Int == 404, "\(format)")
        }
    }

    /// The page and the overlay in Debian's headless Chromium: check_live_page.py says what it checks. The strap
    /// advertises a name that is HTML with an escape sequence, as anyone in range may: it must show as text. Screenshots
    /// go to $SYSTOLE_SCREENSHOTS when set (docs/images is made this way), else to the test's folder.
    @Test func thePageAndTheOverlayInChromium() async throws {
        let intervals = """
            {"seed": 2026, "sensors": [{"model": "polar-h10", "rate": 1,
              "name": "<img src=x onerror=\\"document.title='owned'\\">\\u001b[31m",
              "profile": {"kind": "intervals", "low": 118, "high": 168, "work": 6, "rest": 4}}]}
            """
        let s = try await Self.start(configuration: Self.http + "\n[profile]\nmax_hr = 185\n", scenario: intervals)
        defer { s.stop() }
        let shots = ProcessInfo.processInfo.environment["SYSTOLE_SCREENSHOTS"] ?? s.folder.path
        try await s.startWorkout()
        let sensor = try #require(s.simulator.addresses.first)
        let script = Self.webFolder.appendingPathComponent("check_live_page.py").path
        let live = try await PythonTools.run(script, ["live", s.base, Self.token, s.emitLog, sensor, shots, "10"])
        #expect(live.contains("\"notifications\""), "\(live)")
        let end = try await s.systole("end")
        try #require(end.status == 0, "\(end.standardError)")
        let workouts = try await s.authorized("/api/workouts")
        let list = try #require(
            try JSONSerialization.jsonObject(with: Data((workouts["body"] as? String ?? "").utf8)) as? [[String: Any]]
        )
        let id = try #require(list.first?["id"] as? String)
        let finished = try await PythonTools.run(script, ["finished", s.base, Self.token, id, shots])
        #expect(finished.contains("\"zoneBars\": 5"), "\(finished)")
    }
}

extension DaemonHarness {
    var base: String { "http://127.0.0.1:\(port)" }

    /// A request through http_probe.py: status, lower-cased headers, body text (or `events`/`statuses`).
    func request(_ path: String, _ options: [String] = []) async throws -> [String: Any] {
        let output = try await PythonTools.run(
            WebPageTests.webFolder.appendingPathComponent("http_probe.py").path,
            [base + path] + options
        )
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    func authorized(_ path: String, _ options: [String] = []) async throws -> [String: Any] {
        try await request(path, ["--bearer", WebPageTests.token] + options)
    }

    /// Starts a workout with `systole start`, which returns once heart rate arrives.
    func startWorkout() async throws {
        let start = try await systole("start", "--activity", "running")
        try #require(start.status == 0, "start: \(start.standardError)")
    }
}
