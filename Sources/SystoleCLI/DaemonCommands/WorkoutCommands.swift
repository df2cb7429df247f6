import ArgumentParser
import DBus
import Foundation

/// Activity names systoled knows (HealthKit's activity types), for validation and help.
let activityNames = [
    "running", "cycling", "walking", "hiking", "rowing", "elliptical", "stair-climbing", "hiit",
    "functional-strength-training", "traditional-strength-training", "yoga", "swimming", "cross-training", "other",
]

/// `systole start`: prepares (3-second countdown while sensors get ready), then starts a workout.
struct StartCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Start a workout (or, with --team, one per athlete) after a 3-second countdown.",
        discussion: """
            systoled prepares during the countdown: it waits up to 3 seconds for a heart rate from a connected \
            sensor, then starts the workout either way and says whether heart rate is available.
            With --team, each athlete whose sensor is connected gets a workout of their own, recorded from their \
            sensors only, all under one team session; pause, resume, lap, marker, end and cancel act on all of them.
            Activities: \(activityNames.joined(separator: ", ")).
            """
    )

    @Option(help: "The activity (see above).") var activity = "other"
    @Option(help: "indoor, outdoor or unknown.") var location = "unknown"
    @Flag(
        help: "Start a team session: a workout for each athlete (the [athletes] table) whose sensor is connected."
    )
    var team = false
    @Option(
        name: .customLong("team-session"),
        help: "With --team: join this team session (its id, as another receiver printed it) instead of a new one."
    )
    var teamSession: String?
    @OptionGroup var daemon: ControlOptions

    func validate() throws {
        if let teamSession {
            guard team else { throw ValidationError("--team-session goes with --team") }
            guard UUID(uuidString: teamSession) != nil else {
                throw ValidationError(
                    "--team-session takes a team session's id, like 1B4E28BA-2FA1-11D2-883F-0016D3CCA427"
                )
            }
        }
        guard activityNames.contains(activity) else {
            throw ValidationError(
                "unknown activity '\(activity)'; use one of: \(activityNames.joined(separator: ", "))"
            )
        }
        guard ["indoor", "outdoor", "unknown"].contains(location) else {
            throw ValidationError("--location takes indoor, outdoor or unknown, not '\(location)'")
        }
    }

    func run() async throws {
        let client = try await daemon.connect()
        let (activity, location, team) = (activity, location, team)
        let session = teamSession ?? ""
        let start = Task {
            team
                ? try await client.call("StartTeamSession", [.string(activity), .string(location), .string(session)])
                : try await client.call("StartWorkout", [.string(activity), .string(location)])
        }
        // The countdown runs while systoled prepares; it stops as soon as the workout has started. Its first step is
        // shown at once, so a workout that starts at once (a heart rate already there) shows it too.
        FileHandle.standardOutput.write(Data("3… ".utf8))
        let countdown = Task {
            for second in [2, 1] {
                try await Task.sleep(for: .seconds(1))
                FileHandle.standardOutput.write(Data("\(second)… ".utf8))
            }
        }
        let reply: [DBusValue]
        do {
            reply = try await start.value
        } catch {
            countdown.cancel()
            print("")
            throw error
        }
        countdown.cancel()
        print("go!")
        if team {
            let workouts = (reply.dropFirst().first?.array ?? []).map(\.map)
            print(
                "Started team session \(reply.first?.string ?? "?") (\(activity), \(location)), \(workouts.count) athletes:"
            )
            for workout in workouts {
                let athlete = WorkoutText.printable(workout["athlete"]?.string ?? "?")
                print("  \(athlete): workout \((workout["id"]?.string ?? "?").prefix(8))")
            }
            return
        }
        let id = reply.first?.string ?? "?"
        let available = reply.dropFirst().first?.bool ?? false
        print("Started \(activity) (\(location)), workout \(id.prefix(8))")
        print(
            available
                ? "Heart rate: available"
                : "Heart rate: not available yet (no sensor is sending); it is recorded as soon as one does"
        )
    }
}

/// `systole pause`, `resume`, `cancel`: one call each.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause the workout (time and samples while paused do not count)."
    )
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("PauseWorkout")
        print("Paused")
    }
}

struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "resume", abstract: "Resume the paused workout.")
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("ResumeWorkout")
        print("Resumed")
    }
}

struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Drop the workout and everything it collected."
    )
    @OptionGroup var daemon: ControlOptions

    func run() async throws {
        _ = try await daemon.connect().call("CancelWorkout")
        print("Cancelled: the workout and its samples were dropped")
    }
}

/// `systole end`: stops, saves and prints the summary.
struct EndCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "end",
        abstract: "End the workout, save it and print its summary."
    )
    @OptionGroup var daemon: ControlOptions
    @Flag(help: "Print the saved workout as JSON.") var json = false

    func run() async throws {
        let reply = try await daemon.connect().call("EndWorkout")
        let workout = reply.first ?? .propertyMap([:])
        if json {
            printJSON(workout.jsonObject)
        } else if let team = workout.map["team"]?.array {
            print("Ended the team session: \(team.count) workouts saved")
            for member in team { print("  " + WorkoutText.summary(member.map)) }
        } else {
            print("Ended: " + WorkoutText.summary(workout.map))
        }
    }
}

/// `systole add water 250ml`: a sample the user adds during the workout.
struct AddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add a sample to the workout, e.g. 'add water 250ml' or 'add energy 50kcal'."
    )

    @Argument(help: "water or energy.") var type: String
    @Argument(help: "An amount with its unit: 250ml, 0.5l, 50kcal, 200kJ.") var amount: String
    @OptionGroup var daemon: ControlOptions

    static let types = ["water": "dietaryWater", "energy": "activeEnergyBurned"]
    static let units = ["ml": "mL", "l": "L", "kcal": "kcal", "kj": "kJ"]

    /// The amount and unit symbol in `text` (`250ml`, `0.5 L`).
    static func parse(_ text: String) -> (Double, String)? {
        let trimmed = text.replacingOccurrences(of: " ", with: "")
        guard let split = trimmed.firstIndex(where: { $0.isLetter }),
            let value = Double(trimmed[..<split]),
            let unit = units[trimmed[split...].lowercased()]
        else { return nil }
        return (value, unit)
    }

    func validate() throws {
        guard Self.types[type] != nil else { throw ValidationError("add takes water or energy, not '\(type)'") }
        guard let (value, _) = Self.parse(amount), value > 0, value.isFinite else {
            throw ValidationError("'\(amount)' is not an amount with a unit, like 250ml, 0.5l, 50kcal or 200kJ")
        }
    }

    func run() async throws {
        guard let identifier = Self.types[type], let (value, unit) = Self.parse(amount) else { return }
        _ = try await daemon.connect().call("AddSample", [.string(identifier), .double(value), .string(unit)])
        print("Added \(type): \(value.formatted()) \(unit)")
    }
}
