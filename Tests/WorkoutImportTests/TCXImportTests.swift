import Foundation
import SystoleTestSupport
import Testing

@testable import WorkoutImport

/// TCX files as Garmin Connect, Polar Flow and Strava write them (valid against Garmin's schema, which the test checks
/// first), read back; and files no honest tool writes, refused with their line.
@Suite struct TCXImportTests {
    static func refusal(_ text: String) -> String? {
        do {
            _ = try TCXActivityReader.read(Array(text.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aValidTCXIsReadWithItsLapsHeartRateAndDevice() async throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let text = ActivityFiles.tcxDocument(start: start)
        // Valid against Garmin's schema, as the files people export are.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).tcx")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../WorkoutExportTests/check_tcx.py").standardized.path
        let report = try await PythonTools.run(checker, [try await PythonTools.tcxSchema(), file.path])
        #expect(report.contains("\"errors\": []"), "\(report.prefix(400))")

        let activities = try ActivityFile.read(Array(text.utf8))
        let activity = try #require(activities.first)
        #expect(activities.count == 1)
        #expect(activity.format == .tcx && activity.activity == .running)
        #expect(activity.start == start && activity.end == start.addingTimeInterval(60))
        #expect(activity.laps.map(\.duration) == [30, 30])
        #expect(activity.heartRates.count == 60)
        #expect(activity.heartRates.map(\.beatsPerMinute) == (0..<60).map { Double(100 + $0 % 50) })
        #expect(activity.heartRates.last?.date == start.addingTimeInterval(59))
        #expect(activity.energyKilocalories == 21)
        #expect(activity.recorder.product == "Forerunner 965 & strap" && activity.recorder.serialNumber == "3456789")
    }

    @Test func hostileXMLIsRefusedWithItsLine() {
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let good = ActivityFiles.tcxDocument(start: start)
        // Entities are never expanded: a document type declaration is refused outright.
        let laughs = """
            <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>
            <TrainingCenterDatabase><Activities><Activity Sport="Running"><Id>&lol2;</Id></Activity></Activities>\
            </TrainingCenterDatabase>
            """
        #expect(Self.refusal(laughs)?.contains("document type declaration") == true)
        let external = good.replacingOccurrences(
            of: "<!-- exported by a test -->",
            with: "<!DOCTYPE x SYSTEM \"file:///etc/passwd\">"
        )
        #expect(Self.refusal(external)?.contains("document type declaration") == true)
        let half = Self.refusal(String(good.prefix(good.count / 2)))
        #expect(half?.contains("truncated") == true, "\(half ?? "")")
        let deep = "<TrainingCenterDatabase>" + String(repeating: "<a>", count: 100_000)
        #expect(Self.refusal(deep)?.contains("nested deeper") == true)
        #expect(Self.refusal("<gpx></gpx>")?.contains("not a TCX file") == true)
        #expect(Self.refusal(good.replacingOccurrences(of: "</Track>", with: "</Trak>"))?.contains("line") == true)
        #expect(Self.refusal(good + "trailing")?.contains("outside the root") == true)
        #expect(
            Self.refusal(good + good.replacingOccurrences(of: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", with: ""))?
                .contains("a second root element") == true
        )
        // Values outside what a body does, or not numbers, with the line they are on.
        let fast = Self.refusal(good.replacingOccurrences(of: "<Value>130</Value>", with: "<Value>300</Value>"))
        #expect(fast?.contains("a heart rate of 300") == true && fast?.contains("line 7") == true, "\(fast ?? "")")
        let nan = Self.refusal(good.replacingOccurrences(of: "<Value>130</Value>", with: "<Value>NaN</Value>"))
        #expect(nan?.contains("not a number") == true, "\(nan ?? "")")
        let future = Self.refusal(ActivityFiles.tcxDocument(start: Date(timeIntervalSince1970: 4_102_444_800)))
        #expect(future?.contains("in the future") == true, "\(future ?? "")")
        // A creator's name with a terminal escape is kept cleaned, as every name from outside.
        let escaped = try? TCXActivityReader.read(Array(good.replacingOccurrences(of: "&amp;", with: "&#27;[2J").utf8))
        let product = escaped?.first?.recorder.product ?? ""
        #expect(product.hasPrefix("Forerunner") && !product.unicodeScalars.contains { $0.value == 0x1B })
        let unknown = Self.refusal(good.replacingOccurrences(of: "&amp;", with: "&secret;"))
        #expect(unknown?.contains("&secret;") == true)
        // Every truncation refused, none crashing.
        let small = ActivityFiles.tcxDocument(start: start, laps: 1, points: 2)
        let bytes = Array(small.utf8)
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: ImportError.self, "\(length) bytes") {
                try TCXActivityReader.read(Array(bytes.prefix(length)))
            }
        }
    }
}
