import Foundation
import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

/// Training load over days, for `systole trends`: each workout's TRIMP for the profile, summed per day in the store's
/// calendar, and the fitness, fatigue and form they make (``PerformanceManagement``). Fitness remembers weeks, so the
/// days are computed from the athlete's first workout however short the range asked for. A workout's TRIMP is
/// remembered once computed: a finished workout does not change.
actor TrainingHistory {
    let store: SQLiteHealthStore
    let profile: AthleteProfile
    private var trimps: [UUID: Double] = [:]

    init(store: SQLiteHealthStore, profile: AthleteProfile) {
        self.store = store
        self.profile = profile
    }

    /// The days from `first` to `last` (each a day of the store's calendar, both included).
    struct Days: Sendable {
        /// Each day's start.
        var starts: [Date]
        var values: [PerformanceManagement.Day]
        /// Workouts started on each day.
        var workouts: [Int]
    }

    /// The days from the day of `from` to the day of `to`, of `athlete`'s workouts (nil: the workouts of no athlete).
    func days(athlete: String?, from: Date, to: Date) async throws -> Days {
        let calendar = store.calendar
        let first = calendar.startOfDay(for: from)
        let last = calendar.startOfDay(for: to)
        guard let end = calendar.date(byAdding: .day, value: 1, to: last) else {
            return Days(starts: [], values: [], workouts: [])
        }
        let workouts = try await store.workouts(to: end).filter { workout in
            if case .string(let name)? = workout.metadata[ActivityRecording.athleteKey] { return name == athlete }
            return athlete == nil
        }
        let historyStart = min(first, workouts.first.map { calendar.startOfDay(for: $0.startDate) } ?? first)
        let count = Self.days(from: historyStart, to: last, calendar) + 1
        var loads = [Double](repeating: 0, count: count)
        var started = [Int](repeating: 0, count: count)
        for workout in workouts {
            let index = Self.days(from: historyStart, to: calendar.startOfDay(for: workout.startDate), calendar)
            guard loads.indices.contains(index) else { continue }
            loads[index] += try await trimp(of: workout)
            started[index] += 1
        }
        let skipped = Self.days(from: historyStart, to: first, calendar)
        let values = PerformanceManagement.days(loads: loads)
        let starts = (skipped..<count).compactMap { calendar.date(byAdding: .day, value: $0, to: historyStart) }
        return Days(starts: starts, values: Array(values[skipped...]), workouts: Array(started[skipped...]))
    }

    /// Whole days from one day's start to another's (a day of 23 or 25 hours is still one).
    private static func days(from start: Date, to end: Date, _ calendar: Calendar) -> Int {
        calendar.dateComponents([.day], from: start, to: end).day ?? 0
    }

    /// The workout's TRIMP; 0 for one too large to read (more than an analysis reads: no TRIMP is known).
    private func trimp(of workout: Workout) async throws -> Double {
        if let known = trimps[workout.id] { return known }
        let value: Double
        do {
            value = TrainingLoad.trimp(try await ActivityRecording.read(workout, from: store), profile: profile)
        } catch is SampleCollector.TooLarge {
            value = 0
        }
        trimps[workout.id] = value
        return value
    }
}
