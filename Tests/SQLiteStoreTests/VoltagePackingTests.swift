import Foundation
import PropertyBased
import SystoleTestSupport
import Testing

@testable import SQLiteStore

/// ECG voltages packed for the store: exact round trips, refusals of what systole never writes, and the size on a
/// realistic ECG (NeuroKit2's ecg_simulate at 130 Hz, as an H10 samples).
@Suite struct VoltagePackingTests {
    @Test func everyValueComesBackExactly() async throws {
        await propertyCheck(count: 500, input: Gen.int32().array(of: 0...300)) { values in
            #expect((try? VoltagePacking.unpack(VoltagePacking.pack(values))) == values)
        }
        let extremes: [Int32] = [.min, .max, .min, 0, -1, 1, .max, .max]
        #expect(try VoltagePacking.unpack(VoltagePacking.pack(extremes)) == extremes)
    }

    @Test func cutOrOverlongBytesAreRefused() {
        #expect(throws: VoltagePacking.Unreadable(offset: 2)) { try VoltagePacking.unpack(Data([0x02, 0x80])) }
        #expect(throws: VoltagePacking.Unreadable.self) { try VoltagePacking.unpack(Data(repeating: 0xFF, count: 9)) }
        // A delta that leaves 32 bits: Int32.max then +1.
        var tooFar = VoltagePacking.pack([.max])
        tooFar.append(0x02)
        #expect(throws: VoltagePacking.Unreadable.self) { try VoltagePacking.unpack(tooFar) }
    }

    @Test func anECGAt130HzCostsAboutOneByteASample() async throws {
        let script = """
            import json, sys, warnings
            import numpy as np
            import neurokit2 as nk
            warnings.simplefilter("ignore")
            signals = []
            for seed, rate, noise in [(1, 60, 0.05), (2, 150, 0.1), (3, 180, 0.2)]:
                ecg = nk.ecg_simulate(duration=60, sampling_rate=130, noise=noise, heart_rate=rate, random_state=seed)
                signals.append([int(v) for v in np.rint(ecg * 1000)])
            json.dump(signals, sys.stdout)
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-ecg-\(UUID()).py")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let output = try await PythonTools.run(file.path, [])
        let signals = try JSONDecoder().decode([[Int32]].self, from: Data(output.utf8))
        for signal in signals {
            let packed = VoltagePacking.pack(signal)
            #expect(try VoltagePacking.unpack(packed) == signal)
            let perSample = Double(packed.count) / Double(signal.count)
            // The bound is about two bytes for the H10's three.
            #expect(perSample < 1.5, "\(perSample) bytes a sample")
        }
    }
}
