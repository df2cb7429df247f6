import ControlAPI
import DBus
import Foundation
import SystoleTestSupport
import Testing

@testable import Daemon

/// `buildDaemon(arguments)`, in this process: the same wiring systoled runs.
@Suite struct BuildDaemonTests {
    @Test func theServiceGroupAnswersOnTheBusAndStopsGracefully() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("build-daemon-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let daemon = try await buildDaemon(
            [
                "--config", "/dev/null", "--bus", bus.address, "--store",
                folder.appendingPathComponent("h.sqlite").path,
                "--live-log", folder.appendingPathComponent("live.log").path, "--sensor", "A0:9E:1A:12:34:56",
            ],
            environment: [:]
        )
        #expect(daemon.configuration.storePath.hasSuffix("/h.sqlite"))
        let running = Task { try await daemon.run() }
        let client = try await DBusConnection.connect(to: .address(bus.address))
        defer { client.close() }
        func call(_ method: String) async throws(DBusError) -> [DBusValue] {
            try await client.call(
                destination: ControlAPI.busName,
                path: ControlAPI.objectPath,
                interface: ControlAPI.interface,
                method: method
            )
        }
        // No bluetoothd on this bus: the configured sensor is listed, searching.
        let sensors = try await call("ListSensors").first?.array?.compactMap(\.propertyMap) ?? []
        #expect(sensors.first?["address"] == .string("A0:9E:1A:12:34:56"))
        #expect(sensors.first?["connected"] == .boolean(false))
        let error = await #expect(throws: DBusError.self) { _ = try await call("PauseWorkout") }
        #expect(error?.name == ControlAPI.ErrorName.noWorkout)
        // A second daemon on the same bus cannot take the name.
        let second = await #expect(throws: DaemonStartError.self) {
            _ = try await buildDaemon(
                [
                    "--config", "/dev/null", "--bus", bus.address, "--store",
                    folder.appendingPathComponent("2.sqlite").path,
                    "--live-log", folder.appendingPathComponent("2.log").path,
                ],
                environment: [:]
            )
        }
        #expect(second?.description.contains("another systoled is running on this bus") == true)
        #expect(second?.exitCode == 69)

        await daemon.group.triggerGracefulShutdown()
        try await running.value
        #expect(try await client.nameOwner(of: ControlAPI.busName) == nil, "the name is released")
    }

    @Test func startErrorsSayWhatToDoWithTheirExitCodes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("build-daemon-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let noBus = await #expect(throws: DaemonStartError.self) {
            _ = try await buildDaemon(
                [
                    "--config", "/dev/null", "--bus", "unix:path=/nonexistent/bus", "--store",
                    folder.appendingPathComponent("h.sqlite").path, "--live-log",
                    folder.appendingPathComponent("l").path,
                ],
                environment: [:]
            )
        }
        #expect(noBus?.exitCode == 69)
        #expect(noBus?.description.hasPrefix("cannot connect to the unix:path=/nonexistent/bus bus") == true)
        let says = noBus?.description ?? ""
        #expect(says.components(separatedBy: "cannot connect").count == 2, "the reason once: \(says)")
        #expect(says.hasSuffix("Choose another bus with --bus or 'bus' in the configuration"))
        let badFlag = await #expect(throws: DaemonStartError.self) {
            _ = try await buildDaemon(["--frobnicate"], environment: [:])
        }
        #expect(badFlag?.exitCode == 64)
        let badStore = await #expect(throws: DaemonStartError.self) {
            _ = try await buildDaemon(
                ["--config", "/dev/null", "--store", "/proc/systole/health.sqlite"],
                environment: [:]
            )
        }
        #expect(badStore?.exitCode == 73)
    }

    @Test func theBusTickFromTheEnvironmentStaysWithinASecond() {
        #expect(busTick(fromEnvironment: nil) == busTick)
        #expect(busTick(fromEnvironment: "20") == .milliseconds(20))
        #expect(busTick(fromEnvironment: "-5") == .zero)
        #expect(busTick(fromEnvironment: "99999999999") == .seconds(1), "a longer tick leaves callers unanswered")
        #expect(busTick(fromEnvironment: "NaN") == busTick)
        #expect(busTick(fromEnvironment: "1e9") == busTick)
    }
}
