import Foundation
import SystoleTestSupport
import Testing

@testable import WorkoutAnalysis

/// Morning readiness: a measurement's ln RMSSD against NeuroKit2's with the same correction, and the baseline,
/// normal range and verdict against the test's own computation.
@Suite struct ReadinessTests {
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }

    @Test func aThreeMinuteMeasurementsLnRMSSDIsNeuroKitsWithTheSameCorrection() async throws {
        // Three minutes lying still at 58 bpm, with a premature and a missed beat.
        let clean = RRSeries.clean(count: 175, milliseconds: 1034, seed: 31)
        let (ticks, _) = RRSeries.withArtifacts(clean, [.ectopic, .missed], every: 60, seed: 32)
        let origins = RRSeries.origins([ticks])
        let recording = RRSeries.recording([ticks], origins: origins)
        let measurement = try #require(Readiness.Measurement(recording))
        let reference = try await NeuroKitReference.of([ticks], origins: origins)
        let theirs = try #require(reference.all)
        #expect(abs(measurement.lnRMSSD - log(theirs.rmssd)) < 0.01, "\(measurement.lnRMSSD) vs \(log(theirs.rmssd))")
        #expect(measurement.correctedBeats == reference.runs.first?.corrected)
        #expect(abs(measurement.heartRate - 60_000 / theirs.meanNN) < 0.1)
    }

    /// A measurement on `day` days after 2026-09-01 at `hour` UTC.
    static func measurement(day: Int, hour: Int = 7, ln: Double, corrected: Int = 0) -> Readiness.Measurement {
        let date = Date(timeIntervalSince1970: 1_788_220_800 + Double(day) * 86_400 + Double(hour) * 3600)
        return Readiness.Measurement(date: date, rmssd: exp(ln), beats: 200, correctedBeats: corrected, heartRate: 55)
    }

    @Test func theBaselineAndNormalRangeAreTheDaysFirstTrustedValuesOverSevenAndSixtyDays() throws {
        var random = SplitMix64(seed: 38)
        var history: [Readiness.Measurement] = []
        var firstOfDay: [Int: Double] = [:]
        for day in 0..<75 where random.next() % 5 != 0 {
            let ln = 4.0 + Double(random.next() % 600) / 1000
            history.append(Self.measurement(day: day, ln: ln))
            firstOfDay[day] = ln
            // A later one the same day, and one with too many corrected beats: neither counts.
            history.append(Self.measurement(day: day, hour: 21, ln: 3.0))
            history.append(Self.measurement(day: day, hour: 6, ln: 2.0, corrected: 20))
        }
        let todayLn = 4.3
        let today = Self.measurement(day: 75, ln: todayLn)
        let assessment = Readiness.assess(today, history: history.shuffled(using: &random), calendar: Self.utc)

        // The test's own computation: days 69…75 for the baseline, days 15…74 for the range.
        let week = (69...74).compactMap { firstOfDay[$0] } + [todayLn]
        let baseline = week.reduce(0, +) / Double(week.count)
        let sixty = (15...74).compactMap { firstOfDay[$0] }
        let mean = sixty.reduce(0, +) / Double(sixty.count)
        let sd = (sixty.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(sixty.count - 1)).squareRoot()
        #expect(abs((assessment.baseline ?? 0) - baseline) < 1e-12)
        #expect(assessment.historyDays == sixty.count)
        let range = try #require(assessment.normalRange)
        #expect(abs(range.lowerBound - (mean - sd / 2)) < 1e-12)
        #expect(abs(range.upperBound - (mean + sd / 2)) < 1e-12)
        #expect(
            assessment.verdict == (todayLn < mean - sd / 2 || baseline < mean - sd / 2 ? .takeItEasy : .trainAsPlanned)
        )
    }

    @Test func theVerdictFollowsTheRangeAndWantsTrustAndHistory() {
        // Forty days alternating 4.2 and 4.4: mean 4.3, half a standard deviation about 0.05.
        let history = (0..<40).map { Self.measurement(day: $0, ln: $0 % 2 == 0 ? 4.2 : 4.4) }
        let assess = { (ln: Double, corrected: Int) in
            Readiness.assess(
                Self.measurement(day: 40, ln: ln, corrected: corrected),
                history: history,
                calendar: Self.utc
            )
        }
        #expect(assess(4.30, 0).verdict == .trainAsPlanned)
        #expect(assess(4.60, 0).verdict == .trainAsPlanned)
        #expect(assess(4.10, 0).verdict == .takeItEasy)
        #expect(assess(4.30, 11).verdict == .measureAgain)
        // Ten days of history are not enough for a normal range.
        let short = Readiness.assess(
            Self.measurement(day: 10, ln: 4.3),
            history: Array(history.prefix(10)),
            calendar: Self.utc
        )
        #expect(short.verdict == .keepMeasuring && short.normalRange == nil && short.baseline != nil)
    }
}
