import Foundation
import SystoleTestSupport
import Testing
import WorkoutKit

@testable import WorkoutImport

/// FIT activity files written by fit-tool (PyPI), an encoder independent of systole's, read back: every value the
/// file holds that systole keeps.
@Suite struct FITImportTests {
    @Test func aRunWrittenByFitToolIsReadWithEveryValueSystoleKeeps() async throws {
        let spec = ActivityFiles.fitRun()
        let bytes = try #require(try await ActivityFiles.writtenFIT([spec]).first)
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
        var spec = ActivityFiles.FITSpec(path: ActivityFiles.path("fit"), start: 1_790_000_000, end: 1_790_000_060)
        spec.sport = sport
        spec.subSport = subSport
        spec.records = [[1_790_000_010, 90]]
        let bytes = try #require(try await ActivityFiles.writtenFIT([spec]).first)
        #expect(try FITActivityReader.read(bytes).activity == activity)
    }
}
