import DBus
import Foundation
import PolarMeasurementData
import SystoleTestSupport
import Testing

@testable import BlueZSimulator

/// Polar's PMD service on the simulated H10, as a raw D-Bus client drives it.
extension SimulatorBusTests {
    static func pmdScenario(_ configure: (inout PMDSpec) -> Void = { _ in }) -> Scenario {
        var scenario = Scenario()
        var pmd = PMDSpec()
        configure(&pmd)
        scenario.sensors[0].pmd = pmd
        return scenario
    }

    /// The control point's and data's paths on a connected device.
    static func pmdPaths(_ device: String) -> (controlPoint: String, data: String) {
        (device + "/service0016/char0017", device + "/service0016/char001a")
    }

    @Test func anH10ShowsThePMDServiceAndWhatItMeasures() async throws {
        try await withFixture(Self.pmdScenario()) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            let objects = try await f.objects()
            let (controlPoint, data) = Self.pmdPaths(path)
            #expect(
                objects[path + "/service0016"]?["org.bluez.GattService1"]?["UUID"] == .string(PMDService.serviceUUID)
            )
            let cp = try #require(objects[controlPoint]?["org.bluez.GattCharacteristic1"])
            #expect(cp["Flags"] == .strings(["read", "write", "indicate"]))
            #expect(cp["MTU"] == .uint16(232))
            #expect(objects[data]?["org.bluez.GattCharacteristic1"]?["Flags"] == .strings(["notify"]))
            #expect(objects[path]?["org.bluez.Device1"]?["UUIDs"]?.strings?.contains(PMDService.serviceUUID) == true)
            let features = try await f.call(
                controlPoint,
                "org.bluez.GattCharacteristic1",
                "ReadValue",
                [.propertyMap([:])]
            )
            #expect(features.first?.bytes == [0x0F, 0x05, 0x00])
        }
    }

    @Test func commandsAreAnsweredOnlyWithIndicationsAndNotificationsOn() async throws {
        try await withFixture(Self.pmdScenario { $0.refuseECG = 13 }) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            let (controlPoint, data) = Self.pmdPaths(path)
            let answers = try await f.propertyChanges(of: controlPoint).compactMap { signal -> [UInt8]? in
                signal.arguments[1].propertyMap?["Value"]?.bytes
            }
            var iterator = answers.makeAsyncIterator()
            func write(_ command: PMDCommand) async throws {
                _ = try await f.call(
                    controlPoint,
                    "org.bluez.GattCharacteristic1",
                    "WriteValue",
                    [.bytes(command.encoded()), .propertyMap([:])]
                )
            }
            func answer() async throws -> PMDResponse {
                guard
                    case .response(let response)? = try await iterator.next().map({
                        try PMDControlPointMessage(decoding: $0)
                    })
                else { throw Unexpected() }
                return response
            }
            // Indications on, notifications off: the strap takes the write and says nothing.
            _ = try await f.call(controlPoint, "org.bluez.GattCharacteristic1", "StartNotify")
            try await write(.getSettings(.ecg))
            _ = try await f.call(data, "org.bluez.GattCharacteristic1", "StartNotify")
            try await write(.getSettings(.acceleration))
            let settings = try await answer()
            #expect(settings.opcode == .getSettings && settings.type == .acceleration && settings.status == .success)
            #expect(try PMDSettings(decoding: settings.parameters).values[.sampleRate] == [25, 50, 100, 200])
            try await write(.startH10ECG)
            let refused = try await answer()
            #expect(refused.status == .deviceInCharger && refused.type == .ecg)
            try await write(.start(.ecg, PMDSettings([.sampleRate: [250], .resolution: [14]])))
            #expect(try await answer().status == .deviceInCharger)
            try await write(.startAcceleration(rate: 60, range: 8))
            #expect(try await answer().status == .invalidSampleRate)
            try await write(.startAcceleration(rate: 50, range: 3))
            #expect(try await answer().status == .invalidRange)
            try await write(.stop(.ecg))
            #expect(try await answer().status == .alreadyInState)
        }
    }

    struct Unexpected: Error {}

    @Test func ecgStreamsUntilStoppedOrTheLinkGoes() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("emit-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        try await withFixture(Self.pmdScenario { $0.rate = 500 }, emitLog: log) { f in
            let path = try await f.discoverAndConnect()
            try await f.waitForServices(path)
            let (controlPoint, data) = Self.pmdPaths(path)
            let frames = try await f.propertyChanges(of: data).compactMap { signal -> PMDFrame? in
                try signal.arguments[1].propertyMap?["Value"]?.bytes.map { try PMDFrame(decoding: $0) }
            }
            _ = try await f.call(controlPoint, "org.bluez.GattCharacteristic1", "StartNotify")
            _ = try await f.call(data, "org.bluez.GattCharacteristic1", "StartNotify")
            _ = try await f.call(
                controlPoint,
                "org.bluez.GattCharacteristic1",
                "WriteValue",
                [.bytes(PMDCommand.startH10ECG.encoded()), .propertyMap([:])]
            )
            var received: [PMDFrame] = []
            for try await frame in frames {
                received.append(frame)
                if received.count == 8 { break }
            }
            #expect(received.allSatisfy { $0.type == .ecg && $0.content.count == 73 * 3 })
            // 73 samples at 500 Hz between frames, on a clock that started at 2019-01-01.
            for (previous, next) in zip(received, received.dropFirst()) {
                #expect(abs(Double(next.sensorTimestamp - previous.sensorTimestamp) - 73e9 / 500) < 1000)
            }
            #expect(received[0].unixSeconds > 1_546_300_800 && received[0].unixSeconds < 1_546_300_900)
            let logged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter {
                $0.contains("\"pmd\":true")
            }
            #expect(logged.count >= 8)
            #expect(await f.simulator.pmdStreamsRunning(sensor: 0) == 1)
            await f.simulator.takeOutOfRange(sensor: 0, for: .milliseconds(100))
            #expect(await f.simulator.pmdStreamsRunning(sensor: 0) == 0, "the strap forgot its ECG with the link")
        }
    }
}
