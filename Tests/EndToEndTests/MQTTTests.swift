import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// systoled publishing to a real mosquitto (Debian's, started here on a port of its own with a password), read by
/// paho-mqtt: Home Assistant's discovery configs, the live values against what the simulator sent, the broker
/// stopped for 10 s and started again, the last will, and privacy.
@Suite(.serialized) struct MQTTTests {
    static let watcher = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("MQTT/mqtt_watch.py").path
    static let metrics = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Web/parse_metrics.py").path
    static let token = "mqtt-test-token-0123456789"

    final class Setup: @unchecked Sendable {
        let folder: URL
        let bus: PrivateBus
        let simulator: SimulatorProcess
        let broker: MosquittoBroker
        let emitLog: String
        let httpPort = freeTCPPort()
        var daemon: DaemonProcess!

        /// `brokerFirst`: the broker is up before systoled starts; else the test starts it later.
        /// `mqtt` replaces the [mqtt] table's broker and TLS lines (`$TLS_PORT`, `$CA` stand for the broker's).
        /// `retained`: published retained on the broker before systoled starts (what an earlier configuration left).
        init(
            extra: String = "",
            brokerFirst: Bool = false,
            tls: Bool = false,
            mqtt: String? = nil,
            retained: [String: String] = [:]
        ) async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-mqtt-\(UUID())")
            broker = try MosquittoBroker(folder: folder.appendingPathComponent("broker"), tls: tls)
            let brokerLines = (mqtt ?? "broker = \"mqtt://127.0.0.1:\(broker.port)\"")
                .replacingOccurrences(of: "$TLS_PORT", with: "\(broker.tlsPort ?? 0)")
                .replacingOccurrences(of: "$CA", with: broker.caFile)
            let configuration = """
                \(extra)
                [http]
                listen = "127.0.0.1:\(httpPort)"
                token = "\(MQTTTests.token)"

                [mqtt]
                \(brokerLines)
                username = "\(broker.user)"
                password = "\(broker.password)"
                client_id = "systoled-test"
                queue_limit = 10

                """
            let daemonFolder = folder.appendingPathComponent("daemon")
            try FileManager.default.createDirectory(at: daemonFolder, withIntermediateDirectories: true)
            let config = daemonFolder.appendingPathComponent("systoled.toml").path
            try configuration.write(toFile: config, atomically: true, encoding: .utf8)
            chmod(config, 0o600)
            emitLog = folder.appendingPathComponent("emit.log").path
            if brokerFirst || !retained.isEmpty { try await broker.start() }
            for (topic, payload) in retained {
                _ = try await PythonTools.run(
                    MQTTTests.watcher,
                    [
                        "127.0.0.1", "\(broker.port)", broker.user, broker.password, "0.5", "--publish",
                        "\(topic)=\(payload)",
                    ]
                )
            }
            bus = try await PrivateBus.start()
            simulator = try await SimulatorProcess.start(
                bus: bus,
                ["--model", "polar-h10", "--rate", "1", "--emit-log", emitLog]
            )
            daemon = try await DaemonProcess.start(bus: bus, folder: daemonFolder)
        }

        var sensor: String { simulator.addresses.first ?? "" }
        var sensorID: String { sensor.lowercased().filter(\.isHexDigit) }

        /// What a watcher subscribed to every topic saw in `seconds` from its subscription (or until `options` say).
        func watch(seconds: Double, _ options: [String] = []) async throws -> [[String: Any]] {
            try await watched(seconds: seconds, options).messages
        }

        /// The messages a watcher saw, and when its subscription began.
        func watched(
            seconds: Double,
            _ options: [String] = []
        ) async throws -> (messages: [[String: Any]], subscribed: Double) {
            let output = try await PythonTools.run(
                MQTTTests.watcher,
                ["127.0.0.1", "\(broker.port)", broker.user, broker.password, "\(seconds)"] + options
            )
            let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            try #require(result["connected"] as? Bool == true, "the watcher could not connect")
            let subscribed = try #require(result["subscribed"] as? Double, "the watcher did not subscribe")
            return (result["messages"] as? [[String: Any]] ?? [], subscribed)
        }

        func start() async throws {
            let start = try await CommandRunner.run(
                "systole",
                ["start", "--activity", "running", "--bus", bus.address]
            )
            try #require(start.status == 0, "\(start.standardError)")
        }

        func metric(_ name: String) async throws -> Double? {
            let output = try await PythonTools.run(
                MQTTTests.metrics,
                ["http://127.0.0.1:\(httpPort)/metrics", MQTTTests.token]
            )
            let samples = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]] ?? []
            return samples.first { $0["name"] as? String == name }?["value"] as? Double
        }

        func stop() {
            daemon?.stopNow()
            broker.stop()
            simulator.stop()
            bus.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    static func object(_ message: [String: Any]) -> [String: Any]? {
        (message["payload"] as? String).flatMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The bpm of each notification the simulator sent, with its time.
    static func emitted(_ path: String) throws -> [(time: Double, bpm: Int)] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let unix = entry["unix"] as? Double, let hex = entry["payload"] as? String, entry["malformed"] == nil
            else { return nil }
            let bytes = stride(from: 0, to: hex.count, by: 2).compactMap { offset -> UInt8? in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)
            }
            guard bytes.count >= 3 else { return nil }
            return (unix, bytes[0] & 1 == 1 ? Int(bytes[1]) | Int(bytes[2]) << 8 : Int(bytes[1]))
        }
    }

    @Test func discoveryAndLiveValuesReachTheBrokerAndSurviveItsRestart() async throws {
        let s = try await Setup()
        defer { s.stop() }
        // The broker comes up after systoled: its reconnects find it.
        try await s.start()
        try await s.broker.start()
        let sensorTopic = "systole/sensor/\(s.sensorID)"
        let first = try await s.watch(seconds: 60, ["--until-live", sensorTopic])

        // Home Assistant's discovery: retained configs naming the state topic, the availability topic and the device
        // (a subscriber that comes later gets them from the broker, flagged retained).
        #expect(first.contains { ($0["topic"] as? String)?.hasSuffix("/config") == true })
        let configs = try await s.watch(seconds: 5).filter { ($0["topic"] as? String)?.hasSuffix("/config") == true }
        #expect(configs.count == 9 && configs.allSatisfy { $0["retain"] as? Bool == true }, "\(configs.count)")
        let heartRate = try #require(
            configs.first { $0["topic"] as? String == "homeassistant/sensor/systole_\(s.sensorID)/heart_rate/config" }
        )
        let config = try #require(Self.object(heartRate))
        #expect(config["state_topic"] as? String == sensorTopic)
        #expect(config["availability_topic"] as? String == "systole/status")
        #expect(config["unit_of_measurement"] as? String == "bpm")
        #expect(config["unique_id"] as? String == "systole_\(s.sensorID)_heart_rate")
        #expect(((config["device"] as? [String: Any])?["connections"] as? [[String]])?.first?.last == s.sensor)
        for key in ["battery", "contact", "state"] {
            #expect(
                configs.contains {
                    $0["topic"] as? String == "homeassistant/sensor/systole_\(s.sensorID)/\(key)/config"
                }
            )
        }
        #expect(
            configs.contains {
                $0["topic"] as? String == "homeassistant/binary_sensor/systole_\(s.sensorID)/connected/config"
            }
        )
        #expect(
            configs.contains { $0["topic"] as? String == "homeassistant/sensor/systole_systoled_test/elapsed/config" }
        )
        #expect(first.contains { $0["topic"] as? String == "systole/status" && $0["payload"] as? String == "online" })

        // The live values: two of them (an unchanged value is not published again within 30 s, so they follow the
        // strap's changes), each a heart rate the strap sent, the latest of that value at most 10 s before it arrived.
        let live = try await s.watch(seconds: 60, ["--until-count", "\(sensorTopic)=2"])
        let emitted = try Self.emitted(s.emitLog)
        let values = live.filter { $0["topic"] as? String == sensorTopic && $0["retain"] as? Bool == false }
        #expect(values.count >= 2, "\(values.count) live values while the strap sent \(emitted.suffix(30))")
        for value in values {
            let object = try #require(Self.object(value))
            let bpm = try #require(object["heart_rate"] as? Int, "\(object)")
            let time = value["time"] as? Double ?? 0
            let sent = emitted.last { $0.bpm == bpm && $0.time <= time }
            #expect(sent.map { time - $0.time < 10 } == true, "\(bpm) bpm at \(time) was not sent by the strap")
            #expect(object["connected"] as? String == "ON")
            #expect(object["battery"] is Int)
        }
        let workout = try #require(live.last { $0["topic"] as? String == "systole/workout" }.flatMap(Self.object))
        #expect(workout["state"] as? String == "running")
        #expect((workout["elapsed"] as? Double ?? 0) > 0)
        #expect(try await s.metric("systole_mqtt_connected") == 1)

        // The broker away (its retained messages lost with it) until the queue of 10 overflows, counted, and once
        // it is back systoled announces itself again and goes on publishing.
        s.broker.stop()
        try await waitUntil("systoled noticing the broker is away") {
            try await s.metric("systole_mqtt_connected") == 0
        }
        try await waitUntil("the queue overflowing") {
            try await s.metric("systole_mqtt_messages_dropped_total") ?? 0 > 0
        }
        try await s.broker.start()
        let again = try await s.watch(seconds: 60, ["--until-live", sensorTopic])
        #expect(
            again.contains { $0["topic"] as? String == "homeassistant/sensor/systole_\(s.sensorID)/heart_rate/config" }
        )
        #expect(again.contains { $0["topic"] as? String == sensorTopic && $0["retain"] as? Bool == false })
        #expect(try await s.metric("systole_mqtt_messages_dropped_total") ?? 0 > 0)

        // Killed without a goodbye: the broker publishes the last will.
        let ready = s.folder.appendingPathComponent("will-watch-ready").path
        async let will = s.watch(seconds: 60, ["--until", "systole/status=offline", "--ready", ready])
        try await waitUntil("the will's watcher subscribed") { FileManager.default.fileExists(atPath: ready) }
        s.daemon.signal(SIGKILL)
        let afterKill = try await will
        #expect(afterKill.last { $0["topic"] as? String == "systole/status" }?["payload"] as? String == "offline")
    }

    @Test func durationOnlyPublishesNoHeartRate() async throws {
        // An earlier configuration with heart rate left its entity in the broker.
        let stale = "homeassistant/sensor/systole_systoled_test/heart_rate/config"
        let s = try await Setup(
            extra: "privacy = \"duration-only\"",
            retained: [stale: "{\"name\": \"Heart rate\", \"state_topic\": \"systole/workout\"}"]
        )
        defer { s.stop() }
        try await s.start()
        let messages = try await s.watch(seconds: 60, ["--until-count", "systole/workout=2"])
        let more = try await s.watch(seconds: 5)
        #expect((messages + more).contains { $0["topic"] as? String == "systole/workout" })
        for message in messages + more {
            let payload = message["payload"] as? String ?? ""
            #expect(
                !payload.contains("heart_rate") && !payload.contains("bpm") && !payload.contains("zone"),
                "\(message)"
            )
        }
        // The heart-rate entities are withdrawn: the stale config is gone from the broker, and none is announced.
        #expect(!more.contains { ($0["topic"] as? String)?.hasSuffix("/heart_rate/config") == true }, "\(more)")
        #expect(!more.contains { ($0["topic"] as? String)?.hasSuffix("/zone/config") == true })
        #expect(more.contains { ($0["topic"] as? String)?.hasSuffix("/battery/config") == true })
        // A clean stop says goodbye.
        s.daemon.signal(SIGTERM)
        let exit = try await s.daemon.waitForExit()
        let errors = exit == 0 ? "" : await s.daemon.standardError()
        #expect(exit == 0, "systoled exited \(exit.map(String.init) ?? "late"): \(errors)")
        let goodbye = try await s.watch(seconds: 5)
        #expect(goodbye.last { $0["topic"] as? String == "systole/status" }?["payload"] as? String == "offline")
    }

    /// TLS checked against the configured CA: with the broker's CA systoled connects and publishes; with another
    /// CA (a broker, or someone in the middle, whose certificate it cannot check) it does not connect, says why
    /// once, and records on.
    @Test func tlsIsCheckedAgainstTheConfiguredCA() async throws {
        let s = try await Setup(
            brokerFirst: true,
            tls: true,
            mqtt: "broker = \"mqtts://127.0.0.1:$TLS_PORT\"\nca_file = \"$CA\""
        )
        defer { s.stop() }
        try await s.start()
        // The watcher reads through the plain listener what systoled sent through the TLS one.
        let messages = try await s.watch(seconds: 60, ["--until-live", "systole/sensor/\(s.sensorID)"])
        #expect(messages.contains { $0["topic"] as? String == "systole/sensor/\(s.sensorID)" })
        #expect(try await s.metric("systole_mqtt_connected") == 1)

        // Another CA: the broker's certificate cannot be checked.
        let other = try MosquittoBroker(folder: s.folder.appendingPathComponent("other"), tls: true)
        let wrong = try await Setup(
            brokerFirst: true,
            tls: true,
            mqtt: "broker = \"mqtts://127.0.0.1:$TLS_PORT\"\nca_file = \"\(other.caFile)\""
        )
        defer { wrong.stop() }
        try await wrong.start()
        // systoled tried the TLS listener, and the handshake failed (the broker logs it); a connection that went
        // through anyway would publish within the watch that follows.
        try await waitUntil("systoled's TLS handshake failing at the broker") {
            wrong.broker.log().contains("OpenSSL Error")
        }
        let silent = try await wrong.watch(seconds: 2)
        #expect(!silent.contains { ($0["topic"] as? String)?.hasPrefix("systole/") == true })
        #expect(try await wrong.metric("systole_mqtt_connected") != 1)
        let status = try await CommandRunner.run("systole", ["status", "--json", "--bus", wrong.bus.address])
        #expect(status.standardOutput.contains("\"state\" : \"running\""))
        wrong.daemon.signal(SIGTERM)
        let exit = try await wrong.daemon.waitForExit()
        let log = await wrong.daemon.standardError()
        #expect(exit == 0, "systoled exited with \(exit.map(String.init) ?? "nothing (killed)"): \(log.suffix(3000))")
        // Why, said once per reason (libmosquitto gives OpenSSL's words and its own), not at every retry.
        let complaints = log.split(separator: "\n").filter { $0.contains("MQTT: not connected") }
        #expect((1...4).contains(complaints.count), "\(log)")
        #expect(complaints.contains { $0.contains("certificate verify failed") }, "\(log)")
    }
}
