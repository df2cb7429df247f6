import Foundation
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import WorkoutImport

/// FIT activity files written by fit-tool (PyPI), an encoder independent of systole's, read back: every value the
/// file holds that systole keeps.
@Suite struct FITImportTests {
    /// One activity for write_fit.py (times in Unix seconds).
    struct Spec: Encodable {
        var path: String
        var start: Double
        var end: Double
        var sport = 1
        var subSport = 0
        var manufacturer = 123
        var product = 7
        var serial = 12_345
        var productName: String? = "Polar Vantage V3"
        var calories: Int? = 321
        var records: [[Double]] = []
        var rr: [Double] = []
        var pauses: [[Double]] = []
        var laps: [[Double]] = []
    }

    /// Writes the activities with fit-tool; returns each file's bytes.
    static func written(_ specs: [Spec]) async throws -> [[UInt8]] {
        let spec = FileManager.default.temporaryDirectory.appendingPathComponent("systole-fit-\(UUID()).json")
        try JSONEncoder().encode(["activities": specs]).write(to: spec)
        defer { try? FileManager.default.removeItem(at: spec) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("write_fit.py")
        _ = try await PythonTools.run(script.path, [spec.path])
        return try specs.map { spec in
            defer { try? FileManager.default.removeItem(atPath: spec.path) }
            return Array(try Data(contentsOf: URL(fileURLWithPath: spec.path)))
        }
    }

    static func path() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("systole-\(UUID()).fit").path
    }

    /// A 30-minute run with a pause and two laps, heart rate every second and RR intervals.
    static func run(start: Double = 1_790_000_000) -> Spec {
        var spec = Spec(path: path(), start: start, end: start + 1800)
        spec.pauses = [[start + 600, start + 700]]
        spec.records = stride(from: start + 1, to: start + 1800, by: 1).filter { !(600..<700).contains($0 - start) }
            .map { [$0, Double(100 + Int($0 - start) % 60)] }
        spec.rr = (0..<500).map { 0.6 + Double($0 % 7) / 100 }
        spec.laps = [[start, start + 900], [start + 900, start + 1800]]
        return spec
    }

    @Test func aRunWrittenByFitToolIsReadWithEveryValueSystoleKeeps() async throws {
        let spec = Self.run()
        let bytes = try #require(try await Self.written([spec]).first)
        let activity = try FITActivityReader.read(bytes)
        let date = { (seconds: Double) in Date(timeIntervalSince1970: seconds) }
        #expect(activity.format == .fit)
        #expect(activity.activity == .running)
        #expect(activity.start == date(spec.start))
        #expect(activity.end == date(spec.end))
        #expect(activity.pauses == [DateInterval(start: date(spec.start + 600), end: date(spec.start + 700))])
        #expect(activity.laps == spec.laps.map { DateInterval(start: date($0[0]), end: date($0[1])) })
        #expect(activity.heartRates.map(\.date) == spec.records.map { date($0[0]) })
        #expect(activity.heartRates.map(\.beatsPerMinute) == spec.records.map { $0[1] })
        #expect(activity.rrIntervals == spec.rr.map { ($0 * 1000).rounded() / 1000 })
        #expect(activity.energyKilocalories == 321)
        #expect(activity.recorder == .init(manufacturer: "Polar", product: "Polar Vantage V3", serialNumber: "12345"))
    }

    @Test(arguments: [
        (1, 0, WorkoutActivityType.running), (2, 0, .cycling), (11, 0, .walking), (17, 0, .hiking), (15, 0, .rowing),
        (5, 0, .swimming), (4, 15, .elliptical), (10, 26, .highIntensityIntervalTraining), (0, 0, .other),
    ])
    func sportsBecomeSystolesActivities(sport: Int, subSport: Int, activity: WorkoutActivityType) async throws {
        var spec = Spec(path: Self.path(), start: 1_790_000_000, end: 1_790_000_060)
        spec.sport = sport
        spec.subSport = subSport
        spec.records = [[1_790_000_010, 90]]
        let bytes = try #require(try await Self.written([spec]).first)
        #expect(try FITActivityReader.read(bytes).activity == activity)
    }
}
