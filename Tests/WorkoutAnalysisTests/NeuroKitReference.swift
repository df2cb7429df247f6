import Foundation
import SystoleTestSupport
import Testing
import WorkoutAnalysis

/// What NeuroKit2 (PyPI `neurokit2` 0.2.13, in the venv scripts/python-tools.sh makes) makes of the same runs of
/// beats: its corrected beat positions, the corrections it made and the beats it corrected, per run, and its time-domain HRV of all runs and
/// per window (Python/neurokit_hrv.py).
struct NeuroKitReference: Decodable {
    struct Run: Decodable {
        var peaks: [Int]
        /// Corrections made pass by pass (``ArtifactCorrection/Result/corrections``).
        var changes: Int
        /// Corrected beats (``ArtifactCorrection/Result/correctedBeats``).
        var corrected: Int
    }

    struct Statistics: Decodable {
        var meanNN: Double
        var sdnn: Double
        var rmssd: Double
        var pnn50: Double
        var count: Int

        enum CodingKeys: String, CodingKey {
            case meanNN = "MeanNN"
            case sdnn = "SDNN"
            case rmssd = "RMSSD"
            case pnn50 = "pNN50"
            case count
        }
    }

    var runs: [Run]
    var all: Statistics?
    var windows: [Statistics?]

    /// Asks NeuroKit about `runs` (ticks), each beginning `origins[i]` seconds after the recording's start, and per
    /// window of `window` seconds when given (`windows` of them).
    static func of(
        _ runs: [[UInt16]],
        origins: [Double],
        window: (length: Double, count: Int)? = nil
    ) async throws -> NeuroKitReference {
        var request: [String: Any] = [
            "runs": zip(runs, origins).map { ["origin": $1, "ticks": $0.map(Int.init)] as [String: Any] }
        ]
        if let window {
            request["window"] = window.length
            request["windows"] = window.count
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-hrv-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: request).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/neurokit_hrv.py")
        let output = try await PythonTools.run(script.path, [file.path])
        return try JSONDecoder().decode(NeuroKitReference.self, from: Data(output.utf8))
    }

    /// The tolerances of issue 18: SDNN and RMSSD (and mean NN) within 0.1 ms, pNN50 within 0.5 points.
    static let milliseconds = 0.1
    static let points = 0.5

    /// Expects `ours` to agree with `theirs` within the tolerances, and returns the differences seen.
    @discardableResult
    static func expectAgreement(
        _ ours: HeartRateVariability?,
        _ theirs: Statistics?,
        _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [Double] {
        guard let ours, let theirs else {
            Issue.record("\(label): ours \(String(describing: ours)), NeuroKit's \(String(describing: theirs))")
            return []
        }
        let differences = [
            abs(ours.meanNN - theirs.meanNN), abs(ours.sdnn - theirs.sdnn), abs(ours.rmssd - theirs.rmssd),
            abs(ours.pnn50 - theirs.pnn50),
        ]
        #expect(ours.beatCount == theirs.count, "\(label): NN intervals", sourceLocation: sourceLocation)
        #expect(
            differences[0] <= milliseconds,
            "\(label): mean NN \(ours.meanNN) vs \(theirs.meanNN)",
            sourceLocation: sourceLocation
        )
        #expect(
            differences[1] <= milliseconds,
            "\(label): SDNN \(ours.sdnn) vs \(theirs.sdnn)",
            sourceLocation: sourceLocation
        )
        #expect(
            differences[2] <= milliseconds,
            "\(label): RMSSD \(ours.rmssd) vs \(theirs.rmssd)",
            sourceLocation: sourceLocation
        )
        #expect(
            differences[3] <= points,
            "\(label): pNN50 \(ours.pnn50) vs \(theirs.pnn50)",
            sourceLocation: sourceLocation
        )
        print(
            "\(label): |Δ| mean NN \(differences[0]) ms, SDNN \(differences[1]) ms, RMSSD \(differences[2]) ms, "
                + "pNN50 \(differences[3]) points"
        )
        return differences
    }
}
