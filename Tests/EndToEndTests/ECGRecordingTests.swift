import Foundation
import SystoleTestSupport
import Testing

/// A Polar H10's ECG recorded by the real systoled during a workout (`[ecg] enabled`), from the simulator, and
/// taken out with `systole export`: every value as the strap sent it, R-peaks where NeuroKit2 finds them, RR
/// intervals from the ECG that agree with the strap's own, a dropout and a bluetoothd restart marked as gaps with
/// nothing lost around them, and EDF+ that pyedflib and MNE read back as the store holds it.
@Suite struct ECGRecordingTests {
    static let configuration = "[ecg]\nenabled = true\n"

    func start(simulator: [String], configuration: String = Self.configuration) async throws -> DaemonHarness {
        var options = DaemonHarness.Options()
        options.name = "systole-ecg"
        options.configuration = configuration
        options.simulator = simulator
        return try await DaemonHarness.start(options)
    }

    @Test func neuroKitsECGPlayedFromAFileIsStoredExactlyAndItsRPeaksFound() async throws {
        // 40 s of NeuroKit2's ecg_simulate at 130 Hz with noise, in whole µV, and the R-peaks NeuroKit2 finds in it.
        let request = FileManager.default.temporaryDirectory.appendingPathComponent("nk-\(UUID()).json")
        try #"{"rate": 130, "cases": [{"seed": 11, "duration": 40, "heartRate": 84, "noise": 0.02}]}"#.write(
            to: request,
            atomically: true,
            encoding: .utf8
        )
        defer { try? FileManager.default.removeItem(at: request) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutAnalysisTests/Python/neurokit_ecg.py").standardized.path
        let reference = try JSONDecoder().decode(
            NeuroKitCases.self,
            from: Data(try await PythonTools.run(script, [request.path]).utf8)
        ).cases[0]
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ecg-\(UUID()).txt")
        try reference.microvolts.map(String.init).joined(separator: "\n").write(
            to: file,
            atomically: true,
            encoding: .utf8
        )
        defer { try? FileManager.default.removeItem(at: file) }

        let s = try await start(simulator: ["--model", "polar-h10", "--rate", "1", "--ecg-file", file.path])
        defer { s.stop() }
        #expect(try await s.systole(["start", "--activity", "running"]).status == 0)
        // The whole file played: its last frame sent, and the ECG's state shown in `systole sensors`.
        let frames = (reference.microvolts.count + 72) / 73
        try await waitUntil("the file played to its end", timeout: .seconds(120)) {
            try s.ecgFramesSent().count >= frames
        }
        #expect(try await s.sensors().first?["ecg"] as? String == "streaming")
        try await s.waitForReadingLogged(after: try #require(try s.ecgFramesSent().last?.time))
        #expect(try await s.systole(["end"]).status == 0)
        let stored = try await s.exportedECG()

        // Every stored value is the file's, from where the workout began collecting to the file's end.
        let offset = try #require(Self.offset(of: stored.values, in: reference.microvolts), "stored values in the file")
        #expect(offset < 5 * 130, "the ECG recorded from the workout's start: \(offset) samples were not")
        #expect(Array(reference.microvolts[offset...]) == stored.values)
        #expect(stored.gaps == [0], "one run, no gap")

        // R-peaks: NeuroKit2's, a second or more from the ends of what was stored, each found within one sample.
        let inside = (offset + 130)..<(reference.microvolts.count - 130)
        let expected = reference.peaks.filter(inside.contains)
        let found = stored.peaks.map { $0 + offset }.filter(inside.contains)
        let matched = expected.filter { peak in found.contains { abs($0 - peak) <= 1 } }
        let extra = found.filter { peak in !expected.contains { abs($0 - peak) <= 1 } }
        #expect(expected.count >= 40)
        #expect(Double(matched.count) >= 0.995 * Double(expected.count), "\(matched.count) of \(expected.count)")
        #expect(Double(extra.count) <= 0.005 * Double(expected.count), "extra peaks at \(extra)")

        // `workouts show`: the HRV of the ECG's beats; a file's heart is not the strap's, so no beats pair.
        let shown = try await s.workoutShown()
        let hrv = try #require(shown.values["hrvFromECG"] as? [String: Any], "\(shown.values.keys)")
        #expect((hrv["beats"] as? Double ?? 0) >= 30)
        #expect(shown.values["rrAgreement"] == nil)
        #expect(shown.text.contains("HRV from the ECG: mean NN"))

        // EDF+: pyedflib and MNE read every stored value, the measured rate, the label, the unit, and the R-peaks.
        let edf = s.folder.appendingPathComponent("ecg.edf").path
        let exported = try await s.systole(["export", "--last", "--format", "edf", "-o", edf])
        #expect(exported.status == 0, "\(exported.standardError)")
        let readers = try await Self.readEDF(edf)
        #expect(readers.pyedflib.labels == ["ECG"])
        #expect(readers.pyedflib.units == ["uV"])
        #expect(Array(readers.pyedflib.physical.prefix(stored.values.count)) == stored.values.map(Double.init))
        #expect(abs(readers.pyedflib.rates[0] - 130) < 1.5)
        #expect(
            Array(readers.mne.microvolts.prefix(stored.values.count)).map { $0.rounded() }
                == stored.values.map(Double.init)
        )
        let annotated = readers.pyedflib.annotations.filter { $0.text == "R" }.map(\.onset)
        try #require(annotated.count == stored.peaks.count)
        // The annotations' spacing is the peaks' (their onsets count from the header's start second).
        let spacing = zip(annotated, annotated.dropFirst()).map { $1 - $0 }
        let peakSpacing = zip(stored.peakTimes, stored.peakTimes.dropFirst()).map { $1 - $0 }
        #expect(zip(spacing, peakSpacing).allSatisfy { abs($0 - $1) < 0.001 })
    }

    @Test func theECGsRRAgreeWithTheStrapsAndADropoutAndABluetoothdRestartAreGapsWithNothingLost() async throws {
        let s = try await start(
            simulator: ["--model", "polar-h10", "--rate", "1", "--pmd", "--seed", "5"],
            configuration: Self.configuration + "acceleration_hz = 50\n"
        )
        defer { s.stop() }
        let address = try #require(s.simulator.addresses.first)
        #expect(try await s.systole(["start", "--activity", "running"]).status == 0)
        func framesAfter(_ count: Int) async throws {
            let now = try s.ecgFramesSent().count
            try await waitUntil("\(count) more ECG frames") { try s.ecgFramesSent().count >= now + count }
        }
        try await framesAfter(20)
        try await s.simulator.play(#"{"kind": "disconnect", "for": 2}"#, sensor: address, bus: s.bus)
        try await waitUntil("the ECG streaming again after the dropout") {
            try s.ecgFramesSent().last.map { $0.time > (try s.ecgFramesSent().dropLast().last?.time ?? 0) + 1.5 }
                ?? false
        }
        try await framesAfter(20)
        try await s.simulator.restartBluetoothd(downtime: .milliseconds(500), bus: s.bus)
        try await waitUntil("the ECG streaming again after the restart") { try s.ecgRuns().count >= 3 }
        try await framesAfter(20)
        try await s.waitForReadingLogged(after: try #require(try s.ecgFramesSent().last?.time))
        #expect(try await s.systole(["end"]).status == 0)
        let stored = try await s.exportedECG()

        // The runs the strap sent are the runs stored: each value, split where the stream broke, marked as gaps.
        let sent = try s.ecgRuns()
        #expect(sent.count == 3, "the stream, after the dropout, after the restart")
        #expect(stored.gaps.count == 3, "a gap at the dropout and at the restart: \(stored.gaps)")
        let storedRuns = zip(stored.gaps, stored.gaps.dropFirst().map { Optional($0) } + [nil]).map { start, end in
            Array(stored.values[start..<(end ?? stored.values.count)])
        }
        for (index, (run, sentRun)) in zip(storedRuns, sent).enumerated() {
            let offset = try #require(Self.offset(of: run, in: sentRun), "run \(index) stored as sent")
            #expect(Array(sentRun[offset..<offset + run.count]) == run)
            if index > 0 { #expect(offset == 0, "run \(index): every value after the reconnect stored") }
            // All but the last frames (sent as the workout ended) are stored.
            if index < 2 { #expect(offset + run.count == sentRun.count, "run \(index): nothing lost before the break") }
        }

        // RR from the ECG's R-peaks against the strap's own RR intervals over the same beats: each within one ECG
        // sample, plus the rounding both files carry (to 1/1024 s, then to the millisecond: 2 ms at most). Each run of
        // the ECG is laid against the strap's run (beats are compared within one connection, never across a gap)
        // where its first intervals match.
        let fromECG = try await s.exportedRR(source: "ecg")
        let fromStrap = try await s.exportedRR(source: "strap")
        #expect(fromECG.count == 3)
        let tolerance = 1000.0 / 130 + 2
        var compared = 0
        var disagreeing: [(ecg: Double, strap: Double)] = []
        for run in fromECG where run.count >= 5 {
            // Where the first ten intervals differ least: slowly varying intervals fit at a neighbouring beat too.
            let probe = Array(run.prefix(10))
            var best: (cost: Double, slice: ArraySlice<Double>)?
            for strapRun in fromStrap where strapRun.count >= probe.count {
                for start in 0...(strapRun.count - probe.count) {
                    let cost = zip(probe, strapRun[start...]).map { abs($0 - $1) }.reduce(0, +) / Double(probe.count)
                    if cost < best?.cost ?? .infinity { best = (cost, strapRun[start...]) }
                }
            }
            let strapRun = try #require(
                best.flatMap { $0.cost <= tolerance ? $0.slice : nil },
                "the ECG's beats among the strap's: \(run.prefix(5)) in \(fromStrap)"
            )
            for (ecg, strap) in zip(run, strapRun) {
                compared += 1
                if abs(ecg - strap) > tolerance { disagreeing.append((ecg, strap)) }
            }
        }
        #expect(compared >= 20)
        #expect(disagreeing.isEmpty, "of \(compared) intervals, these differ: \(disagreeing)")

        // The EDF+ has the accelerometer's three axes beside the ECG, as the strap measured them (the simulated
        // strap lies still: about 1 g on z).
        let edf = s.folder.appendingPathComponent("motion.edf").path
        #expect(try await s.systole(["export", "--last", "--format", "edf", "-o", edf]).status == 0)
        let readers = try await Self.readEDF(edf)
        #expect(readers.pyedflib.labels == ["ECG", "Accel X", "Accel Y", "Accel Z"])
        #expect(readers.pyedflib.units == ["uV", "mg", "mg", "mg"])
        #expect(abs(readers.pyedflib.rates[1] - 50) < 1)
        let z = readers.pyedflib.signals[3].filter { $0 != 0 }
        #expect(z.count > 100 && z.allSatisfy { abs($0) <= 16_000 }, "\(z.prefix(10))")

        // `workouts show`: the ECG's beats agree with the strap's.
        let shown = try await s.workoutShown()
        let agreement = try #require(shown.values["rrAgreement"] as? [String: Any], "\(shown.values.keys)")
        #expect((agreement["pairedBeats"] as? Double ?? 0) >= 20)
        #expect(agreement["withinTolerance"] as? Double == 1, "\(agreement)")
        #expect(shown.text.contains("ECG beats paired"))
    }

    // MARK: Reading what systole wrote

    struct NeuroKitCases: Decodable {
        struct Case: Decodable {
            var microvolts: [Int]
            var peaks: [Int]
        }
        var cases: [Case]
    }

    /// Where `values` begin in `source` (matched on their first 73 values, an H10 frame), if they do.
    static func offset(of values: [Int], in source: [Int]) -> Int? {
        let probe = Array(values.prefix(73))
        guard !probe.isEmpty, source.count >= probe.count else { return nil }
        return (0...(source.count - probe.count)).first { Array(source[$0..<$0 + probe.count]) == probe }
    }

    struct EDFReaders: Decodable {
        struct PyEDFLib: Decodable {
            var labels: [String]
            var units: [String]
            var rates: [Double]
            var physical: [Double]
            var signals: [[Double]]
            var annotations: [Annotation]
        }
        struct MNE: Decodable {
            var microvolts: [Double]
        }
        struct Annotation: Decodable {
            var onset: Double
            var text: String
            init(from decoder: any Decoder) throws {
                var pair = try decoder.unkeyedContainer()
                onset = try pair.decode(Double.self)
                text = try pair.decode(String.self)
            }
        }
        var pyedflib: PyEDFLib
        var mne: MNE
    }

    static func readEDF(_ path: String) async throws -> EDFReaders {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests/read_edf.py").standardized.path
        var readers = try JSONDecoder().decode(
            EDFReaders.self,
            from: Data(try await PythonTools.run(script, [path]).utf8)
        )
        // The ECG channel alone: EDF+'s annotation channel is not a signal.
        readers.pyedflib.labels = readers.pyedflib.labels.filter { $0 != "EDF Annotations" }
        readers.pyedflib.units = Array(readers.pyedflib.units.prefix(readers.pyedflib.labels.count))
        return readers
    }
}

/// The ECG as `systole export --format csv --source ecg` gives it.
struct ExportedECG {
    var values: [Int] = []
    /// Indices of the R-peaks.
    var peaks: [Int] = []
    /// Their times, seconds after the workout's start.
    var peakTimes: [Double] = []
    /// Indices of the first value of each run.
    var gaps: [Int] = []
}

extension DaemonHarness {
    /// The ECG frames the simulator sent, as µV values, with when.
    func ecgFramesSent() throws -> [(time: Double, values: [Int])] {
        try emitted().compactMap { notification in
            guard notification.object["pmd"] as? Bool == true, let payload = notification.object["payload"] as? String,
                payload.hasPrefix("00")
            else { return nil }
            return (notification.time, MonitorECGTests.microvolts(payload))
        }
    }

    /// The ECG the simulator sent, split where a frame came more than a second after the one before (a dropout, a
    /// restart: the strap starts its stream anew).
    func ecgRuns() throws -> [[Int]] {
        var runs: [[Int]] = []
        var last: Double?
        for frame in try ecgFramesSent() {
            if last.map({ frame.time - $0 > 1 }) ?? true { runs.append([]) }
            runs[runs.count - 1] += frame.values
            last = frame.time
        }
        return runs
    }

    /// Waits for the live log's first heart-rate reading received after `time` (seconds since 1970): readings and
    /// ECG frames travel the recording pipeline in order, so everything the strap sent before is committed.
    func waitForReadingLogged(after time: Double) async throws {
        try await waitUntil("a reading logged after \(time)") {
            liveLog().contains { line in
                line.contains(" bpm=")
                    && ((try? Date(String(line.prefix(24)), strategy: .iso8601))?.timeIntervalSince1970 ?? 0) > time
            }
        }
    }

    /// The last workout's `workouts show`, as JSON and as text.
    func workoutShown() async throws -> (values: [String: Any], text: String) {
        let list = try await systole(["workouts", "--json"]).standardOutput
        let workouts = try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [[String: Any]]
        let id = try #require(workouts?.last?["id"] as? String)
        return (try await json("workouts", "show", id), try await systole(["workouts", "show", id]).standardOutput)
    }

    /// The last workout's ECG (systoled's export of it as CSV; empty while the workout runs or has none).
    func exportedECG() async throws -> ExportedECG {
        let result = try await systole(["export", "--last", "--format", "csv", "--source", "ecg", "-o", "-"])
        var ecg = ExportedECG()
        guard result.status == 0 else { return ecg }
        for (index, line) in result.standardOutput.split(separator: "\r\n").dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 5, let value = Int(fields[2]) else { continue }
            ecg.values.append(value)
            if fields[3] == "1" {
                ecg.peaks.append(index)
                ecg.peakTimes.append(Double(fields[1]) ?? .nan)
            }
            if index == 0 || fields[4] == "1" { ecg.gaps.append(index) }
        }
        return ecg
    }

    /// The last workout's RR intervals in ms (`systole export --format rr`), in runs without a gap.
    func exportedRR(source: String) async throws -> [[Double]] {
        let result = try await systole(["export", "--last", "--format", "rr", "--source", source, "-o", "-"])
        #expect(result.status == 0, "\(result.standardError)")
        return result.standardOutput.components(separatedBy: "\n\n").map { run in
            run.split(separator: "\n").compactMap { Double($0) }
        }.filter { !$0.isEmpty }
    }
}
