import Foundation
import SystoleTestSupport
import Testing

@testable import WorkoutAnalysis

/// systole's R-peak detector against NeuroKit2's `ecg_peaks` (0.2.13) on ECGs from its `ecg_simulate` at 130 Hz,
/// an H10's rate, with noise: at least 99.5 % of NeuroKit's peaks found within one sample, at most 0.5 % extra.
@Suite struct RPeakDetectorTests {
    struct Reference: Decodable {
        struct Case: Decodable {
            var microvolts: [Int]
            var peaks: [Int]
        }
        var cases: [Case]
    }

    static func reference(rate: Double, cases: [[String: Double]]) async throws -> Reference {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-ecg-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: ["rate": rate, "cases": cases] as [String: Any]).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/neurokit_ecg.py")
        let output = try await PythonTools.run(script.path, [file.path])
        return try JSONDecoder().decode(Reference.self, from: Data(output.utf8))
    }

    @Test func agreesWithNeuroKitOnSimulatedECGsAt130Hz() async throws {
        // Resting to hard effort, with more noise than a strap on wet skin shows.
        var cases: [[String: Double]] = []
        for (seed, heartRate) in [(1, 55.0), (2, 70), (3, 90), (4, 120), (5, 150), (6, 175)] {
            for noise in [0.05, 0.15] {
                cases.append(["seed": Double(seed), "duration": 120, "heartRate": heartRate, "noise": noise])
            }
        }
        let reference = try await Self.reference(rate: 130, cases: cases)
        var theirs = 0
        var found = 0
        var extra = 0
        for (index, item) in reference.cases.enumerated() {
            let ours = RPeakDetector.peaks(in: item.microvolts.map(Double.init), rate: 130)
            let matched = item.peaks.filter { peak in ours.contains { abs($0 - peak) <= 1 } }
            let unmatched = ours.filter { peak in !item.peaks.contains { abs($0 - peak) <= 1 } }
            theirs += item.peaks.count
            found += matched.count
            extra += unmatched.count
            #expect(item.peaks.count > 100, "case \(index): NeuroKit found \(item.peaks.count) peaks in 120 s")
        }
        let recall = Double(found) / Double(theirs)
        let extraShare = Double(extra) / Double(theirs)
        #expect(recall >= 0.995, "found \(found) of NeuroKit's \(theirs) peaks")
        #expect(extraShare <= 0.005, "\(extra) peaks NeuroKit did not find, of \(theirs)")
    }

    @Test func nothingToFindInSilenceOrOutsideTheRates() {
        #expect(RPeakDetector.peaks(in: Array(repeating: 0, count: 1300), rate: 130).isEmpty)
        #expect(RPeakDetector.peaks(in: Array(repeating: 5, count: 100), rate: 130).isEmpty)
        #expect(RPeakDetector.peaks(in: (0..<2000).map { Double($0 % 100) }, rate: 20).isEmpty)
        #expect(RPeakDetector.peaks(in: [], rate: 130).isEmpty)
    }

    @Test func theWindowsAreTheReferencesOwn() {
        // 0.75 s at 130 Hz is 97.5 samples, rounded half to even as NumPy's rint does.
        #expect(RPeakDetector.roundedToEven(0.75 * 130) == 98)
        #expect(RPeakDetector.boxcar([1, 2, 3, 4], size: 2) == [1, 1.5, 2.5, 3.5])
        #expect(RPeakDetector.absoluteGradient([0, 2, 6, 7]) == [2, 3, 2.5, 1])
    }
}
