import DBus
import Foundation
import Testing

@testable import SystoleCLI

/// `systole trends` as text: what a reply without any workout says, and values no number can show.
@Suite struct TrendsTextTests {
    static func reply(days: Int, value: Double, workouts: UInt32) -> [String: DBusValue] {
        let doubles = { (v: Double) in DBusValue.array(.double, Array(repeating: .double(v), count: days)) }
        return [
            "days": .array(.double, (0..<days).map { .double(1_790_000_000 + Double($0) * 86_400) }),
            "load": doubles(value), "fitness": doubles(value), "fatigue": doubles(value), "form": doubles(value),
            "energy": doubles(value), "zoneMinutes": doubles(value), "restingHeartRate": doubles(.nan),
            "workouts": .array(.uint32, Array(repeating: .uint32(workouts), count: days)),
            "goals": .propertyMap(["workouts": .uint32(1), "zoneMinutes": .double(30)]),
        ]
    }

    @Test func noWorkoutAtAllSaysHowToGetSomeInsteadOfAFlatChart() {
        let lines = TrendDays(Self.reply(days: 5, value: 0, workouts: 0)).chart()
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("No workouts up to ") == true, "\(lines)")
        #expect(lines.first?.contains("systole import") == true)
    }

    @Test(arguments: [Double.nan, .infinity, 1e300, -1e300])
    func valuesNoNumberShowsBecomeQuestionMarksOrBlanks(value: Double) {
        let trends = TrendDays(Self.reply(days: 3, value: value, workouts: 1))
        let lines = trends.chart()
        #expect(lines.count > 1)
        #expect(!lines.joined().contains("nan") && !lines.joined().contains("inf"), "\(lines)")
        // CSV leaves a value that is not a number empty; a huge one is written as it is.
        #expect(trends.rows.allSatisfy { $0.csv.split(separator: ",", omittingEmptySubsequences: false).count == 9 })
    }

    @Test func aSparklineOfBothEndsOfDoublesRangeDoesNotTrap() {
        let line = TrendDays.sparkline([-1e308, 1e308, 1e308, .nan, 0], width: 60)
        #expect(line.count == 5)
    }
}
