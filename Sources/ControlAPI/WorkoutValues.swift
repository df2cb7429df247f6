import DBus
import Foundation
import WorkoutAnalysis
import WorkoutImport
import WorkoutKit

/// A finished workout and statistics as the control API returns them (docs/dbus-api.md), and as `systole` prints
/// them whether they came from systoled or from the central database (`--database`).
public enum WorkoutValues {
    public static func values(of workout: Workout) -> [String: DBusValue] {
        var statistics: [String: DBusValue] = [:]
        for (type, value) in workout.statistics { statistics[type] = .propertyMap(Self.values(of: value)) }
        var values: [String: DBusValue] = [:]
        if case .string(let athlete)? = workout.metadata[ActivityRecording.athleteKey] {
            values["athlete"] = .string(athlete)
        }
        if case .string(let team)? = workout.metadata[ActivityRecording.teamSessionKey] {
            values["teamSession"] = .string(team)
        }
        // The format it was imported from (`systole import`); a recorded workout has none.
        if case .string(let format)? = workout.metadata[ImportedActivity.formatKey] {
            values["imported"] = .string(format)
        }
        return values.merging([
            "id": .string(workout.id.uuidString),
            "activity": .string(workout.activityType.name),
            "location": .string("\(workout.configuration.locationType)"),
            "start": .double(workout.startDate.timeIntervalSince1970),
            "end": .double(workout.endDate.timeIntervalSince1970),
            "duration": .double(workout.duration),
            "pauses": .uint32(UInt32(workout.events.filter { $0.type == .pause }.count)),
            // Intervals without samples because systoled was not running (marker events it recorded).
            "gaps": .uint32(UInt32(workout.events.filter { $0.metadata[ActivityRecording.gapKey] != nil }.count)),
            "statistics": .propertyMap(statistics),
            "devices": .strings(workout.devices.map { $0.name ?? $0.address ?? "unknown" }),
        ]) { own, _ in own }
    }

    public static func values(of statistics: Statistics) -> [String: DBusValue] {
        var values: [String: DBusValue] = ["count": .int64(Int64(statistics.readingCount))]
        func add(_ key: String, _ quantity: Quantity?) {
            guard let quantity else { return }
            values[key] = .double((try? quantity.doubleValue(for: statistics.quantityType.canonicalUnit)) ?? 0)
        }
        add("average", statistics.averageQuantity())
        add("minimum", statistics.minimumQuantity())
        add("maximum", statistics.maximumQuantity())
        add("mostRecent", statistics.mostRecentQuantity())
        add("sum", statistics.sumQuantity())
        values["start"] = .double(statistics.startDate.timeIntervalSince1970)
        values["end"] = .double(statistics.endDate.timeIntervalSince1970)
        return values
    }
}
