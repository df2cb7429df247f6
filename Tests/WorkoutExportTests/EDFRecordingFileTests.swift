import Foundation
import SystoleTestSupport
import Testing
import WorkoutExport

/// The ECG as EDF+, read back by pyedflib (EDFlib) and MNE: every µV exact, the measured rate, the channel's
/// label and unit, the R-peaks as annotations, the header's names; warnings from either reader fail the test.
@Suite struct EDFRecordingFileTests {
    struct Readers: Decodable {
        struct PyEDFLib: Decodable {
            var fileType: Int
            var labels: [String]
            var units: [String]
            var rates: [Double]
            var physical: [Double]
            var signals: [[Double]]
            var digital: [Int]
            var annotations: [[AnnotationPart]]
            var patientName: String
            var equipment: String
            var start: String
            var records: Int
        }
        struct MNE: Decodable {
            var channels: [String]
            var rate: Double
            var microvolts: [Double]
            var units: [String]
            var annotations: [[AnnotationPart]]
        }
        var pyedflib: PyEDFLib
        var mne: MNE?
    }

    enum AnnotationPart: Decodable, Hashable {
        case number(Double)
        case text(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }
        var number: Double? { if case .number(let value) = self { value } else { nil } }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    static func read(_ bytes: [UInt8], mne: Bool = true) async throws -> Readers {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).edf")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("read_edf.py")
        let output = try await PythonTools.run(script.path, [file.path] + (mne ? [] : ["--no-mne"]))
        return try JSONDecoder().decode(Readers.self, from: Data(output.utf8))
    }

    /// An ECG-like sequence of µV values (deterministic).
    static func microvolts(_ count: Int, seed: Int) -> [Int32] {
        (0..<count).map { index in
            let beat = (index + seed) % 100
            return Int32(beat == 0 ? 1200 : beat == 1 ? -300 : (index * 37 + seed) % 61 - 30)
        }
    }

    let start = Date(timeIntervalSince1970: 1_795_950_000.25)

    @Test func aContinuousECGIsReadBackExactlyAtItsMeasuredRate() async throws {
        let values = Self.microvolts(13_050, seed: 3)
        let rate = 129.7
        let peaks = stride(from: 0.4, to: 99, by: 0.77).map { start.addingTimeInterval($0) }
        let recording = EDFRecording(
            runs: [.init(start: start, rate: rate, microvolts: values)],
            rPeaks: peaks,
            athlete: "Ada Lovelace",
            sensor: "Polar H10 A0:9E:1A:12:34:56",
            timeZone: .gmt
        )
        let readers = try await Self.read(try recording.encoded())
        let edf = readers.pyedflib
        #expect(edf.fileType == 1, "EDF+ (pyedflib's FILETYPE_EDFPLUS)")
        #expect(edf.labels == ["ECG"] && edf.units == ["uV"])
        #expect(abs(edf.rates[0] - rate) < 0.001, "\(edf.rates[0]) Hz")
        #expect(edf.physical.prefix(values.count).map { Int32($0) } == values)
        #expect(edf.digital.prefix(values.count).map { Int32($0) } == values)
        // Written with underscores (EDF+ subfields hold no spaces); EDFlib shows them as spaces again.
        #expect(edf.patientName == "Ada Lovelace")
        #expect(edf.equipment == "Polar H10 A0:9E:1A:12:34:56")
        #expect(edf.start.hasPrefix("2026-11-29T"))
        let rAnnotations = edf.annotations.filter { $0.last?.text == "R" }.compactMap { $0.first?.number }
        // Onsets count from the first sample (the header's second and the first record's fraction of it).
        let expected = peaks.map { $0.timeIntervalSince(start) }
        #expect(rAnnotations.count == peaks.count)
        for (read, written) in zip(rAnnotations, expected) { #expect(abs(read - written) < 2e-6) }
        // Where the ECG ends and the last record's filling begins.
        let end = edf.annotations.first { $0.last?.text == "no ECG" }?.first?.number
        #expect(abs((end ?? 0) - Double(values.count) / rate) < 1e-3)
        #expect(edf.physical.dropFirst(values.count).allSatisfy { $0 == 0 })

        let mne = try #require(readers.mne)
        #expect(mne.channels == ["ECG"])
        #expect(abs(mne.rate - rate) < 0.001)
        #expect(mne.microvolts.prefix(values.count).map { Int32($0.rounded()) } == values)
        #expect(mne.annotations.filter { $0.last?.text == "R" }.count == peaks.count)
    }

    @Test func theAccelerometersThreeAxesAreChannelsOfTheirOwnOnTheRecordsGrid() async throws {
        // ECG at exactly 130 Hz (records of 1 s), the accelerometer at 50 Hz from the same moment: the records'
        // grid is the accelerometer's own, so every milli-g comes back as written. Then 4 s without it.
        let ecg = Self.microvolts(1300, seed: 4)
        func axis(_ count: Int, _ factor: Int32) -> [Int32] { (0..<count).map { Int32($0 % 97) * factor - 900 } }
        let first = EDFRecording.AccelerationRun(
            start: start,
            rate: 50,
            x: axis(200, 3),
            y: axis(200, -2),
            z: axis(200, 5)
        )
        let second = EDFRecording.AccelerationRun(
            start: start.addingTimeInterval(8),
            rate: 50,
            x: axis(100, 1),
            y: axis(100, 2),
            z: axis(100, -4)
        )
        var recording = EDFRecording(
            runs: [.init(start: start, rate: 130, microvolts: ecg)],
            rPeaks: [],
            athlete: nil,
            sensor: "Polar H10",
            timeZone: .gmt
        )
        recording.acceleration = [first, second]
        let readers = try await Self.read(try recording.encoded())
        let edf = readers.pyedflib
        #expect(edf.labels == ["ECG", "Accel X", "Accel Y", "Accel Z"])
        #expect(edf.units == ["uV", "mg", "mg", "mg"])
        #expect(edf.rates.count == 4 && abs(edf.rates[1] - 50) < 1e-9 && abs(edf.rates[0] - 130) < 1e-9)
        #expect(edf.signals[0].map { Int32($0) } == ecg)
        for (index, written) in [(first.x, second.x), (first.y, second.y), (first.z, second.z)].enumerated() {
            let read = edf.signals[index + 1].map { Int32($0) }
            #expect(read.count == 500)
            #expect(Array(read[0..<200]) == written.0)
            #expect(read[200..<400].allSatisfy { $0 == 0 })
            #expect(Array(read[400..<500]) == written.1)
        }
        let missing = edf.annotations.filter { $0.last?.text == "no ACC" }
        #expect(missing.count == 1)
        #expect(abs((missing.first?.first?.number ?? 0) - 4) < 1e-6)
        let mne = try #require(readers.mne)
        #expect(mne.units.count == 4)
    }

    @Test func anAccelerometerOffTheGridIsInterpolatedBetweenItsSamples() async throws {
        // 25.3 Hz starting a third of a second after the ECG: each grid point lies between two samples, and its
        // value between theirs.
        let ecg = Self.microvolts(1300, seed: 5)
        let ramp = (0..<240).map { Int32($0 * 10) }
        var recording = EDFRecording(
            runs: [.init(start: start, rate: 130, microvolts: ecg)],
            rPeaks: [],
            athlete: nil,
            sensor: "Polar H10",
            timeZone: .gmt
        )
        recording.acceleration = [
            .init(start: start.addingTimeInterval(1.0 / 3), rate: 25.3, x: ramp, y: ramp, z: ramp.map { -$0 })
        ]
        let readers = try await Self.read(try recording.encoded(), mne: false)
        let edf = readers.pyedflib
        #expect(abs(edf.rates[1] - 25) < 1e-9)
        let x = edf.signals[1]
        // The ramp, 10 mg a sample: at grid time t (s) it reads (t − 1/3) × 25.3 × 10, within rounding.
        for (index, value) in x.enumerated() {
            let time = Double(index) / 25
            let position = (time - 1.0 / 3) * 25.3
            if position < 0 || position > 239 {
                #expect(value == 0, "\(index)")
            } else {
                #expect(abs(value - position * 10) <= 0.5 + 1e-9, "\(index): \(value) against \(position * 10)")
            }
        }
        #expect(edf.signals[3].enumerated().allSatisfy { abs($0.element + x[$0.offset]) < 1e-9 })
    }

    @Test func aGapHoldsNoECGUnderAnAnnotationAndEachRunSitsAtItsTime() async throws {
        let first = Self.microvolts(650, seed: 1)
        let second = Self.microvolts(400, seed: 2)
        let later = start.addingTimeInterval(20)
        let recording = EDFRecording(
            runs: [
                .init(start: start, rate: 130, microvolts: first), .init(start: later, rate: 130, microvolts: second),
            ],
            rPeaks: [start.addingTimeInterval(1), later.addingTimeInterval(1)],
            athlete: nil,
            sensor: "Polar H10",
            timeZone: .gmt
        )
        let readers = try await Self.read(try recording.encoded())
        let edf = readers.pyedflib
        #expect(edf.fileType == 1)
        #expect(edf.physical.prefix(650).map { Int32($0) } == first)
        #expect(edf.physical[650..<2600].allSatisfy { $0 == 0 })
        #expect(edf.physical[2600..<3000].map { Int32($0) } == second)
        let r = edf.annotations.filter { $0.last?.text == "R" }.compactMap { $0.first?.number }
        #expect(r.count == 2 && abs(r[1] - 21) < 2e-6)
        let gaps = edf.annotations.filter { $0.last?.text == "no ECG" }.compactMap { $0.first?.number }
        #expect(gaps.count == 2 && abs(gaps[0] - 5) < 1e-6, "\(gaps)")
        let mne = try #require(readers.mne)
        #expect(mne.microvolts[2600..<3000].map { Int32($0.rounded()) } == second)
    }

    @Test func valuesBeyondSixteenBitsKeepTheirSizeAtACoarserUnit() async throws {
        let values: [Int32] = (0..<260).map { $0 % 2 == 0 ? 90_000 : -90_000 + Int32($0) }
        let recording = EDFRecording(
            runs: [.init(start: start, rate: 130, microvolts: values)],
            rPeaks: [],
            athlete: nil,
            sensor: "Polar H10",
            timeZone: .gmt
        )
        let edf = try await Self.read(try recording.encoded(), mne: false).pyedflib
        for (read, written) in zip(edf.physical, values) { #expect(abs(read - Double(written)) <= 1.5) }
    }

    @Test func theHeaderIsPrintableASCIIWhateverTheNamesHold() throws {
        let recording = EDFRecording(
            runs: [.init(start: start, rate: 130, microvolts: [1, 2, 3])],
            rPeaks: [],
            athlete: "Ada\u{1B}[31m Løvelace\u{0}\n" + String(repeating: "x", count: 500),
            sensor: "Polar\tH10 \u{202E}evil",
            timeZone: .gmt
        )
        let header = try recording.encoded().prefix(256 * 3)
        #expect(header.allSatisfy { (32...126).contains($0) }, "only printable ASCII in the header")
        // The patient field stays 80 bytes long, however long the name.
        #expect(String(decoding: header[8..<88], as: UTF8.self).hasPrefix("X X X Ada_[31m_L_velace__"))
    }

    @Test func nothingToWriteIsSaid() {
        #expect(throws: EDFRecording.Failure.noECG) {
            try EDFRecording(runs: [], rPeaks: [], athlete: nil, sensor: "x").encoded()
        }
        #expect(throws: EDFRecording.Failure.implausibleRate(5)) {
            try EDFRecording(
                runs: [.init(start: .now, rate: 5, microvolts: [1])],
                rPeaks: [],
                athlete: nil,
                sensor: "x"
            )
            .encoded()
        }
    }
}
