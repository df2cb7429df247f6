import Foundation
import SystoleTestSupport
import Testing

/// `systole monitor --ecg --acc`: a Polar H10's ECG and accelerometer frames as JSON lines, beside the heart rate.
@Suite struct MonitorECGTests {
    @Test func framesArePrintedAsJSONLinesAsTheSimulatorSentThem() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("emit-\(UUID()).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let simulator = try await SimulatorProcess.start(bus: bus, ["--rate", "1", "--pmd", "--emit-log", log])
        defer { simulator.stop() }
        let address = try #require(simulator.addresses.first)

        let result = try await systole([
            "monitor", address, "--bus", bus.address, "--json", "--ecg", "--acc", "50", "--count", "4",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("systole: ECG started"))
        #expect(result.standardError.contains("systole: ACC started"))
        let objects = try result.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let ecg = objects.filter { $0["type"] as? String == "ecg" }
        let acc = objects.filter { $0["type"] as? String == "acc" }
        #expect(objects.filter { $0["heartRate"] != nil }.count == 4)
        #expect(ecg.count >= 3 && acc.count >= 3)
        #expect(ecg.first?["segment"] as? String == "start")
        #expect(ecg.dropFirst().allSatisfy { $0["segment"] is NSNull })
        // The samples the simulator sent, frame by frame: the emit log's PMD payloads, ECG ones start with 00.
        let sent = try wholeLines(of: log).compactMap { line -> String? in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard object?["pmd"] as? Bool == true, let payload = object?["payload"] as? String, payload.hasPrefix("00")
            else { return nil }
            return payload
        }
        for (frame, payload) in zip(ecg, sent) {
            let microvolts = try #require(frame["microvolts"] as? [Int])
            #expect(microvolts.count == 73)
            #expect(frame["sensor"] as? String == address)
            #expect(Self.microvolts(payload) == microvolts)
            let rate = try #require(frame["rate"] as? Double)
            #expect(abs(rate - 130) < 1.5)
        }
        #expect(acc.allSatisfy { ($0["milliG"] as? [[Int]])?.count == 36 })
    }

    /// The µV values of an ECG frame's payload (hex), read as the PMD notes describe: 10 header bytes, then 3-byte
    /// little-endian signed samples.
    static func microvolts(_ hex: String) -> [Int] {
        let digits = Array(hex)
        let bytes = stride(from: 0, to: digits.count, by: 2).map { Int(String(digits[$0...$0 + 1]), radix: 16)! }
        return stride(from: 10, to: bytes.count - 2, by: 3).map { index in
            let value = bytes[index] | bytes[index + 1] << 8 | bytes[index + 2] << 16
            return value >= 1 << 23 ? value - (1 << 24) : value
        }
    }

    @Test func aWrongAccelerometerRateIsRefusedBeforeConnecting() async throws {
        let result = try await systole(["monitor", "--ecg", "--acc", "60"])
        #expect(result.status != 0)
        #expect(result.standardError.contains("--acc must be 25, 50, 100 or 200 (Hz), got 60"))
    }
}
