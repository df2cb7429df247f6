import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// MQTT's failures that systoled must live through: a hostile or impersonated broker (a fake one on loopback: a
/// real broker sends systoled, which never subscribes, no message at all) that announces a 256 MiB message and
/// streams it on every connection, and a setting libmosquitto refuses. Recording goes on through both.
@Suite struct MQTTHostileBrokerTests {
    /// The real systoled with `[mqtt]` lines, beside a strap on a private bus.
    final class Setup: @unchecked Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-mqtt-hostile-\(UUID())")
        let bus: PrivateBus
        let simulator: SimulatorProcess
        var daemon: DaemonProcess!

        init(mqtt: String) async throws {
            let daemonFolder = folder.appendingPathComponent("daemon")
            try FileManager.default.createDirectory(at: daemonFolder, withIntermediateDirectories: true)
            try "[mqtt]\n\(mqtt)\n".write(
                to: daemonFolder.appendingPathComponent("systoled.toml"),
                atomically: true,
                encoding: .utf8
            )
            bus = try await PrivateBus.start()
            simulator = try await SimulatorProcess.start(bus: bus, ["--model", "polar-h10", "--rate", "1"])
            daemon = try await DaemonProcess.start(bus: bus, folder: daemonFolder)
        }

        var readings: Int { daemon.liveLogLines().filter { $0.contains(" bpm=") }.count }

        func stop() {
            daemon?.stopNow()
            simulator.stop()
            bus.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test func aHugeMessageFromTheBrokerEndsOnlyTheClientProcess() async throws {
        let broker = try HostileBroker()
        defer { broker.stop() }
        let s = try await Setup(mqtt: "broker = \"mqtt://127.0.0.1:\(broker.port)\"")
        defer { s.stop() }
        let daemon = s.daemon!

        // Connected and publishing; then systoled's peak resident memory is counted from what it is now.
        let connected = await eventually(every: .milliseconds(200)) { broker.recorded.connects >= 1 }
        try #require(connected, "systoled never connected to the broker")
        let before = daemon.memory("VmRSS")
        try "5".write(
            toFile: "/proc/\(daemon.process.processIdentifier)/clear_refs",
            atomically: false,
            encoding: .utf8
        )
        broker.attack()
        // Three attacks: the client process that reconnected and two that took its place.
        let attacked = await eventually(every: .milliseconds(200)) { broker.recorded.attacked >= 3 }
        #expect(attacked, "the broker attacked \(broker.recorded.attacked) connection(s)")
        let readingsThen = s.readings
        // Recording went on: readings keep arriving after the broker's attacks.
        let recording = await eventually(every: .milliseconds(200)) { s.readings >= readingsThen + 3 }
        #expect(recording, "no readings after the broker's messages")
        // systoled never held the message: its resident memory grew by less than a few MiB.
        let growth = daemon.memory("VmHWM") - before
        #expect(before > 0 && growth < 8 << 10, "systoled's peak resident memory grew by \(growth) KiB")
        // The client process refused it at its announced length: what the broker got into the socket is the
        // kernel's buffers, not the message.
        #expect(broker.recorded.mostBytesSent < 32 << 20, "\(broker.recorded.mostBytesSent) bytes of it were taken")
        #expect(daemon.process.isRunning)
        // And it stops as usual, with its client process.
        daemon.signal(SIGTERM)
        #expect(try await daemon.waitForExit() == 0)
        let log = await daemon.standardError()
        // Said as what it is, with what to check (not as systoled being out of memory).
        #expect(log.contains("the broker sent a message larger than systoled takes"), "\(log)")
    }

    /// A CA file that cannot be read: libmosquitto refuses it before any connection, no retry can mend that, so
    /// MQTT is off with one error that says where to look, and recording goes on.
    @Test func aSettingLibmosquittoRefusesTurnsMQTTOffOnce() async throws {
        // With an escape sequence in its name, which must not reach the log as one.
        let s = try await Setup(mqtt: "broker = \"mqtts://127.0.0.1:1\"\nca_file = \"/nonexistent/\\u001B[31mca.pem\"")
        defer { s.stop() }
        let readingsThen = s.readings
        // Longer than the first retries would take (1 s, 2 s, 4 s): none comes.
        let recording = await eventually(every: .milliseconds(200)) { s.readings >= readingsThen + 8 }
        #expect(recording, "no readings while MQTT was refused")
        s.daemon.signal(SIGTERM)
        #expect(try await s.daemon.waitForExit() == 0)
        let log = await s.daemon.standardError()
        let off = log.split(separator: "\n").filter { $0.contains("MQTT is off") }
        #expect(off.count == 1, "\(log)")
        #expect(off.first?.contains("'/nonexistent/\\u{1B}[31mca.pem'") == true, "\(log)")
        #expect(off.first?.contains("[mqtt] table") == true && !log.contains("\u{1B}"), "\(log)")
        #expect(!log.contains("MQTT: not connected"), "\(log)")
    }
}
