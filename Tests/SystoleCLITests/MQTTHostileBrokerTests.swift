import Foundation
import Glibc
import SystoleTestSupport
import Testing

/// A hostile or impersonated broker (a fake one on loopback: a real broker sends systoled, which never subscribes,
/// no message at all) announces a 256 MiB message and streams it, on every connection. The MQTT client process
/// cannot allocate it and ends, another takes its place after a backoff, and systoled itself neither grows nor
/// stops recording.
@Suite struct MQTTHostileBrokerTests {
    @Test func aHugeMessageFromTheBrokerEndsOnlyTheClientProcess() async throws {
        let broker = try HostileBroker()
        defer { broker.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systole-mqtt-hostile-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let daemonFolder = folder.appendingPathComponent("daemon")
        try FileManager.default.createDirectory(at: daemonFolder, withIntermediateDirectories: true)
        try """
        [mqtt]
        broker = "mqtt://127.0.0.1:\(broker.port)"

        """.write(to: daemonFolder.appendingPathComponent("systoled.toml"), atomically: true, encoding: .utf8)
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--model", "polar-h10", "--rate", "1"])
        defer { simulator.stop() }
        let daemon = try await DaemonProcess.start(bus: bus, folder: daemonFolder)
        defer { daemon.stopNow() }

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
        let readingsThen = daemon.liveLogLines().filter { $0.contains(" bpm=") }.count
        // Recording went on: readings keep arriving after the broker's attacks.
        let recording = await eventually(every: .milliseconds(200)) {
            daemon.liveLogLines().filter { $0.contains(" bpm=") }.count >= readingsThen + 3
        }
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
        #expect(log.contains("MQTT: not connected to 127.0.0.1:\(broker.port)"), "\(log)")
    }
}
