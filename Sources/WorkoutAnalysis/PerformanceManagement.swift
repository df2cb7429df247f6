import Foundation

/// Fitness, fatigue and form from daily training load: Banister's impulse-response model as GoldenCheetah's
/// Performance Manager and intervals.icu chart it. Fitness (chronic training load, CTL) and fatigue (acute, ATL) are
/// exponentially weighted averages of the daily load with time constants of 42 and 7 days:
/// `CTL(d) = CTL(d−1) · e^(−1/42) + load(d) · (1 − e^(−1/42))`, the same with 7 for ATL, both 0 before the first
/// day. Form (training stress balance, TSB) is yesterday's fitness less yesterday's fatigue, so today's training
/// does not change today's form.
public enum PerformanceManagement {
    /// Fitness's time constant, days.
    public static let fitnessDays = 42.0
    /// Fatigue's time constant, days.
    public static let fatigueDays = 7.0

    /// One day of the chart.
    public struct Day: Sendable, Equatable {
        /// The day's training load (the TRIMP of its workouts, summed).
        public var load: Double
        /// CTL at the end of the day.
        public var fitness: Double
        /// ATL at the end of the day.
        public var fatigue: Double
        /// TSB: the day before's fitness less its fatigue.
        public var form: Double

        public init(load: Double, fitness: Double, fatigue: Double, form: Double) {
            self.load = load
            self.fitness = fitness
            self.fatigue = fatigue
            self.form = form
        }
    }

    /// The chart of consecutive days' loads (0 for a day without training), from the first day of the history.
    public static func days(loads: [Double]) -> [Day] {
        let keepFitness = exp(-1 / fitnessDays)
        let keepFatigue = exp(-1 / fatigueDays)
        var fitness = 0.0
        var fatigue = 0.0
        return loads.map { load in
            let form = fitness - fatigue
            fitness = fitness * keepFitness + load * (1 - keepFitness)
            fatigue = fatigue * keepFatigue + load * (1 - keepFatigue)
            return Day(load: load, fitness: fitness, fatigue: fatigue, form: form)
        }
    }
}
