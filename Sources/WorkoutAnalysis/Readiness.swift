import Foundation

/// Morning readiness from heart-rate variability, as HRV-guided training uses it (Plews et al. 2013; Vesterinen et
/// al. 2016; HRV4Training): a short measurement lying still, its ln RMSSD set against the athlete's own history.
///
/// - The **measurement**: the RMSSD of its beats after artifact correction, exactly as a workout's HRV
///   (``HeartRateVariability``), and its natural logarithm. One with more than ``mostCorrectedShare`` of its beats
///   corrected is flagged and not trusted: it says more about the strap's contact than about the heart.
/// - A **day's value**: the day's first trusted measurement.
/// - The **baseline**: the mean of the days' values over the last ``baselineDays`` days, today's included.
/// - The **normal range**: the mean of the days' values over the ``normalRangeDays`` days before today, ± half their
///   standard deviation (the smallest worthwhile change); it needs ``leastDaysForRange`` days of values.
public enum Readiness {
    public static let mostCorrectedShare = 0.05
    public static let baselineDays = 7
    public static let normalRangeDays = 60
    public static let leastDaysForRange = 14

    /// One measurement.
    public struct Measurement: Sendable, Equatable {
        public var date: Date
        /// RMSSD after correction, ms.
        public var rmssd: Double
        /// Beats analysed, and how many of them were corrected.
        public var beats: Int
        public var correctedBeats: Int
        /// Mean heart rate over the measurement, bpm (60 000 / mean NN).
        public var heartRate: Double

        public init(date: Date, rmssd: Double, beats: Int, correctedBeats: Int, heartRate: Double) {
            self.date = date
            self.rmssd = rmssd
            self.beats = beats
            self.correctedBeats = correctedBeats
            self.heartRate = heartRate
        }

        /// The measurement of a recording's beats; nil with too few beats for an HRV.
        public init?(_ recording: ActivityRecording) {
            guard let hrv = HeartRateVariability.workout(recording), hrv.rmssd > 0, hrv.meanNN > 0 else { return nil }
            self.init(
                date: recording.start,
                rmssd: hrv.rmssd,
                beats: hrv.beatCount,
                correctedBeats: hrv.correctedBeats,
                heartRate: 60_000 / hrv.meanNN
            )
        }

        public var lnRMSSD: Double { log(rmssd) }
        public var correctedShare: Double { beats > 0 ? Double(correctedBeats) / Double(beats) : 1 }
        public var isTrusted: Bool { correctedShare <= Readiness.mostCorrectedShare }
    }

    /// What today's measurement says.
    public enum Verdict: String, Sendable, Equatable {
        /// Too many beats corrected: measure again, lying still with the strap's electrodes wet.
        case measureAgain = "measure again"
        /// Fewer than ``leastDaysForRange`` days of history: no normal range yet.
        case keepMeasuring = "keep measuring"
        /// Today's value or the baseline below the normal range: low intensity or rest.
        case takeItEasy = "take it easy"
        /// Within the normal range (or above it): train as planned.
        case trainAsPlanned = "train as planned"
    }

    /// Today's measurement against the history.
    public struct Assessment: Sendable, Equatable {
        public var today: Measurement
        /// The 7-day mean of ln RMSSD (nil when today's measurement is not trusted and no other day has one).
        public var baseline: Double?
        /// The 60-day normal range of ln RMSSD, nil with too little history.
        public var normalRange: ClosedRange<Double>?
        /// Days with a value in the 60 days before today.
        public var historyDays: Int
        public var verdict: Verdict
    }

    /// Today's measurement against `history` (earlier measurements, in any order; today's other ones included or
    /// not), days counted in `calendar`.
    public static func assess(_ today: Measurement, history: [Measurement], calendar: Calendar) -> Assessment {
        let todayStart = calendar.startOfDay(for: today.date)
        var values: [Date: Double] = [:]
        var firsts: [Date: Date] = [:]
        for measurement in history + [today] where measurement.isTrusted && measurement.date <= today.date {
            let day = calendar.startOfDay(for: measurement.date)
            if let first = firsts[day], first <= measurement.date { continue }
            firsts[day] = measurement.date
            values[day] = measurement.lnRMSSD
        }
        func days(_ count: Int, endingBefore end: Date) -> [Double] {
            let start = calendar.date(byAdding: .day, value: -count, to: end) ?? end
            return values.filter { $0.key >= start && $0.key < end }.map(\.value)
        }
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: todayStart) ?? todayStart
        let week = days(baselineDays, endingBefore: tomorrow)
        let history = days(normalRangeDays, endingBefore: todayStart)
        let baseline = week.isEmpty ? nil : week.reduce(0, +) / Double(week.count)
        var normalRange: ClosedRange<Double>?
        if history.count >= leastDaysForRange {
            let mean = history.reduce(0, +) / Double(history.count)
            let variance = history.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(history.count - 1)
            let half = variance.squareRoot() / 2
            normalRange = (mean - half)...(mean + half)
        }
        let verdict: Verdict
        if !today.isTrusted {
            verdict = .measureAgain
        } else if let normalRange, let baseline {
            let low = today.lnRMSSD < normalRange.lowerBound || baseline < normalRange.lowerBound
            verdict = low ? .takeItEasy : .trainAsPlanned
        } else {
            verdict = .keepMeasuring
        }
        return Assessment(
            today: today,
            baseline: baseline,
            normalRange: normalRange,
            historyDays: history.count,
            verdict: verdict
        )
    }
}
