import BlueZ
import DBus
import Foundation
import Testing
import WorkoutKit

@testable import Daemon

@Suite struct ConfigurationTests {
    let environment = ["STATE_DIRECTORY": "/var/lib/systole", "LOGS_DIRECTORY": "/var/log/systole"]

    func configuration(_ text: String) throws(DaemonConfiguration.Error) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(environment: environment)
        try configuration.apply(text, file: "systoled.toml")
        return configuration
    }

    func error(_ text: String) -> DaemonConfiguration.Error? {
        do {
            _ = try configuration(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func everySettingIsRead() throws {
        let text = """
            # systoled
            bus = "unix:path=/run/test-bus"   # a private bus
            adapter = "hci1"
            store = '/srv/systole/health.sqlite'
            sensors = [
                "A0:9E:1A:12:34:56",
                "any",
            ]
            sample_types = ["heartRate", "dietaryWater"]

            [live_log]
            path = "/srv/systole/live.log"
            format = "json"
            max_size = 1_048_576
            keep = 5
            privacy = "duration-only"
            """
        let c = try configuration(text)
        #expect(c.bus == .address("unix:path=/run/test-bus"))
        #expect(c.adapter == "hci1")
        #expect(c.storePath == "/srv/systole/health.sqlite")
        #expect(c.sensors == [.address(try BluetoothAddress("A0:9E:1A:12:34:56")), .any])
        #expect(c.sampleTypes == [.heartRate, .dietaryWater])
        #expect(c.liveLogPath == "/srv/systole/live.log")
        #expect(c.liveLogFormat == .json)
        #expect(c.liveLogMaximumSize == 1_048_576)
        #expect(c.liveLogKeep == 5)
        #expect(c.privacy == .durationOnly)
    }

    @Test func defaultsFollowSystemdsDirectories() {
        let c = DaemonConfiguration(environment: ["STATE_DIRECTORY": "/var/lib/s1:/var/lib/s2", "LOGS_DIRECTORY": "/l"])
        #expect(c.storePath == "/var/lib/s1/health.sqlite")
        #expect(c.liveLogPath == "/l/live.log")
        #expect(c.bus == .system && c.sensors == [.any] && c.privacy == .full && c.adapter == nil)
    }

    @Test func mistakesNameTheLineAndWhatToDo() {
        let cases: [(String, Int, String)] = [
            ("bus = \"system\"\nfrobnicate = 1", 2, "unknown setting 'frobnicate'; known: bus, adapter, store"),
            ("[live_log]\nsize = 10", 2, "unknown setting 'size' in [live_log]; known: path, format, max_size"),
            ("[logging]\npath = \"/x\"", 2, "unknown table [logging]; the only table is [live_log]"),
            ("bus = \"sytem\"", 1, "bus must be \"system\", \"session\" or a D-Bus address"),
            ("adapter = \"bluetooth0\"", 1, "adapter must be a name like \"hci0\""),
            ("sensors = [\"12:34\"]", 1, "\"12:34\" is not a sensor: use an address like"),
            ("sensors = []", 1, "sensors is empty"),
            ("sample_types = [\"steps\"]", 1, "unknown sample type \"steps\"; known: heartRate"),
            ("store = \"health.sqlite\"", 1, "store must be an absolute path"),
            ("\n\n[live_log]\nmax_size = \"big\"", 4, "max_size must be a whole number, not a string"),
            ("[live_log]\nprivacy = \"none\"", 2, "live_log.privacy must be \"full\" or \"duration-only\""),
            ("bus = system", 1, "'system' is not a value: strings need quotes"),
            ("bus = \"system\"\nbus = \"session\"", 2, "'bus' is set twice"),
            ("live_log.path = \"/x\"", 1, "dotted keys are not used here"),
            ("sensors = [\"any\"", 1, "an array is not closed"),
            ("bus = \"system", 1, "a string is not closed"),
            ("bus = \"system\" store = \"/x\"", 1, "unexpected text after the value"),
        ]
        for (text, line, reason) in cases {
            let error = error(text)
            #expect(error?.file == "systoled.toml", "\(text)")
            #expect(error?.line == line, "\(text)")
            #expect(error?.reason.hasPrefix(reason) == true, "\(text): \(error?.reason ?? "no error")")
        }
    }

    @Test func flagsOverrideTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("systoled-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("systoled.toml").path
        try "bus = \"session\"\nstore = \"/a/health.sqlite\"\n".write(toFile: file, atomically: true, encoding: .utf8)
        let options = try DaemonOptions.parse([
            "--config", file, "--store", "/b/health.sqlite", "--live-log", "/b/live.log", "--sensor", "any",
        ])
        let c = try options.configuration(environment: environment)
        #expect(c.bus == .session)
        #expect(c.storePath == "/b/health.sqlite")
        #expect(c.liveLogPath == "/b/live.log")
        let bus = try DaemonOptions.parse(["--config", file, "--bus", "system"]).configuration(environment: environment)
        #expect(bus.bus == .system)
    }

    @Test func aMissingFileIsAnErrorOnlyWhenNamed() throws {
        #expect(throws: Never.self) {
            _ = try DaemonConfiguration.load(path: "/nonexistent/systoled.toml", optional: true)
        }
        let error = #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/nonexistent/systoled.toml"]).configuration()
        }
        #expect(error?.description.hasPrefix("/nonexistent/systoled.toml: does not exist") == true)
        let flag = #expect(throws: DaemonConfiguration.Error.self) {
            _ = try DaemonOptions.parse(["--config", "/dev/null", "--adapter", "hci"]).configuration()
        }
        #expect(flag?.description.hasPrefix("--adapter: adapter must be a name like \"hci0\"") == true)
    }

    @Test func theExampleFileIsValid() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/systoled.toml.example").path
        let c = try DaemonConfiguration.load(path: example, environment: environment)
        #expect(c.bus == .system)
        #expect(c.sensors == [.any])
    }
}
