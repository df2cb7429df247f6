import ControlAPI
import DBus
import Foundation
import Recording
import SafeText
import WorkoutAnalysis
import WorkoutKit

/// The workout commands, as a HealthKit app offers them as intents: start (alone or as a team), pause, resume,
/// end, cancel, and a sample, a lap or a marker added to the workout under way.
struct WorkoutControl: ControlMethods {
    let workouts: WorkoutManager

    func addMethods(to methods: inout [DBusMethod]) {
        let map = DBusType.propertyMap
        methods += [
            DBusMethod(
                "StartWorkout",
                inputs: [("activity", .string), ("location", .string)],
                outputs: [("workout", .string), ("heartRateAvailable", .boolean)]
            ) { call throws(DBusError) in try await self.startWorkout(call) },
            DBusMethod(
                "StartTeamSession",
                inputs: [("activity", .string), ("location", .string), ("teamSession", .string)],
                outputs: [("teamSession", .string), ("workouts", .array(map))]
            ) { call throws(DBusError) in try await self.startTeamSession(call) },
            DBusMethod("PauseWorkout") { _ throws(DBusError) in
                try await ControlCall.command { () throws(WorkoutCommandError) in try await self.workouts.pause() }
                return []
            },
            DBusMethod("ResumeWorkout") { _ throws(DBusError) in
                try await ControlCall.command { () throws(WorkoutCommandError) in try await self.workouts.resume() }
                return []
            },
            DBusMethod("EndWorkout", outputs: [("workout", map)]) { _ throws(DBusError) in
                let saved = try await ControlCall.command { () throws(WorkoutCommandError) in
                    try await self.workouts.end()
                }
                // The first workout, as for a workout of one's own; a team session's every workout under "team".
                var values = saved.first.map(WorkoutValues.values(of:)) ?? [:]
                if saved.count > 1 || saved.first?.metadata[ActivityRecording.teamSessionKey] != nil {
                    values["team"] = .array(map, saved.map { .propertyMap(WorkoutValues.values(of: $0)) })
                }
                return [.propertyMap(values)]
            },
            DBusMethod("CancelWorkout") { _ throws(DBusError) in
                try await ControlCall.command { () throws(WorkoutCommandError) in try await self.workouts.cancel() }
                return []
            },
            DBusMethod(
                "AddSample",
                inputs: [("type", .string), ("value", .double), ("unit", .string)]
            ) { call throws(DBusError) in try await self.addSample(call) },
            DBusMethod("AddLap", outputs: [("lap", .uint32)]) { _ throws(DBusError) in
                let lap = try await ControlCall.command { () throws(WorkoutCommandError) in
                    try await self.workouts.lap()
                }
                return [.uint32(UInt32(clamping: lap))]
            },
            DBusMethod("AddMarker", inputs: [("text", .string)]) { call throws(DBusError) in
                let text = try ControlCall.text(call, 0, "a marker's text")
                try await ControlCall.command { () throws(WorkoutCommandError) in try await self.workouts.marker(text) }
                return []
            },
        ]
    }

    /// The activity and location of a start call's first two arguments.
    private static func configuration(_ call: DBusMethodCall) throws(WorkoutCommandError) -> WorkoutConfiguration {
        guard let activityName = try? call.argument(0, "an activity").string,
            let locationName = try? call.argument(1, "a location").string
        else {
            throw WorkoutCommandError(.invalidArguments, "\(call.member) expects an activity and a location")
        }
        guard let activity = WorkoutActivityType(name: activityName) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "unknown activity \(activityName.quotedExcerpt()); known: "
                    + WorkoutActivityType.allCases.map(\.name).joined(separator: ", ")
            )
        }
        guard let location = WorkoutSessionLocationType.allCases.first(where: { "\($0)" == locationName }) else {
            throw WorkoutCommandError(
                .invalidArguments,
                "unknown location \(locationName.quotedExcerpt()); known: indoor, outdoor, unknown"
            )
        }
        return WorkoutConfiguration(activityType: activity, locationType: location)
    }

    private func startWorkout(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let (id, available) = try await ControlCall.command { () throws(WorkoutCommandError) in
            try await self.workouts.start(try Self.configuration(call))
        }
        return [.string(id.uuidString), .boolean(available)]
    }

    /// `StartTeamSession`: a workout per athlete whose sensor is connected, under the team session given (a UUID,
    /// so receivers in other rooms can join it) or a new one (an empty string).
    private func startTeamSession(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let text = try ControlCall.text(call, 2, "a team session id or an empty string")
        var team: UUID?
        if !text.isEmpty {
            guard let id = UUID(uuidString: text) else {
                throw DBusError(
                    name: ControlAPI.ErrorName.invalidArguments,
                    message: "\(text.quotedExcerpt()) is not a team session id (a UUID, as 'systole start --team' "
                        + "printed it)"
                )
            }
            team = id
        }
        let started = try await ControlCall.command { () throws(WorkoutCommandError) in
            try await self.workouts.startTeam(try Self.configuration(call), teamSessionID: team)
        }
        return [
            .string(started.teamSessionID.uuidString),
            .array(
                .propertyMap,
                started.workouts.map {
                    .propertyMap(["athlete": .string($0.athlete), "id": .string($0.id.uuidString)])
                }
            ),
        ]
    }

    private func addSample(_ call: DBusMethodCall) async throws(DBusError) -> [DBusValue] {
        let typeName = try ControlCall.text(call, 0, "a sample type")
        guard let value = try call.argument(1, "a value").double else {
            throw DBusError(.invalidArgs, "AddSample expects a double as argument 2")
        }
        let unitName = try ControlCall.text(call, 2, "a unit")
        guard let type = QuantityType(identifier: typeName) else {
            throw ControlCall.unknown("sample type", typeName, known: QuantityType.known.map(\.identifier))
        }
        guard let unit = Unit(symbol: unitName) else {
            throw ControlCall.unknown("unit", unitName, known: Unit.known.map(\.symbol))
        }
        let quantity = Quantity(value, unit)
        guard quantity.isCompatible(with: type.canonicalUnit) else {
            throw DBusError(
                name: ControlAPI.ErrorName.invalidArguments,
                message: "\(typeName) is not measured in \(unitName): use "
                    + Unit.known.filter { type.canonicalUnit.dimension == $0.dimension }.map(\.symbol).joined(
                        separator: " or "
                    )
            )
        }
        try await ControlCall.command { () throws(WorkoutCommandError) in
            try await self.workouts.addSample(type: type, quantity: quantity)
        }
        return []
    }
}
