import Foundation
import SystoleTestSupport
import Testing

/// `systole scan` and `systole monitor` as real processes, against a real `systole-sim` process on a private bus.
@Suite struct BluetoothCommandTests {
    @Test func scanListsSensorsWithNameMakerRSSIAndPairing() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--sensors", "2", "--model", "wahoo-tickr"])
        defer { simulator.stop() }
        #expect(simulator.addresses.count == 2)

        let text = try await systole(["scan", "--bus", bus.address, "--seconds", "0.6"])
        #expect(text.status == 0)
        let lines = text.standardOutput.split(separator: "\n")
        #expect(lines.count == 2)
        for address in simulator.addresses {
            let line = try #require(lines.first { $0.hasPrefix(address) })
            #expect(line.contains(" · TICKR "))
            #expect(line.contains(" · Wahoo Fitness, LLC · "))
            #expect(line.contains(" dBm"))
            #expect(!line.contains("paired"))
        }

        let json = try await systole(["scan", "--bus", bus.address, "--seconds", "0.6", "--json"])
        let objects = try json.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(Set(objects.compactMap { $0["address"] as? String }) == Set(simulator.addresses))
        #expect(objects.allSatisfy { $0["paired"] as? Bool == false && $0["rssi"] is Int })
    }

    @Test func monitorPrintsEachDecodedMeasurementAsTheSimulatorSentIt() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("emit-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--rate", "10", "--emit-log", log])
        defer { simulator.stop() }
        let address = try #require(simulator.addresses.first)

        let result = try await systole(["monitor", address, "--bus", bus.address, "--json", "--count", "8"])
        #expect(result.status == 0)
        #expect(result.standardError.contains("systole: streaming"))
        #expect(result.standardError.contains("body sensor location: chest"))
        let lines = result.standardOutput.split(separator: "\n")
        #expect(lines.count == 8)
        let emitted = try wholeLines(of: log).map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        for (index, line) in lines.enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["sensor"] as? String == address)
            #expect((object["time"] as? String)?.hasSuffix("Z") == true)
            // The same measurement, decoded by `systole decode` from the payload the simulator logged.
            let payload = try #require(emitted[index]["payload"] as? String)
            let decoded = try await systole(["decode", payload, "--json"])
            let expected = try #require(
                try JSONSerialization.jsonObject(with: Data(decoded.standardOutput.utf8)) as? [String: Any]
            )
            for key in ["heartRate", "rrIntervals", "sensorContact", "energyExpended"] {
                #expect("\(object[key] ?? "nil")" == "\(expected[key] ?? "nil")", "\(key) of measurement \(index)")
            }
        }
    }

    @Test func clearErrorsForEachWayItCanFail() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }

        let noBluetoothd = try await systole(["scan", "--bus", bus.address, "--seconds", "0.2"])
        #expect(noBluetoothd.status == 1)
        #expect(noBluetoothd.standardError.contains("bluetoothd is not running"))

        let noBus = try await systole(["monitor", "--bus", "unix:path=/nonexistent/bus"])
        #expect(noBus.status == 1)
        #expect(noBus.standardError.contains("Is D-Bus running, and is --bus right?"))

        let badAdapter = try await systole(["scan", "--adapter", "bluetooth0"])
        #expect(badAdapter.status == 2)
        #expect(badAdapter.standardError.contains("--adapter takes a name like hci0"))

        let badAddress = try await systole(["monitor", "12:34"])
        #expect(badAddress.status == 2)
        #expect(badAddress.standardError.contains("is not a Bluetooth address"))

        let simulator = try await SimulatorProcess.start(bus: bus, [])
        defer { simulator.stop() }
        let noAdapter = try await systole(["scan", "--bus", bus.address, "--adapter", "hci4", "--seconds", "0.2"])
        #expect(noAdapter.status == 1)
        #expect(noAdapter.standardError.contains("no adapter named hci4 (found: hci0)"))

        let absent = try await systole(["monitor", "00:11:22:33:44:55", "--bus", bus.address])
        #expect(absent.status == 1)
        #expect(absent.standardError.contains("cannot monitor 00:11:22:33:44:55: DoesNotExist: no sensor matching"))
    }

    @Test func noAdapterAndNoPermissionAreExplained() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let scenario = FileManager.default.temporaryDirectory.appendingPathComponent("none-\(UUID()).json").path
        defer { try? FileManager.default.removeItem(atPath: scenario) }
        _ = FileManager.default.createFile(atPath: scenario, contents: Data(#"{"adapters": []}"#.utf8))
        let simulator = try await SimulatorProcess.start(bus: bus, ["--scenario", scenario])
        defer { simulator.stop() }
        let none = try await systole(["scan", "--bus", bus.address, "--seconds", "0.2"])
        #expect(none.status == 1)
        #expect(none.standardError.contains("no Bluetooth adapter found"))

        // A bus that refuses calls to org.bluez, as the system bus does for users outside group 'bluetooth'.
        let guarded = try await PrivateBus.start(extraPolicy: #"<deny send_destination="org.bluez"/>"#)
        defer { guarded.stop() }
        let other = try await SimulatorProcess.start(bus: guarded, [])
        defer { other.stop() }
        let denied = try await systole(["scan", "--bus", guarded.address, "--seconds", "0.2"])
        #expect(denied.status == 1)
        #expect(denied.standardError.contains("not authorised to talk to bluetoothd"))
        #expect(denied.standardError.contains("group 'bluetooth'"))
    }

    @Test func theSimulatorRefusesTheSystemBusAndMixedOptions() async throws {
        let system = try await CommandRunner.run("systole-sim", ["--bus", "system"])
        #expect(system.status != 0)
        #expect(system.standardError.contains("refusing the system bus"))
        let mixed = try await CommandRunner.run("systole-sim", ["--scenario", "/tmp/x.json", "--sensors", "3"])
        #expect(mixed.status != 0)
        #expect(mixed.standardError.contains("with --scenario, put them in the file"))
    }
}
