import Foundation
import SystoleTestSupport
import WorkoutAnalysis

/// The recording the text exports' tests encode, built so what each file must say can be worked out by hand: twenty
/// minutes of running from a start with milliseconds, three pauses (one inside lap 1, one across the line between
/// the laps, one inside lap 2), two laps of ten minutes, a reading a second (also while paused, missing for five
/// seconds from 700 s; one with half a beat and two that are no heart rate), beats in three runs with gaps, the last
/// past the last reading, measured energy (one measurement far from every reading, two near the same one), and
/// markers with hostile text.
enum ExportFixture {
    static let start = Date(timeIntervalSince1970: 1_795_333_160.125)

    /// The date `seconds` after the start.
    static func at(_ seconds: Double) -> Date { start + seconds }

    static let pauses = [(300.0, 360.0), (580.0, 640.0), (900.0, 930.0)]
    /// The seconds at which no reading was taken.
    static let missing = 700..<705

    /// The heart rate of the reading at `second`: most are whole, one has a half, and two are no heart rate.
    static func bpm(_ second: Int) -> Double {
        switch second {
        case 450: 0.2
        case 451: 130.5
        case 1000: 300
        default: Double(100 + second % 50)
        }
    }

    /// The markers: time in seconds and text.
    static let markers: [(Double, String)] = [
        (0, "start"),
        (100, "<b>&amp; \"quoted\" 'single'"),
        (200, "=cmd|' /C calc'!A0"),
        (310, "a,b\nline2\r\nline3"),
        (400.5, "+SUM(1)"),
        (401.2, "@x"),
        (401.7, "-2"),
        (702, "during dropout"),
        (800, "ctrl\u{01}\u{0B}\u{7F}\u{9F}tab\there\u{FFFE}"),
        (1199.5, "after the last reading"),
    ]

    static func beats() -> [ActivityRecording.Beat] {
        var beats: [ActivityRecording.Beat] = []
        for (run, (from, count)) in [(0.4, 400), (500.0, 300), (1150.0, 80)].enumerated() {
            var date = at(from)
            for index in 0..<count {
                let ticks = UInt16(700 + (index * 37 + run * 11) % 300)
                date += Double(ticks) / 1024
                beats.append(.init(date: date, rrTicks: ticks, precededByGap: index == 0 && run > 0))
            }
        }
        return beats
    }

    static func recording() -> ActivityRecording {
        var energy = (0..<120).map { ActivityRecording.EnergyReading(date: at(5 + 10 * Double($0)), kilojoules: 2) }
        energy[1].date = at(15.3)
        energy.insert(.init(date: at(25.2), kilojoules: 1.5), at: 3)
        energy.insert(.init(date: at(702.3), kilojoules: 10), at: 71)
        return ActivityRecording(
            activity: .running,
            start: start,
            end: at(1200),
            pauses: pauses.map { DateInterval(start: at($0.0), end: at($0.1)) },
            laps: [DateInterval(start: start, end: at(600)), DateInterval(start: at(600), end: at(1200))],
            markers: markers.map { .init(date: at($0.0), text: $0.1) },
            readings: (0..<1200).filter { !missing.contains($0) }.map { .init(date: at(Double($0)), bpm: bpm($0)) },
            beats: beats(),
            energyReadings: energy,
            energy: .init(kilojoules: energy.map(\.kilojoules).reduce(0, +), isEstimated: false),
            reportsContact: true,
            // The strap said it lost contact just before the dropout.
            contactLost: [DateInterval(start: at(699.5), end: at(705))]
        )
    }

    /// Writes `bytes` to a temporary file, runs a checker script next to this file with the venv's python on it
    /// (and `before` ahead of the file's path), and decodes its JSON output.
    static func check<Output: Decodable>(
        _ script: String,
        _ files: [[UInt8]],
        before: [String] = [],
        as: Output.Type
    ) async throws -> Output {
        let paths = files.map { _ in
            FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).export")
        }
        defer { for path in paths { try? FileManager.default.removeItem(at: path) } }
        for (bytes, path) in zip(files, paths) { try Data(bytes).write(to: path) }
        let scriptPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(script)
        let output = try await PythonTools.run(scriptPath.path, before + paths.map(\.path))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(Output.self, from: Data(output.utf8))
    }
}
