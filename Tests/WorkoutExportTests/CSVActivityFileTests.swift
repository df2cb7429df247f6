import Foundation
import SystoleTestSupport
import Testing
import WorkoutAnalysis

@testable import WorkoutExport

/// The CSV file, read back by Python's csv module (RFC 4180's dialect, strict) and written again by it to the same
/// bytes (check_csv.py).
@Suite struct CSVActivityFileTests {
    struct Checked: Decodable {
        var header: [String]
        var rows: [[String]]
        var times: [Double]
        var rewrittenEqual: Bool
        var widths: [Int]
    }

    @Test func contactSaysWhetherTheSensorCanTell() {
        var recording = ExportFixture.recording()
        recording.reportsContact = false
        recording.contactLost = []
        recording.markers = []  // (their line breaks would split rows here, where no CSV reader reads them)
        let rows = CSVActivityFile.text(recording).components(separatedBy: "\r\n").dropFirst().dropLast()
        #expect(rows.count == 1195)
        #expect(rows.allSatisfy { $0.components(separatedBy: ",")[3] == "unsupported" })
        recording.reportsContact = nil
        let unknown = CSVActivityFile.text(recording).components(separatedBy: "\r\n").dropFirst().dropLast()
        #expect(unknown.allSatisfy { $0.components(separatedBy: ",")[3] == "" })
    }

    @Test func pythonsCSVReaderReadsOneRowPerReadingWithBeatsEnergyLapsAndMarkers() async throws {
        var recording = ExportFixture.recording()
        // An athlete's name a spreadsheet would take for a formula.
        recording.athlete = "-Zoë O'Neil"
        var checked = try await ExportFixture.check(
            "check_csv.py",
            [CSVActivityFile.encode(recording)],
            as: Checked.self
        )
        #expect(
            checked.header == ["time", "elapsed_s", "bpm", "contact", "rr_ms", "energy_kj", "lap", "marker", "athlete"]
        )
        #expect(checked.rewrittenEqual, "CRLF after every row, quotes exactly where RFC 4180 needs them")
        #expect(checked.widths == [9])
        #expect(checked.rows.allSatisfy { $0.last == "'-Zoë O'Neil" }, "every row names the athlete, neutralised")
        let seconds = (0..<1200).filter { !ExportFixture.missing.contains($0) }
        // One row says contact was lost, at its moment, between the readings of 699 and 705 s.
        let lostIndex = try #require(checked.rows.firstIndex { $0[3] == "no" })
        #expect(checked.rows.filter { $0[3] == "no" }.count == 1)
        #expect(lostIndex == seconds.firstIndex(of: 705))
        #expect(
            checked.rows[lostIndex] == [
                checked.rows[lostIndex][0], "579.500", "", "no", "", "", "2", "", "'-Zoë O'Neil",
            ]
        )
        #expect(abs(checked.times[lostIndex] - ExportFixture.at(699.5).timeIntervalSince1970) < 0.0005)
        checked.rows.remove(at: lostIndex)
        checked.times.remove(at: lostIndex)
        try #require(checked.rows.count == seconds.count)

        // Which row each beat belongs to, worked out by walking the readings: the first at or after the beat.
        var beatsByRow: [[ActivityRecording.Beat]] = Array(repeating: [], count: seconds.count)
        for beat in recording.beats {
            let row = seconds.firstIndex { ExportFixture.at(Double($0)) >= beat.date } ?? seconds.count - 1
            beatsByRow[row].append(beat)
        }
        #expect(beatsByRow.last?.count ?? 0 > 10, "beats after the last reading go to the last row")
        let energy: [Int: String] = Dictionary(
            (0..<120).map { (5 + 10 * $0, "2") } + [(25, "3.5")],
            uniquingKeysWith: { $1 }
        )
        let markers: [Int: String] = [
            0: "start", 100: "<b>&amp; \"quoted\" 'single'", 200: "'=cmd|' /C calc'!A0",
            310: "a,b\nline2\r\nline3", 401: "'+SUM(1)", 402: "'@x; -2", 705: "during dropout",
            800: "ctrl\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}tab\there\u{FFFD}", 1199: "after the last reading",
        ]
        for (index, second) in seconds.enumerated() {
            let row = checked.rows[index]
            #expect(abs(checked.times[index] - ExportFixture.at(Double(second)).timeIntervalSince1970) < 0.0005)
            #expect(row[0].hasSuffix("Z") && row[0].count == 24, "\(row[0])")
            // Paused seconds do not count: 300–360, 580–640 and 900–930.
            let paused = ExportFixture.pauses.map { max(0, min(Double(second), $0.1) - $0.0) }.reduce(0, +)
            #expect(row[1] == String(format: "%.3f", Double(second) - paused), "elapsed at \(second) s")
            let bpm = ExportFixture.bpm(second)
            #expect(row[2] == (bpm == bpm.rounded() ? String(Int(bpm)) : String(bpm)), "bpm at \(second) s")
            #expect(row[3] == "yes")
            #expect(row[5] == energy[second, default: ""], "energy at \(second) s")
            #expect(row[6] == (second < 600 ? "1" : "2"), "lap at \(second) s")
            #expect(row[7] == markers[second, default: ""], "marker at \(second) s")

            // RR: each interval to 0.1 ms, which gives back the sensor's ticks, and `gap` before one after a gap.
            let tokens =
                row[4].isEmpty ? [] : row[4].split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            let beats = beatsByRow[index]
            #expect(tokens.filter { $0 != "gap" }.count == beats.count, "beats at \(second) s: \(row[4])")
            var position = 0
            for beat in beats {
                if beat.precededByGap {
                    #expect(tokens[safe: position] == "gap", "gap at \(second) s: \(row[4])")
                    position += 1
                }
                let token = tokens[safe: position] ?? ""
                #expect(token.split(separator: ".").last?.count == 1, "one decimal: \(token)")
                let milliseconds = try #require(Double(token), "\(row[4])")
                #expect(abs(milliseconds - Double(beat.rrTicks) * 1000 / 1024) <= 0.05)
                #expect(UInt16((milliseconds * 1.024).rounded()) == beat.rrTicks)
                position += 1
            }
        }
        let gaps = checked.rows.flatMap { row in row[4].split(separator: " ").filter { $0 == "gap" } }
        #expect(gaps.count == 2)
    }

    @Test func aRecordingWithoutReadingsIsTheHeaderAlone() {
        let start = ExportFixture.start
        let bare = ActivityRecording(
            activity: .running,
            start: start,
            end: start + 60,
            markers: [.init(date: start + 1, text: "lost")]
        )
        #expect(
            String(decoding: CSVActivityFile.encode(bare), as: UTF8.self) == CSVActivityFile.header.joined(
                separator: ","
            ) + "\r\n"
        )
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
