import ControlAPI
import DBus
import Foundation
import SQLiteStore
import SafeText
import WorkoutAnalysis

/// `GetTrends`: training load, fitness, fatigue and form per day over a range (`systole trends`).
struct TrendsControl: ControlMethods {
    let history: TrainingHistory
    /// The day's goals (the daily summary).
    let goals: DailyGoals

    /// The longest range one call returns: ten years of days.
    static let maximumDays = 3_660

    func addMethods(to methods: inout [DBusMethod]) {
        methods.append(
            DBusMethod(
                "GetTrends",
                inputs: [("from", .double), ("to", .double), ("athlete", .string)],
                outputs: [("trends", DBusType.propertyMap)]
            ) { call throws(DBusError) in try await self.trends(call) }
        )
    }

    private func trends(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let from: Date
        let to: Date
        do {
            from = try StatisticsRequest.date(try call.argument(0, "from").double ?? .nan, "from")
            to = try StatisticsRequest.date(try call.argument(1, "to").double ?? .nan, "to")
        } catch let refusal as StatisticsRequest.Refusal {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: refusal.message)
        } catch {
            throw DBusError(.invalidArgs, "GetTrends expects from, to and an athlete")
        }
        guard from <= to else {
            throw DBusError(name: ControlAPI.ErrorName.invalidArguments, message: "'from' must not be after 'to'")
        }
        guard to.timeIntervalSince(from) <= Double(Self.maximumDays) * 86_400 else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "at most \(Self.maximumDays) days at once (ten years): choose a shorter range"
            )
        }
        let athlete = try ControlCall.text(call, 2, "an athlete's name (empty: the workouts of no athlete)")
        let days = try await ControlCall.storeCall {
            try await self.history.days(athlete: athlete.isEmpty ? nil : athlete, from: from, to: to)
        }
        var goals: [String: DBusValue] = [
            "zoneMinutes": .double(self.goals.zoneMinutes), "workouts": .uint32(UInt32(self.goals.workouts)),
        ]
        if let energy = self.goals.energyKilocalories { goals["energy"] = .double(energy * 4.184) }
        return [
            .propertyMap([
                "days": .array(.double, days.starts.map { .double($0.timeIntervalSince1970) }),
                "load": .array(.double, days.values.map { .double($0.load) }),
                "fitness": .array(.double, days.values.map { .double($0.fitness) }),
                "fatigue": .array(.double, days.values.map { .double($0.fatigue) }),
                "form": .array(.double, days.values.map { .double($0.form) }),
                "workouts": .array(.uint32, days.workouts.map { .uint32(UInt32(clamping: $0)) }),
                "restingHeartRate": .array(.double, days.restingHeartRate.map { .double($0 ?? .nan) }),
                "energy": .array(.double, days.kilojoules.map { .double($0) }),
                "zoneMinutes": .array(.double, days.zoneMinutes.map { .double($0) }),
                "goals": .propertyMap(goals),
            ])
        ]
    }
}
