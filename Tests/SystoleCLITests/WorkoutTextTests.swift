import DBus
import Testing

@testable import SystoleCLI

/// The CLI shows whatever values the daemon sends without trapping on them (a workout stored before its samples
/// were bounded can hold infinite or enormous statistics).
@Suite struct WorkoutTextTests {
    static let extremes: [Double] = [.infinity, -.infinity, .nan, 1e308, -1e308, 7e306, 9.3e18, 1e15]

    @Test(arguments: extremes) func summariesShowAQuestionMarkForValuesNoWholeNumberHolds(value: Double) {
        let statistics: DBusValue = .propertyMap([
            "heartRate": .propertyMap(["average": .double(value), "maximum": .double(value)]),
            "activeEnergyBurned": .propertyMap(["sum": .double(value)]),
            "dietaryWater": .propertyMap(["sum": .double(value)]),
        ])
        let text = WorkoutText.summary([
            "activity": .string("running"), "duration": .double(value), "statistics": statistics,
            "id": .string("2783E8B6-0000-0000-0000-000000000000"),
        ])
        #expect(text == "running · --:--:-- · avg ? bpm · max ? bpm · ? kJ · ? mL water · 2783E8B6")
    }

    @Test func chartsLeaveOutMinutesTheyCannotPlace() {
        let rows = WorkoutText.chart([120, .infinity, 1e308, -1e308, .nan, 130])
        #expect(rows.count == 6)
        #expect(rows[1].hasSuffix("·") && rows[2].hasSuffix("·") && rows[3].hasSuffix("·") && rows[4].hasSuffix("·"))
        #expect(rows[5].hasSuffix(" 130"))
        #expect(WorkoutText.chart([.infinity, .nan]) == ["(no heart rate recorded)"])
    }

    @Test func wholeNumbersAreRounded() {
        #expect(WorkoutText.whole(141.6) == "142")
        #expect(WorkoutText.whole(-0.4) == "0")
    }
}
