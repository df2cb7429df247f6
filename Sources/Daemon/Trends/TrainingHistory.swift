import Foundation
import SQLiteStore
import WorkoutAnalysis
import WorkoutKit

/// Training load over days, for `systole trends`: each workout's TRIMP for the profile, summed per day in the store's
/// calendar, and the fitness, fatigue and form they make (``PerformanceManagement``); each day's resting heart rate. Fitness remembers weeks, so the
/// days are computed from the athlete's first workout however short the range asked for. A workout's TRIMP is
/// remembered once computed (and its lowest sustained heart rate): a finished workout does not change.
actor TrainingHistory {
    let store: SQLiteHealthStore
    let profile: AthleteProfile
    private var known: [UUID: WorkoutLoad] = [:]

    /// What a workout gives the days: its TRIMP, lowest sustained heart rate, energy (measured, else estimated) and
    /// minutes in zone 2 and above.
    struct WorkoutLoad: Sendable {
        var trimp: Double
        var lowestSustainedHeartRate: Double?
        var kilojoules = 0.0
        var zoneMinutes = 0.0
    }

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
        /// Each day's resting heart rate: the lowest sustained heart rate of its workouts, nil without one.
        var restingHeartRate: [Double?]
        /// Each day's active energy from workouts, kJ.
        var kilojoules: [Double]
        /// Each day's minutes in zone 2 and above.
        var zoneMinutes: [Double]
    }

    /// The days from the day of `from` to the day of `to`, of `athlete`'s workouts (nil: the workouts of no athlete).
    func days(athlete: String?, from: Date, to: Date) async throws -> Days {
        let calendar = store.calendar
        let first = calendar.startOfDay(for: from)
        let last = calendar.startOfDay(for: to)
        guard let end = calendar.date(byAdding: .day, value: 1, to: last) else {
            return Days(starts: [], values: [], workouts: [], restingHeartRate: [], kilojoules: [], zoneMinutes: [])
        }
        let workouts = try await store.workouts(to: end).filter { workout in
            if case .string(let name)? = workout.metadata[ActivityRecording.athleteKey] { return name == athlete }
            return athlete == nil
        }
        let historyStart = min(first, workouts.first.map { calendar.startOfDay(for: $0.startDate) } ?? first)
        let count = Self.days(from: historyStart, to: last, calendar) + 1
        var loads = [Double](repeating: 0, count: count)
        var started = [Int](repeating: 0, count: count)
        var resting = [Double?](repeating: nil, count: count)
        var kilojoules = [Double](repeating: 0, count: count)
        var zoneMinutes = [Double](repeating: 0, count: count)
        for workout in workouts {
            let index = Self.days(from: historyStart, to: calendar.startOfDay(for: workout.startDate), calendar)
            guard loads.indices.contains(index) else { continue }
            let load = try await self.load(of: workout)
            loads[index] += load.trimp
            started[index] += 1
            if let lowest = load.lowestSustainedHeartRate { resting[index] = min(resting[index] ?? lowest, lowest) }
            kilojoules[index] += load.kilojoules
            zoneMinutes[index] += load.zoneMinutes
        }
        let skipped = Self.days(from: historyStart, to: first, calendar)
        let values = PerformanceManagement.days(loads: loads)
        let starts = (skipped..<count).compactMap { calendar.date(byAdding: .day, value: $0, to: historyStart) }
        return Days(
            starts: starts,
            values: Array(values[skipped...]),
            workouts: Array(started[skipped...]),
            restingHeartRate: Array(resting[skipped...]),
            kilojoules: Array(kilojoules[skipped...]),
            zoneMinutes: Array(zoneMinutes[skipped...])
        )
    }

    /// Whole days from one day's start to another's (a day of 23 or 25 hours is still one).
    private static func days(from start: Date, to end: Date, _ calendar: Calendar) -> Int {
        calendar.dateComponents([.day], from: start, to: end).day ?? 0
    }

    /// The workout's TRIMP and lowest sustained heart rate; none for one too large to read (more than an analysis
    /// reads).
    private func load(of workout: Workout) async throws -> WorkoutLoad {
        if let load = known[workout.id] { return load }
        let load: WorkoutLoad
        do {
            let recording = try await ActivityRecording.read(workout, from: store)
            load = WorkoutLoad(
                trimp: TrainingLoad.trimp(recording, profile: profile),
                lowestSustainedHeartRate: recording.lowestSustainedHeartRate,
                kilojoules: recording.energy?.kilojoules ?? 0,
                zoneMinutes: HeartRateZones(recording, profile: profile).secondsFromZone2 / 60
            )
        } catch is SampleCollector.TooLarge {
            load = WorkoutLoad(trimp: 0)
        }
        known[workout.id] = load
        return load
    }
}
