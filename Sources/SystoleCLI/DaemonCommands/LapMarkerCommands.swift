import ArgumentParser
import DBus
import Foundation

/// `systole lap`: ends the current lap and starts the next.
struct LapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lap",
        abstract: "End the current lap and start the next (laps go into 'workouts show' and every export)."
    )
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        let lap = try await daemon.connect().call("AddLap").first?.number ?? 0
        print("Lap \(WorkoutText.whole(lap)) done; lap \(WorkoutText.whole(lap + 1)) started")
    }
}

/// `systole marker TEXT`: marks this moment of the workout.
struct MarkerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "marker",
        abstract: "Mark this moment of the workout with a text (up to 200 characters, one line)."
    )
    @Argument(help: "What happened, like 'gel' or 'km 10'.") var text: String
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("AddMarker", [.string(text)])
        print("Marked: \(text)")
    }
}

/// `systole profile`: the profile zones, load and the energy estimate use, and where each value came from.
struct ProfileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Show the profile (age, sex, weight, resting and maximum heart rate, zones) and each value's source.",
        discussion: "Set it in the [profile] table of systoled.toml; see docs/export.md."
    )
    @OptionGroup var daemon: ControlOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let profile = try await daemon.connect().call("GetProfile").first?.map ?? [:]
        if json {
            printJSON(DBusValue.propertyMap(profile).jsonObject)
            return
        }
        for (key, label, unit) in [
            ("age", "Age", " years"), ("sex", "Sex", ""), ("weight_kg", "Weight", " kg"),
            ("resting_hr", "Resting heart rate", " bpm"), ("max_hr", "Maximum heart rate", " bpm"),
            ("zones", "Zones", ""),
        ] {
            guard let entry = profile[key]?.map, let value = entry["value"] else {
                print("\(label): not set")
                continue
            }
            let text = value.string ?? value.number.map { WorkoutText.decimal($0) } ?? "?"
            print("\(label): \(text)\(unit) (\(entry["source"]?.string ?? "?"))")
        }
        let bounds = (profile["zoneBounds"]?.array ?? []).compactMap(\.number)
        if !bounds.isEmpty {
            let zones = bounds.enumerated().map { index, lower in
                let upper = index + 1 < bounds.count ? "–\(WorkoutText.whole(bounds[index + 1]))" : "+"
                return "Z\(index + 1) \(WorkoutText.whole(lower))\(upper)"
            }
            print("Zone bounds (bpm): " + zones.joined(separator: "  "))
        }
        if let energy = profile["energyEstimate"]?.string { print("Energy estimate: \(energy)") }
    }
}
